/*
 * serve: the daemon's libevent loop over one launcher socket.
 *
 * Reads go straight into the serve's own buffer, SERVE_READ bytes at a
 * time, and whole frames are decoded where they lie: a bufferevent reads
 * at most 4 KiB per call, which cost a readv and an epoll_wait per 4 KiB
 * of a stream of millions of events.  Replies (READY, RESULT) are queued
 * in an evbuffer and written while EV_WRITE is armed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/util.h>

#include "daemon/agg.h"
#include "daemon/feed.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "daemon/serve.h"

#define SERVE_READ ((size_t)1 << 20)

/* One launcher connection: reading until RESULT is queued, then writing
 * it out and leaving the loop.  `rev` is armed until the answer is
 * queued, `wev` only while `out` holds bytes. */
struct serve {
    struct event_base *base;
    evutil_socket_t fd;
    struct event *rev, *wev;
    struct evbuffer *out;
    uint8_t *buf; /* SERVE_READ bytes; frames decoded in place point into it */
    struct wire_decoder *dec;
    struct agg *agg;
    bool answered;
    int status;
};

static void serve_send(struct serve *s, msgpack_sbuffer *sb)
{
    if (evbuffer_add(s->out, sb->data, sb->size) != 0 || event_add(s->wev, NULL) != 0)
        s->status = 1;
    msgpack_sbuffer_destroy(sb);
}

/* No more reading: the answer is queued (or the stream is over). */
static void serve_stop_reading(struct serve *s)
{
    event_del(s->rev);
    if (evbuffer_get_length(s->out) == 0)
        event_base_loopexit(s->base, NULL);
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
    serve_stop_reading(s);
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
    } else {
        struct wire_ready r = {WIRE_PROTOCOL_VERSION};
        wire_encode_ready(&sb, &r);
    }
    serve_send(s, &sb);
    if (s->answered)
        serve_stop_reading(s);
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
    case WIRE_CALLS:
        return feed_record(s->agg, s->dec, rec) == 0;
    case WIRE_RETAINED:
        agg_retained(s->agg, &rec->u.retained);
        return true;
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

/* Decodes and feeds `len` bytes just read. */
static void serve_consume(struct serve *s, const uint8_t *p, size_t len)
{
    while (!s->answered && len > 0) {
        size_t n = wire_decoder_push(s->dec, p, len);
        struct wire_record rec;
        int rc = 0;
        /* a record may point into the pushed bytes: push more only after it */
        while (!s->answered && (rc = wire_decoder_next(s->dec, &rec)) > 0)
            if (!serve_record(s, &rec) && !s->answered)
                serve_answer(s);
        if (!s->answered && (rc < 0 || n == 0))
            return serve_decode_failed(s);
        p += n, len -= n;
    }
}

/* End of stream: answer if nothing was answered yet. */
static void serve_eof(struct serve *s)
{
    if (s->answered)
        return serve_stop_reading(s);
    if (wire_decoder_end(s->dec) != 0)
        agg_fail(s->agg, wire_decoder_error(s->dec)->msg);
    serve_answer(s);
}

/* Reads until the socket has nothing more for now (a short read). */
static void serve_read_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct serve *s = arg;
    while (!s->answered) {
        ssize_t got = read(fd, s->buf, SERVE_READ);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (got < 0) {
            /* the launcher is gone mid-stream: as at end of stream */
            fprintf(stderr, "jett-profd: reading the stream: %s\n", strerror(errno));
            return serve_eof(s);
        }
        if (got == 0)
            return serve_eof(s);
        serve_consume(s, s->buf, (size_t)got);
        if ((size_t)got < SERVE_READ)
            return;
    }
}

/* Writes what is queued; leaves the loop once the answer is out. */
static void serve_write_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct serve *s = arg;
    if (evbuffer_write(s->out, fd) < 0 && errno != EAGAIN && errno != EINTR) {
        s->status = 1;
        event_base_loopexit(s->base, NULL);
        return;
    }
    if (evbuffer_get_length(s->out) > 0)
        return;
    event_del(s->wev);
    if (s->answered)
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
    struct serve s = {.base = event_base_new(),
                      .fd = fd,
                      .out = evbuffer_new(),
                      .buf = malloc(SERVE_READ),
                      .dec = wire_decoder_new(WIRE_TO_DAEMON),
                      .agg = agg_new()};
    if (s.base) {
        s.rev = event_new(s.base, fd, EV_READ | EV_PERSIST, serve_read_cb, &s);
        s.wev = event_new(s.base, fd, EV_WRITE | EV_PERSIST, serve_write_cb, &s);
    }
    if (!s.base || !s.rev || !s.wev || !s.out || !s.buf || !s.dec || !s.agg) {
        fprintf(stderr, "jett-profd: out of memory\n");
        return 1;
    }
    if (evutil_make_socket_nonblocking(fd) != 0 || event_add(s.rev, NULL) != 0) {
        fprintf(stderr, "jett-profd: cannot watch the stream\n");
        return 1;
    }
    event_base_dispatch(s.base);
    event_free(s.rev);
    event_free(s.wev);
    evbuffer_free(s.out);
    event_base_free(s.base);
    evutil_closesocket(fd);
    free(s.buf);
    wire_decoder_free(s.dec);
    agg_free(s.agg);
    return s.status;
}
