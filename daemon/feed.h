/* feed: decoded records into an aggregation, shared by live runs and
 * replays so that both produce the same profile from the same stream. */
#ifndef JETT_DAEMON_FEED_H
#define JETT_DAEMON_FEED_H

#include <stddef.h>

#include "daemon/agg.h"
#include "daemon/rank.h"
#include "proto/wire.h"

/* Feeds one record (an EVENTS record entry by entry, validated by the
 * decoder d); -1 when the decoder rejected an entry. */
int feed_record(struct agg *g, struct wire_decoder *d, const struct wire_record *rec);

/* Ends the stream and renders both faces of the report.  0 with malloc'd
 * texts, or -1 with a message. */
int feed_render(struct agg *g, const struct rank_options *opt, char **toon, size_t *toon_len,
                char **human, size_t *human_len, char *err, size_t errlen);

#endif
