/*
 * diff: per-function change between two profiles of the same mode
 * (`jett profile diff`, schema jett.profile-diff.v2).
 *
 * Both reports are built with no threshold and no limit, so every
 * function with a bucket is compared.  Functions are matched by identity
 * without the declaration line (namespace, function, origin, path), so a
 * function that moved is still the same function; several functions of
 * one name in one file are paired in declaration order.  Rows are ordered
 * by the absolute change in self samples (CPU: where the time itself went;
 * the changes sum to the change in attributed samples) then in inclusive
 * samples, or in allocated bytes (memory), then by the bottleneck
 * tie-break keys.  Each CPU change is tested against sampling noise
 * (diff_binomial_p); memory counts are exact, so every change is real.
 *
 * A side that is not complete may lack functions that ran (a budget ran
 * out before their first event) or, for other reasons, count a function
 * short: such rows are not comparable (diff_side_trust), never appeared
 * or disappeared, and come after the compared rows.
 */
#ifndef JETT_DAEMON_DIFF_H
#define JETT_DAEMON_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/rank.h"
#include "proto/toon.h"

enum diff_change {
    DIFF_UNCHANGED,
    DIFF_CHANGED,
    DIFF_APPEARED,
    DIFF_DISAPPEARED,
    DIFF_NOT_COMPARABLE
};

/* A change's verdict: beyond sampling noise, within it, no change at
 * all, not testable (a single measurement such as wall time), or not
 * comparable (a partial side). */
enum diff_verdict { DIFF_SIGNIFICANT, DIFF_NOISE, DIFF_NONE, DIFF_UNTESTED, DIFF_INCOMPARABLE };

/* Which way a count went: for sample counts at the ratio of the rates
 * (diff_samples_direction), for byte counts as they are. */
enum diff_direction { DIFF_GREW, DIFF_SHRANK, DIFF_SAME, DIFF_NO_DIRECTION };

/* How far a side's function numbers can be trusted: all of them
 * (complete); those of the functions it holds, a function it lacks
 * having possibly run after a budget ran out (cpu_metadata_limit,
 * retention_metadata_limit); none (any other partial reason, or
 * unavailable). */
enum diff_trust { DIFF_TRUST_ALL, DIFF_TRUST_HELD, DIFF_TRUST_NONE };
enum diff_trust diff_side_trust(const struct rank_report *r);
/* A side's status as the table and the flame graph name it: "complete",
 * "partial (REASON)" or "unavailable"; returns buf. */
#define DIFF_STATUS_LEN 48
const char *diff_status_text(const struct rank_report *r, char buf[DIFF_STATUS_LEN]);

/* The level of the CPU test: a change is significant when its two-sided
 * p-value is below it. */
#define DIFF_LEVEL 0.01

/* What a diff keeps of a report's entry: identity and numbers, so that
 * the reports' entries can be freed before the diff is rendered. */
struct diff_side {
    struct rank_str ns, fn, path; /* the report's (detached) strings */
    uint64_t line;
    int origin;
    uint64_t primary, secondary, retained_bytes, live_at_peak_bytes;
};

struct diff_row {
    struct diff_side base, neu;
    bool has_base, has_neu; /* false on the side it is missing from */
    enum diff_change change;
    /* ordering: |change| of self samples then of inclusive samples at the
     * ratio of the rates (cpu, diff_samples_change), of allocated bytes
     * then of retained bytes (memory) */
    unsigned __int128 key, key2;
    /* cpu: inclusive and self samples tested (diff_samples_verdict);
     * memory: verdict only, significant for any change; all
     * DIFF_INCOMPARABLE when change is DIFF_NOT_COMPARABLE */
    enum diff_verdict verdict, self_verdict;
    enum diff_direction direction, self_direction; /* cpu */
    double p, self_p;
};

/* One compared total: CPU wall_ms, process_cpu_ms and the samples by
 * state; memory allocation_count, allocated, freed, peak live and
 * retained bytes.  RANK_NA where a side does not know it. */
struct diff_total {
    const char *name;
    uint64_t base, neu;
    enum diff_verdict verdict; /* untested for the milliseconds */
    double p;                  /* the sample counts' p-value, else 1 */
};

#define DIFF_MAX_TOTALS 8

/* A waiting call site compared (cpu): its function and position as the
 * side that has it gives them, its waiting samples on each side (0 where
 * it is missing, RANK_NA there when it is not comparable), and the
 * binomial test and direction of the change (DIFF_INCOMPARABLE and
 * DIFF_NO_DIRECTION when it is not comparable, by the functions' rule). */
struct diff_wait {
    struct rank_str ns, fn, path;
    int origin;
    uint64_t line, column; /* RANK_NA: unknown */
    uint64_t base, neu;
    enum diff_verdict verdict;
    enum diff_direction direction;
    double p;
};

