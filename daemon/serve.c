/* serve: the daemon's libevent loop over one launcher socket. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "daemon/agg.h"
#include "daemon/feed.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "daemon/serve.h"

/* One launcher connection: reading until RESULT is queued, then writing
 * it out and leaving the loop. */
struct serve {
    struct event_base *base;
    struct bufferevent *bev;
    struct wire_decoder *dec;
    struct agg *agg;
    bool answered;
    int status;
};

static void serve_send(struct serve *s, msgpack_sbuffer *sb)
{
    if (bufferevent_write(s->bev, sb->data, sb->size) != 0)
        s->status = 1;
    msgpack_sbuffer_destroy(sb);
}

/* The first capability the mode needs that the backend lacks, or NULL. */
static const char *serve_missing(const struct wire_hello *h)
{
    static const uint32_t need[2] = {
        WIRE_CAP_CPU_TICK_SOURCE | WIRE_CAP_SAFE_STACK_CAPTURE,
        WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS,
    };
    uint32_t miss = need[h->mode == WIRE_MODE_MEMORY] & ~h->capabilities;
    for (int i = 0; i < WIRE_CAP_COUNT; i++)
        if (miss & (1u << i))
            return wire_capability_names[i];
    return NULL;
}

/* Queues RESULT (profile and report) and stops reading. */
static void serve_answer(struct serve *s)
{
    if (s->answered)
        return;
    s->answered = true;
    agg_end(s->agg);
    agg_release_records(s->agg); /* ranking does not read them */
    struct rank_report rep;
    char *toon = NULL, *human = NULL, err[256] = "";
    size_t tn = 0, hn = 0;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    if (rank_build(s->agg, NULL, &rep) != 0 ||
        render_toon(&rep, &toon, &tn, err, sizeof err) != 0 ||
        render_human(&rep, &human, &hn) != 0) {
        fprintf(stderr, "jett-profd: cannot render the profile: %s\n", err[0] ? err : "no memory");
        s->status = 1;
    } else {
        struct wire_result r = {{toon, (uint32_t)tn}, {human, (uint32_t)hn}};
        if (wire_encode_result(&sb, &r) != 0) {
            fprintf(stderr, "jett-profd: the profile is larger than one frame\n");
            s->status = 1;
        }
    }
    rank_free(&rep);
    free(toon), free(human);
    serve_send(s, &sb);
    bufferevent_disable(s->bev, EV_READ);
    if (evbuffer_get_length(bufferevent_get_output(s->bev)) == 0)
        event_base_loopexit(s->base, NULL);
}

/* HELLO: READY, or UNSUPPORTED and an immediate end. */
static void serve_hello(struct serve *s, const struct wire_hello *h)
{
    agg_hello(s->agg, h);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    const char *miss = serve_missing(h);
    if (miss) {
        struct wire_unsupported u = {{miss, (uint32_t)strlen(miss)}};
        wire_encode_unsupported(&sb, &u);
        s->answered = true;
        bufferevent_disable(s->bev, EV_READ);
    } else {
        struct wire_ready r = {WIRE_PROTOCOL_VERSION};
        wire_encode_ready(&sb, &r);
    }
    serve_send(s, &sb);
}

/* Feeds one decoded record; false when the stream is over. */
static bool serve_record(struct serve *s, const struct wire_record *rec)
{
    switch (rec->type) {
    case WIRE_HELLO:
        serve_hello(s, &rec->u.hello);
        return !s->answered;
    case WIRE_SOURCE:
        agg_source(s->agg, &rec->u.source);
        return true;
    case WIRE_FUNC:
        agg_func(s->agg, &rec->u.func);
        return true;
    case WIRE_EVENTS:
        return feed_record(s->agg, s->dec, rec) == 0;
    case WIRE_FINISH:
        agg_finish(s->agg, &rec->u.finish);
        return false;
    default:
        return true;
    }
}

/* A decode error becomes the profile's collector error. */
static void serve_decode_failed(struct serve *s)
{
    const struct wire_error *e = wire_decoder_error(s->dec);
    char msg[400];
    snprintf(msg, sizeof msg, "byte %llu: %s", (unsigned long long)e->offset, e->msg);
    agg_fail(s->agg, msg);
    serve_answer(s);
}

static void serve_read_cb(struct bufferevent *bev, void *arg)
{
    struct serve *s = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    while (!s->answered && evbuffer_get_length(in) > 0) {
        size_t len = evbuffer_get_length(in);
        size_t n = wire_decoder_push(s->dec, evbuffer_pullup(in, (ssize_t)len), len);
        struct wire_record rec;
        int rc = 0;
        /* a record may point into the pushed bytes: drain only after it */
        while (!s->answered && (rc = wire_decoder_next(s->dec, &rec)) > 0)
            if (!serve_record(s, &rec) && !s->answered)
                serve_answer(s);
        evbuffer_drain(in, n);
        if (!s->answered && (rc < 0 || n == 0))
            return serve_decode_failed(s);
    }
}

static void serve_write_cb(struct bufferevent *bev, void *arg)
{
    struct serve *s = arg;
    if (s->answered && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        event_base_loopexit(s->base, NULL);
}

/* EOF or an error: answer if nothing was answered yet, else leave. */
static void serve_event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    struct serve *s = arg;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    if (!s->answered && (what & BEV_EVENT_EOF)) {
        if (wire_decoder_end(s->dec) != 0)
            agg_fail(s->agg, wire_decoder_error(s->dec)->msg);
        serve_answer(s);
        return;
    }
    event_base_loopexit(s->base, NULL);
}

int serve_fd(int fd)
{
    /* Interrupts reach the whole process group; the launcher owns them and
     * finishes the stream itself, so the daemon must outlive them.  It
     * ends on end of stream, or is killed when the launcher dies. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct serve s = {event_base_new(), NULL,  wire_decoder_new(WIRE_TO_DAEMON),
                      agg_new(),        false, 0};
    if (s.base)
        s.bev = bufferevent_socket_new(s.base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!s.base || !s.bev || !s.dec || !s.agg) {
        fprintf(stderr, "jett-profd: out of memory\n");
        return 1;
    }
    bufferevent_setcb(s.bev, serve_read_cb, serve_write_cb, serve_event_cb, &s);
    bufferevent_enable(s.bev, EV_READ | EV_WRITE);
    event_base_dispatch(s.base);
    bufferevent_free(s.bev);
    event_base_free(s.base);
    wire_decoder_free(s.dec);
    agg_free(s.agg);
    return s.status;
}
