/* The live-allocation table: growth, probing that wraps past the last
 * slot, removal that shifts a run back (and leaves members at their home
 * alone), and random operations checked against a plain array; the
 * window of recent ids: doubling in place. */
#include <check.h>
#include <stdlib.h>

#include "daemon/agg_live.h"
#include "daemon/agg_window.h"

Suite *agg_live_suite(void);

static struct agg_live_table table_of(uint64_t cap)
{
    struct agg_live_table t = {0};
    ck_assert_int_eq(agg_live_resize(&t, cap), 0);
    return t;
}

/* The first `n` ids from `from` whose home slot is `home`. */
static void ids_at_home(const struct agg_live_table *t, uint64_t home, uint64_t from, uint64_t *out,
                        int n)
{
    for (uint64_t id = from; n > 0; id++)
        if (agg_live_home(t, id) == home)
            *out++ = id, n--;
}

static uint64_t slot_of(const struct agg_live_table *t, uint64_t id)
{
    const struct agg_live *s = agg_live_find(t, id);
    ck_assert_ptr_nonnull(s);
    return (uint64_t)(s - t->slots);
}

/* Doubling from 256 slots at 3/4 full keeps every id and its value. */
START_TEST(growth_keeps_entries)
{
    struct agg_live_table t = {0};
    ck_assert_ptr_null(agg_live_find(&t, 1));
    for (uint64_t id = 1; id <= 5000; id++) {
        if ((t.n + 1) * 4 > t.cap * 3)
            ck_assert_int_eq(agg_live_resize(&t, t.cap ? t.cap * 2 : AGG_LIVE_MIN_CAP), 0);
        agg_live_insert(&t, id * 7, id);
    }
    ck_assert_uint_eq(t.cap, 8192);
    ck_assert_uint_eq(t.n, 5000);
    for (uint64_t id = 1; id <= 5000; id++) {
        const struct agg_live *s = agg_live_find(&t, id * 7);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->size_site, id);
    }
    ck_assert_ptr_null(agg_live_find(&t, 3));
    agg_live_free(&t);
}
END_TEST

/* Three ids whose home is the last slot and one whose home is slot 0
 * fill slots 255, 0, 1 and 2.  Removing the one in slot 0 moves its two
 * successors back (each home lies outside the hole..slot range); removing
 * the one in slot 255 wraps the shift backwards past slot 0. */
START_TEST(wrap_around_and_shift_back)
{
    struct agg_live_table t = table_of(256);
    uint64_t last[3], first;
    ids_at_home(&t, 255, 1, last, 3);
    ids_at_home(&t, 0, 1, &first, 1);
    for (int i = 0; i < 3; i++)
        agg_live_insert(&t, last[i], (uint64_t)i);
    agg_live_insert(&t, first, 3);
    ck_assert_uint_eq(slot_of(&t, last[0]), 255);
    ck_assert_uint_eq(slot_of(&t, last[1]), 0);
    ck_assert_uint_eq(slot_of(&t, last[2]), 1);
    ck_assert_uint_eq(slot_of(&t, first), 2);
    agg_live_remove(&t, agg_live_find(&t, last[1]));
    ck_assert_ptr_null(agg_live_find(&t, last[1]));
    ck_assert_uint_eq(slot_of(&t, last[2]), 0);
    ck_assert_uint_eq(slot_of(&t, first), 1);
    agg_live_remove(&t, agg_live_find(&t, last[0]));
    ck_assert_uint_eq(slot_of(&t, last[2]), 255);
    ck_assert_uint_eq(slot_of(&t, first), 0);
    ck_assert_uint_eq(t.slots[1].id, AGG_LIVE_EMPTY);
    ck_assert_uint_eq(t.n, 2);
    agg_live_free(&t);
}
END_TEST

/* A run member already at its home stays there when an earlier slot of
 * the run empties: ids a, b with home 10 take slots 10 and 11, c with
 * home 11 goes to 12 and d with home 12 to 13.  Removing a moves b to 10;
 * c (home 11) then moves to 11 and d (home 12) to 12. Removing b next
 * leaves c and d in place: both are at their homes. */
