/*
 * agg: online aggregation of one profiling stream, with no I/O.
 *
 * The caller feeds decoded records in stream order (HELLO, SOURCE, FUNC,
 * the hot events, FINISH) and then asks for the status; rank_build turns
 * the tables into the report.  Every record is checked before it is used:
 * a record that breaks the protocol (missing HELLO, a reference to an
 * undefined id, an event after FINISH, ...) is a collector error.  The
 * stream is never stopped: the error is counted, the first message kept,
 * and the profile reports `collector_failure`.
 *
 * Memory is bounded by three budgets taken from HELLO (each at most the
 * daemon's maximum):
 *
 *   stack tables (SOURCE, FUNC, STACK and the call-chain trie): every
 *     table's real allocation (capacity x entry size; capacities double
 *     from 16; hash indexes as for hot lines below) is counted; a STACK,
 *     FUNC or SOURCE that would exceed the budget is not stored, it and
 *     every later one of its kind count as unavailable, and the profile is
 *     `partial` / `stack_capture_limit`.
 *   CPU detail buckets: carved from one arena of exactly the budget's
 *     size, so the bytes held are the bytes charged:
 *       function bucket  AGG_COST_FN    bytes (inclusive, self, calls, hot list)
 *       call-chain bucket AGG_COST_CHAIN bytes (sample count)
 *       hot-line bucket  AGG_COST_HOT   bytes (function, span, count, link),
 *                        also a waiting call site
 *       call line        AGG_COST_CALL  bytes (caller, call site, calls, links)
 *       sub-bucket       AGG_COST_SUB   bytes (a call line's callee, or a
 *                        waiting call site's chain: samples, link)
 *     plus the hash index of all but the first two, 8 bytes a slot, power-of-two capacity,
 *     at most half full, starting at 16 slots; a resize must fit with both
 *     the old and the new index held, then keeps only the new one.  The function and namespace
 *     strings are held once, by the FUNC table, and charged there.  The
 *     first bucket that does not fit flips the profile to `partial` /
 *     `cpu_metadata_limit`; existing buckets keep counting and the totals
 *     stay exact.
 *   retention (memory mode): one arena of the retention budget holds the
 *     site buckets (AGG_COST_SITE bytes: counts, bytes, live, live at
 *     the peak), memory call-chain buckets (AGG_COST_CHAIN bytes) and
 *     allocation-line buckets (AGG_COST_LINE bytes: bytes, count, function,
 *     span, link; one per leaf function and known leaf statement) with
 *     their hash index, sized and charged as the hot-line index above.
 *     Beside it the live-allocation records: a window over the most
 *     recent ids, AGG_COST_WINDOW bytes a slot (size and creation site;
 *     the id is the slot), a power of two from 256 slots, doubling when a
 *     third of it would be live if old and new windows fit together (a
 *     refusal is no limit); and, for older ids still live when the window
 *     slides past them (in id order), the live table, AGG_COST_LIVE bytes
 *     a slot (id, size and creation site), a power of two from 256 slots,
 *     at most 3/4 full, doubling only if old and new tables fit together.
 *     With task attribution each window and table slot has beside it the
 *     word of the task (and export pair) that created the allocation: 8
 *     bytes more a slot, charged with it.
 *     The buckets come first: the records serve only the live values,
 *     which one untracked allocation makes unavailable.  The first time
 *     anything does not fit (a bucket, a line or its index's growth, a
 *     record, the table room a window slide or the full-size room a
 *     record needs; a window that cannot double is no refusal), every
 *     record is released and what did not fit is tried again in their
 *     room.  The profile is then `partial` / `retention_metadata_limit`:
 *     no allocation is tracked, freed, live, peak, retained and
 *     live-at-peak bytes are unavailable, counts and allocated bytes stay
 *     exact by function, chain and line, and a free or resize of any id
 *     an allocate gave is taken as it comes (above them, it is an error).
 *     Only when the buckets alone fill the budget is one refused, and
 *     every later one with it.
 *
 *   The walk's RETAINED records are carved from the same arena
 *   (AGG_COST_RETAINED bytes, the holder's names and AGG_COST_RETAINED_ROW
 *   bytes a row, rounded up to 8); the first that does not fit, and every
 *   later one, is dropped and the section is partial.
 *
 * Allocation ids must increase at each allocate (the agent numbers them
 * in creation order), which is how a reused id is detected without
 * remembering every retired one.
 */
#ifndef JETT_DAEMON_AGG_H
#define JETT_DAEMON_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

