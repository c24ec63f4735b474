/* tickspy: a program run in process, its tick signals watched. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/collector.h"
#include "agent/profiler.h"
#include "testutil.h"
#include "tickspy.h"

static struct sigaction profiler_action;
static void (*spy_in_handler)(bool inside);
static atomic_long spy_on_runtime, spy_elsewhere;

/* Counts the delivery by thread name, then hands it to the profiler. */
static void spy_handler(int sig, siginfo_t *info, void *uc)
{
    if (info->si_code == SI_TIMER) {
        char name[16] = "";
        prctl(PR_GET_NAME, name, 0, 0, 0);
        atomic_fetch_add(strcmp(name, "jett-runtime") == 0 ? &spy_on_runtime : &spy_elsewhere, 1);
    }
    if (spy_in_handler)
        spy_in_handler(true);
    profiler_action.sa_sigaction(sig, info, uc);
    if (spy_in_handler)
        spy_in_handler(false);
}

/* Wraps the handler profiler_start installed, with its own flags. */
static void spy_wrap(void (*in_handler)(bool))
{
    ck_assert_int_eq(sigaction(PROFILER_TICK_SIGNAL, NULL, &profiler_action), 0);
    ck_assert_msg(profiler_action.sa_flags & SA_SIGINFO, "the tick handler takes siginfo");
    spy_in_handler = in_handler;
    atomic_store(&spy_on_runtime, 0);
    atomic_store(&spy_elsewhere, 0);
    struct sigaction sa = profiler_action;
    sa.sa_sigaction = spy_handler;
    ck_assert_int_eq(sigaction(PROFILER_TICK_SIGNAL, &sa, NULL), 0);
}

static void *drain(void *arg)
{
    char buf[65536];
    while (read(*(int *)arg, buf, sizeof buf) > 0)
        ;
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tickspy_run(struct tickspy *t, const char *text)
{
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.jett", dir);
    ck_assert_int_eq(tu_write_file(path, text, strlen(text)), 0);
    struct interp_diags diags = {0};
    struct interp_program *p = interp_load(path, NULL, &diags);
    ck_assert_ptr_nonnull(p);
    struct interp_host none = {0};
    struct interp_options opts = {0};
    struct interp_state *s = interp_new(p, t->host ? t->host : &none, &opts);
    ck_assert_ptr_nonnull(s);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pthread_t reader;
    pthread_create(&reader, NULL, drain, &sv[1]);
    struct collector *c = collector_new(sv[0], -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct profiler *prof =
        profiler_new(c, s, WIRE_MODE_CPU, t->rate_hz, 16u << 20, interp_func_count(p));
    ck_assert_int_eq(collector_start(c), 0);
    ck_assert_int_eq(profiler_start(prof), 0);
    spy_wrap(t->in_handler);
    struct interp_result r = {0};
    uint64_t t0 = mono_ns();
    t->run_rc = interp_run(s, &r);
    uint64_t t1 = mono_ns();
    memset(&t->fin, 0, sizeof t->fin);
    profiler_stop(prof, &t->fin);
    t->run_ns = t1 - t0, t->stop_ns = mono_ns() - t1;
    t->timer_failed = profiler_timer_failed(prof);
    t->on_runtime = atomic_load(&spy_on_runtime), t->elsewhere = atomic_load(&spy_elsewhere);
    sigaction(PROFILER_TICK_SIGNAL, &profiler_action, NULL);
    collector_free(c); /* closes sv[0]; the reader sees EOF */
    pthread_join(reader, NULL);
    close(sv[1]);
    profiler_free(prof);
    interp_result_free(&r);
    interp_free(s);
    interp_program_free(p);
    unlink(path);
    rmdir(dir);
    free(dir);
}
