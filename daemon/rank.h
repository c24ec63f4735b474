/*
 * rank: turns a finished aggregation into the report model that both
 * renderers print, so the TOON object and the human report cannot
 * disagree.
 *
 * Eligibility compares exact integers: an entry is eligible when
 * impact * 10000 >= threshold_bp * denominator (128-bit), and the
 * denominator is non-zero.  Eligible entries are ordered by
 *   1. primary impact, descending (inclusive samples / allocated bytes);
 *   2. secondary, descending (self samples / allocation count);
 *   3. namespace, then function name, bytewise;
 *   4. source origin (project < dependency < stdlib), logical path
 *      bytewise, declaration start, declaration end;
 * where "unavailable" sorts after every value.  Ids never take part.
 * The first `limit` are emitted with ranks from 1.
 *
 * Percentages are kept as integer hundredths, rounded half away from zero
 * only for display.
 */
#ifndef JETT_DAEMON_RANK_H
#define JETT_DAEMON_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agg.h"

/* An unknown required number.  Byte counts can be 2^64 - 1 itself, so
 * theirs say "unknown" by a flag (live_unavailable) instead. */
#define RANK_NA UINT64_MAX
#define RANK_TOP 3 /* hot lines and call chains per entry */
#define RANK_MAX_SUGGESTIONS 2

/* A string with its length (names may hold any UTF-8). */
struct rank_str {
    const char *ptr; /* NULL: unavailable */
    size_t len;
};

struct rank_hot {
    struct rank_str path;
    uint64_t line, column;                      /* 1-based; RANK_NA when the span is unknown */
    uint64_t self_samples;                      /* cpu */
    uint64_t allocated_bytes, allocation_count; /* memory: an allocation line */
    char *code;                                 /* redacted excerpt, NULL: unavailable */
    size_t code_len;
    bool source_redacted;
};

struct rank_chain {
    uint64_t weight; /* samples (cpu) or bytes (memory) */
    char *chain;     /* "ns.fn > ns.fn" */
    size_t len;
    char *folded; /* the same with each run of one frame as "ns.fn ×N" */
    size_t folded_len;
};

struct rank_suggestion {
    const char *rule;
    char *text;
};

/* A call line (cpu): where (path, line, column, code; self_samples: its
 * inclusive samples), the calls made from it (RANK_NA: unavailable), its
 * share of the attributed samples and the callee in most of its samples. */
struct rank_call {
    struct rank_hot where;
    uint64_t calls;
    uint64_t percent_hundredths;
    struct rank_str callee_ns, callee_fn;
};

struct rank_entry {
    uint64_t rank;
    struct rank_str ns, fn, path;
    uint64_t line;               /* first line of the declaration, RANK_NA */
    int origin;                  /* enum wire_origin, -1: unavailable */
    uint64_t primary, secondary; /* cpu: inclusive, self; memory: allocated bytes, count */
    uint64_t percent_hundredths;
    uint64_t self_percent_hundredths; /* cpu: self samples of attributed samples */
    uint64_t calls;                   /* cpu: exact calls, RANK_NA: unavailable */
    /* memory mode only; primary is exact, freed and live at peak only
     * while live_unavailable is false, retained while
     * retained_unavailable is (they are RANK_NA otherwise) */
    uint64_t freed_bytes, retained_bytes, live_at_peak_bytes, resize_count;
    bool live_unavailable, retained_unavailable;
    struct rank_hot hot[RANK_TOP]; /* cpu hot lines, or memory allocation lines */
    unsigned n_hot;
    struct rank_call call_lines[RANK_TOP]; /* cpu */
    unsigned n_calls;
    struct rank_chain chains[RANK_TOP];
    unsigned n_chains;
    /* cpu: the callee taking most samples of the dominant call chain
     * (callee_fn.ptr NULL: none) and its samples on that chain */
    struct rank_str callee_ns, callee_fn;
    uint64_t callee_samples;
    struct rank_suggestion suggestions[RANK_MAX_SUGGESTIONS];
    unsigned n_suggestions;
    bool suggestions_unavailable; /* no source: nothing to point at */
};

