/* Tests of the collector's writer thread: how often it sends in CPU mode,
 * that stopping sends everything, and that entries sent from the ring
 * through partial writes to a slow daemon all arrive, intact and in
 * order, under back-pressure. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/collector.h"
#include "cli/profd_spawn.h"
#include "proto/capture.h"
#include "testutil.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct wire_hello hello(uint8_t mode)
{
    struct wire_hello h = {
        WIRE_PROTOCOL_VERSION,
        mode,
        {mode == WIRE_MODE_CPU ? 1000 : 0, 500, 10, 32u << 20, 64u << 20, 16u << 20},
        S("interpreter_safe_point"),
        WIRE_CAP_ALL,
        false};
    return h;
}

static void send_root_func(struct collector *c)
{
    struct wire_func f = {0, S("app"), S("main"), WIRE_NONE32, WIRE_SPAN_NONE};
    ck_assert_int_eq(collector_send_func(c, &f), 0);
}

static void put_root_stack(struct collector *c)
{
    uint8_t e[WIRE_STACK_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    ck_assert(collector_put(c, e, wire_put_stack(e, &st), true));
}

static void start_with_root(struct collector *c)
{
    send_root_func(c);
    ck_assert_int_eq(collector_start(c), 0);
    put_root_stack(c);
}

/* A sample every millisecond for 400 ms, as the CPU profiler produces
 * them: the writer batches them into a frame per COLLECTOR_FLUSH_NS
 * (20 ms: the writer and the daemon wake 50 times a second), so at most
 * elapsed / 20 ms frames go out while the run lasts, plus the last one at
 * FINISH (sending each sample alone would be about 400).  The sample
 * taken just before FINISH is in the profile: all 400 are recorded. */
START_TEST(cpu_samples_batched_and_all_delivered)
{
    char *profd = tu_build_path("daemon/jett-profd"), err[200];
    int sock;
    pid_t pid;
    ck_assert_msg(profd_spawn(profd, &sock, &pid, err, sizeof err) == 0, "%s", err);
    struct collector *c = collector_new(sock, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = hello(WIRE_MODE_CPU);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    uint64_t t0 = now_ns();
    start_with_root(c);
    enum { SAMPLES = 400 };
    uint64_t next = t0;
    for (uint64_t i = 1; i <= SAMPLES; i++) {
        next += 1000000;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        uint8_t e[WIRE_SAMPLE_SIZE];
        struct wire_sample sm = {
            i, i, {WIRE_NONE32, WIRE_NONE32, 0}, WIRE_STATE_JETT, 0, WIRE_SPAN_NONE};
        ck_assert(collector_put(c, e, wire_put_sample(e, &sm), false));
    }
    uint64_t during = collector_frames_sent(c), elapsed = now_ns() - t0;
    ck_assert_uint_le(during, elapsed / 20000000u + 1);
    ck_assert_uint_ge(during, 1); /* it does send while the run lasts */
    struct wire_finish fin = {WIRE_TERM_RETURNED, elapsed, elapsed, SAMPLES, 0, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 10000, &res), 0);
    ck_assert_uint_le(collector_frames_sent(c), during + 1);
    ck_assert_ptr_nonnull(strstr(res.profile, "    recorded_samples: 400\n"));
    collector_result_free(&res);
    collector_free(c);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    free(profd);
}
END_TEST

/* The other end of a socketpair, reading 97 bytes at a time: READY for
 * HELLO, every ALLOC entry checked against the sequence it should have,
 * a RESULT for FINISH.  It keeps every byte it read. */
struct slow_daemon {
    int fd;
    pthread_t thread;
    uint64_t allocs, out_of_order;
    bool finished;
    uint8_t *got;
    size_t got_len, got_cap;
};

static void slow_send(int fd, msgpack_sbuffer *sb)
{
    ck_assert_int_eq(capture_write_all(fd, sb->data, sb->size), 0);
    msgpack_sbuffer_clear(sb);
}

static void slow_record(struct slow_daemon *d, struct wire_decoder *dec, struct wire_record *rec,
                        msgpack_sbuffer *sb)
{
    if (rec->type == WIRE_HELLO) {
        struct wire_ready r = {WIRE_PROTOCOL_VERSION};
        wire_encode_ready(sb, &r);
        slow_send(d->fd, sb);
    } else if (rec->type == WIRE_EVENTS) {
        struct wire_events_iter it;
        struct wire_event ev;
        wire_events_begin(&it, &rec->u.events);
        while (wire_events_next(dec, &it, &ev) == 1)
            if (ev.kind == WIRE_ENTRY_ALLOC && ev.u.alloc.sequence != ++d->allocs)
                d->out_of_order++;
    } else if (rec->type == WIRE_FINISH) {
        struct wire_result r = {S("profile:\n"), S("")};
        wire_encode_result(sb, &r);
        slow_send(d->fd, sb);
        d->finished = true;
    }
}

