/* run_threadcpu: writes the profiler's per-party CPU (test-only). */
#include <stdio.h>
#include <time.h>

#include "cli/run_threadcpu.h"

static unsigned long long clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void run_threadcpu_write(const char *path, const struct run_threadcpu *t)
{
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f)
        return;
    fprintf(f,
            "timer_ns %llu\nwriter_ns %llu\ndaemon_ns %llu\nprocess_ns %llu\nlauncher_ns %llu\n"
            "walk_ns %llu\n",
            (unsigned long long)t->timer_ns, (unsigned long long)t->writer_ns,
            (unsigned long long)t->daemon_ns, clock_ns(CLOCK_PROCESS_CPUTIME_ID),
            clock_ns(CLOCK_THREAD_CPUTIME_ID), (unsigned long long)t->walk_ns);
    fclose(f);
}