/* A waiting call site (cpu): the waiting samples at one leaf statement,
 * and the dominant chain of its samples (chain NULL in all_waits). */
struct rank_wait {
    struct rank_str ns, fn;
    int origin;                  /* enum wire_origin, -1: unavailable */
    struct rank_hot where;       /* path, line, column; self_samples: the samples */
    uint64_t percent_hundredths; /* of waiting_samples */
    char *chain, *folded;        /* as rank_chain's */
    size_t chain_len, folded_len;
};

/* A task (DESIGN section 12): its number, entry function (namespace,
 * function, path, declaration line) and spawn site (path and line;
 * unavailable for main); samples and waiting samples (cpu) or allocated
 * and retained bytes (memory; retained only while not
 * retained_unavailable). */
struct rank_task {
    uint64_t task;
    struct rank_str ns, fn, path;
    uint64_t line;
    struct rank_str spawn_path;
    uint64_t spawn_line;
    uint64_t samples, waiting_samples;
    uint64_t allocated_bytes, retained_bytes;
    bool retained_unavailable;
};

/* The retained section (memory mode): rows listed, and whether the
 * profile holds the walk at all. */
#define RANK_RETAINED 10
enum rank_walk { RANK_WALK_UNAVAILABLE = 0, RANK_WALK_COMPLETE, RANK_WALK_PARTIAL };

/* A retained row: a holder and a creation-site function, or (remainder)
 * everything the listed rows leave out.  Strings are borrowed from the
 * aggregator (rank_detach copies them). */
struct rank_retained {
    bool remainder;
    struct rank_str holder_ns, holder_name; /* ptr NULL: no holder */
    struct rank_str holder_path;            /* NULL: no source */
    uint64_t holder_line;                   /* RANK_NA: unknown */
    struct rank_str ns, fn, path;           /* the function; NULL: unavailable */
    uint64_t line;
    uint64_t bytes, objects;
    bool numbers_unavailable; /* a remainder whose total is unknown */
};

/* A lead (jett-profile(7), "Leads"): one place to look first, taken
 * from the report's own rows and every function's numbers. */
enum rank_lead_kind {
    RANK_LEAD_TASK,      /* cpu: the task that ran most of every task's samples */
    RANK_LEAD_WAITING,   /* cpu: the first waiting call site, when waiting dominates */
    RANK_LEAD_SELF,      /* cpu: the emitted entry with the most self samples */
    RANK_LEAD_HOLDER,    /* memory: the binding holding the most at exit */
    RANK_LEAD_PEAK,      /* memory: the function with the most bytes live at the peak */
    RANK_LEAD_ALLOCATED, /* memory: the rank-1 bottleneck */
};
#define RANK_LEADS 3

struct rank_lead {
    enum rank_lead_kind kind;
    uint64_t task;               /* a task lead's number, else RANK_NA */
    struct rank_str ns, name;    /* a function, or a holder's binding */
    struct rank_str path;        /* NULL: unavailable */
    uint64_t line, column;       /* RANK_NA: unavailable */
    uint64_t value;              /* samples or bytes */
    uint64_t percent_hundredths; /* of the kind's whole (rank_lead_of) */
    uint64_t calls;              /* a self lead's calls, RANK_NA: unavailable */
    uint64_t others_waiting;     /* a task lead: every other task's waiting samples */
};

/* The name of a lead's kind, of its unit and of the total its percent
 * is of, as the TOON writes them. */
const char *rank_lead_kind_name(enum rank_lead_kind k);
const char *rank_lead_unit(enum rank_lead_kind k);
const char *rank_lead_of(enum rank_lead_kind k);

struct rank_cpu_totals {
    uint64_t requested_ticks, recorded_samples, attributed_samples, runtime_samples,
        waiting_samples, unavailable_samples, coalesced_ticks, dropped_ticks, truncated_stacks;
    uint64_t observed_rate_hundredths; /* samples per second x 100 */
    uint64_t wall_ms, process_cpu_ms;
};

/* Byte counts are exact up to 2^64 - 1; freed and peak are unavailable
 * (and RANK_NA) when live_unavailable is set, retained when
 * retained_unavailable is (it is whenever live_unavailable is, and
 * without FINISH), allocated and attributed bytes when
 * allocated_unavailable is (only a profile made without the aggregation,
 * such as the launcher's fallback, sets it). */
