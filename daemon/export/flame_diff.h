/*
 * flame_diff: a differential flame graph, `jett profile diff BASE NEW
 * --format svg`: NEW's flame graph (flame.h) with each frame coloured by
 * its function's change against BASE.
 *
 * A frame's function is found among the diff's rows by its NEW identity,
 * so functions are matched across the captures exactly as the diff
 * matches them (diff.h).  The colour tells the table's story: the change
 * of the function's own count, self samples (CPU, compared at the ratio
 * of the rates as the binomial test compares them) or allocated bytes
 * (memory), never of its share.  Red: the count grew; blue: it shrank;
 * the intensity is the change over the largest among the coloured
 * functions.  Grey (neutral): no change, a CPU change within sampling
 * noise (p >= DIFF_LEVEL), a function that is not comparable (a side is
 * partial), a function the diff does not hold, or a frame of several
 * functions.  Each frame's tooltip shows before, after and the change in
 * the table's words; the heading gives both sides' status and a legend.
 */
#ifndef JETT_DAEMON_FLAME_DIFF_H
#define JETT_DAEMON_FLAME_DIFF_H

#include <stdio.h>

#include "daemon/diff.h"
#include "daemon/export/fold.h"

#define FLAME_DIFF_NEUTRAL "rgb(221,221,221)"

/* The colour of a change that grew (else shrank) at intensity t, its
 * size over the largest coloured one (0..1): an rgb() text in out.
 * Exposed for the tests. */
void flame_diff_colour(bool grew, double t, char out[32]);

/* Writes the SVG of `neu`, the fold of the diff's NEW capture with its
 * default weight.  0, or -1 when out of memory or on a write error. */
int flame_diff_write_svg(const struct fold *neu, const struct diff *d, FILE *out);

#endif
