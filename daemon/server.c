/*
 * server: the daemon's libevent loop.
 *
 * States: AWAIT_HELLO (a 5 s timer runs) -> STREAMING -> DONE.  The
 * daemon ignores SIGINT (the launcher owns interrupts and finishes the
 * stream itself), dies with its parent, and exits on end of stream.
 */
#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "daemon/feed.h"
#include "daemon/server.h"
#include "proto/capture.h"

#define SERVER_HELLO_TIMEOUT_S 5

struct server {
    int fd;
    struct event_base *base;
    struct event *ev_read, *ev_timer, *ev_term;
    struct wire_decoder *dec;
    struct agg *agg;
    bool ready, done;
    int status;
    uint8_t buf[65536];
};

/* Capabilities each mode requires before main runs. */
static uint32_t required_caps(uint8_t mode)
{
    return mode == WIRE_MODE_CPU ? WIRE_CAP_CPU_TICK_SOURCE | WIRE_CAP_SAFE_STACK_CAPTURE
                                 : WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
}

static void send_frames(struct server *s, msgpack_sbuffer *sb)
{
    if (capture_write_all(s->fd, sb->data, sb->size) != 0)
        s->status = 1;
}

static void finish(struct server *s, int status)
{
    s->done = true;
    s->status = status;
    event_base_loopexit(s->base, NULL);
}

/* HELLO: READY, or UNSUPPORTED naming the first missing capability. */
static void on_hello(struct server *s, const struct wire_hello *h)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint32_t missing = required_caps(h->mode) & ~h->capabilities;
    evtimer_del(s->ev_timer);
    if (missing) {
        int bit = __builtin_ctz(missing);
        const char *name = wire_capability_names[bit];
        struct wire_unsupported u = {{name, (uint32_t)strlen(name)}};
        wire_encode_unsupported(&sb, &u);
        send_frames(s, &sb);
        finish(s, 0);
    } else {
        agg_hello(s->agg, h);
        struct wire_ready r = {WIRE_PROTOCOL_VERSION};
        wire_encode_ready(&sb, &r);
        send_frames(s, &sb);
        s->ready = true;
    }
    msgpack_sbuffer_destroy(&sb);
}

/* FINISH: the report goes back as RESULT. */
static void on_finish(struct server *s, const struct wire_finish *f)
{
    agg_finish(s->agg, f);
    char *toon, *human, err[256];
    size_t tl, hl;
    struct rank_options opt = {0};
    if (feed_render(s->agg, &opt, &toon, &tl, &human, &hl, err, sizeof err) != 0) {
        fprintf(stderr, "jett-profd: %s\n", err);
        finish(s, 1);
        return;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_result r = {{toon, (uint32_t)tl}, {human, (uint32_t)hl}};
    if (wire_encode_result(&sb, &r) != 0) {
        fprintf(stderr, "jett-profd: the report does not fit in a frame\n");
        finish(s, 1);
    } else {
        send_frames(s, &sb);
        finish(s, s->status);
    }
    msgpack_sbuffer_destroy(&sb);
    free(toon);
    free(human);
}

/* Decodes whatever the last read delivered. */
static void drain(struct server *s, const uint8_t *p, size_t len)
{
    size_t off = 0;
    while (!s->done) {
        struct wire_record rec;
        int rc = wire_decoder_next(s->dec, &rec);
        if (rc < 0 ||
            (rc > 0 && rec.type == WIRE_EVENTS && feed_record(s->agg, s->dec, &rec) < 0)) {
            /* A bad stream cannot be resynchronised: the launcher sees the
             * socket close and reports collector_failure. */
            fprintf(stderr, "jett-profd: byte %llu: %s\n",
                    (unsigned long long)wire_decoder_error(s->dec)->offset,
                    wire_decoder_error(s->dec)->msg);
            finish(s, 1);
            return;
        }
        if (rc > 0 && rec.type == WIRE_HELLO)
            on_hello(s, &rec.u.hello);
        else if (rc > 0 && rec.type == WIRE_FINISH)
            on_finish(s, &rec.u.finish);
        else if (rc > 0 && rec.type != WIRE_EVENTS)
            feed_record(s->agg, s->dec, &rec);
        else if (rc == 0 && off < len)
            off += wire_decoder_push(s->dec, p + off, len - off);
        else if (rc == 0)
            return;
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    struct server *s = arg;
    (void)what;
    ssize_t n = read(fd, s->buf, sizeof s->buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        finish(s, 1); /* the launcher went away before FINISH */
        return;
    }
    drain(s, s->buf, (size_t)n);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    fprintf(stderr, "jett-profd: no HELLO within %d s\n", SERVER_HELLO_TIMEOUT_S);
    finish(arg, 1);
}

static void on_term(evutil_socket_t sig, short what, void *arg)
{
    (void)sig, (void)what;
    finish(arg, 1);
}

int server_run(int fd)
{
    struct server *s = calloc(1, sizeof *s);
    if (!s)
        return 1;
    /* Die with the launcher; Ctrl-C is the launcher's to handle. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    s->fd = fd;
    s->base = event_base_new();
    s->dec = wire_decoder_new(WIRE_TO_DAEMON);
    s->agg = agg_new();
    int status = 1;
    if (s->base && s->dec && s->agg) {
        struct timeval tv = {SERVER_HELLO_TIMEOUT_S, 0};
        s->ev_read = event_new(s->base, fd, EV_READ | EV_PERSIST, on_read, s);
        s->ev_timer = evtimer_new(s->base, on_timer, s);
        s->ev_term = evsignal_new(s->base, SIGTERM, on_term, s);
        event_add(s->ev_read, NULL);
        evtimer_add(s->ev_timer, &tv);
        event_add(s->ev_term, NULL);
        event_base_dispatch(s->base);
        status = s->status;
        event_free(s->ev_read);
        event_free(s->ev_timer);
        event_free(s->ev_term);
    }
    if (s->base)
        event_base_free(s->base);
    wire_decoder_free(s->dec);
    agg_free(s->agg);
    free(s);
    return status;
}
