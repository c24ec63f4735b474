/*
 * feed_entries: feed_record without runs, for the tests and the fuzz
 * target that check runs of ALLOC entries against single entries.
 */
#ifndef JETT_TESTS_FEED_ENTRIES_H
#define JETT_TESTS_FEED_ENTRIES_H

#include "daemon/feed.h"

/* feed_record, with every entry of an EVENTS record decoded and fed on
 * its own; -1 when the decoder rejected an entry. */
static inline int feed_record_entries(struct agg *g, struct wire_decoder *d,
                                      const struct wire_record *rec)
{
    if (rec->type != WIRE_EVENTS)
        return feed_record(g, d, rec);
    struct wire_events_iter it;
    struct wire_event ev;
    int rc;
    wire_events_begin(&it, &rec->u.events);
    while ((rc = wire_events_next(d, &it, &ev)) > 0)
        agg_events(g, &ev, 1);
    return rc < 0 ? -1 : 0;
}

#endif
