/*
 * tickspy: runs a Jett program in this process under the CPU profiler,
 * with the profiler's tick handler wrapped so that a test sees every tick
 * signal delivered: on which thread it landed, and (through `in_handler`)
 * what happens while the profiler's handler runs.  The event stream goes
 * to a socket whose other end is read and discarded.
 */
#ifndef JETT_TESTS_TICKSPY_H
#define JETT_TESTS_TICKSPY_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/interp.h"
#include "proto/wire.h"

struct tickspy {
    /* in */
    uint32_t rate_hz;
    const struct interp_host *host;  /* NULL: output goes to fd 1 */
    void (*in_handler)(bool inside); /* true as the profiler's handler starts, false as it ends */
    /* out */
    int run_rc;               /* interp_run's */
    bool timer_failed;        /* profiler_timer_failed */
    struct wire_finish fin;   /* profiler_stop's counters */
    long on_runtime;          /* tick signals delivered on the jett-runtime thread */
    long elsewhere;           /* ... on any other thread */
    uint64_t run_ns, stop_ns; /* wall time of interp_run, then of profiler_stop */
};

/* Loads `text` (a file's contents) and runs it as described; asserts
 * that the setup worked. */
void tickspy_run(struct tickspy *t, const char *text);

#endif
