/*
 * cgexport: a capture as a Callgrind 1 profile (`jett profile export
 * --format callgrind`), for KCachegrind and callgrind_annotate.
 *
 * CPU captures: `events: Samples`; each `jett` sample is one unit of self
 * cost at its leaf function and leaf statement line, and one unit on
 * every call edge of its stack (frame to called frame, at the call's
 * line): a call's cost is what was observed below it, as Callgrind
 * records a call's inclusive cost, so every called function has its
 * callers' edges.  A function's self cost plus its outgoing call costs
 * (what callgrind_annotate --inclusive=yes adds up) counts a sample once
 * per frame of the function on its stack: the profile's inclusive count
 * for a function that does not recurse, more for one that does, never
 * below its self cost.  `calls=` counts the samples that crossed the
 * edge (a sampling profile does not know call counts).
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
 * Files are logical paths; a function without a source is in file `???`
 * at line 0.  Output is deterministic: functions in identity order,
 * lines ascending.
 */
#ifndef JETT_PROTO_CGEXPORT_H
#define JETT_PROTO_CGEXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "proto/capture.h"

/* 0; 1 when the capture was damaged after HELLO (what was read is
 * written, as the profile reports it; err says where it stopped); -1
 * with a message in err when nothing was written (not a capture, out of
 * memory, a write error). */
int cgexport_write(struct capture_reader *r, FILE *out, char *err, size_t errlen);

#endif
