/*
 * profiler: the interpreter's CPU and memory adapters.
 *
 * CPU mode: a `jett-timer` thread wakes on absolute CLOCK_MONOTONIC
 * deadlines and only counts: a tick that finds the runtime thread blocked
 * (in sleep) is a waiting tick; otherwise it sets one pending bit, or is
 * coalesced when the bit is still set.  At its next safe point (before
 * a statement is marked current, so the sample's leaf is the statement
 * that was running; inside long builtins at bounded intervals) the
 * runtime thread captures the stack (at most 128 frames) and appends the
 * sample.  A sample whose entries do not fit in the ring is dropped and
 * counted before its stack is interned, so a STACK entry is never lost.
 *
 * Memory mode: the heap observer turns every allocate/resize/free into a
 * compact ALLOC entry with the event's leaf stack, whose leaf node it also
 * keeps in the allocated object (heap_obj.site), and an allocation freed
 * before the next new peak of live bytes into one FOLD entry (memwire.h);
 * memory events wait for room and are never dropped.
 *
 * Counters: requested = recorded + coalesced + dropped, exactly.
 */
#ifndef JETT_AGENT_PROFILER_H
#define JETT_AGENT_PROFILER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/collector.h"
#include "agent/interp.h"

struct profiler;

/* `trunc_func` is the id of the reserved `<truncated-stack>` FUNC. */
struct profiler *profiler_new(struct collector *c, struct interp_state *s, uint8_t mode,
                              uint32_t rate_hz, size_t stack_budget, uint32_t trunc_func);
void profiler_free(struct profiler *p);

/* Hooks the interpreter and, in CPU mode, starts the timer.  0 or -1. */
int profiler_start(struct profiler *p);

/* Stops the timer and fills the FINISH counters (termination is the
 * caller's). */
void profiler_stop(struct profiler *p, struct wire_finish *fin);

/* CPU mode: the runtime's exact call counts (interp_count_calls, which
 * profiler_start turns on) as CALLS entries, once the program has ended:
 * the functions and call sites that made a call, sorted as the record
 * wants them.  They stay the profiler's, valid until profiler_free.
 * The counts are the runtime thread's own (its interp_state's); a
 * runtime of several threads sums theirs here.  0, or -1 when memory
 * runs out; none in memory mode. */
int profiler_calls(struct profiler *p, const struct wire_fn_calls **fn, uint32_t *n,
                   const struct wire_site_calls **site, uint32_t *m);

/* CPU nanoseconds the timer thread used, exact once profiler_stop has
 * joined it (0 before, and in memory mode): the profiler's own cost. */
uint64_t profiler_timer_cpu_ns(const struct profiler *p);

/* The stack nodes interned so far (node id -> function): in memory mode
 * each heap object's creation site is one of them (heap.h). */
struct stacktab;
const struct stacktab *profiler_stack_table(const struct profiler *p);

/* The heap observer's own exact totals (memory mode), kept on the agent
 * side independently of the daemon's aggregation so that tests can check
 * one against the other. */
struct profiler_heap_totals {
    uint64_t allocation_count, resize_count, allocated_bytes, freed_bytes, peak_live_bytes,
        live_bytes;
};
void profiler_heap_totals(const struct profiler *p, struct profiler_heap_totals *out);

/* Test-only: in memory mode `fn` sees every heap event first, on the
 * runtime thread, with the Jett stack as the event records it.  Before
 * profiler_start. */
typedef void (*profiler_event_hook)(void *ctx, const struct interp_state *s);
void profiler_set_event_hook(struct profiler *p, profiler_event_hook fn, void *ctx);

/* Test-only: memory mode folds allocations freed before the next new
 * peak unless this turns it off (JETT_TEST_NO_FOLD), so that a test can
 * replay the same run's events folded and unfolded.  Before
 * profiler_start. */
void profiler_set_folds(struct profiler *p, bool on);
/* Test-only: the timer thread never ticks by itself (JETT_TEST_TIMER_ASLEEP),
 * so that only the workers whose tasks park or resume advance the clock
 * of ticks, as a timer the scheduler keeps off the cores would.  Before
 * profiler_start. */
void profiler_set_timer_asleep(struct profiler *p, bool asleep);
/* Folds made so far (memory mode). */
uint64_t profiler_folds(const struct profiler *p);

#endif
