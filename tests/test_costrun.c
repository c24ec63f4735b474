/* Tests of proto/costrun against a dense array of sums: enough additions
 * to compact every function's buffer many times over, functions with no
 * lines, values past 2^63, one and two values; and the memory bound. */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/export/costrun.h"
#include "proto/util/radix.h"

#define FUNCS 40
#define LINES 3000

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Adds `n` random costs (func 7 never) and checks every function's lines
 * against the dense sums. */
static void check_against_dense(unsigned n_values, size_t n, bool dense)
{
    uint64_t(*sum)[LINES][2] = calloc(FUNCS, sizeof *sum);
    ck_assert_ptr_nonnull(sum);
    struct costrun *c = dense ? costrun_new_dense(n_values) : costrun_new(n_values);
    ck_assert_ptr_nonnull(c);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        uint32_t f = (uint32_t)(next_rand(&s) % FUNCS), line = (uint32_t)(next_rand(&s) % LINES);
        if (f == 7)
            continue;
        uint64_t w[2] = {next_rand(&s) % 1000, 1};
        if (i % 100000 == 0)
            w[0] = UINT64_MAX / 3; /* long varints, sums wrapping as u64 */
        ck_assert_int_eq(costrun_add(c, f, line, w), 0);
        sum[f][line][0] += w[0], sum[f][line][1] += w[1];
    }
    ck_assert_int_eq(costrun_finish(c, FUNCS + 5), 0);
    for (uint32_t f = 0; f < FUNCS + 5; f++) {
        struct costrun_iter it;
        bool any = costrun_func(c, f, &it);
        uint32_t want = 0, line;
        uint64_t w[2];
        size_t seen = 0;
        while (costrun_next(c, &it, &line, w)) {
            while (want < LINES && sum[f][want][1] == 0)
                want++;
            ck_assert_uint_lt(want, LINES);
            ck_assert_uint_eq(line, want);
            ck_assert_uint_eq(w[0], sum[f][want][0]);
            if (n_values == 2)
                ck_assert_uint_eq(w[1], sum[f][want][1]);
            want++, seen++;
        }
        while (f < FUNCS && want < LINES && sum[f][want][1] == 0)
            want++;
        ck_assert_msg(f >= FUNCS || want == LINES, "func %u: line %u missing", f, want);
        ck_assert_int_eq(any, seen > 0);
        if (f == 7 || f >= FUNCS)
            ck_assert_uint_eq(seen, 0);
    }
    costrun_free(c);
    free(sum);
}

START_TEST(two_values_many_compactions)
{
    check_against_dense(2, 9000000, false);
}
END_TEST

/* The one-log form: many merges of the log into the store. */
START_TEST(dense_two_values_many_merges)
{
    check_against_dense(2, 1000000, true);
}
END_TEST

START_TEST(dense_one_value_few_adds)
{
    check_against_dense(1, 1000, true);
}
END_TEST

/* The one-log form over 200,000 functions of 3 lines each, 2 million
 * costs: the memory follows the 600,000 distinct pairs (a few bytes
 * each once merged, plus a log of at most a quarter of them), not the
 * functions (a buffer each would take 64 bytes or more) or the costs;
 * every pair's sum is right. */
