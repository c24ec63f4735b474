/* collector: handshake, writer thread, finish and result. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent/collector.h"
#include "proto/capture.h"

struct collector {
    int sock, capture_fd;
    uint64_t stall_ns;
    uint64_t flush_ns; /* COLLECTOR_FLUSH_NS but in tests */
    struct evring ring;
    atomic_bool failed, stop, interrupted;
    atomic_bool capture_waiting; /* the writer waits for the capture */
    pthread_t writer;
    bool started;
    uint64_t writer_cpu_ns;   /* the writer thread's own CPU, set as it ends */
    pthread_mutex_t nap_lock; /* the writer's nap, cut short by stop or wake */
    pthread_cond_t nap_cond;
    bool wake;                   /* under nap_lock: the producer waits for room */
    atomic_uint_fast64_t frames; /* EVENTS frames sent */
    struct wire_decoder *in;     /* daemon -> launcher records */
    uint8_t inbuf[65536];
    size_t in_pos, in_len;
    msgpack_sbuffer out;
    char error[160];
    bool capture_finished;   /* FINISH reached the capture */
    char capture_error[160]; /* why the capture was given up, or "" */
    /* collector_set_calls: what CALLS sends before FINISH */
    const struct wire_fn_calls *fn_calls;
    const struct wire_site_calls *site_calls;
    uint32_t n_fn_calls, n_site_calls;
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
    c->flush_ns = COLLECTOR_FLUSH_NS;
    c->in = wire_decoder_new(WIRE_TO_LAUNCHER);
    pthread_condattr_t ca;
    bool cond_ok = pthread_condattr_init(&ca) == 0;
    cond_ok = cond_ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
              pthread_cond_init(&c->nap_cond, &ca) == 0;
    if (!c->in || !cond_ok || evring_init(&c->ring, ring_bytes) != 0) {
        if (cond_ok)
            pthread_cond_destroy(&c->nap_cond);
        wire_decoder_free(c->in);
        free(c);
        return NULL;
    }
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->nap_lock, NULL);
    atomic_init(&c->frames, 0);
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

/* Stops the writer, which ships what the ring holds first. */
static void stop_writer(struct collector *c)
{
    if (!c->started)
        return;
    pthread_mutex_lock(&c->nap_lock);
    atomic_store(&c->stop, true);
    pthread_cond_signal(&c->nap_cond);
    pthread_mutex_unlock(&c->nap_lock);
    pthread_join(c->writer, NULL);
    c->started = false;
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    stop_writer(c);
    close(c->sock);
    wire_decoder_free(c->in);
    evring_destroy(&c->ring);
    msgpack_sbuffer_destroy(&c->out);
    pthread_cond_destroy(&c->nap_cond);
    pthread_mutex_destroy(&c->nap_lock);
    free(c);
}

void collector_set_flush_ns(struct collector *c, uint64_t ns)
{
    c->flush_ns = ns;
}

uint64_t collector_writer_cpu_ns(const struct collector *c)
{
    return c->writer_cpu_ns;
}

