/*
 * diff: per-function change between two profiles of the same mode
 * (`jett profile diff`, schema jett.profile-diff.v1).
 *
 * Both reports are built with no threshold and no limit, so every
 * function with a bucket is compared; functions are matched by identity
 * (namespace, function, origin, path, declaration line).  CPU rows carry
 * the change in share of attributed samples in percentage points (exact:
 * every row's difference has the same denominator, so rows are ordered by
 * exact integers) plus the counts; memory rows the change in allocated,
 * retained and live-at-peak bytes.  Rows are ordered by absolute change,
 * then by the bottleneck tie-break keys.
 */
#ifndef JETT_DAEMON_DIFF_H
#define JETT_DAEMON_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/rank.h"
#include "proto/toon.h"

enum diff_change { DIFF_UNCHANGED, DIFF_CHANGED, DIFF_APPEARED, DIFF_DISAPPEARED };

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
    __int128 key; /* |change| numerator, for ordering */
};

struct diff {
    /* the reports' headers and totals; their entries are not used once
     * the diff is built (rank_free_entries) */
    const struct rank_report *base, *neu;
    struct diff_row *rows;
    size_t n;
};

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

/* The jett.profile-diff.v1 document as a TOON tree ({"diff": ...}) that
 * holds copies of everything it shows: the diff and its reports can be
 * freed before it is encoded (a diff of 50,000 functions is a large
 * tree).  Encode with toon_encode; failures surface there. */
struct toon_value *diff_toon(const struct diff *d);
/* The human table, ending with a newline.  0 or -1. */
int diff_render_human(const struct diff *d, char **out, size_t *len);

/* Percentage points x 100 (rounded half away from zero) of
 * n1/d1 - n0/d0, a zero denominator counting as a zero share. */
int64_t diff_points_hundredths(uint64_t n0, uint64_t d0, uint64_t n1, uint64_t d1);

#endif
