/*
 * attrib: what an aggregation attributed, read through functions.
 *
 * The aggregation (agg.h) turns the stream's samples and allocation
 * events into quantities per function identity and per call chain
 * (DESIGN section 6); this is how ranking and every other reader see
 * them, without the aggregation's layout (its tables, arena offsets and
 * bucket packing stay behind agg-internal.h).
 *
 * Ids: a function identity is 0..attrib_ident_count()-1, a source
 * 0..attrib_source_count()-1, a call chain 0..attrib_chain_count()-1.  A
 * chain is the sequence of identities from a root frame to one frame;
 * the quantity on it is the samples (CPU) or allocated bytes (memory)
 * of the function it ends in, attributed through it.  Everything read
 * stays valid until the aggregation is freed.
 */
#ifndef JETT_DAEMON_ATTRIB_H
#define JETT_DAEMON_ATTRIB_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/agg.h"
#include "daemon/export/costrun.h"

#define ATTRIB_NONE UINT32_MAX /* no source, no chain parent, an unknown span */

struct attrib_ident {
    const char *ns, *name; /* not NUL-terminated */
    uint32_t ns_len, name_len;
    uint32_t source;       /* ATTRIB_NONE: unavailable */
    struct wire_span decl; /* WIRE_SPAN_NONE: unavailable */
};

struct attrib_source {
    uint8_t origin;   /* enum wire_origin */
    bool spans_ok;    /* spans sorted, disjoint, inside the text */
    const char *path; /* NUL-terminated */
    uint32_t path_len;
    const char *text;
    uint32_t text_len;
    const struct wire_source_span *spans;
    uint32_t n_spans;
    const uint32_t *lines; /* offset of each line start; lines[0] == 0 */
    uint32_t n_lines;
};

/* A CPU function's samples, and its calls (what CALLS said; meaningful
 * only while attrib_calls_known holds). */
struct attrib_fn {
    uint64_t inclusive, self, calls;
};

/* One hot line of a CPU function: its self samples at a leaf statement
 * span (start ATTRIB_NONE: the span is unknown). */
struct attrib_hot {
    uint64_t self;
    uint32_t start, end;
};

/* A memory site: what the function allocated (creation and growth) and
 * what became of the allocations it created.  live_at_peak means
 * something only while attrib_mem_exact() holds, live (the bytes
 * retained at exit) only while attrib_retained_exact() does. */
struct attrib_site {
    uint64_t allocation_count, allocated_bytes, resize_count, freed_bytes;
    uint64_t live, live_at_peak;
};

struct attrib_cpu_totals {
    uint64_t recorded, attributed, runtime, waiting, unavailable, truncated;
};

/* freed and peak are exact only while attrib_mem_exact() holds, live
 * (retained at exit) only while attrib_retained_exact() does;
 * attributed is the allocated bytes of events with a Jett stack. */
struct attrib_mem_totals {
    uint64_t allocation_count, resize_count, free_count, allocated_bytes, freed_bytes, attributed;
    uint64_t live, peak;
};

uint32_t attrib_ident_count(const struct agg *a);
void attrib_ident(const struct agg *a, uint32_t ident, struct attrib_ident *out);
/* The 1-based line of the identity's declaration, 0 when unavailable. */
uint32_t attrib_ident_line(const struct agg *a, uint32_t ident);
uint32_t attrib_source_count(const struct agg *a);
void attrib_source(const struct agg *a, uint32_t source, struct attrib_source *out);

/* Whether the identity has quantities: a CPU function bucket or a
 * memory site (the budgets may have refused one). */
bool attrib_has_quantities(const struct agg *a, uint32_t ident);
/* Each false when the identity has no quantities (out untouched). */
bool attrib_fn(const struct agg *a, uint32_t ident, struct attrib_fn *out);
bool attrib_site(const struct agg *a, uint32_t ident, struct attrib_site *out);
/* The key by which agg_watch_live names a memory site, ATTRIB_NONE when
 * the identity has no site. */
uint32_t attrib_site_key(const struct agg *a, uint32_t ident);

/* A CPU function's hot lines, in no order: begin, then next until false. */
struct attrib_hot_iter {
    uint32_t next;
};
void attrib_hot_begin(const struct agg *a, uint32_t ident, struct attrib_hot_iter *it);
bool attrib_hot_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_hot *out);

/* The waiting call sites (CPU mode): the waiting samples at the leaf
 * statement of function `ident`, in no order.  A waiting sample without
 * a kept stack is in no site; no site counts in a function's figures.
 * `key` names the site among its chains (attrib_wait_chain). */
struct attrib_wait {
    uint32_t ident;
    struct attrib_hot hot;
    uint32_t key;
};
void attrib_wait_begin(const struct agg *a, struct attrib_hot_iter *it);
bool attrib_wait_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_wait *out);

/* The chains of the waiting samples, every site's, in no order: the
 * samples of the site `key` whose stack (every frame, root to leaf) is
 * the call chain `chain`. */
