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
 */
#ifndef JETT_DAEMON_DIFF_H
#define JETT_DAEMON_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/rank.h"
#include "proto/toon.h"

enum diff_change { DIFF_UNCHANGED, DIFF_CHANGED, DIFF_APPEARED, DIFF_DISAPPEARED };

/* A change's verdict: beyond sampling noise, within it, no change at
 * all, or not testable (a single measurement such as wall time). */
enum diff_verdict { DIFF_SIGNIFICANT, DIFF_NOISE, DIFF_NONE, DIFF_UNTESTED };

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
    /* ordering: |change| of self samples then of inclusive samples (cpu),
     * of allocated bytes then of retained bytes (memory) */
    uint64_t key, key2;
    /* cpu: inclusive and self samples tested (diff_samples_verdict);
     * memory: verdict only, significant for any change */
    enum diff_verdict verdict, self_verdict;
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
 * it is missing), and the binomial test of the change. */
struct diff_wait {
    struct rank_str ns, fn, path;
    int origin;
    uint64_t line, column; /* RANK_NA: unknown */
    uint64_t base, neu;
    enum diff_verdict verdict;
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

/* The names of enum diff_change and enum diff_verdict as both
 * renderers print them. */
extern const char *const diff_change_names[];
extern const char *const diff_verdict_names[];
/* A side's primary (0), retained (1), live-at-peak (2) or secondary (3)
 * value; 0 for the side a function is missing from. */
uint64_t diff_value(const struct diff_side *e, bool present, int which);

/* The totals both renderers show, in their order; returns how many. */
size_t diff_totals(const struct diff *d, struct diff_total out[DIFF_MAX_TOTALS]);
/* b / a in ten-thousandths, rounded half away from zero; false when a is
 * 0 or either is unavailable (no ratio). */
bool diff_ratio(uint64_t a, uint64_t b, int64_t *ten_thousandths);

/* The identity order of sides (namespace, function, origin, path, then
 * declaration line): <0, 0, >0. */
int diff_side_cmp(const struct diff_side *x, const struct diff_side *y);

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
/* The `waiting` table of the document, and the human table's section. */
struct toon_value *diff_waits_toon(const struct diff *d);
void diff_waits_human(FILE *f, const struct diff *d);

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
/* The verdict on a change of sample counts: DIFF_NONE when equal, else
 * significant when diff_binomial_p < DIFF_LEVEL; *p gets the p-value. */
enum diff_verdict diff_samples_verdict(uint64_t x0, uint64_t x1, uint32_t rate0, uint32_t rate1,
                                       double *p);

/* Percentage points x 100 (rounded half away from zero) of
 * n1/d1 - n0/d0, a zero denominator counting as a zero share. */
int64_t diff_points_hundredths(uint64_t n0, uint64_t d0, uint64_t n1, uint64_t d1);

#endif
