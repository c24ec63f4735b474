/*
 * fold: a capture's stacks folded into a tree of frames, the input of
 * collapsed ("folded") stack files and flame graphs.
 *
 * A frame is a function's display text, `namespace.function`.  The tree is
 * keyed by display text at every level, so two functions that share a
 * display name (different source or span) are one frame here, which is
 * what a folded line can express anyway.  Every stack node of the capture
 * maps to one tree node through its STACK parents.
 *
 * The numbers are the profile's: the capture is aggregated as `jett
 * profile replay` aggregates it (its rules, collector errors and
 * budgets), keeping each stack node's quantities (agg_keep_detail), and
 * the fold only names and sums them (attrib.h).  Weights: a CPU capture
 * counts its attributed `jett` samples at the sample's leaf stack
 * (FOLD_WEIGHT_SAMPLES) and, with FOLD_WEIGHT_WALL, every requested tick:
 * its waiting samples that have a stack each under one more frame above
 * its leaf, `<runtime>.<waiting>` (whose func is FOLD_WAITING), so that
 * blocked time shows where it was spent and apart from running time, and
 * what has no Jett stack (coalesced and dropped ticks, runtime and
 * unavailable samples, waiting samples without a stack) in the
 * pseudo-frames of ticks.h below the root, so that the root's parts are
 * the report's time split.  A
 * memory capture is weighted by one of FOLD_WEIGHT_ALLOCATED (initial
 * size at the creating stack plus positive resize growth at the resizing
 * stack), _COUNT (allocations created), _RETAINED (bytes still live at
 * the end, credited to the creation stack) or _LIVE_AT_PEAK (bytes live
 * at the first moment the live total reached its maximum, credited to
 * the creation stack); the last two only while the profile tracked every
 * live allocation.  Events without a stack count in the totals only.
 */
#ifndef JETT_PROTO_FOLD_H
#define JETT_PROTO_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/export/ticks.h"
#include "proto/capture.h"

enum fold_weight {
    FOLD_WEIGHT_DEFAULT,   /* samples for CPU, allocated bytes for memory */
    FOLD_WEIGHT_SAMPLES,   /* CPU captures only */
    FOLD_WEIGHT_WALL,      /* CPU: jett and waiting samples */
    FOLD_WEIGHT_ALLOCATED, /* memory captures only, from here on */
    FOLD_WEIGHT_COUNT,
    FOLD_WEIGHT_RETAINED,
    FOLD_WEIGHT_LIVE_AT_PEAK,
};

enum fold_status {
    FOLD_OK = 0,
    FOLD_E_CAPTURE,     /* not a capture: not even HELLO could be read */
    FOLD_E_WEIGHT,      /* the weight does not apply to the capture's mode */
    FOLD_E_UNAVAILABLE, /* the profile does not know the weight's values */
    FOLD_E_NOMEM,
    FOLD_E_TASKS, /* --by-task: the capture has no tasks, or the weight is not kept by task */
};

/* How a frame's display text is kept.  A folded line has no escapes of
 * its own, so in the collapsed form a name is kept as escape.h shows it
 * and ';' becomes ':' as the names are read: frames that the format
 * cannot tell apart are one frame of the tree. */
enum fold_names {
    FOLD_NAMES_EXACT,     /* the text as it is (flame graphs escape it) */
    FOLD_NAMES_COLLAPSED, /* as fold_write_collapsed writes it */
};

/* Totals over the whole capture, events without a stack included. */
struct fold_totals {
    /* CPU */
    uint64_t samples; /* recorded samples, every state */
    uint64_t jett_samples, runtime_samples, waiting_samples, unavailable_samples;
    struct ticks ticks; /* the requested, coalesced and dropped ticks too */
    /* memory */
    uint64_t allocations, resizes, frees, allocated_bytes;
    /* freed and peak are known only while live_exact, retained only
     * while retained_exact (attrib_retained_exact) */
    bool live_exact, retained_exact;
    uint64_t freed_bytes, peak_live_bytes, retained_bytes;
    /* the chosen weight over every event, and over the events with a
     * stack (the tree's root value); with FOLD_WEIGHT_WALL both are the
     * recorded samples and the coalesced and dropped ticks */
    uint64_t weight_total, weight_attributed;
};

