/* collector: handshake, writer thread, finish and result. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/collector.h"
#include "proto/capture.h"

struct collector {
    int sock, capture_fd;
    uint64_t stall_ns;
    struct evring ring;
    atomic_bool failed, stop, interrupted;
    atomic_bool capture_waiting; /* the writer waits for the capture */
    pthread_t writer;
    bool started;
    struct wire_decoder *in; /* daemon -> launcher records */
    uint8_t inbuf[65536];
    size_t in_pos, in_len;
    uint8_t *batch;
    msgpack_sbuffer out;
    char error[160];
    bool capture_finished;   /* FINISH reached the capture */
    char capture_error[160]; /* why the capture was given up, or "" */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fail(struct collector *c, const char *why)
{
    if (!atomic_exchange(&c->failed, true))
        snprintf(c->error, sizeof c->error, "%s", why);
}

struct collector *collector_new(int sock, int capture_fd, size_t ring_bytes, uint64_t stall_ns)
{
    struct collector *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->sock = sock, c->capture_fd = capture_fd, c->stall_ns = stall_ns;
    c->in = wire_decoder_new(WIRE_TO_LAUNCHER);
    c->batch = malloc(COLLECTOR_FRAME);
    if (!c->in || !c->batch || evring_init(&c->ring, ring_bytes) != 0) {
        wire_decoder_free(c->in);
        free(c->batch);
        free(c);
        return NULL;
    }
    msgpack_sbuffer_init(&c->out);
    atomic_init(&c->failed, false);
    atomic_init(&c->stop, false);
    atomic_init(&c->interrupted, false);
    atomic_init(&c->capture_waiting, false);
    /* A pipe whose reader stops must not block the writer: the capture
     * gets the socket's bounded-stall rule (no effect on regular files). */
    int fl = capture_fd >= 0 ? fcntl(capture_fd, F_GETFL) : -1;
    if (fl >= 0)
        fcntl(capture_fd, F_SETFL, fl | O_NONBLOCK);
    return c;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    if (c->started) {
        atomic_store(&c->stop, true);
        pthread_join(c->writer, NULL);
    }
    close(c->sock);
    wire_decoder_free(c->in);
    evring_destroy(&c->ring);
    msgpack_sbuffer_destroy(&c->out);
    free(c->batch);
    free(c);
}

bool collector_reserve(struct collector *c, size_t n)
{
    /* One producer: the space can only grow until it appends. */
    return !collector_failed(c) && evring_space(&c->ring) >= n;
}

bool collector_failed(const struct collector *c)
{
    return atomic_load_explicit(&((struct collector *)c)->failed, memory_order_relaxed);
}

const char *collector_error(const struct collector *c)
{
    return c->error;
}

void collector_interrupt(struct collector *c)
{
    atomic_store(&c->interrupted, true);
}

static bool interrupted(struct collector *c)
{
    if (!atomic_load(&c->interrupted))
        return false;
    fail(c, "interrupted");
    return true;
}

const char *collector_capture_error(const struct collector *c)
{
    return c->capture_error;
}

bool collector_capture_complete(const struct collector *c)
{
    return c->capture_finished && !c->capture_error[0];
}

/* Waits up to 50 ms for fd to take more output. */
static void wait_writable(int fd)
{
    struct pollfd pfd = {fd, POLLOUT, 0};
    poll(&pfd, 1, 50);
}

/* Writes to the capture under the socket's rule: no progress for the
 * stall limit gives it up.  0, or -1 with the
 * reason kept and no more writes (the run goes on; the daemon still gets
 * every frame). */
static int capture_write(struct collector *c, const uint8_t *p, size_t len)
{
    uint64_t last = mono_ns();
    while (len > 0) {
        ssize_t n = write(c->capture_fd, p, len);
        if (n > 0) {
            p += n, len -= (size_t)n, last = mono_ns();
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(c->capture_error, sizeof c->capture_error, "%s", strerror(errno));
            break;
        }
        if (n == 0) {
            snprintf(c->capture_error, sizeof c->capture_error, "nothing could be written");
            break;
        }
        if (mono_ns() - last > c->stall_ns) {
            snprintf(c->capture_error, sizeof c->capture_error, "no progress for %llu s",
                     (unsigned long long)(c->stall_ns / 1000000000ull));
            break;
        }
        if (interrupted(c)) {
            snprintf(c->capture_error, sizeof c->capture_error, "interrupted");
            break;
        }
        atomic_store(&c->capture_waiting, true);
        wait_writable(c->capture_fd);
    }
    atomic_store(&c->capture_waiting, false);
    if (len == 0)
        return 0;
    c->capture_fd = -1; /* its owner closes it */
    return -1;
}

