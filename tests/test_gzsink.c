/* Tests of daemon/export/gzsink: what is appended, in pieces of every
 * size around its buffer's, inflates (with zlib, as one gzip member) to
 * exactly the bytes appended, in order, while the compressing thread
 * takes buffer after buffer; a write error is reported by the close. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "daemon/export/gzsink.h"
#include "testutil.h"

/* n bytes that compress somewhat (runs of repeated words), none alike
 * for long: a misplaced or lost buffer shows. */
static unsigned char *some_bytes(size_t n)
{
    unsigned char *b = malloc(n);
    ck_assert_ptr_nonnull(b);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t run = 1 + x % 24;
        for (size_t k = 0; k < run && i < n; k++, i++)
            b[i] = (unsigned char)(x >> (8 * (k % 4)));
    }
    return b;
}

/* Appends `data` in the pieces `sizes` (cycled) into a memory stream;
 * the compressed bytes. */
static unsigned char *sink_all(const unsigned char *data, size_t n, const size_t *sizes,
                               size_t n_sizes, size_t *gz_len)
{
    char *gz = NULL;
    FILE *f = open_memstream(&gz, gz_len);
    ck_assert_ptr_nonnull(f);
    struct gzsink *s = malloc(sizeof *s);
    ck_assert_int_eq(gzsink_open(s, f, Z_BEST_SPEED), 0);
    for (size_t at = 0, i = 0; at < n; i++) {
        size_t k = sizes[i % n_sizes] < n - at ? sizes[i % n_sizes] : n - at;
        s->base.append(&s->base, k, data + at);
        at += k;
    }
    ck_assert_int_eq(gzsink_close(s), 0);
    free(s);
    ck_assert_int_eq(fclose(f), 0);
    return (unsigned char *)gz;
}

static void round_trip(size_t n, const size_t *sizes, size_t n_sizes)
{
    unsigned char *data = some_bytes(n);
    size_t gz_len, back_len;
    unsigned char *gz = sink_all(data, n, sizes, n_sizes, &gz_len);
    unsigned char *back = tu_gunzip(gz, gz_len, &back_len);
    ck_assert_msg(back != NULL, "not exactly one gzip member");
    ck_assert_uint_eq(back_len, n);
    ck_assert(memcmp(back, data, n) == 0);
    free(back), free(gz), free(data);
}

/* Pieces below, at and across the buffer's end, and one of several
 * buffers at once: 9.5 buffers in all. */
START_TEST(pieces_inflate_to_the_input)
{
    const size_t sizes[] = {1, 7, GZSINK_CHUNK - 8, 3 * GZSINK_CHUNK + 5, 100000, GZSINK_CHUNK};
    round_trip(GZSINK_CHUNK * 19 / 2, sizes, sizeof sizes / sizeof *sizes);
}
END_TEST

/* Exactly whole buffers, the last handed over full, and nothing at all. */
START_TEST(whole_buffers_and_nothing)
{
    const size_t one[] = {GZSINK_CHUNK};
    round_trip(4 * GZSINK_CHUNK, one, 1);
    round_trip(0, one, 1);
}
END_TEST

/* /dev/full refuses every write: the close says so, whichever buffer
 * the thread was writing. */
START_TEST(write_error_is_reported)
{
    FILE *f = fopen("/dev/full", "wb");
    ck_assert_ptr_nonnull(f);
    struct gzsink *s = malloc(sizeof *s);
    ck_assert_int_eq(gzsink_open(s, f, Z_BEST_SPEED), 0);
    size_t n = 6 * GZSINK_CHUNK;
    unsigned char *data = some_bytes(n);
    for (size_t at = 0; at < n; at += 4096)
        s->base.append(&s->base, 4096, data + at);
    ck_assert_int_eq(gzsink_close(s), -1);
    fclose(f);
    free(s), free(data);
}
END_TEST

/* Bytes that deflate cannot shrink, so that they fill a pipe. */
static unsigned char *noise(size_t n)
{
    unsigned char *b = malloc(n);
    ck_assert_ptr_nonnull(b);
    uint64_t x = 2463534242ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)(x >> 24);
    }
    return b;
}

struct ahead {
    struct gzsink *s;
    const unsigned char *data;
    size_t n;
    atomic_bool done;
};

static void *append_all(void *arg)
{
    struct ahead *a = arg;
    for (size_t at = 0; at < a->n; at += 65536)
        a->s->base.append(&a->s->base, 65536, a->data + at);
    atomic_store(&a->done, true);
    return NULL;
}

struct drain {
    int fd;
    unsigned char *gz;
    size_t len;
};

/* Reads the pipe to its end. */
static void *drain_pipe(void *arg)
{
    struct drain *d = arg;
    size_t cap = 0;
    for (;;) {
        if (cap - d->len < 65536) {
            cap = cap ? 2 * cap : 1 << 20;
            unsigned char *g = realloc(d->gz, cap);
            if (!g)
                return d;
            d->gz = g;
        }
        ssize_t r = read(d->fd, d->gz + d->len, cap - d->len);
        if (r <= 0)
            return r == 0 ? NULL : d;
        d->len += (size_t)r;
    }
}

/* While the thread is stuck writing (into a pipe nobody reads yet), the
 * packer goes on gathering into the queue's other buffers, not into one
 * alone: six buffers go in without a byte read.  Then everything read
 * inflates to what went in. */
START_TEST(packing_runs_ahead_of_a_stalled_writer)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    FILE *f = fdopen(fds[1], "wb");
    ck_assert_ptr_nonnull(f);
    struct gzsink *s = malloc(sizeof *s);
    ck_assert_int_eq(gzsink_open(s, f, Z_BEST_SPEED), 0);
    ck_assert(s->threaded);
    size_t n = 6 * (size_t)GZSINK_CHUNK;
    ck_assert_uint_lt(n, (size_t)(GZSINK_SLOTS - 1) * GZSINK_CHUNK + 1);
    struct ahead a = {s, noise(n), n, false};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, append_all, &a), 0);
    /* the appends return while the pipe stays full; a queue of two
     * buffers would hold them at the second */
    struct timespec start, now, nap = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (!atomic_load(&a.done) && now.tv_sec - start.tv_sec < 20);
    bool ran_ahead = atomic_load(&a.done);
    /* then the pipe is read, the appends end and the sink is closed */
    struct drain d = {fds[0], NULL, 0};
    pthread_t reader;
    ck_assert_int_eq(pthread_create(&reader, NULL, drain_pipe, &d), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(gzsink_close(s), 0);
    ck_assert_int_eq(fclose(f), 0);
    void *rc;
    pthread_join(reader, &rc);
    ck_assert_ptr_null(rc);
    close(fds[0]);
    ck_assert_msg(ran_ahead, "the appends waited for the stalled writer");
    size_t back_len;
    unsigned char *back = tu_gunzip(d.gz, d.len, &back_len);
    ck_assert_msg(back != NULL, "not exactly one gzip member");
    ck_assert_uint_eq(back_len, n);
    ck_assert(memcmp(back, a.data, n) == 0);
    free(back), free(d.gz), free((void *)a.data), free(s);
}
END_TEST

Suite *gzsink_suite(void)
{
    Suite *s = suite_create("gzsink");
    TCase *t = tcase_create("gzsink");
    tcase_add_test(t, pieces_inflate_to_the_input);
    tcase_add_test(t, whole_buffers_and_nothing);
    tcase_add_test(t, write_error_is_reported);
    tcase_add_test(t, packing_runs_ahead_of_a_stalled_writer);
    suite_add_tcase(s, t);
    return s;
}