struct attrib_wait_chain {
    uint32_t key, chain;
    uint64_t samples;
};
void attrib_wait_chain_begin(const struct agg *a, struct attrib_hot_iter *it);
bool attrib_wait_chain_next(const struct agg *a, struct attrib_hot_iter *it,
                            struct attrib_wait_chain *out);

/* Whether a CALLS record was read: the calls of functions and call lines
 * are known (else they are unavailable). */
bool attrib_calls_known(const struct agg *a);

/* Every call line (CPU mode), in no order: the Jett-state samples in
 * which function `ident`'s frame was at the call starting at `start`
 * with a deeper frame, once per sample (summed over its callees), and
 * the calls made from it (while attrib_calls_known).  `key` names it
 * among its callees. */
struct attrib_call {
    uint32_t ident, start, key;
    uint64_t samples, calls;
};
void attrib_call_begin(const struct agg *a, struct attrib_hot_iter *it);
bool attrib_call_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_call *out);
/* The callees of the call line `key`: for each function that call made,
 * the call line's samples in which it was the frame made (under
 * recursion, by the outermost of the caller's frames at that call). */
struct attrib_callee {
    uint32_t ident;
    uint64_t samples;
};
void attrib_callee_begin(const struct agg *a, uint32_t key, struct attrib_hot_iter *it);
bool attrib_callee_next(const struct agg *a, struct attrib_hot_iter *it, struct attrib_callee *out);

/* One allocation line (memory mode): the allocations created and the
 * bytes allocated (initial sizes, and growth at the resizing statement)
 * by events of function `ident` whose leaf statement span is [start,
 * end) in its source.  Events without a known leaf statement count in
 * their site but in no line. */
struct attrib_line {
    uint32_t ident, start, end;
    uint64_t bytes, count;
};

/* Every allocation line, in no order: begin, then next until false. */
struct attrib_line_iter {
    uint32_t next;
};
void attrib_line_begin(const struct agg *a, struct attrib_line_iter *it);
bool attrib_line_next(const struct agg *a, struct attrib_line_iter *it, struct attrib_line *out);

uint32_t attrib_chain_count(const struct agg *a);
/* The chain's last identity and the chain of its caller (ATTRIB_NONE at
 * the root). */
uint32_t attrib_chain_ident(const struct agg *a, uint32_t chain);
uint32_t attrib_chain_parent(const struct agg *a, uint32_t chain);
/* The chain's samples or bytes; false when nothing was attributed
 * through it (no bucket). */
bool attrib_chain_weight(const struct agg *a, uint32_t chain, uint64_t *weight);

void attrib_cpu_totals(const struct agg *a, struct attrib_cpu_totals *out);
void attrib_mem_totals(const struct agg *a, struct attrib_mem_totals *out);
/* False once the retention budget stopped tracking live allocations:
 * freed, live, peak, retained and live-at-peak values are unknown.
 * Without FINISH they are those of the events read. */
bool attrib_mem_exact(const struct agg *a);
/* Whether every bucket the events needed was made: no budget refused a
 * function, site, chain or line bucket, and no stack was left out. */
bool attrib_detail_whole(const struct agg *a);
/* Whether the bytes live at the run's exit, retained, are known: every
 * allocation tracked and FINISH read.  A stream cut short before FINISH
 * holds the bytes live where it ends, which are not those at exit
 * (jett-profile(7), Status). */
bool attrib_retained_exact(const struct agg *a);
/* Why live values are unknown, a clause for a message ("--weight
 * retained is unavailable: ..."): the live values at any point once
 * tracking stopped, and with `at_exit` the retained ones of a stream
 * without FINISH too; NULL when they are known.  The rule of
 * attrib_mem_exact and attrib_retained_exact, and the words every reader
 * gives for it. */
const char *attrib_live_gap(const struct agg *a, bool at_exit);

/* ---- tasks (DESIGN section 12) ---- */

/* A task of the run, 1..attrib_task_count: the identity of the function
 * it runs and of the one that spawned it, with the spawn call's start
 * offset in that function's source (ATTRIB_NONE each when unknown; main
 * has no spawner); its jett and runtime samples and waiting samples
 * (cpu), the bytes it allocated, initial sizes and growth, and the live
 * bytes of the allocations it created (memory; exact, retained at exit,
 * only while attrib_tasks_live_exact holds). */
struct attrib_task {
    uint32_t task, ident, spawn_ident, spawn_at;
    uint64_t samples, waiting_samples, allocated_bytes, live_bytes;
};
/* Whether the run declared task attribution (then tasks are reported). */
bool attrib_tasks_on(const struct agg *a);
/* The tasks kept (those described, up to the first the stack budget
 * refused). */
uint32_t attrib_task_count(const struct agg *a);
void attrib_task(const struct agg *a, uint32_t task, struct attrib_task *out);
bool attrib_tasks_live_exact(const struct agg *a);

/* ---- the walk of retained holders (memory mode) ---- */

/* Whether the stream held the walk (its closing RETAINED record) and the
 * FINISH that closes the run it was of (a stream cut short has no walk
 * to report), and whether a budget stopped it or refused some of its
 * records. */