/* Writes to the socket without blocking for longer than the stall limit
 * without progress.  0, or -1 after marking the collector failed. */
static int sock_write(struct collector *c, const uint8_t *p, size_t len)
{
    uint64_t last = mono_ns();
    while (len > 0 && !collector_failed(c)) {
        ssize_t n = send(c->sock, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n, len -= (size_t)n, last = mono_ns();
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            fail(c, "the socket to jett-profd failed");
            return -1;
        }
        if (mono_ns() - last > c->stall_ns) {
            fail(c, "jett-profd made no progress");
            return -1;
        }
        if (interrupted(c))
            return -1;
        wait_writable(c->sock);
    }
    return collector_failed(c) ? -1 : 0;
}

/* Sends the frames in c->out to the capture and the daemon (unless
 * failed), then clears them.  -1 when the collector failed: a capture
 * given up is kept apart (collector_capture_error). */
static int flush_out(struct collector *c)
{
    if (c->capture_fd >= 0)
        capture_write(c, (const uint8_t *)c->out.data, c->out.size);
    if (!collector_failed(c))
        sock_write(c, (const uint8_t *)c->out.data, c->out.size);
    msgpack_sbuffer_clear(&c->out);
    return collector_failed(c) ? -1 : 0;
}

/* Waits for one daemon record; 1 with *rec (valid until the next call),
 * or -1 on timeout, end of stream or a bad record. */
static int read_record(struct collector *c, struct wire_record *rec, int timeout_ms)
{
    uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        int rc = wire_decoder_next(c->in, rec);
        if (rc != 0)
            return rc > 0 ? 1 : -1;
        if (c->in_pos < c->in_len) {
            c->in_pos += wire_decoder_push(c->in, c->inbuf + c->in_pos, c->in_len - c->in_pos);
            continue;
        }
        uint64_t now = mono_ns();
        if (now >= deadline || interrupted(c))
            return -1;
        /* short polls: an interrupt is seen within 50 ms */
        uint64_t left_ms = (deadline - now) / 1000000ull + 1;
        struct pollfd pfd = {c->sock, POLLIN, 0};
        if (poll(&pfd, 1, left_ms < 50 ? (int)left_ms : 50) <= 0)
            continue;
        ssize_t n = recv(c->sock, c->inbuf, sizeof c->inbuf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return -1;
        c->in_pos = 0, c->in_len = n > 0 ? (size_t)n : 0;
    }
}

enum collector_answer collector_handshake(struct collector *c, const struct wire_hello *h,
                                          int timeout_ms, char *missing, size_t missing_len)
{
    if (wire_encode_hello(&c->out, h) != 0 || flush_out(c) != 0)
        return COLLECTOR_NO_ANSWER;
    struct wire_record rec;
    if (read_record(c, &rec, timeout_ms) != 1) {
        fail(c, "jett-profd did not answer HELLO");
        return COLLECTOR_NO_ANSWER;
    }
    if (rec.type == WIRE_UNSUPPORTED) {
        snprintf(missing, missing_len, "%.*s", (int)rec.u.unsupported.capability.len,
                 rec.u.unsupported.capability.ptr);
        fail(c, "jett-profd does not support this mode");
        return COLLECTOR_UNSUPPORTED;
    }
    if (rec.type != WIRE_READY || rec.u.ready.version != WIRE_PROTOCOL_VERSION) {
        fail(c, "jett-profd answered HELLO with something else than READY");
        return COLLECTOR_NO_ANSWER;
    }
    return COLLECTOR_READY;
}

int collector_send_source(struct collector *c, const struct wire_source *s)
{
    if (wire_encode_source(&c->out, s) != 0)
        return -1;
    return flush_out(c);
}

