/*
 * speedscope: a capture as a speedscope profile
 * (https://www.speedscope.app/file-format-schema.json), for `jett profile
 * export --format speedscope`.
 *
 * One sampled profile whose samples are in the stream's order, so that
 * speedscope's "Time Order" view shows the run as it happened (with
 * tasks, first the profile of all tasks, then one per task).  The
 * capture is aggregated as `jett profile replay` aggregates it (its rules
 * and budgets); a sample is written for each entry
 * the aggregation took and attributed to a Jett stack:
 *   CPU: each `jett` sample, weight 1 (unit "none": the profile's sample
 *     counts), in tick order; runtime, waiting and unavailable samples
 *     have no Jett stack and are left out, as in the flame graph.  With
 *     --weight wall every requested tick is in: the waiting samples with
 *     a stack under a <runtime>.<waiting> frame, the other samples at
 *     the pseudo-frame of their state (ticks.h), in the stream's order,
 *     and after them, in the profile of all tasks, what has no place in
 *     it (the coalesced and dropped ticks) as one sample of its weight
 *     per pseudo-frame.
 *   memory: each allocation or growing resize with a Jett stack, in event
 *     order, weighted by its allocated bytes (unit "bytes": the initial
 *     size, or the growth), so a frame's total is its allocated bytes;
 *     frees and shrinking resizes carry no allocation pressure.
 * A frame is a function identity: `namespace.function`, the logical path
 * of its source and the line of its declaration (when known).  Nothing
 * else of a source (no literal, no excerpt) is written.
 */
#ifndef JETT_DAEMON_EXPORT_SPEEDSCOPE_H
#define JETT_DAEMON_EXPORT_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "daemon/export/ticks.h"
#include "proto/capture.h"

enum speedscope_status {
    SPEEDSCOPE_OK = 0,
    SPEEDSCOPE_E_CAPTURE, /* not a capture: not even HELLO could be read */
    SPEEDSCOPE_E_NOMEM,
    SPEEDSCOPE_E_WEIGHT, /* --weight wall with a memory capture */
};

struct speedscope;

/* Reads the whole capture.  SPEEDSCOPE_OK with *out set, or an error with
 * a message in err.  A capture damaged after HELLO is read as far as it
 * goes, as the profile reports it, and speedscope_damage says where it
 * stopped. */
enum speedscope_status speedscope_read(struct capture_reader *r, struct speedscope **out, char *err,
                                       size_t errlen);
/* Writes the JSON document.  0, or -1 on a write error. */
int speedscope_write(const struct speedscope *p, FILE *out);
const char *speedscope_damage(const struct speedscope *p);
/* The same as speedscope_read with `wall` (--weight wall, CPU captures):
 * every requested tick, the waiting samples that have a stack each with
 * the frame <runtime>.<waiting> above its leaf, what has no Jett stack at
 * its pseudo-frame (the frames after every function's, in the order of
 * enum ticks_frame); SPEEDSCOPE_E_WEIGHT for a memory capture. */
enum speedscope_status speedscope_read_weighted(struct capture_reader *r, bool wall,
                                                struct speedscope **out, char *err, size_t errlen);
void speedscope_free(struct speedscope *p);
/* The capture's ticks, for the note on those without a stack. */
const struct ticks *speedscope_ticks(const struct speedscope *p);

#endif
