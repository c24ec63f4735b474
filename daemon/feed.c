/* feed: records -> agg, and agg -> rendered report. */
#include <stdio.h>
#include <stdlib.h>

#include "daemon/feed.h"
#include "daemon/render.h"

int feed_record(struct agg *g, struct wire_decoder *d, const struct wire_record *rec)
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
    case WIRE_EVENTS:
        break;
    default:
        return 0;
    }
    struct wire_events_iter it;
    struct wire_event ev;
    int rc;
    wire_events_begin(&it, &rec->u.events);
    while ((rc = wire_events_next(d, &it, &ev)) > 0)
        agg_event(g, &ev);
    return rc;
}

int feed_render(struct agg *g, const struct rank_options *opt, char **toon, size_t *toon_len,
                char **human, size_t *human_len, char *err, size_t errlen)
{
    struct rank_report rep;
    agg_end(g);
    *toon = *human = NULL;
    if (rank_build(g, opt, &rep) != 0) {
        snprintf(err, errlen, "out of memory building the report");
        return -1;
    }
    int rc = render_toon(&rep, toon, toon_len, err, errlen);
    if (rc == 0 && render_human(&rep, human, human_len) != 0) {
        snprintf(err, errlen, "out of memory rendering the report");
        free(*toon);
        *toon = NULL;
        rc = -1;
    }
    rank_free(&rep);
    return rc;
}
