/*
 * flame_diff: a differential flame graph, `jett profile diff BASE NEW
 * --format svg`: NEW's flame graph (flame.h) with each frame coloured by
 * its function's change against BASE.
 *
 * A frame's function is found among the diff's rows by its NEW identity,
 * so functions are matched across the captures exactly as the diff
 * matches them (diff.h).  The change is that of the function's share of
 * its profile: CPU self samples over attributed samples, memory
 * allocated bytes over attributed allocated bytes, in percentage points.
 * Red: the share grew; blue: it shrank; the intensity is the change over
 * the largest change among the coloured functions.  Grey (neutral): no
 * change, a CPU change within sampling noise (the diff's binomial test,
 * p >= DIFF_LEVEL), a function the diff does not hold, or a frame of
 * several functions.  Each frame's tooltip shows before, after and the
 * change.
 */
#ifndef JETT_DAEMON_FLAME_DIFF_H
#define JETT_DAEMON_FLAME_DIFF_H

#include <stdio.h>

#include "daemon/diff.h"
#include "daemon/export/fold.h"

#define FLAME_DIFF_NEUTRAL "rgb(221,221,221)"

/* The colour of a change of `points` hundredths of a percentage point
 * when the largest is `max_points` (> 0): an rgb() text in out.
 * Exposed for the tests. */
void flame_diff_colour(int64_t points, int64_t max_points, char out[32]);

/* Writes the SVG of `neu`, the fold of the diff's NEW capture with its
 * default weight.  0, or -1 when out of memory or on a write error. */
int flame_diff_write_svg(const struct fold *neu, const struct diff *d, FILE *out);

#endif