struct rank_mem_totals {
    uint64_t allocation_count, resize_count, allocated_bytes, freed_bytes, peak_live_bytes,
        retained_bytes, attributed_allocated_bytes;
    bool live_unavailable, retained_unavailable, allocated_unavailable;
};

/* Overrides of the capture's threshold and limit (replay flags). */
struct rank_options {
    bool set_threshold, set_limit;
    uint32_t threshold_bp, limit;
    /* only the numbers of each entry: no hot lines, call chains or
     * suggestions (what a diff compares) */
    bool numbers_only;
    /* every waiting call site in all_waits, positions and samples only
     * (what a diff compares) */
    bool all_waits;
};

struct rank_report {
    int mode; /* enum wire_mode */
    enum agg_status status;
    enum agg_reason reason;
    const char *termination; /* "returned", ..., "unavailable" */
    const char *backend;
    const char *coverage;
    bool colour;
    uint32_t capabilities;
    uint32_t rate_hz, threshold_bp, limit;
    uint64_t cpu_budget, retention_budget;
    struct rank_cpu_totals cpu;
    struct rank_mem_totals mem;
    struct rank_entry *entries; /* emitted entries, in rank order */
    size_t n_entries;
    uint64_t eligible, emitted, truncated;
    struct rank_wait waits[RANK_TOP]; /* cpu: the top waiting call sites */
    unsigned n_waits;
    /* with task attribution: the top tasks, at most `limit`, by samples
     * or allocated bytes then number; has_tasks false: no tasks field */
    bool has_tasks;
    struct rank_task *tasks;
    size_t n_tasks;
    /* every task's count and sums (not only those listed), for shares */
    uint64_t task_count, task_samples, task_allocated;
    struct rank_wait *all_waits; /* rank_options.all_waits: every site, in no order */
    size_t n_all_waits;
    struct rank_lead leads[RANK_LEADS]; /* in the order jett-profile(7) gives */
    unsigned n_leads;
    bool leads_unavailable; /* a budget may have left the places out */
    enum rank_walk walk;    /* memory: the retained section */
    struct rank_retained retained[RANK_RETAINED + 1];
    unsigned n_retained;
    /* the holder of the most bytes over all its groups (bytes: their sum;
     * the function fields are one group's) */
    struct rank_retained top_holder;
    bool has_top_holder;
    uint64_t collector_errors;
    const char *collector_error; /* first message, "" when none */
    char *arena;                 /* the strings, once detached */
};

/* Builds the report (borrowing strings from `a`, which must outlive it).
 * Returns 0, or -1 when memory runs out. */
int rank_build(const struct agg *a, const struct rank_options *opt, struct rank_report *out);
void rank_free(struct rank_report *r);
/* Frees the entries only: a detached report's strings stay. */
void rank_free_entries(struct rank_report *r);
/* Copies every string the report borrows from its aggregator into memory
 * of its own, so that the aggregator can be freed first (a diff holds two
 * reports, not two aggregators).  0, or -1 when out of memory (the report
 * still borrows). */
int rank_detach(struct rank_report *r);

/* Whether a CPU report shows where it waited before what it ran: the
 * waiting samples are at least the attributed samples. */
bool rank_waits_first(const struct rank_report *r);

/* n * 10000 / d rounded half away from zero (d > 0): a percentage in
 * hundredths. */
uint64_t rank_percent_hundredths(uint64_t n, uint64_t d);
/* True when n * 10000 >= threshold_bp * d, computed without overflow. */
bool rank_meets(uint64_t n, uint64_t d, uint32_t threshold_bp);

/* Command-line values, validated as DESIGN section 3 says (before anything
 * is loaded).  PERCENT matches ^[0-9]+(\.[0-9]{1,2})?$ and is at most 100,
 * stored as basis points; COUNT is a plain decimal integer 1..100.
 * 0, or -1 when malformed or out of range. */
int rank_parse_percent(const char *s, uint32_t *bp);
int rank_parse_limit(const char *s, uint32_t *limit);

#endif
