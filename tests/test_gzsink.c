/* Tests of daemon/export/gzsink: what is appended, in pieces of every
 * size around its buffer's, inflates (with zlib, as one gzip member) to
 * exactly the bytes appended, in order, while the compressing thread
 * takes buffer after buffer; a write error is reported by the close. */
#include <check.h>
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

Suite *gzsink_suite(void)
{
    Suite *s = suite_create("gzsink");
    TCase *t = tcase_create("gzsink");
    tcase_add_test(t, pieces_inflate_to_the_input);
    tcase_add_test(t, whole_buffers_and_nothing);
    tcase_add_test(t, write_error_is_reported);
    suite_add_tcase(s, t);
    return s;
}
