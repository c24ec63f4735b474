/*
 * timeline: a memory capture's live Jett-heap bytes over time, the input
 * of `jett profile export --format timeline`.
 *
 * Time is the allocated bytes so far (massif's "B" unit: deterministic,
 * no clock), the value the live bytes of the tracked allocations.  The
 * capture is aggregated as `jett profile replay` aggregates it (its rules,
 * errors and budgets), and the aggregation reports every change of the
 * live bytes in stream order (agg_watch_live).  The series is kept in at
 * most TIMELINE_POINTS points: the start, the state at the end of each
 * column of allocated bytes (a column's width doubles whenever the
 * columns would pass the bound), the exact global peak (the first moment
 * the live bytes reached their maximum), the exact moment each drawn
 * site first held its most, the state after the last change that
 * allocated, and last the exact final state, the exit: the changes after
 * the last allocation (what is freed at exit) all happen at its allocated
 * bytes, so the exit is drawn apart, to the right of the axis.  The
 * creation sites (the function that created an allocation) whose own
 * maximum of live bytes is largest, at most TIMELINE_TOP_SITES of them,
 * have a series each; "other" holds the rest of the total (other sites
 * and allocations without a Jett stack), so the series sum to the total
 * at every point.  Which sites those are is known only at the end, so
 * the capture is aggregated once and its changes are kept, in stream
 * order, in a temporary file (12 bytes a change, in $TMPDIR or /tmp,
 * removed as soon as it is made); the second pass reads them back and
 * takes the chosen sites' values at the points, keeping memory at the
 * size of the sites and the points.  The capture may come from a pipe.
 */
#ifndef JETT_DAEMON_EXPORT_TIMELINE_H
#define JETT_DAEMON_EXPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/capture.h"

#define TIMELINE_POINTS 2000
#define TIMELINE_TOP_SITES 5

enum timeline_status {
    TIMELINE_OK = 0,
    TIMELINE_E_CAPTURE,     /* not a capture: not even HELLO could be read */
    TIMELINE_E_MODE,        /* a CPU capture */
    TIMELINE_E_UNAVAILABLE, /* the profile stopped tracking live allocations */
    TIMELINE_E_NOMEM,
    TIMELINE_E_TEMP, /* the temporary file of the changes failed */
};

/* A creation site: `namespace.function` (any UTF-8, not NUL-terminated),
 * its source's logical path ("" when unavailable) and declaration line
 * (0: unavailable), the most it held live at once and what it held at
 * the end. */
struct timeline_site {
    char *name;
    size_t name_len;
    char *path;
    uint32_t line;
    uint64_t max_live, retained;
};

/* The series: point i is at x[i] allocated bytes with total[i] live;
 * values[s * n_points + i] is site s's part (s < n_sites), and the
 * "other" part is total[i] minus their sum.  The last point is the exit
 * (at the allocated bytes of the one before it); every site's max_live is
 * among its values, and its retained is its last. */
struct timeline {
    const char *partial; /* the profile's partial reason, NULL: complete */
    char *damage;        /* where reading stopped early, NULL: it did not */
    uint64_t allocated, peak, peak_at, retained;
    uint32_t peak_point; /* the index of the peak's point */
    uint32_t n_points;
    uint64_t *x, *total;
    uint32_t n_sites;
    struct timeline_site sites[TIMELINE_TOP_SITES];
    uint64_t *values;
    /* the site holding the most at the end (retained > 0), any site */
    bool has_grower;
    struct timeline_site grower;
};

/* Reads the whole capture.  TIMELINE_OK with *out set, or an error with a
 * message in err.  A capture damaged after HELLO is read as far as it
 * goes, as the profile reports it, and damage says where it stopped. */
enum timeline_status timeline_read(struct capture_reader *r, struct timeline **out, char *err,
                                   size_t errlen);
void timeline_free(struct timeline *t);

/* Writes the SVG (timeline_svg.c).  0, or -1 on a write error. */
int timeline_write_svg(const struct timeline *t, FILE *out);

/* The text summary: the peak and where, retained at exit, the largest
 * growing site.  One line each, "jett: timeline: ..." */
void timeline_write_summary(const struct timeline *t, FILE *out);

#endif
