/*
 * cgexport: a capture as a Callgrind 1 profile (`jett profile export
 * --format callgrind`), for KCachegrind and callgrind_annotate.
 *
 * CPU captures: `events: Samples`; each `jett` sample is one unit of self
 * cost at its leaf frame and leaf statement line, and one unit on every
 * call edge of its stack (frame to called frame, at the call's line): a
 * call's cost is what was observed below it, as Callgrind records a
 * call's inclusive cost, so every called function has its callers'
 * edges.  `calls=` is the run's exact count of the calls along the edge
 * where the CALLS record gives it for that edge, the most the edge can
 * have made where its call sites are shared with other edges, and the
 * samples that crossed it where the count is unknown (cgexport-internal.h,
 * cgcalls.c); a memory capture's counts the events that crossed it.
 *
 * Recursion levels are named apart, as valgrind --separate-recs does: a
 * frame whose display text `ns.name` already stands k - 1 times above it
 * on its stack is at level k and belongs to the function `ns.name'k`
 * (`ns.name` at level 1); levels past CGEXPORT_LEVELS are folded into
 * that last level, and a call into a frame past it carries nothing but
 * its count.  callgrind_annotate --inclusive=yes takes a called
 * function's inclusive cost as the sum of the calls into it (one never
 * called, main, has its self cost plus its calls): each function then
 * counts a sample once when it is on its stack.  `ns.name` has the
 * profile's inclusive samples of its display text, `ns.name'k` those
 * with k or more of its frames, and none exceeds the total.  Calls
 * between the levels keep the recursion visible (f -> g -> f'2 -> g'2
 * ...), and past the last level a cycle of zero-cost calls.
 *
 * The header's desc: lines give the profile's status, what calls= is on
 * how many edges, and for CPU the samples and ticks that are in no cost.
 *
 * Memory captures: `events: AllocBytes AllocCount`, weighted like the
 * profile: initial sizes (and one count) at the creating site, positive
 * resize growth at the resizing site; frees carry nothing.
 *
 * The numbers are the profile's: the capture is aggregated as `jett
 * profile replay` aggregates it, keeping per-node and per-leaf-span
 * quantities (agg_keep_detail, attrib.h); this file only derives the
 * call edges from the node tree and writes the text.
 *
 * Files are where the sources lie (diskpath.h) and names are `ns.name`,
 * both as escape.h shows text; a function without a source is in file
 * `???` at line 0.
 * Output is deterministic: functions in identity order, each followed
 * by its deeper levels, lines ascending.
 */
#ifndef JETT_PROTO_CGEXPORT_H
#define JETT_PROTO_CGEXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "daemon/export/ticks.h"
#include "proto/capture.h"

/* The deepest recursion level named apart (`ns.name'4`); deeper frames
 * belong to it. */
#define CGEXPORT_LEVELS 4

/* 0; 1 when the capture was damaged after HELLO (what was read is
 * written, as the profile reports it; err says where it stopped); -1
 * with a message in err when nothing was written (not a capture, out of
 * memory, a write error).  `ticks` (NULL: not wanted) gets the capture's
 * ticks (ticks.h). */
int cgexport_write(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                   size_t errlen);
/* The same with --weight samples named, what a CPU capture's profile
 * holds: -2 (nothing written, err says why) for a memory capture. */
int cgexport_write_samples(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                           size_t errlen);

#endif