#define AGG_CPU_BUDGET_MAX WIRE_CPU_BUDGET
#define AGG_RETENTION_BUDGET_MAX WIRE_RETENTION_BUDGET
#define AGG_STACK_BUDGET_MAX WIRE_STACK_BUDGET

#define AGG_COST_FN 32u
#define AGG_COST_CHAIN 8u
#define AGG_COST_HOT 24u
#define AGG_COST_CALL 32u
#define AGG_COST_SUB 24u
#define AGG_HOT_INDEX_MIN 16u
#define AGG_COST_SITE 56u
#define AGG_COST_LINE 32u
#define AGG_COST_WINDOW 8u
#define AGG_COST_LIVE 16u
#define AGG_COST_RETAINED 32u
#define AGG_COST_RETAINED_ROW 24u

enum agg_status { AGG_COMPLETE = 0, AGG_PARTIAL = 1, AGG_UNAVAILABLE = 2 };

/* Why a profile is not complete; at most one is reported, the first of
 * this order that applies (a collector failure makes every other count
 * suspect, so it wins; the interrupt is the program's, the limits are
 * ours). */
enum agg_reason {
    AGG_REASON_NONE = 0,
    AGG_REASON_COLLECTOR_FAILURE,
    AGG_REASON_INTERRUPTED,
    AGG_REASON_STACK_CAPTURE_LIMIT,
    AGG_REASON_CPU_METADATA_LIMIT,
    AGG_REASON_RETENTION_METADATA_LIMIT,
    AGG_REASON_BACKEND_UNSUPPORTED,
};

struct agg;

/* A new, empty aggregation (no HELLO yet); NULL when memory runs out. */
struct agg *agg_new(void);
void agg_free(struct agg *a);

/* Each returns 0 when the record was accepted and -1 when it was a
 * collector error (see agg_error); either way feeding may continue. */
int agg_hello(struct agg *a, const struct wire_hello *h);
int agg_source(struct agg *a, const struct wire_source *s);
int agg_func(struct agg *a, const struct wire_func *f);
int agg_stack(struct agg *a, const struct wire_stack *s);
int agg_task(struct agg *a, const struct wire_task *t);
int agg_sample(struct agg *a, const struct wire_sample *s);
int agg_alloc(struct agg *a, const struct wire_alloc *e);
int agg_event(struct agg *a, const struct wire_event *ev);
int agg_finish(struct agg *a, const struct wire_finish *f);
/* A CALLS record: its counts go to the function buckets and call lines
 * there are (CPU mode; it makes none), and the profile's calls become
 * known.  A call site outside its function's source, or a count that
 * would pass 2^64 - 1 added up, is a collector error. */
int agg_calls(struct agg *a, const struct wire_calls *c);
/* The walk of retained holders (memory mode, agg_retained.c). */
int agg_retained(struct agg *a, const struct wire_retained *r);

/* Feeds `n` hot events in order (as agg_event would), prefetching the
 * stack nodes of the samples a few entries ahead so that cache misses
 * overlap.  Returns how many were collector errors. */
size_t agg_events(struct agg *a, const struct wire_event *ev, size_t n);
/* The same, calling fn after each entry with whether it was taken without
 * a collector error (for an export that follows the stream's order). */
typedef void (*agg_event_fn)(void *ctx, const struct wire_event *ev, bool accepted);
size_t agg_events_each(struct agg *a, const struct wire_event *ev, size_t n, agg_event_fn fn,
                       void *ctx);

/* Whether the stream is at a point where ALLOC entries can go through
 * agg_mem_run (without tasks) and agg_mem_compact_run: a memory profile
 * between HELLO and FINISH. */
bool agg_takes_alloc_runs(const struct agg *a);
/* Feeds the ALLOC entries read in place, every WIRE_ALLOC_SIZE bytes from
 * `run` (at most `room` of them), that the decoder's rule takes, as
 * agg_alloc would: the run wire_events_alloc_open opened, checked entry
 * by entry as the decoder checks them (passing each with `rule`) and
 * ending before the first the rule refuses.  Returns how many it took,
 * for wire_events_alloc_close.  Once the live records, stack nodes and
 * buckets outgrow the caches, it prefetches the live-allocation slots,
 * stack nodes and site buckets of the entries a few ahead. */
size_t agg_mem_run(struct agg *a, const uint8_t *run, size_t room, struct wire_alloc_rule *rule);
/* The same for a run of compact ALLOC entries (wire_compact.h) from `run`
 * to `end` (at most `room` of them) that wire_events_compact_open
 * opened, each taken with the decoder's rule; stops before the first
 * the rule refuses (another kind, a bad entry), sets *stop to where it
 * stopped and returns how many it took, for wire_events_compact_close.
 * Allocates and folds at a site whose buckets exist reach them without
 * the tables (the same numbers agg_alloc would give). */