START_TEST(remove_keeps_homes)
{
    struct agg_live_table t = table_of(256);
    uint64_t ab[2], c, d;
    ids_at_home(&t, 10, 1, ab, 2);
    ids_at_home(&t, 11, 1, &c, 1);
    ids_at_home(&t, 12, 1, &d, 1);
    agg_live_insert(&t, ab[0], 0);
    agg_live_insert(&t, ab[1], 1);
    agg_live_insert(&t, c, 2);
    agg_live_insert(&t, d, 3);
    ck_assert_uint_eq(slot_of(&t, d), 13);
    agg_live_remove(&t, agg_live_find(&t, ab[0]));
    ck_assert_uint_eq(slot_of(&t, ab[1]), 10);
    ck_assert_uint_eq(slot_of(&t, c), 11);
    ck_assert_uint_eq(slot_of(&t, d), 12);
    agg_live_remove(&t, agg_live_find(&t, ab[1]));
    ck_assert_uint_eq(slot_of(&t, c), 11);
    ck_assert_uint_eq(slot_of(&t, d), 12);
    ck_assert_uint_eq(t.slots[10].id, AGG_LIVE_EMPTY);
    ck_assert_uint_eq(t.slots[13].id, AGG_LIVE_EMPTY);
    agg_live_free(&t);
}
END_TEST

/* 200,000 random inserts and removals in a small, crowded table (at most
 * 3/4 full, so runs are long and wrap), each checked against an array of
 * the live ids; a doubling and a halving in the middle rehash it all. */
START_TEST(random_against_array)
{
    enum { MAX = 192, CAP = 256 };
    struct agg_live_table t = table_of(CAP);
    uint64_t live[MAX], next = 1, rng = 88172645463325252ull;
    int n = 0;
    for (int step = 0; step < 200000; step++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (step == 100000)
            ck_assert_int_eq(agg_live_resize(&t, CAP * 2), 0);
        if (step == 150000)
            ck_assert_int_eq(agg_live_resize(&t, CAP), 0);
        if (n < MAX && (n == 0 || rng % 2)) {
            live[n++] = next;
            agg_live_insert(&t, next, next * 3);
            next += 1 + rng % 5;
        } else {
            int k = (int)((rng >> 8) % (uint64_t)n);
            struct agg_live *s = agg_live_find(&t, live[k]);
            ck_assert_ptr_nonnull(s);
            ck_assert_uint_eq(s->size_site, live[k] * 3);
            agg_live_remove(&t, s);
            ck_assert_ptr_null(agg_live_find(&t, live[k]));
            live[k] = live[--n];
        }
        ck_assert_uint_eq(t.n, (uint64_t)n);
    }
    for (int k = 0; k < n; k++)
        ck_assert_ptr_nonnull(agg_live_find(&t, live[k]));
    agg_live_free(&t);
}
END_TEST

/* A full window of 256 ids from 200 (ids 256..455 have bit 256 set and
 * wrap to slots 0..199) doubles in place to 512 slots: every id keeps its
 * record, the new half's unused slots are empty, and ids past the
 * window have no slot. */
START_TEST(window_doubles_in_place)
{
    struct agg_window w = {0};
    ck_assert_int_eq(agg_window_resize(&w, 256, 200, 1 << 20), 0);
    for (uint64_t id = 200; id < 456; id++)
        *agg_window_slot(&w, id) = id * 5;
    ck_assert_ptr_null(agg_window_slot(&w, 456));
    ck_assert_ptr_null(agg_window_slot(&w, 199));
    ck_assert_int_eq(agg_window_resize(&w, 512, 0, 1 << 20), 0);
    ck_assert_uint_eq(w.base, 200);
    for (uint64_t id = 200; id < 456; id++)
        ck_assert_uint_eq(*agg_window_slot(&w, id), id * 5);
    for (uint64_t id = 456; id < 712; id++)
        ck_assert_uint_eq(*agg_window_slot(&w, id), AGG_LIVE_EMPTY);
    ck_assert_ptr_null(agg_window_slot(&w, 712));
    ck_assert_int_eq(agg_window_resize(&w, 1u << 20, 0, 1 << 20), -1);
    agg_window_free(&w);
}
END_TEST

Suite *agg_live_suite(void)
{
    Suite *s = suite_create("agg_live");
    TCase *t = tcase_create("table");
    tcase_add_test(t, growth_keeps_entries);
    tcase_add_test(t, wrap_around_and_shift_back);
    tcase_add_test(t, remove_keeps_homes);
    tcase_add_test(t, random_against_array);
    tcase_add_test(t, window_doubles_in_place);
    suite_add_tcase(s, t);
    return s;
}