int collector_send_func(struct collector *c, const struct wire_func *f)
{
    if (wire_encode_func(&c->out, f) != 0)
        return -1;
    return flush_out(c);
}

/* Moves whole entries from the ring into one EVENTS frame; false when the
 * ring was empty. */
static bool ship_batch(struct collector *c)
{
    uint32_t count;
    size_t n = evring_take(&c->ring, c->batch, COLLECTOR_FRAME - 16, &count);
    if (n == 0)
        return false;
    if (wire_encode_events(&c->out, count, c->batch, n) == 0)
        flush_out(c);
    return true;
}

/* Ships batches until stopped.  While the ring has data the writer never
 * sleeps; once it is empty, naps grow from 1 ms to 8 ms, so that a CPU
 * profile (one sample a millisecond) wakes it at most once per sample and
 * an idle run costs almost nothing.  A producer that fills the ring in
 * the meantime waits for it (memory events) or drops (CPU samples). */
static void *writer_main(void *arg)
{
    struct collector *c = arg;
    pthread_setname_np(pthread_self(), "jett-writer");
    long nap_ns = 1000000;
    for (;;) {
        bool stopping = atomic_load(&c->stop);
        if (ship_batch(c)) {
            nap_ns = 1000000;
            continue;
        }
        if (stopping)
            break;
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        if (nap_ns < 8000000)
            nap_ns *= 2;
    }
    return NULL;
}

int collector_start(struct collector *c)
{
    if (pthread_create(&c->writer, NULL, writer_main, c) != 0) {
        fail(c, "cannot start the writer thread");
        return -1;
    }
    c->started = true;
    return 0;
}

bool collector_put(struct collector *c, const uint8_t *entry, size_t n, bool wait)
{
    if (collector_failed(c))
        return false;
    if (evring_put(&c->ring, entry, n))
        return true;
    if (!wait)
        return false;
    /* Back-pressure: wait for the writer, never longer than the stall
     * limit without the ring draining. */
    uint64_t last = mono_ns();
    size_t used = evring_used(&c->ring);
    while (!evring_put(&c->ring, entry, n)) {
        if (collector_failed(c))
            return false;
        size_t now_used = evring_used(&c->ring);
        /* a stalled capture is bounded by its own limit, and is not the
         * daemon's fault */
        if (now_used < used || atomic_load(&c->capture_waiting))
            last = mono_ns();
        used = now_used;
        if (mono_ns() - last > c->stall_ns) {
            fail(c, "jett-profd made no progress");
            return false;
        }
        if (interrupted(c))
            return false;
        struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    }
    return true;
}

/* Copies the RESULT texts out of the decoder's buffer. */
static int take_result(const struct wire_result *r, struct collector_result *out)
{
    out->profile = strndup(r->profile.ptr, r->profile.len);
    out->human = strndup(r->human.ptr, r->human.len);
    out->profile_len = r->profile.len, out->human_len = r->human.len;
    return out->profile && out->human ? 0 : -1;
}

int collector_finish(struct collector *c, struct wire_finish *fin, int timeout_ms,
                     struct collector_result *out)
{
    memset(out, 0, sizeof *out);
    if (c->started) {
        atomic_store(&c->stop, true);
        pthread_join(c->writer, NULL);
        c->started = false;
    }
    fin->collector_failure = fin->collector_failure || collector_failed(c);
    if (wire_encode_finish(&c->out, fin) == 0) {
        bool to_capture = c->capture_fd >= 0;
        flush_out(c);
        c->capture_finished = to_capture && c->capture_fd >= 0;
    }
    if (collector_failed(c))
        return -1;
    struct wire_record rec;
    if (read_record(c, &rec, timeout_ms) != 1 || rec.type != WIRE_RESULT) {
        fail(c, "jett-profd sent no RESULT");
        return -1;
    }
    if (take_result(&rec.u.result, out) != 0) {
        collector_result_free(out);
        fail(c, "out of memory reading RESULT");
        return -1;
    }
    return 0;
}

void collector_result_free(struct collector_result *r)
{
    free(r->profile);
    free(r->human);
    r->profile = r->human = NULL;
}
