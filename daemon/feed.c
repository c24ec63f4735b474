/* feed: records and captures -> agg. */
#include <stdio.h>

#include "daemon/attrib.h"
#include "daemon/feed.h"
#include "proto/wire_compact.h"

/* A memory profile's entries: runs of ALLOC entries are read in place
 * (within L1-sized pieces, checked by the decoder's rule as the
 * aggregation reads them; with tasks, compact ones only); the entry that
 * ends a run (a STACK, a bad entry, the end of the frame) goes the
 * ordinary way, which takes or reports it. */
static int feed_alloc_runs(struct agg *g, struct wire_decoder *d, struct wire_events_iter *it,
                           bool tasks)
{
    enum { PIECE = 512 };
    for (;;) {
        if (it->p < it->end && it->p[0] >= WIRE_ENTRY_ALLOCATE &&
            it->p[0] <= WIRE_ENTRY_RESIZE_AGAIN) {
            struct wire_compact_rule rule;
            uint32_t room;
            const uint8_t *run = wire_events_compact_open(d, it, &room, &rule), *to = run;
            size_t n = room > 0 ? agg_mem_compact_run(g, run, it->end, room, &rule, &to) : 0;
            wire_events_compact_close(d, it, &rule, to, (uint32_t)n);
        } else if (!tasks) {
            struct wire_alloc_rule rule;
            size_t room;
            const uint8_t *run = wire_events_alloc_open(d, it, PIECE, &room, &rule);
            size_t n = room > 0 ? agg_mem_run(g, run, room, &rule) : 0;
            wire_events_alloc_close(d, it, &rule, n);
            if (n == PIECE)
                continue;
        }
        struct wire_event ev;
        int rc = wire_events_next(d, it, &ev);
        if (rc <= 0)
            return rc;
        agg_events(g, &ev, 1);
    }
}

/* An EVENTS record's entries, each followed by fn, in batches as below. */
static int feed_watched(struct agg *g, struct wire_decoder *d, struct wire_events_iter *it,
                        feed_event_fn fn, void *ctx)
{
    struct wire_event ev[256];
    size_t n = 0;
    int rc;
    while ((rc = wire_events_next(d, it, &ev[n])) > 0)
        if (++n == sizeof ev / sizeof ev[0])
            agg_events_each(g, ev, n, fn, ctx), n = 0;
    agg_events_each(g, ev, n, fn, ctx);
    return rc;
}

static int feed_one(struct agg *g, struct wire_decoder *d, const struct wire_record *rec,
                    feed_event_fn fn, void *ctx)
{
    switch (rec->type) {
    case WIRE_HELLO:
        return agg_hello(g, &rec->u.hello), 0;
    case WIRE_SOURCE:
        return agg_source(g, &rec->u.source), 0;
    case WIRE_FUNC:
        return agg_func(g, &rec->u.func), 0;
    case WIRE_FINISH:
        return agg_finish(g, &rec->u.finish), 0;
    case WIRE_CALLS:
        return agg_calls(g, &rec->u.calls), 0;
    case WIRE_RETAINED:
        return agg_retained(g, &rec->u.retained), 0;
    case WIRE_EVENTS:
        break;
    default:
        return 0;
    }
    struct wire_events_iter it;
    wire_events_begin(&it, &rec->u.events);
    if (fn)
        return feed_watched(g, d, &it, fn, ctx);
    if (agg_takes_alloc_runs(g))
        return feed_alloc_runs(g, d, &it, attrib_tasks_on(g));
    /* Batches let the aggregation prefetch its tables. */
    struct wire_event ev[256];
    size_t n = 0;
    int rc;
    while ((rc = wire_events_next(d, &it, &ev[n])) > 0)
        if (++n == sizeof ev / sizeof ev[0])
            agg_events(g, ev, n), n = 0;
    agg_events(g, ev, n);
    return rc;
}

int feed_record(struct agg *g, struct wire_decoder *d, const struct wire_record *rec)
{
    return feed_one(g, d, rec, NULL, NULL);
}

/* The whole capture, each event entry watched by fn and each record
 * followed by pace (either NULL: none). */
static int feed_all(struct agg *g, struct capture_reader *r, feed_event_fn fn, void *ctx,
                    feed_pace_fn pace, void *pace_ctx, char *err, size_t errlen)
{
    struct wire_record rec;
    int rc;
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        if (feed_one(g, capture_reader_decoder(r), &rec, fn, ctx) < 0) {
            capture_reader_decode_error(r, err, errlen);
            agg_fail(g, err);
            return 1;
        }
        if (pace)
            pace(pace_ctx, g, capture_reader_offset(r));
    }
    if (rc == 0)
        return 0;
    snprintf(err, errlen, "%s", capture_reader_error(r));
    agg_fail(g, err);
    return 1;
}

int feed_capture_watched(struct agg *g, struct capture_reader *r, feed_event_fn fn, void *ctx,
                         char *err, size_t errlen)
{
    return feed_all(g, r, fn, ctx, NULL, NULL, err, errlen);
}

int feed_capture_paced(struct agg *g, struct capture_reader *r, feed_pace_fn pace, void *ctx,
                       char *err, size_t errlen)
{
    return feed_all(g, r, NULL, NULL, pace, ctx, err, errlen);
}

int feed_capture(struct agg *g, struct capture_reader *r, char *err, size_t errlen)
{
    return feed_all(g, r, NULL, NULL, NULL, NULL, err, errlen);
}
