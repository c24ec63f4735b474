/*
 * pprof: a capture as pprof's gzipped profile.proto (`jett profile export
 * --format pprof`), for `go tool pprof` and the profilers that read it.
 *
 * The numbers are the profile's: the capture is aggregated as `jett
 * profile replay` aggregates it, keeping each stack node's quantities
 * split by leaf statement (agg_keep_node_lines_only, attrib.h); this file only
 * names them and hands them to protobuf-c (the messages are generated
 * from daemon/export/profile.proto) and zlib.
 *
 * One Function per Jett function identity: name and system name
 * `namespace.function` (as the folded export prints it), filename its
 * logical path ("" without a source), start_line its declaration line.
 * One Location per (function, line): a sample's leaf carries its leaf
 * statement's line, every caller frame the line of the call.  One
 * Sample per stack node and leaf line with a non-zero value.  Only names
 * and logical paths enter the string table, never source text.
 *
 * CPU captures: sample types samples/count and, when the rate is known,
 * cpu/nanoseconds (each sample is round(1e9 / rate_hz) ns, the period of
 * period type cpu/nanoseconds); the `jett` samples only, as the profile
 * attributes them.  Runtime, waiting and unavailable samples are charged
 * to no function (a waiting one with a stack neither), and coalesced and
 * dropped ticks have no stack: comments count them (ticks.h).
 *
 * Memory captures: alloc_objects/count (allocations created),
 * alloc_space/bytes (initial sizes at the creating stack, positive
 * resize growth at the resizing stack) and, while the profile tracked
 * every live allocation, inuse_space/bytes (bytes live at exit, at the
 * creating stack; the default sample type then, as in pprof heap
 * profiles).  When a stack created allocations on several lines, its
 * in-use bytes sit on a leaf location of line 0 (the line is not known).
 * Events without a Jett stack are counted in a comment only.
 *
 * Output is deterministic: samples in stack node order, then the
 * locations, functions and strings.
 */
#ifndef JETT_DAEMON_PPROF_H
#define JETT_DAEMON_PPROF_H

#include <stddef.h>
#include <stdio.h>

#include "daemon/export/ticks.h"
#include "proto/capture.h"

/* 0; 1 when the capture was damaged after HELLO (what was read is
 * written, as the profile reports it; err says where it stopped); -1
 * with a message in err when nothing usable was written (not a capture,
 * out of memory, a write error).  `ticks` (NULL: not wanted) gets the
 * capture's ticks. */
int pprof_write(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err, size_t errlen);
/* The same with --weight wall (CPU captures): sample types samples/count
 * and wall/nanoseconds, every requested tick.  The waiting samples with a
 * stack are included, each under a leaf Location of the function
 * <runtime>.<waiting> (no file, line 0) above its waiting function at
 * its line; what has no Jett stack is a Sample of one Location, a
 * pseudo-frame of ticks.h (no file, line 0), without a task label.  -2
 * (nothing written, err says why) for a memory capture. */
int pprof_write_wall(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                     size_t errlen);

#endif
