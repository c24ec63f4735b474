/* The live-allocation table: growth, probing that wraps past the last
 * slot, removal that shifts a run back (and leaves members at their home
 * alone), and random operations checked against a plain array; the
 * window of recent ids: doubling in place, and huge pages only once
 * 2 MiB of it are in use; a track that keeps creators' words, each
 * staying with its record through every move. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/live_table.h"
#include "daemon/live_track.h"
#include "daemon/live_window.h"

Suite *live_suite(void);

static struct live_table table_of(uint64_t cap)
{
    struct live_table t = {0};
    ck_assert_int_eq(live_table_resize(&t, cap), 0);
    return t;
}

/* The first `n` ids from `from` whose home slot is `home`. */
static void ids_at_home(const struct live_table *t, uint64_t home, uint64_t from, uint64_t *out,
                        int n)
{
    for (uint64_t id = from; n > 0; id++)
        if (live_table_home(t, id) == home)
            *out++ = id, n--;
}

static uint64_t slot_of(const struct live_table *t, uint64_t id)
{
    const struct live_slot *s = live_table_find(t, id);
    ck_assert_ptr_nonnull(s);
    return (uint64_t)(s - t->slots);
}

/* Doubling from 256 slots at 3/4 full keeps every id and its value. */
START_TEST(growth_keeps_entries)
{
    struct live_table t = {0};
    ck_assert_ptr_null(live_table_find(&t, 1));
    for (uint64_t id = 1; id <= 5000; id++) {
        if ((t.n + 1) * 4 > t.cap * 3)
            ck_assert_int_eq(live_table_resize(&t, t.cap ? t.cap * 2 : LIVE_TABLE_MIN_CAP), 0);
        live_table_insert(&t, id * 7, id, 0);
    }
    ck_assert_uint_eq(t.cap, 8192);
    ck_assert_uint_eq(t.n, 5000);
    for (uint64_t id = 1; id <= 5000; id++) {
        const struct live_slot *s = live_table_find(&t, id * 7);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->size_site, id);
    }
    ck_assert_ptr_null(live_table_find(&t, 3));
    live_table_free(&t);
}
END_TEST

/* Three ids whose home is the last slot and one whose home is slot 0
 * fill slots 255, 0, 1 and 2.  Removing the one in slot 0 moves its two
 * successors back (each home lies outside the hole..slot range); removing
 * the one in slot 255 wraps the shift backwards past slot 0. */
START_TEST(wrap_around_and_shift_back)
{
    struct live_table t = table_of(256);
    uint64_t last[3], first;
    ids_at_home(&t, 255, 1, last, 3);
    ids_at_home(&t, 0, 1, &first, 1);
    for (int i = 0; i < 3; i++)
        live_table_insert(&t, last[i], (uint64_t)i, 0);
    live_table_insert(&t, first, 3, 0);
    ck_assert_uint_eq(slot_of(&t, last[0]), 255);
    ck_assert_uint_eq(slot_of(&t, last[1]), 0);
    ck_assert_uint_eq(slot_of(&t, last[2]), 1);
    ck_assert_uint_eq(slot_of(&t, first), 2);
    live_table_remove(&t, live_table_find(&t, last[1]));
    ck_assert_ptr_null(live_table_find(&t, last[1]));
    ck_assert_uint_eq(slot_of(&t, last[2]), 0);
    ck_assert_uint_eq(slot_of(&t, first), 1);
    live_table_remove(&t, live_table_find(&t, last[0]));
    ck_assert_uint_eq(slot_of(&t, last[2]), 255);
    ck_assert_uint_eq(slot_of(&t, first), 0);
    ck_assert_uint_eq(t.slots[1].id, LIVE_EMPTY);
    ck_assert_uint_eq(t.n, 2);
    live_table_free(&t);
}
END_TEST

/* A run member already at its home stays there when an earlier slot of
 * the run empties: ids a, b with home 10 take slots 10 and 11, c with
 * home 11 goes to 12 and d with home 12 to 13.  Removing a moves b to 10;
 * c (home 11) then moves to 11 and d (home 12) to 12. Removing b next
 * leaves c and d in place: both are at their homes. */
