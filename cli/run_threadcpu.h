/*
 * run_threadcpu: the test-only JETT_TEST_THREAD_CPU=PATH knob.  At the
 * end of a profiled run the launcher writes the CPU time of each party
 * the profiler adds, each read exactly (never sampled), so that a
 * benchmark can measure the profiler's own cost directly instead of as
 * the difference of two noisy totals:
 *
 *   timer_ns N     the jett-timer thread (CPU mode; 0 in memory mode)
 *   writer_ns N    the jett-writer thread
 *   daemon_ns N    jett-profd, user + system, from its exit status
 *   process_ns N   this process, every thread (the runtime thread, the
 *                  launcher's own thread, timer and writer)
 *   launcher_ns N  the launcher's own (main) thread
 *   walk_ns N      of which the walk of retained holders (memory mode)
 *
 * A run without profiling writes zeros for the first three, so that the
 * launcher's thread can be compared between plain and profiled runs.
 * The file is not written when the daemon could not be reaped.
 */
#ifndef JETT_CLI_RUN_THREADCPU_H
#define JETT_CLI_RUN_THREADCPU_H

#include <stdint.h>

struct run_threadcpu {
    uint64_t timer_ns, writer_ns, daemon_ns, walk_ns;
};

/* Adds this process's and the calling thread's CPU to `t` and writes the
 * file (nothing when path is NULL or cannot be opened). */
void run_threadcpu_write(const char *path, const struct run_threadcpu *t);

#endif