uint64_t collector_frames_sent(const struct collector *c)
{
    return atomic_load(&((struct collector *)c)->frames);
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

/* Drops the first `done` bytes of a vector (what a write took). */
static void iov_skip(struct iovec **iov, int *n, size_t done)
{
    while (*n > 0 && done >= (*iov)->iov_len) {
        done -= (*iov)->iov_len;
        (*iov)++, (*n)--;
    }
    if (*n > 0 && done > 0) {
        (*iov)->iov_base = (uint8_t *)(*iov)->iov_base + done;
        (*iov)->iov_len -= done;
    }
}

enum write_end { WRITE_DONE, WRITE_ERROR, WRITE_ZERO, WRITE_STALL, WRITE_INTERRUPTED };

/* Writes a vector of at most COLLECTOR_IOV pieces to fd without blocking:
 * a partial write goes on from where it stopped, and while fd takes
 * nothing the writer polls, giving up after the stall limit without
 * progress.  `waiting` (if any) is set while it polls; *err gets errno
 * for WRITE_ERROR. */
static enum write_end write_vector(struct collector *c, int fd, bool sock, const struct iovec *v,
                                   int n, atomic_bool *waiting, int *err)
{
    struct iovec copy[COLLECTOR_IOV], *iov = copy;
    memcpy(copy, v, (size_t)n * sizeof *v);
    uint64_t last = mono_ns();
    enum write_end end = WRITE_DONE;
    while (n > 0) {
        if (sock && collector_failed(c)) {
            end = WRITE_INTERRUPTED; /* failed already: nothing more goes out */
            break;
        }
        ssize_t w;
        if (sock) {
            struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
            w = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            w = writev(fd, iov, n);
        }
        if (w > 0) {
            iov_skip(&iov, &n, (size_t)w), last = mono_ns();
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            end = WRITE_ERROR, *err = errno;
            break;
        }
        if (w == 0) {
            end = WRITE_ZERO;
            break;
        }
        if (mono_ns() - last > c->stall_ns) {
            end = WRITE_STALL;
            break;
        }
        if (interrupted(c)) {
            end = WRITE_INTERRUPTED;
            break;
        }
        if (waiting)
            atomic_store(waiting, true);
        wait_writable(fd);
    }
    if (waiting)
        atomic_store(waiting, false);
    return end;
}

/* Writes to the capture under the socket's rule: no progress for the
 * stall limit gives it up.  A capture given up keeps the reason and gets
 * no more writes (the run goes on; the daemon still gets every frame). */
static void capture_writev(struct collector *c, const struct iovec *iov, int n)
{
    int err = 0;
    switch (write_vector(c, c->capture_fd, false, iov, n, &c->capture_waiting, &err)) {
    case WRITE_DONE:
        return;
    case WRITE_ERROR:
        snprintf(c->capture_error, sizeof c->capture_error, "%s", strerror(err));
        break;
    case WRITE_ZERO:
        snprintf(c->capture_error, sizeof c->capture_error, "nothing could be written");
        break;
    case WRITE_STALL:
        snprintf(c->capture_error, sizeof c->capture_error, "no progress for %llu s",
                 (unsigned long long)(c->stall_ns / 1000000000ull));
        break;
    case WRITE_INTERRUPTED:
        snprintf(c->capture_error, sizeof c->capture_error, "interrupted");
        break;
    }
    c->capture_fd = -1; /* its owner closes it */
}

/* Writes to the socket without blocking for longer than the stall limit
 * without progress; a failure marks the collector failed. */
static void sock_writev(struct collector *c, const struct iovec *iov, int n)
{
    int err;
    switch (write_vector(c, c->sock, true, iov, n, NULL, &err)) {
    case WRITE_DONE:
    case WRITE_INTERRUPTED: /* the collector failed already */
        return;
    case WRITE_ERROR:
    case WRITE_ZERO:
        fail(c, "the socket to jett-profd failed");
        return;
    case WRITE_STALL:
        fail(c, "jett-profd made no progress");
        return;
    }
}

/* Sends a vector to the capture and the daemon (unless failed).  -1 when
 * the collector failed: a capture given up is kept apart
 * (collector_capture_error). */
static int send_vector(struct collector *c, const struct iovec *iov, int n)
{
    if (c->capture_fd >= 0)
        capture_writev(c, iov, n);
    if (!collector_failed(c))
        sock_writev(c, iov, n);
    return collector_failed(c) ? -1 : 0;
}

/* Sends the frames in c->out, then clears them. */
static int flush_out(struct collector *c)
{
    struct iovec iov = {c->out.data, c->out.size};
    int rc = send_vector(c, &iov, c->out.size > 0);
    msgpack_sbuffer_clear(&c->out);
    return rc;
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

/* Sends whole entries from the ring, where they lie, as EVENTS frames
 * (each its header, then its run in one or two pieces), at most
 * COLLECTOR_BATCH_FRAMES in one write, then gives their space back. */
static void ship_batch(struct collector *c)
{
    uint8_t head[COLLECTOR_BATCH_FRAMES][WIRE_EVENTS_HEADER_MAX];
    struct iovec iov[COLLECTOR_IOV];
    struct evring_run run;
    int n_iov = 0, frames = 0;
    uint64_t at = atomic_load_explicit(&c->ring.tail, memory_order_relaxed);
    while (frames < COLLECTOR_BATCH_FRAMES) {
        size_t n = evring_peek_at(&c->ring, at, COLLECTOR_FRAME - WIRE_EVENTS_HEADER_MAX, &run);
        if (n == 0)
            break;
        iov[n_iov++] =
            (struct iovec){head[frames], wire_encode_events_header(head[frames], run.count, n)};
        iov[n_iov++] = (struct iovec){(void *)run.piece[0], run.len[0]};
        if (run.len[1])
            iov[n_iov++] = (struct iovec){(void *)run.piece[1], run.len[1]};
        at = run.end, frames++;
    }
    if (frames == 0)
        return;
    send_vector(c, iov, n_iov);
    evring_release(&c->ring, &run);
    atomic_fetch_add(&c->frames, (uint_fast64_t)frames);
}

/* Naps up to ns, or until the collector is stopped or the producer
 * waits for room. */
static void nap(struct collector *c, uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t at = (uint64_t)ts.tv_nsec + ns;
    ts.tv_sec += (time_t)(at / 1000000000ull), ts.tv_nsec = (long)(at % 1000000000ull);
    pthread_mutex_lock(&c->nap_lock);
    if (!atomic_load(&c->stop) && !c->wake)
        pthread_cond_timedwait(&c->nap_cond, &c->nap_lock, &ts);
    c->wake = false;
    pthread_mutex_unlock(&c->nap_lock);
}

/* Cuts the writer's nap short.  A nap is planned from the rate the ring
 * filled at, which says nothing while the producer is stopped at a full
 * ring: without this the writer slept out its flush interval (20 ms)
 * while the producer, having refilled the ring in a few, waited for it. */
static void wake_writer(struct collector *c)
{
    pthread_mutex_lock(&c->nap_lock);
    c->wake = true;
    pthread_cond_signal(&c->nap_cond);
    pthread_mutex_unlock(&c->nap_lock);
}

/* Ships frames until stopped.  A full batch's worth (COLLECTOR_BATCH_FRAMES
 * frames, or a quarter of a small ring) goes at once; less waits until
 * the flush interval after the last frame, so that a CPU profile (a
 * sample a millisecond) wakes the writer and the daemon once a second
 * (COLLECTOR_FLUSH_CPU_NS), not a thousand times.  Between batches the writer naps until the
 * ring should hold a full batch at the rate it has been filling, or
 * until the flush is due: a heap profile's writer wakes about once per
 * full batch, and the ring (4 MiB, four batches) absorbs an estimate
 * that is short.  A producer that fills the ring waits for the
 * writer, waking it (memory events), or drops (CPU samples).  Stopping
 * ships everything left. */
static void *writer_main(void *arg)
{
    struct collector *c = arg;
    pthread_setname_np(pthread_self(), "jett-writer");
    size_t cap4 = c->ring.cap / 4,
           full = COLLECTOR_BATCH_FRAMES * (COLLECTOR_FRAME - WIRE_EVENTS_HEADER_MAX);
    if (cap4 < full)
        full = cap4; /* a small ring must not wait for more than it holds */
    uint64_t last_flush = mono_ns(), seen_at = last_flush;
    size_t seen = 0;
    for (;;) {
        bool stopping = atomic_load(&c->stop);
        size_t used = evring_used(&c->ring);
        uint64_t now = mono_ns();
        if (used > 0 && (used >= full || stopping || now - last_flush >= c->flush_ns)) {
            ship_batch(c);
            last_flush = now;
            seen = evring_used(&c->ring), seen_at = mono_ns();
            continue;
        }
        if (stopping)
            break;
        uint64_t wait =
            last_flush + c->flush_ns > now ? last_flush + c->flush_ns - now : c->flush_ns;
        if (used > seen && now > seen_at) {
            /* ns until a full batch at the rate since the last look */
            double fill = (double)(full - used) * (double)(now - seen_at) / (double)(used - seen);
            if (fill < (double)wait)
                wait = fill > (double)COLLECTOR_MIN_NAP_NS ? (uint64_t)fill : COLLECTOR_MIN_NAP_NS;
        }
        seen = used, seen_at = now;
        nap(c, wait);
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* read by the join's caller */
    c->writer_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
     * limit without the ring draining; what is held is the writer's
     * from now on, or it would have nothing to drain. */
    evring_publish(&c->ring);
    wake_writer(c);
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

struct evring *collector_ring(struct collector *c)
{
    return &c->ring;
}

const atomic_bool *collector_failed_flag(const struct collector *c)
{
    return &c->failed;
}

/* Copies the RESULT texts out of the decoder's buffer. */
static int take_result(const struct wire_result *r, struct collector_result *out)
{
    out->profile = strndup(r->profile.ptr, r->profile.len);
    out->human = strndup(r->human.ptr, r->human.len);
    out->profile_len = r->profile.len, out->human_len = r->human.len;
    return out->profile && out->human ? 0 : -1;
}

void collector_end_events(struct collector *c)
{
    stop_writer(c);
}

int collector_send_retained(struct collector *c, const struct wire_retained *r)
{
    if (collector_failed(c) || wire_encode_retained(&c->out, r) != 0)
        return -1;
    return flush_out(c);
}

void collector_set_calls(struct collector *c, const struct wire_fn_calls *fn, uint32_t n,
                         const struct wire_site_calls *site, uint32_t m)
{
    c->fn_calls = fn, c->site_calls = site;
    c->n_fn_calls = n, c->n_site_calls = m;
}

/* The CALLS entries, WIRE_CALLS_MAX_ENTRIES a record: functions first,
 * then sites, each record's share still sorted. */
static void send_calls(struct collector *c)
{
    uint32_t fi = 0, si = 0;
    while (fi < c->n_fn_calls || si < c->n_site_calls) {
        uint32_t room = WIRE_CALLS_MAX_ENTRIES;
        uint32_t n = c->n_fn_calls - fi < room ? c->n_fn_calls - fi : room;
        room -= n;
        uint32_t m = c->n_site_calls - si < room ? c->n_site_calls - si : room;
        if (wire_encode_calls(&c->out, c->fn_calls + fi, n, c->site_calls + si, m) != 0 ||
            flush_out(c) != 0)
            return;
        fi += n, si += m;
    }
}

int collector_finish(struct collector *c, struct wire_finish *fin, int timeout_ms,
                     struct collector_result *out)
{
    memset(out, 0, sizeof *out);
    stop_writer(c);
    send_calls(c);
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