START_TEST(remove_keeps_homes)
{
    struct live_table t = table_of(256);
    uint64_t ab[2], c, d;
    ids_at_home(&t, 10, 1, ab, 2);
    ids_at_home(&t, 11, 1, &c, 1);
    ids_at_home(&t, 12, 1, &d, 1);
    live_table_insert(&t, ab[0], 0, 0);
    live_table_insert(&t, ab[1], 1, 0);
    live_table_insert(&t, c, 2, 0);
    live_table_insert(&t, d, 3, 0);
    ck_assert_uint_eq(slot_of(&t, d), 13);
    live_table_remove(&t, live_table_find(&t, ab[0]));
    ck_assert_uint_eq(slot_of(&t, ab[1]), 10);
    ck_assert_uint_eq(slot_of(&t, c), 11);
    ck_assert_uint_eq(slot_of(&t, d), 12);
    live_table_remove(&t, live_table_find(&t, ab[1]));
    ck_assert_uint_eq(slot_of(&t, c), 11);
    ck_assert_uint_eq(slot_of(&t, d), 12);
    ck_assert_uint_eq(t.slots[10].id, LIVE_EMPTY);
    ck_assert_uint_eq(t.slots[13].id, LIVE_EMPTY);
    live_table_free(&t);
}
END_TEST

/* 200,000 random inserts and removals in a small, crowded table (at most
 * 3/4 full, so runs are long and wrap), each checked against an array of
 * the live ids; a doubling and a halving in the middle rehash it all. */
START_TEST(random_against_array)
{
    enum { MAX = 192, CAP = 256 };
    struct live_table t = table_of(CAP);
    uint64_t live[MAX], next = 1, rng = 88172645463325252ull;
    int n = 0;
    for (int step = 0; step < 200000; step++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (step == 100000)
            ck_assert_int_eq(live_table_resize(&t, CAP * 2), 0);
        if (step == 150000)
            ck_assert_int_eq(live_table_resize(&t, CAP), 0);
        if (n < MAX && (n == 0 || rng % 2)) {
            live[n++] = next;
            live_table_insert(&t, next, next * 3, 0);
            next += 1 + rng % 5;
        } else {
            int k = (int)((rng >> 8) % (uint64_t)n);
            struct live_slot *s = live_table_find(&t, live[k]);
            ck_assert_ptr_nonnull(s);
            ck_assert_uint_eq(s->size_site, live[k] * 3);
            live_table_remove(&t, s);
            ck_assert_ptr_null(live_table_find(&t, live[k]));
            live[k] = live[--n];
        }
        ck_assert_uint_eq(t.n, (uint64_t)n);
    }
    for (int k = 0; k < n; k++)
        ck_assert_ptr_nonnull(live_table_find(&t, live[k]));
    live_table_free(&t);
}
END_TEST

/* A full window of 256 ids from 200 (ids 256..455 have bit 256 set and
 * wrap to slots 0..199) doubles in place to 512 slots: every id keeps its
 * record, the new half's unused slots are empty, and ids past the
 * window have no slot. */
START_TEST(window_doubles_in_place)
{
    struct live_window w = {0};
    ck_assert_int_eq(live_window_resize(&w, 256, 200, 1 << 20), 0);
    for (uint64_t id = 200; id < 456; id++)
        *live_window_slot(&w, id) = id * 5;
    ck_assert_ptr_null(live_window_slot(&w, 456));
    ck_assert_ptr_null(live_window_slot(&w, 199));
    ck_assert_int_eq(live_window_resize(&w, 512, 0, 1 << 20), 0);
    ck_assert_uint_eq(w.base, 200);
    for (uint64_t id = 200; id < 456; id++)
        ck_assert_uint_eq(*live_window_slot(&w, id), id * 5);
    for (uint64_t id = 456; id < 712; id++)
        ck_assert_uint_eq(*live_window_slot(&w, id), LIVE_EMPTY);
    ck_assert_ptr_null(live_window_slot(&w, 712));
    ck_assert_int_eq(live_window_resize(&w, 1u << 20, 0, 1 << 20), -1);
    live_window_free(&w);
}
END_TEST

static bool always_fits(void *ctx, size_t more)
{
    (void)ctx, (void)more;
    return true;
}

/* 300,000 random adds (ids rising with gaps, some wider than an inline
 * slide) and removes of old and new
 * ids, the window doubling and sliding its old records into the table,
 * which doubles and shifts runs back on removal: every live id keeps the
 * creator's word written after its add, checked against an array; and
 * with creators each window and table slot costs 8 bytes more. */