/* A frame of the tree.  Children are sorted by name, bytewise. */
struct fold_node {
    uint32_t name;        /* index into the name table; the root has none */
    uint32_t parent;      /* FOLD_NO_NODE for the root */
    uint32_t depth;       /* the root is 0 */
    uint32_t first_child; /* FOLD_NO_NODE when a leaf */
    uint32_t n_children;  /* children are nodes first_child.. in the child list */
    uint32_t func;        /* the function drawn (fold_node_func), FOLD_NO_FUNC
                           * for the root, FOLD_MANY_FUNCS when functions of
                           * one display text but different sources meet */
    uint64_t self, total;
};
#define FOLD_NO_NODE UINT32_MAX
#define FOLD_NO_FUNC UINT32_MAX
#define FOLD_MANY_FUNCS (UINT32_MAX - 1)
/* The pseudo-frames of FOLD_WEIGHT_WALL: frame k of enum ticks_frame has
 * func FOLD_PSEUDO(k); <runtime>.<waiting> is FOLD_WAITING. */
#define FOLD_PSEUDO(k) (UINT32_MAX - 2 - (uint32_t)(k))
#define FOLD_WAITING FOLD_PSEUDO(TICKS_WAITING)
#define FOLD_ROOT 0

struct fold;

/* Reads the whole capture.  FOLD_OK with *out set, or an error with a
 * message in err ("byte N: message" for what is not a capture).  A
 * capture damaged after HELLO is folded as far as it was read, as the
 * profile reports it (partial, collector_failure), and fold_damage says
 * where it stopped. */
enum fold_status fold_read(struct capture_reader *r, enum fold_weight w, enum fold_names names,
                           struct fold **out, char *err, size_t errlen);
/* The same with a frame per task at the top of the tree ("task N";
 * "no task" for events of none), the task's stacks below it: a capture
 * of a run with tasks (capability task_attribution; FOLD_E_TASKS
 * otherwise), every weight but FOLD_WEIGHT_LIVE_AT_PEAK (FOLD_E_TASKS).
 * A frame's retained bytes are those of the allocations its task
 * created there, wherever they were freed. */
enum fold_status fold_read_by_task(struct capture_reader *r, enum fold_weight w,
                                   enum fold_names names, struct fold **out, char *err,
                                   size_t errlen);
/* The same from an aggregation that kept detail (agg_keep_detail), or
 * for FOLD_WEIGHT_DEFAULT only each node's self cost (agg_keep_node_self),
 * and has ended: for a reader that needs the aggregation for more than
 * the fold (a diff).  No damage is recorded. */
struct agg;
enum fold_status fold_of_agg(const struct agg *g, enum fold_weight w, enum fold_names names,
                             struct fold **out, char *err, size_t errlen);
void fold_free(struct fold *f);

uint8_t fold_mode(const struct fold *f);            /* enum wire_mode */
enum fold_weight fold_weight(const struct fold *f); /* never _DEFAULT */
const char *fold_weight_name(enum fold_weight w);   /* "samples", "allocated", ... */
/* NULL when the profile is complete, else its partial reason
 * ("collector_failure", "stack_capture_limit", ...). */
const char *fold_partial_reason(const struct fold *f);
/* "byte N: message" when reading stopped at damage, else NULL. */
const char *fold_damage(const struct fold *f);
enum fold_names fold_name_form(const struct fold *f);
bool fold_by_task(const struct fold *f); /* read by fold_read_by_task */
const struct fold_totals *fold_totals(const struct fold *f);

/* The tree: node FOLD_ROOT is the root, whose total is weight_attributed. */
uint32_t fold_node_count(const struct fold *f);
const struct fold_node *fold_node(const struct fold *f, uint32_t id);
/* The i-th child (0 <= i < n_children) of a node. */
uint32_t fold_child(const struct fold *f, const struct fold_node *n, uint32_t i);
/* A frame's display text (not NUL-terminated; may hold any UTF-8). */
const char *fold_node_name(const struct fold *f, const struct fold_node *n, size_t *len);
uint32_t fold_max_depth(const struct fold *f);

/* A frame's function as the profile names it: namespace and function
 * (the display text split), the source's logical path and origin (enum
 * wire_origin; -1 and an empty path when unknown) and the declaration's
 * first line (0 when unknown). */
struct fold_func {
    const char *ns, *fn, *path; /* not NUL-terminated */
    size_t ns_len, fn_len, path_len;
    int origin;
    uint64_t line;
};
/* False for the root and for a frame of several functions. */
bool fold_node_func(const struct fold *f, const struct fold_node *n, struct fold_func *out);

/* Writes the folded lines, `root;caller;leaf VALUE`, one per distinct
 * stack with a non-zero self value, sorted bytewise by the stack text,
 * straight from the tree (memory stays at the size of the tree, never of
 * the text).  The fold must be read with FOLD_NAMES_COLLAPSED, so that
 * stacks the format cannot tell apart are already one.  0, or -1 on a
 * write error, when out of memory or for a fold of exact names. */
int fold_write_collapsed(const struct fold *f, FILE *out);

#endif
