/* The memory exports' live allocations: packed records in the window and
 * table, full entries for what does not pack (large sizes, high sites,
 * ids out of order), moves between them on resize, and random operations
 * checked against a plain array. */
#include <check.h>
#include <stdlib.h>

#include "daemon/export/fold_live.h"

Suite *fold_live_suite(void);

static void expect(struct fold_lives *l, uint64_t id, uint64_t size, uint32_t site, bool packed)
{
    struct fold_live_ref ref;
    ck_assert(fold_lives_find(l, id, &ref));
    ck_assert_uint_eq(fold_live_size(&ref), size);
    ck_assert_uint_eq(fold_live_site(&ref), site);
    ck_assert_int_eq(ref.rec != NULL, packed);
}

static void retire(struct fold_lives *l, uint64_t id)
{
    struct fold_live_ref ref;
    ck_assert(fold_lives_find(l, id, &ref));
    fold_lives_remove(l, &ref);
    ck_assert(!fold_lives_find(l, id, &ref));
}

/* Sizes below 2^40 and sites below 2^24 - 2 pack, in increasing id
 * order; everything else is a full entry, found all the same. */
START_TEST(packed_and_full_entries)
{
    struct fold_lives l = {0};
    const uint64_t big = UINT64_C(1) << 40;
    const uint32_t high = (UINT32_C(1) << 24) - 2;
    ck_assert_int_eq(fold_lives_add(&l, 1, 100, 7), 0);
    ck_assert_int_eq(fold_lives_add(&l, 2, big - 1, FOLD_NO_SITE), 0);
    ck_assert_int_eq(fold_lives_add(&l, 3, big, 8), 0);        /* too large */
    ck_assert_int_eq(fold_lives_add(&l, 5, 0, high - 1), 0);   /* the last site that packs */
    ck_assert_int_eq(fold_lives_add(&l, 6, 1, high), 0);       /* the first that does not */
    ck_assert_int_eq(fold_lives_add(&l, 4, 9, 0), 0);          /* below id 5: out of order */
    ck_assert_int_eq(fold_lives_add(&l, 7, UINT64_MAX, 0), 0); /* full size */
    expect(&l, 1, 100, 7, true);
    expect(&l, 2, big - 1, FOLD_NO_SITE, true);
    expect(&l, 3, big, 8, false);
    expect(&l, 5, 0, high - 1, true);
    expect(&l, 6, 1, high, false);
    expect(&l, 4, 9, 0, false);
    expect(&l, 7, UINT64_MAX, 0, false);
    struct fold_live_ref ref;
    ck_assert(!fold_lives_find(&l, 8, &ref));
    ck_assert(!fold_lives_find(&l, 0, &ref));

    /* growing past 2^40 turns a packed record into a full entry; the
     * reference follows it */
    ck_assert(fold_lives_find(&l, 1, &ref));
    ck_assert_int_eq(fold_lives_resize(&l, &ref, big + 5), 0);
    ck_assert_uint_eq(fold_live_size(&ref), big + 5);
    ck_assert_uint_eq(fold_live_site(&ref), 7);
    expect(&l, 1, big + 5, 7, false);
    ck_assert(fold_lives_find(&l, 5, &ref));
    ck_assert_int_eq(fold_lives_resize(&l, &ref, 12345), 0);
    expect(&l, 5, 12345, high - 1, true);
    ck_assert(fold_lives_find(&l, 3, &ref));
    ck_assert_int_eq(fold_lives_resize(&l, &ref, 3), 0);
    expect(&l, 3, 3, 8, false); /* stays a full entry */

    for (uint64_t id = 1; id <= 7; id++)
        retire(&l, id);
    ck_assert_uint_eq(l.n_wide, 0);
    /* an id below the last packed one, once free, comes back as a full entry */
    ck_assert_int_eq(fold_lives_add(&l, 2, 10, 1), 0);
    expect(&l, 2, 10, 1, false);
    ck_assert_int_eq(fold_lives_add(&l, 8, 10, 1), 0);
    expect(&l, 8, 10, 1, true);
    fold_lives_free(&l);
}
END_TEST

struct want {
    uint64_t size;
    uint32_t site;
    bool live;
};

/* Whether the table agrees with the array about id (checked without an
 * assertion per id: Check logs every assertion it passes). */
static bool agrees(struct fold_lives *l, uint64_t id, const struct want *w)
{
    struct fold_live_ref r;
    if (fold_lives_find(l, id, &r) != w->live)
        return false;
    return !w->live || (fold_live_size(&r) == w->size && fold_live_site(&r) == w->site);
}

/* 300,000 operations with a fixed seed: mostly new ids in increasing
 * order (often skipping some), some below the last (full entries), frees
 * and resizes of random live ids, sizes now and then past 2^40; after
 * each step the changed id, and every 10,000 steps every id, agree with
 * a plain array. */
START_TEST(random_against_a_plain_array)
{
    enum { IDS = 400000, STEPS = 300000 };
    struct want *want = calloc(IDS, sizeof *want);
    uint64_t *live = malloc(IDS * sizeof *live);
    size_t n_live = 0;
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(live);
    struct fold_lives l = {0};
    uint64_t next = 1;
    srand(12345);
    for (int step = 0; step < STEPS; step++) {
        int what = rand() % 10;
        uint64_t size =
            rand() % 50 == 0 ? (UINT64_C(1) << 40) + (uint64_t)rand() : (uint64_t)rand();
        uint32_t site = rand() % 20 == 0 ? FOLD_NO_SITE : (uint32_t)rand() % 1000;
        uint64_t id;
        if (what < 5 || n_live == 0) {
            if (rand() % 30 == 0 && next > 2) {
                id = 1 + (uint64_t)rand() % (next - 1); /* an earlier id, if it is free */
                if (want[id].live)
                    continue;
            } else {
                id = next;
                next += 1 + (rand() % 8 == 0 ? (uint64_t)(rand() % 40) : 0);
                if (next >= IDS)
                    break;
            }
            if (fold_lives_add(&l, id, size, site) != 0)
                ck_abort_msg("out of memory");
            want[id] = (struct want){size, site, true};
            live[n_live++] = id;
        } else {
            size_t k = (size_t)rand() % n_live;
            id = live[k];
            struct fold_live_ref r;
            if (!fold_lives_find(&l, id, &r))
                ck_abort_msg("live id %llu not found", (unsigned long long)id);
            if (what < 8) {
                fold_lives_remove(&l, &r);
                want[id].live = false;
                live[k] = live[--n_live];
            } else {
                if (fold_lives_resize(&l, &r, size) != 0)
                    ck_abort_msg("out of memory");
                want[id].size = size;
            }
        }
        if (!agrees(&l, id, &want[id]))
            ck_abort_msg("step %d: id %llu disagrees", step, (unsigned long long)id);
        if (step % 10000 == 0)
            for (uint64_t i = 0; i < next && i < IDS; i++)
                if (!agrees(&l, i, &want[i]))
                    ck_abort_msg("step %d: id %llu disagrees", step, (unsigned long long)i);
    }
    ck_assert_uint_gt(n_live, 10000);
    ck_assert_uint_gt(l.n_wide, 100);
    ck_assert_uint_gt(l.track.table.n, 1000); /* the window slid records to the table */
    fold_lives_free(&l);
    free(want);
    free(live);
}
END_TEST

Suite *fold_live_suite(void)
{
    Suite *s = suite_create("fold_live");
    TCase *t = tcase_create("fold_live");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, packed_and_full_entries);
    tcase_add_test(t, random_against_a_plain_array);
    suite_add_tcase(s, t);
    return s;
}