START_TEST(track_keeps_creators)
{
    enum { MAX = 5000 };
    struct live_track t = {0};
    live_track_use_creators(&t);
    struct live_limit lim = {always_fits, NULL, 1 << 22};
    uint64_t *live = malloc(MAX * sizeof *live), next = 1, rng = 0x9e3779b97f4a7c15ull;
    int n = 0;
    for (int step = 0; step < 300000; step++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (n < MAX && (n == 0 || rng % 5 < 3)) {
            ck_assert(live_track_add(&t, next, next * 3, &lim));
            uint64_t *rec = live_track_find(&t, next);
            ck_assert_ptr_nonnull(rec);
            *live_track_creator(&t, next, rec) = next * 7 + 1;
            live[n++] = next;
            /* gaps of ids of folded allocations: mostly a few, now and
             * then more than the window slides in line */
            next += 1 + (rng % 16 ? rng % 3 : (rng >> 32) % 12);
        } else {
            /* an old id most of the time: records reach the table */
            int k = (int)((rng >> 8) % (uint64_t)n);
            if (rng % 4)
                k = (int)((rng >> 20) % (uint64_t)(n < 64 ? n : 64));
            uint64_t id = live[k], *rec = live_track_find(&t, id);
            ck_assert_ptr_nonnull(rec);
            ck_assert_uint_eq(*rec, id * 3);
            ck_assert_uint_eq(*live_track_creator(&t, id, rec), id * 7 + 1);
            live_track_remove(&t, id, rec);
            ck_assert_ptr_null(live_track_find(&t, id));
            live[k] = live[--n];
        }
    }
    ck_assert_uint_gt(t.table.n, 0); /* the moves were exercised */
    for (int k = 0; k < n; k++) {
        uint64_t *rec = live_track_find(&t, live[k]);
        ck_assert_ptr_nonnull(rec);
        ck_assert_uint_eq(*live_track_creator(&t, live[k], rec), live[k] * 7 + 1);
    }
    ck_assert_uint_eq(live_track_bytes(&t), t.window.cap * 16 + t.table.cap * 24 + t.wide.cap * 16);
    live_track_free(&t);
    free(live);
}
END_TEST

/* Whether the mapping that holds p is advised as huge pages: "hg" among
 * its VmFlags in /proc/self/smaps (whatever the system's THP mode). */
static bool advised_huge(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    bool in = false, hg = false, found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ':') > strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            found |= in;
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            hg = strstr(line, " hg") != NULL;
        }
    }
    fclose(f);
    ck_assert(found);
    return hg;
}

/* The window's reserve is advised as huge pages only once 2 MiB of it
 * are in use: advised from the start, its first touch made a whole
 * 2 MiB page resident (jett-profd's peak RSS of a small profile). */
START_TEST(window_takes_huge_pages_past_2_mib)
{
    struct live_window w = {0};
    size_t reserve = (size_t)64 << 20;
    ck_assert_int_eq(live_window_resize(&w, 256, 1, reserve), 0);
    *live_window_slot(&w, 1) = 7;
    ck_assert(!advised_huge(w.slots));
    /* 2^18 slots of 8 bytes: 2 MiB */
    ck_assert_int_eq(live_window_resize(&w, 1u << 17, 1, reserve), 0);
    ck_assert(!advised_huge(w.slots));
    ck_assert_int_eq(live_window_resize(&w, 1u << 18, 1, reserve), 0);
    ck_assert(advised_huge(w.slots));
    ck_assert_uint_eq(*live_window_slot(&w, 1), 7);
    live_window_free(&w);
}
END_TEST

Suite *live_suite(void)
{
    Suite *s = suite_create("live");
    TCase *t = tcase_create("table");
    tcase_add_test(t, growth_keeps_entries);
    tcase_add_test(t, wrap_around_and_shift_back);
    tcase_add_test(t, remove_keeps_homes);
    tcase_add_test(t, random_against_array);
    tcase_add_test(t, window_doubles_in_place);
    tcase_add_test(t, window_takes_huge_pages_past_2_mib);
    tcase_add_test(t, track_keeps_creators);
    suite_add_tcase(s, t);
    return s;
}