static void *slow_main(void *arg)
{
    struct slow_daemon *d = arg;
    struct wire_decoder *dec = wire_decoder_new(WIRE_TO_DAEMON);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint8_t buf[97];
    ssize_t n;
    while (!d->finished && (n = recv(d->fd, buf, sizeof buf, 0)) > 0) {
        if (d->got_len + (size_t)n > d->got_cap) {
            d->got_cap = d->got_cap ? d->got_cap * 2 : 1u << 20;
            d->got = realloc(d->got, d->got_cap);
        }
        memcpy(d->got + d->got_len, buf, (size_t)n);
        d->got_len += (size_t)n;
        for (size_t at = 0; at < (size_t)n;) {
            at += wire_decoder_push(dec, buf + at, (size_t)n - at);
            struct wire_record rec;
            while (wire_decoder_next(dec, &rec) == 1)
                slow_record(d, dec, &rec, &sb);
        }
    }
    msgpack_sbuffer_destroy(&sb);
    wire_decoder_free(dec);
    return NULL;
}

/* 200,000 heap events through a 64 KiB ring to a daemon that reads 97
 * bytes at a time through an 8 KiB socket buffer: every frame is sent in
 * many partial writes, the runtime waits for the ring (back-pressure),
 * and every event arrives, in order, none dropped.  The capture holds
 * exactly the bytes the daemon read. */
START_TEST(slow_daemon_gets_every_event_through_partial_writes)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int small = 4096;
    ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/run.jcap", dir);
    int cap = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(cap, 0);
    struct slow_daemon d = {.fd = sv[1]};
    ck_assert_int_eq(pthread_create(&d.thread, NULL, slow_main, &d), 0);
    struct collector *c = collector_new(sv[0], cap, 64u << 10, COLLECTOR_STALL_NS);
    ck_assert_ptr_nonnull(c);
    struct wire_hello h = hello(WIRE_MODE_MEMORY);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    start_with_root(c);
    enum { EVENTS = 200000 };
    for (uint64_t i = 1; i <= EVENTS; i++) {
        uint8_t e[WIRE_ALLOC_SIZE];
        struct wire_alloc a = {i,         WIRE_OP_ALLOCATE, i, WIRE_NONE64,
                               8 + i % 7, {0, 0, 0},        0, WIRE_SPAN_NONE};
        ck_assert(collector_put(c, e, wire_put_alloc(e, &a), true));
    }
    struct wire_finish fin = {WIRE_TERM_RETURNED, 1, 1, 0, 0, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 30000, &res), 0);
    ck_assert_str_eq(res.profile, "profile:\n");
    ck_assert(collector_capture_complete(c));
    collector_result_free(&res);
    pthread_join(d.thread, NULL);
    ck_assert_uint_eq(d.allocs, EVENTS);
    ck_assert_uint_eq(d.out_of_order, 0);
    /* Frames of whole entries, as big as a quarter of the ring: far fewer
     * than one write per few events. */
    ck_assert_uint_le(collector_frames_sent(c), (uint64_t)EVENTS * WIRE_ALLOC_SIZE / (8u << 10));
    collector_free(c);
    close(sv[1]);
    close(cap);
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(len, d.got_len);
    ck_assert_int_eq(memcmp(text, d.got, len), 0);
    free(text);
    free(d.got);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

/* A producer stopped at a full ring wakes the writer.  The writer plans
 * its nap from the rate the ring filled at, which says nothing while the
 * producer is stopped: with a flush interval of an hour, its first nap
 * (over an empty ring) lasts the hour unless the producer cuts it short,
 * and a burst of four rings' worth of heap events would then reach the
 * stall limit (2 s) and fail the collector. */
START_TEST(a_producer_at_a_full_ring_wakes_the_writer)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct slow_daemon d = {.fd = sv[1]};
    ck_assert_int_eq(pthread_create(&d.thread, NULL, slow_main, &d), 0);
    struct collector *c = collector_new(sv[0], -1, 64u << 10, 2000000000ull);
    ck_assert_ptr_nonnull(c);
    collector_set_flush_ns(c, 3600ull * 1000000000ull);
    struct wire_hello h = hello(WIRE_MODE_MEMORY);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    send_root_func(c);
    ck_assert_int_eq(collector_start(c), 0);
    /* asleep before any entry: in the nap planned over an empty ring */
    ck_assert_int_eq(tu_wait_thread(getpid(), "jett-writer", "S"), 0);
    put_root_stack(c);
    uint8_t e[WIRE_ALLOC_SIZE];
    enum { EVENTS = 4 * (64 << 10) / WIRE_ALLOC_SIZE };
    for (uint64_t i = 1; i <= EVENTS; i++) {
        struct wire_alloc a = {i, WIRE_OP_ALLOCATE, i, WIRE_NONE64,
                               8, {0, 0, 0},        0, WIRE_SPAN_NONE};
        ck_assert_msg(collector_put(c, e, wire_put_alloc(e, &a), true), "event %llu: %s",
                      (unsigned long long)i, collector_error(c));
    }
    struct wire_finish fin = {WIRE_TERM_RETURNED, 1, 1, 0, 0, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 30000, &res), 0);
    collector_result_free(&res);
    pthread_join(d.thread, NULL);
    ck_assert_uint_eq(d.allocs, EVENTS);
    ck_assert_uint_eq(d.out_of_order, 0);
    collector_free(c);
    close(sv[1]);
    free(d.got);
}
END_TEST

Suite *writer_suite(void)
{
    Suite *s = suite_create("writer");
    TCase *t = tcase_create("writer");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, cpu_samples_batched_and_all_delivered);
    tcase_add_test(t, slow_daemon_gets_every_event_through_partial_writes);
    tcase_add_test(t, a_producer_at_a_full_ring_wakes_the_writer);
    suite_add_tcase(s, t);
    return s;
}
