/*
 * profiler: the interpreter's CPU and memory adapters.
 *
 * CPU mode: a periodic CLOCK_MONOTONIC POSIX timer, armed by the
 * jett-runtime thread as it starts and deleted as it ends, signals that
 * thread alone (PROFILER_TICK_SIGNAL, SIGEV_THREAD_ID) at the rate; there
 * is no timer thread.  The handler only counts, every expiry and every
 * deadline missed meanwhile being a tick: a tick that finds the runtime
 * thread blocked (in sleep) is a waiting tick; otherwise it sets one
 * pending bit, or is coalesced when the bit is still set.  At its next
 * safe point (before
 * a statement is marked current, so the sample's leaf is the statement
 * that was running; inside long builtins at bounded intervals) the
 * runtime thread captures the stack (at most 128 frames) and appends the
 * sample.  A sample whose entries do not fit in the ring is dropped and
 * counted before its stack is interned, so a STACK entry is never lost.
 *
 * Memory mode: the heap observer turns every allocate/resize/free into an
 * ALLOC entry with the creation stack; memory events wait for room and
 * are never dropped.
 *
 * Counters: requested = recorded + coalesced + dropped, exactly.
 */
#ifndef JETT_AGENT_PROFILER_H
#define JETT_AGENT_PROFILER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/collector.h"
#include "agent/interp.h"

struct profiler;

/* The signal of the CPU timer's ticks (the process's handler for it is
 * the profiler's from profiler_start on). */
#define PROFILER_TICK_SIGNAL (SIGRTMIN)

/* `trunc_func` is the id of the reserved `<truncated-stack>` FUNC. */
struct profiler *profiler_new(struct collector *c, struct interp_state *s, uint8_t mode,
                              uint32_t rate_hz, size_t stack_budget, uint32_t trunc_func);
void profiler_free(struct profiler *p);

/* Hooks the interpreter and, in CPU mode, installs the tick handler;
 * the runtime thread arms the timer as it starts (interp_run fails, no
 * Jett code run, when it cannot: profiler_timer_failed).  0 or -1. */
int profiler_start(struct profiler *p);

/* Fills the FINISH counters (termination is the caller's); after
 * interp_run, whose thread has deleted the timer. */
void profiler_stop(struct profiler *p, struct wire_finish *fin);

/* True when the runtime thread could not arm the CPU timer. */
bool profiler_timer_failed(const struct profiler *p);

/* The heap observer's own exact totals (memory mode), kept on the agent
 * side independently of the daemon's aggregation so that tests can check
 * one against the other. */
struct profiler_heap_totals {
    uint64_t allocation_count, resize_count, allocated_bytes, freed_bytes, peak_live_bytes,
        live_bytes;
};
void profiler_heap_totals(const struct profiler *p, struct profiler_heap_totals *out);

/* Test-only: in memory mode `fn` sees every heap event first, on the
 * runtime thread, with the Jett stack as the event records it. */
typedef void (*profiler_event_hook)(void *ctx, const struct interp_state *s);
void profiler_set_event_hook(struct profiler *p, profiler_event_hook fn, void *ctx);

#endif