struct wire_compact_rule;
size_t agg_mem_compact_run(struct agg *a, const uint8_t *run, const uint8_t *end, uint32_t room,
                           struct wire_compact_rule *rule, const uint8_t **stop);
/* The size (in bytes of live records, nodes and buckets) past which
 * agg_mem_run prefetches; 0: always, SIZE_MAX: never.  For the tests,
 * which check that both ways give the same aggregation. */
void agg_prefetch_above(struct agg *a, size_t bytes);

/* Records a collector error found outside the aggregation (a decode error
 * of the stream, say); `msg` is copied if it is the first. */
void agg_fail(struct agg *a, const char *msg);

/* The stream ended: a missing HELLO or FINISH becomes a collector error. */
void agg_end(struct agg *a);

/* Frees memory mode's live-allocation records once the stream has ended
 * (a no-op before): they only serve to credit frees and resizes, and the
 * sites keep every number a profile reports, so ranking does not need
 * them.  agg_retention_bytes counts what is still held. */
void agg_release_records(struct agg *a);

/* Status and its reason (AGG_REASON_NONE when complete). */
enum agg_status agg_status(const struct agg *a, enum agg_reason *reason);

/* Keeps quantities per stack node as well, for the exports (attrib.h):
 * before any record.  They are charged to no budget (they grow with the
 * capture's stacks), and the budgets' effect on everything else is
 * unchanged. */
void agg_keep_detail(struct agg *a);
/* The same, and each stack node's self costs by leaf span as well
 * (attrib_node_self_begin): before any record. */
void agg_keep_node_lines(struct agg *a);
/* Each stack node's quantities (attrib_node_quantities) and self costs
 * by leaf span only, for an export that reads nothing else: the self
 * costs by function (attrib_self_begin) and the sums over subtrees
 * (attrib_node_below) are not kept and read as empty.  Before any
 * record. */
void agg_keep_node_lines_only(struct agg *a);

/* With detail in CPU mode, each stack node's self costs by leaf span
 * hold the waiting samples at that node as a second value
 * (attrib_node_self_next's w[1]), for exports that draw where the
 * program waited: before any record. */
void agg_keep_waiting(struct agg *a);

/* Each stack node's self cost only, 8 bytes a node instead of the
 * detail's: CPU samples with the node as leaf or allocated bytes (initial
 * sizes and growth) at it, as attrib_node_quantities' self, and their
 * sums over subtrees as attrib_node_below's self (every other quantity
 * reads 0).  What a flame graph of the default weight reads, for a
 * reader that holds another aggregation beside it (a diff).  Without
 * detail, before any record. */
void agg_keep_node_self(struct agg *a);

/* With detail and task attribution: each stack node's quantities split
 * by task as well (attrib_task_node), for the exports that show tasks.
 * Charged to no budget.  Before any record. */
void agg_keep_task_nodes(struct agg *a);

/* Without detail (and before any record): fn is called after each
 * change of the tracked live bytes, in stream order, with the creating
 * site's key (attrib_site_key; UINT32_MAX: none), the change (modulo 2^64:
 * a decrease is its two's complement) and the allocated bytes so far (the
 * memory timeline's clock).  Replay never sets it. */
typedef void (*agg_live_fn)(void *ctx, uint32_t site, uint64_t delta, uint64_t allocated);
void agg_watch_live(struct agg *a, agg_live_fn fn, void *ctx);

/* What HELLO said (the defaults before it; bad values replaced, as
 * collector errors): the mode (enum wire_mode), the configuration, the
 * backend (NULL: none given), the capability bits and the colour flag. */
uint8_t agg_mode(const struct agg *a);
const struct wire_config *agg_config(const struct agg *a);
const char *agg_backend(const struct agg *a);
uint32_t agg_capabilities(const struct agg *a);
bool agg_colour(const struct agg *a);
/* Whether HELLO was read; the FINISH record, NULL before it. */
bool agg_has_hello(const struct agg *a);
const struct wire_finish *agg_finish_record(const struct agg *a);

/* Collector errors seen and the first one's message ("" when none). */
uint64_t agg_error_count(const struct agg *a);
const char *agg_error(const struct agg *a);

/* Bytes held against each budget. */
size_t agg_cpu_bytes(const struct agg *a);
size_t agg_stack_bytes(const struct agg *a);
size_t agg_retention_bytes(const struct agg *a);

const char *agg_reason_name(enum agg_reason r);
const char *agg_status_name(enum agg_status s);

#endif