START_TEST(dense_memory_follows_distinct_pairs)
{
    enum { NF = 200000, PER = 3, ADDS = 2000000 };
    struct costrun *c = costrun_new_dense(1);
    ck_assert_ptr_nonnull(c);
    size_t most = 0;
    for (size_t i = 0; i < ADDS; i++) {
        uint32_t f = (uint32_t)((i * 7919) % NF), line = (uint32_t)(i % PER) * 1000 + 1;
        const uint64_t w = 1;
        ck_assert_int_eq(costrun_add(c, f, line, &w), 0);
        size_t b = i % 997 == 0 ? costrun_bytes(c) : 0;
        most = b > most ? b : most;
    }
    /* merged: 600,000 pairs of a 1-3 byte line and a 1 byte value, and
     * an 8-byte offset a function; the log: 16 bytes a record */
    ck_assert_msg(most < (size_t)NF * PER * 4 + (size_t)NF * 8 + (size_t)NF * PER / 4 * 16 * 2 +
                             16384 * 16 * 2,
                  "%zu bytes held", most);
    ck_assert_int_eq(costrun_finish(c, NF), 0);
    for (uint32_t f = 0; f < NF; f++) {
        struct costrun_iter it;
        uint32_t line;
        uint64_t w, total = 0;
        ck_assert(costrun_func(c, f, &it));
        for (uint32_t k = 0; k < PER; k++) {
            ck_assert(costrun_next(c, &it, &line, &w));
            ck_assert_uint_eq(line, k * 1000 + 1);
            total += w;
        }
        ck_assert(!costrun_next(c, &it, &line, &w));
        ck_assert_uint_eq(total, ADDS / NF);
    }
    costrun_free(c);
}
END_TEST

/* Memory follows the distinct pairs, not the additions: three million
 * costs on 4,000 pairs (12 MB or more as appended varints) stay within
 * a few KiB a function. */
START_TEST(memory_follows_distinct_pairs)
{
    struct costrun *c = costrun_new(2);
    uint64_t s = 1234567;
    size_t most = 0;
    for (size_t i = 0; i < 3000000; i++) {
        uint64_t w[2] = {next_rand(&s) % 1000, 1};
        ck_assert_int_eq(costrun_add(c, (uint32_t)(i % 40), (uint32_t)(next_rand(&s) % 100), w), 0);
        size_t b = i % 97 == 0 ? costrun_bytes(c) : 0; /* often enough to see growth */
        most = b > most ? b : most;
    }
    ck_assert_msg(most < 40 * 16384 + 1048576, "%zu bytes held", most);
    ck_assert_int_eq(costrun_finish(c, 40), 0);
    uint64_t total = 0;
    for (uint32_t f = 0; f < 40; f++) {
        struct costrun_iter it;
        uint32_t line;
        uint64_t w[2];
        ck_assert(costrun_func(c, f, &it));
        while (costrun_next(c, &it, &line, w))
            total += w[1];
    }
    ck_assert_uint_eq(total, 3000000);
    costrun_free(c);
}
END_TEST

START_TEST(one_value_few_adds)
{
    check_against_dense(1, 1000, false);
}
END_TEST

START_TEST(empty)
{
    struct costrun *c = costrun_new(1);
    ck_assert_int_eq(costrun_finish(c, 3), 0);
    struct costrun_iter it;
    for (uint32_t f = 0; f < 4; f++)
        ck_assert(!costrun_func(c, f, &it));
    costrun_free(c);
}
END_TEST

/* Records sort by their key, equal keys keeping their order. */
START_TEST(radix_is_stable)
{
    struct rec {
        uint32_t tag;
        uint64_t key;
    } a[6] = {{0, 5ull << 40}, {1, 3}, {2, 5ull << 40}, {3, 0}, {4, 3}, {5, UINT64_MAX}};
    struct rec b[6];
    void *base = a, *scratch = b;
    radix_sort(&base, &scratch, 6, sizeof a[0], offsetof(struct rec, key));
    const struct rec *r = base;
    static const uint32_t order[6] = {3, 1, 4, 0, 2, 5};
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(r[i].tag, order[i]);
}
END_TEST

Suite *costrun_suite(void)
{
    Suite *s = suite_create("costrun");
    TCase *t = tcase_create("costrun");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, two_values_many_compactions);
    tcase_add_test(t, memory_follows_distinct_pairs);
    tcase_add_test(t, one_value_few_adds);
    tcase_add_test(t, empty);
    tcase_add_test(t, dense_two_values_many_merges);
    tcase_add_test(t, dense_one_value_few_adds);
    tcase_add_test(t, dense_memory_follows_distinct_pairs);
    tcase_add_test(t, radix_is_stable);
    suite_add_tcase(s, t);
    return s;
}