enum attrib_walk { ATTRIB_WALK_NONE, ATTRIB_WALK_COMPLETE, ATTRIB_WALK_PARTIAL };
enum attrib_walk attrib_retained_walk(const struct agg *a);

/* A holder: a namespace-level binding (ns NULL: objects no binding
 * reaches), its source (ATTRIB_NONE: unavailable) and declaration. */
struct attrib_holder {
    const char *ns, *name; /* not NUL-terminated */
    uint32_t ns_len, name_len;
    uint32_t source;
    struct wire_span decl;
};

/* One row of a kept RETAINED record: objects of one creation-site
 * function (ident ATTRIB_NONE: unknown) credited to a holder.  Rows of
 * one holder and function may come more than once; they add up. */
struct attrib_retained_row {
    struct attrib_holder holder;
    uint32_t ident;
    uint64_t bytes, objects;
};
struct attrib_retained_iter {
    uint32_t block, row;
};
void attrib_retained_begin(const struct agg *a, struct attrib_retained_iter *it);
bool attrib_retained_next(const struct agg *a, struct attrib_retained_iter *it,
                          struct attrib_retained_row *out);

/* ---- per stack node, when the aggregation kept detail ---- */

/* Stack node ids are the wire's STACK ids below this count. */
uint32_t attrib_node_count(const struct agg *a);
/* A stored, valid node's caller node (ATTRIB_NONE at a root) and
 * identity; false for a node defined by a bad record (its events are
 * unavailable). */
bool attrib_node(const struct agg *a, uint32_t node, uint32_t *parent, uint32_t *ident);

/* self: CPU samples with the node as leaf, or allocated bytes (initial
 * sizes and growth) of events at the node; count: allocations created
 * at it; retained and live_at_peak: bytes of the allocations it created
 * live at the end (only while attrib_retained_exact) and at the global
 * peak (only while attrib_mem_exact).
 * All zero when detail was not kept. */
struct attrib_node_quantities {
    uint64_t self, count, retained, live_at_peak;
    uint64_t events;  /* samples, or events with allocation pressure */
    uint64_t waiting; /* CPU: waiting samples with the node as leaf */
    uint32_t site;    /* the STACK's call site: start offset in the caller's
                       * source, ATTRIB_NONE when unknown */
};
void attrib_node_quantities(const struct agg *a, uint32_t node, struct attrib_node_quantities *out);

/* The same quantities summed over the node's subtree (the node and every
 * node below it; site ATTRIB_NONE), once the stream ended: what a call
 * into the node carries, and a frame's total in a tree of stacks. */
void attrib_node_below(const struct agg *a, uint32_t node, struct attrib_node_quantities *out);

/* Self costs by leaf function and leaf statement: each sample (one) or
 * event with allocation pressure (bytes, and one allocation when it
 * created one) at the start offset of its leaf span in the function's
 * source.  A function's costs come in ascending offset order, an
 * unknown span (ATTRIB_NONE) first. */
struct attrib_self_iter {
    struct costrun_iter it;
};
bool attrib_self_begin(const struct agg *a, uint32_t ident, struct attrib_self_iter *it);
/* The next offset and its costs (w[0]; w[1] in memory mode). */
bool attrib_self_next(const struct agg *a, struct attrib_self_iter *it, uint32_t *start,
                      uint64_t *w);

/* A stack node's self costs by leaf statement, when the aggregation kept
 * node lines (agg_keep_node_lines): what attrib_node_quantities gives as
 * self (and count), split by the start offset of each event's leaf span
 * in the node's function (ATTRIB_NONE: unknown), ascending. */
struct attrib_node_self_iter {
    struct costrun_iter it;
    bool one, many; /* a single span still to give; the node's runs */
    uint32_t key;
    uint64_t w[2];
};
bool attrib_node_self_begin(const struct agg *a, uint32_t node, struct attrib_node_self_iter *it);
/* The next offset and its costs (w[0]; w[1] in memory mode, and the
 * waiting samples in CPU mode with agg_keep_waiting). */
bool attrib_node_self_next(const struct agg *a, struct attrib_node_self_iter *it, uint32_t *start,
                           uint64_t *w);

/* With agg_keep_task_nodes, once the stream ended: the (stack node,
 * task) pairs that had events, in node then task order (task ATTRIB_NONE,
 * events of no task, last): i from 0 to attrib_task_node_count.  q holds
 * self, count, events, waiting and retained as
 * attrib_node_quantities does, for the events of that task at that node
 * (retained: of the allocations the task created there; site
 * ATTRIB_NONE, live_at_peak 0). */
uint32_t attrib_task_node_count(const struct agg *a);
void attrib_task_node(const struct agg *a, uint32_t i, uint32_t *node, uint32_t *task,
                      struct attrib_node_quantities *q);
/* The pair's self costs by leaf statement, as attrib_node_self_begin. */
bool attrib_task_node_self_begin(const struct agg *a, uint32_t i, struct attrib_self_iter *it);
bool attrib_task_node_self_next(const struct agg *a, struct attrib_self_iter *it, uint32_t *start,
                                uint64_t *w);

#endif