struct diff {
    /* the reports' headers and totals; their entries are not used once
     * the diff is built (rank_free_entries) */
    const struct rank_report *base, *neu;
    struct diff_row *rows;
    size_t n;
    /* cpu: every waiting call site of either side (the reports' all_waits,
     * rank_options.all_waits), by |change| then identity and position */
    struct diff_wait *waits;
    size_t n_waits;
};

/* The names of enum diff_change, diff_verdict and diff_direction as
 * both renderers print them. */
extern const char *const diff_change_names[];
extern const char *const diff_verdict_names[];
extern const char *const diff_direction_names[];
/* A side's primary (0), retained (1), live-at-peak (2) or secondary (3)
 * value; 0 for the side a function is missing from. */
uint64_t diff_value(const struct diff_side *e, bool present, int which);
/* The same of a row's BASE (neu false) or NEW side: RANK_NA on the side
 * a function is missing from when the row is not comparable (the side
 * may have run it uncounted). */
uint64_t diff_row_value(const struct diff_row *r, bool neu, int which);

/* Whether both sides count a function (or a waiting call site) exactly,
 * given which sides hold it: neither side untrusted, and a side it is
 * missing from complete (a partial one may have run it without a
 * bucket). */
bool diff_comparable(const struct diff *d, bool has_base, bool has_neu);

/* The totals both renderers show, in their order; returns how many. */
size_t diff_totals(const struct diff *d, struct diff_total out[DIFF_MAX_TOTALS]);
/* b / a in ten-thousandths, rounded half away from zero; false when a is
 * 0 or either is unavailable (no ratio). */
bool diff_ratio(uint64_t a, uint64_t b, int64_t *ten_thousandths);

/* The identity order of sides (namespace, function, origin, path, then
 * declaration line): <0, 0, >0. */
int diff_side_cmp(const struct diff_side *x, const struct diff_side *y);
/* The same without the line: what matches a function across captures. */
int diff_side_match_cmp(const struct diff_side *x, const struct diff_side *y);

/* The rank options that make a report hold every function. */
struct rank_options diff_rank_options(void);

/* A report's entries as sides, sorted by identity. */
struct diff_sides {
    struct diff_side *v;
    size_t n;
};

/* Takes a report's entries as sides and frees the entries (a diff holds
 * two lists of numbers while it reads the second capture, not two
 * reports).  The report's header and detached strings stay.  0, or -1
 * when out of memory (the entries stay). */
int diff_sides_take(struct rank_report *r, struct diff_sides *out);
void diff_sides_free(struct diff_sides *s);

/* 0, or -1 with a message (different modes, out of memory).  The rows
 * copy the sides: these may be freed afterwards; the reports' headers and
 * strings must outlive the diff. */
int diff_build(const struct rank_report *base, const struct diff_sides *bs,
               const struct rank_report *neu, const struct diff_sides *ns, struct diff *out,
               char *err, size_t errlen);
void diff_free(struct diff *d);

/* The diff's waiting call sites from its reports' all_waits (diff_wait.c,
 * called by diff_build): 0, or -1 when out of memory. */
int diff_waits_build(struct diff *d);

/* The jett.profile-diff.v1 document as a TOON tree ({"diff": ...}) that
 * holds copies of everything it shows: the diff and its reports can be
 * freed before it is encoded (a diff of 50,000 functions is a large
 * tree).  Encode with toon_encode; failures surface there. */
struct toon_value *diff_toon(const struct diff *d);
/* The human table, ending with a newline.  0 or -1. */
int diff_render_human(const struct diff *d, char **out, size_t *len);

/* The exact two-sided binomial test of two sample counts: under "the
 * same time was spent" x1 of the x0 + x1 samples fall to NEW with
 * probability pi = rate1 / (rate0 + rate1) (a count is proportional to
 * time x rate).  Returns min(1, 2 x the smaller tail P(X <= x1) or
 * P(X >= x1)), X ~ Binomial(x0 + x1, pi); 1 when both counts are 0. */
double diff_binomial_p(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1);
/* The direction of a change of sample counts: the sign of x1 r0 - x0 r1,
 * NEW's count against BASE's at the ratio of the rates (both taken as
 * equal when either is 0, as diff_binomial_p takes them). */
enum diff_direction diff_samples_direction(uint64_t x0, uint64_t x1, uint32_t rate0,
                                           uint32_t rate1);
/* The size of a change of sample counts, |x1 r0 - x0 r1| (rates as
 * diff_samples_direction takes them): what CPU rows are ordered by, so
 * that at different rates a function whose time did not change does not
 * come first because its count fell with the rate. */
unsigned __int128 diff_samples_change(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1);
/* The verdict on a change of sample counts: DIFF_NONE when its
 * direction is DIFF_SAME (p = 1), else significant when
 * diff_binomial_p < DIFF_LEVEL; *p gets the p-value. */
enum diff_verdict diff_samples_verdict(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1,
                                       double *p);

/* Percentage points x 100 (rounded half away from zero) of
 * n1/d1 - n0/d0, a zero denominator counting as a zero share. */
int64_t diff_points_hundredths(uint64_t n0, uint64_t d0, uint64_t n1, uint64_t d1);

#endif
