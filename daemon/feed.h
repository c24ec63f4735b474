/* feed: decoded records and whole captures into an aggregation, shared by
 * every command that reads a capture so that all agree on one profile. */
#ifndef JETT_DAEMON_FEED_H
#define JETT_DAEMON_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agg.h"
#include "proto/capture.h"

/* Feeds one record (an EVENTS record entry by entry, validated by the
 * decoder d); -1 when the decoder rejected an entry. */
int feed_record(struct agg *g, struct wire_decoder *d, const struct wire_record *rec);

/* Reads a whole capture into g.  A read or decode error becomes the
 * profile's collector error and is copied to err ("byte N: message");
 * returns 1 then, else 0. */
int feed_capture(struct agg *g, struct capture_reader *r, char *err, size_t errlen);

/* The same, with fn called after each event entry is aggregated (one at
 * a time), with whether the aggregation took it without a collector
 * error: what an export that follows the stream's order reads. */
typedef agg_event_fn feed_event_fn;
int feed_capture_watched(struct agg *g, struct capture_reader *r, feed_event_fn fn, void *ctx,
                         char *err, size_t errlen);

/* The same as feed_capture, with pace called after each record with the
 * byte offset where that record began: a reader of two captures at once
 * may hold one of them back there (it returns when reading may go on). */
typedef void (*feed_pace_fn)(void *ctx, const struct agg *g, uint64_t offset);
int feed_capture_paced(struct agg *g, struct capture_reader *r, feed_pace_fn pace, void *ctx,
                       char *err, size_t errlen);

#endif
