/*
 * cgexport: a capture as a Callgrind 1 profile (`jett profile export
 * --format callgrind`), for KCachegrind and callgrind_annotate.
 *
 * CPU captures: `events: Samples`; each `jett` sample is one unit of self
 * cost at its leaf function and leaf statement line, and one unit of
 * inclusive cost on one call edge of every other function on its stack:
 * the edge from that function's outermost frame to the frame it called,
 * at the call's line.  So a function's self cost plus its outgoing call
 * costs is exactly its inclusive sample count (once per sample, also
 * under recursion), which is what callgrind_annotate --inclusive=yes adds
 * up.  `calls=` counts the samples that crossed the edge (a sampling
 * profile does not know call counts).
 *
 * Memory captures: `events: AllocBytes AllocCount`, weighted like the
 * profile: initial sizes (and one count) at the creating site, positive
 * resize growth at the resizing site; frees carry nothing.
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

/* 0, or -1 with a message in err ("byte N: ..." for a damaged capture). */
int cgexport_write(struct capture_reader *r, FILE *out, char *err, size_t errlen);

#endif
