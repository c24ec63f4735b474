/* Tests of agent/evring: whole entries only, wraparound, and space. */
#include <check.h>

#include "agent/evring.h"
#include "proto/wire.h"
#include "proto/wire_compact.h"

/* What the writer sends of a peeked run: its pieces, back to back, and
 * then releases them. */
static size_t take(struct evring *r, uint8_t *dst, size_t max, uint32_t *count)
{
    struct evring_run run;
    size_t n = evring_peek(r, max, &run);
    ck_assert_uint_eq(run.len[0] + run.len[1], n);
    memcpy(dst, run.piece[0], run.len[0]);
    memcpy(dst + run.len[0], run.piece[1], run.len[1]);
    *count = run.count;
    evring_release(r, &run);
    return n;
}

/* Mixed entries through a small ring, wrapping many times: every entry
 * comes out whole, in order, with its bytes intact. */
START_TEST(wraparound_keeps_entries_whole)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1000), 0);
    ck_assert_uint_eq(r.cap, 1024);
    uint8_t out[4096];
    uint64_t next_in = 1, next_out = 1;
    for (int round = 0; round < 2000; round++) {
        for (;;) {
            uint8_t e[WIRE_ALLOC_SIZE];
            size_t n;
            if (next_in % 3 == 0) {
                struct wire_stack s = {(uint32_t)next_in, WIRE_NONE32, 7, WIRE_SPAN_NONE};
                n = wire_put_stack(e, &s);
            } else {
                struct wire_alloc a = {next_in, WIRE_OP_ALLOCATE, next_in, WIRE_NONE64,
                                       9,       {0, 0, 0},        0,       WIRE_SPAN_NONE};
                n = wire_put_alloc(e, &a);
            }
            if (!evring_put(&r, e, n))
                break;
            next_in++;
        }
        uint32_t count;
        /* A limit that cuts between entries: only whole ones come out. */
        size_t got = take(&r, out, 100 + (size_t)(round % 7) * 61, &count);
        for (size_t off = 0, k = 0; k < count; k++, next_out++) {
            uint32_t id;
            if (out[off] == WIRE_ENTRY_STACK) {
                ck_assert_uint_eq(next_out % 3, 0);
                memcpy(&id, out + off + 1, 4);
                ck_assert_uint_eq(id, (uint32_t)next_out);
                off += WIRE_STACK_SIZE;
            } else {
                uint64_t seq;
                ck_assert_uint_eq(out[off], WIRE_ENTRY_ALLOC);
                memcpy(&seq, out + off + 2, 8);
                ck_assert_uint_eq(seq, next_out);
                off += WIRE_ALLOC_SIZE;
            }
            ck_assert_uint_le(off, got);
        }
    }
    ck_assert_uint_gt(next_out, 1000);
    evring_destroy(&r);
}
END_TEST

START_TEST(space_accounts_for_what_is_taken)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1024), 0);
    uint8_t e[WIRE_STACK_SIZE] = {WIRE_ENTRY_STACK}, out[64];
    ck_assert_uint_eq(evring_space(&r), 1024);
    ck_assert(evring_put(&r, e, sizeof e));
    ck_assert_uint_eq(evring_space(&r), 1024 - WIRE_STACK_SIZE);
    ck_assert_uint_eq(evring_used(&r), WIRE_STACK_SIZE);
    uint32_t count;
    ck_assert_uint_eq(take(&r, out, WIRE_STACK_SIZE - 1, &count), 0);
    ck_assert_uint_eq(count, 0);
    ck_assert_uint_eq(take(&r, out, sizeof out, &count), WIRE_STACK_SIZE);
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(evring_space(&r), 1024);
    evring_destroy(&r);
}
END_TEST

/* The producer keeps the room it saw last: once the ring is full it must
 * look at the consumer again and see what was taken meanwhile.  1024
 * bytes hold 17 ALLOC entries of 58 bytes (986), not 18 (1044); after one
 * is taken, 96 bytes are free, room for one more but not two. */
START_TEST(a_full_ring_sees_what_the_consumer_took)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1024), 0);
    uint8_t e[WIRE_ALLOC_SIZE] = {WIRE_ENTRY_ALLOC}, out[WIRE_ALLOC_SIZE];
    for (int i = 0; i < 17; i++)
        ck_assert(evring_put(&r, e, sizeof e));
    ck_assert(!evring_put(&r, e, sizeof e));
    uint32_t count;
    ck_assert_uint_eq(take(&r, out, sizeof out, &count), WIRE_ALLOC_SIZE);
    ck_assert(evring_put(&r, e, sizeof e));
    ck_assert(!evring_put(&r, e, sizeof e));
    ck_assert_uint_eq(evring_used(&r), 17 * WIRE_ALLOC_SIZE);
    evring_destroy(&r);
}
END_TEST

static struct wire_alloc alloc_no(uint64_t seq)
{
    return (struct wire_alloc){seq, WIRE_OP_ALLOCATE, seq, WIRE_NONE64,
                               9,   {0, 0, 0},        0,   WIRE_SPAN_NONE};
}

/* Appends the ALLOC entry numbered seq. */
static void put_alloc(struct evring *r, uint64_t seq)
{
    uint8_t e[WIRE_ALLOC_SIZE];
    struct wire_alloc a = alloc_no(seq);
    ck_assert(evring_put(r, e, wire_put_alloc(e, &a)));
}

/* Appends a STACK entry for node id. */
static void put_stack(struct evring *r, uint32_t id)
{
    uint8_t e[WIRE_STACK_SIZE];
    struct wire_stack st = {id, WIRE_NONE32, 7, WIRE_SPAN_NONE};
    ck_assert(evring_put(r, e, wire_put_stack(e, &st)));
}

/* An entry built in place: claimed only when it fits in one piece, and
 * seen by the consumer only once committed.  A 1024-byte ring holds 17
 * ALLOC entries of 58 bytes (986 bytes); after 5 are taken, 328 bytes
 * are free but only 38 lie before the end, so the 18th must wrap
 * (evring_put) and the 19th starts at byte 1044 mod 1024 = 20. */
START_TEST(claim_writes_in_place_without_wrapping)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1024), 0);
    uint8_t out[1024];
    uint32_t count;
    for (uint64_t seq = 1; seq <= 17; seq++) {
        uint8_t *dst = evring_claim(&r, WIRE_ALLOC_SIZE);
        ck_assert_ptr_eq(dst, r.buf + (seq - 1) * WIRE_ALLOC_SIZE);
        struct wire_alloc a = alloc_no(seq);
        wire_put_alloc(dst, &a);
        ck_assert_uint_eq(evring_used(&r), (seq - 1) * WIRE_ALLOC_SIZE);
        evring_commit(&r, WIRE_ALLOC_SIZE);
    }
    ck_assert_ptr_null(evring_claim(&r, WIRE_ALLOC_SIZE)); /* full */
    ck_assert_uint_eq(take(&r, out, 5 * WIRE_ALLOC_SIZE, &count), 5 * WIRE_ALLOC_SIZE);
    ck_assert_uint_eq(evring_space(&r), 328);
    ck_assert_ptr_null(evring_claim(&r, WIRE_ALLOC_SIZE)); /* would wrap */
    put_alloc(&r, 18);
    uint8_t *dst = evring_claim(&r, WIRE_ALLOC_SIZE);
    ck_assert_ptr_eq(dst, r.buf + 20);
    struct wire_alloc a19 = alloc_no(19);
    evring_commit(&r, wire_put_alloc(dst, &a19));
    ck_assert_uint_eq(take(&r, out, sizeof out, &count), 14 * WIRE_ALLOC_SIZE);
    ck_assert_uint_eq(count, 14);
    for (uint64_t k = 0; k < 14; k++) {
        uint64_t seq;
        ck_assert_uint_eq(out[k * WIRE_ALLOC_SIZE], WIRE_ENTRY_ALLOC);
        memcpy(&seq, out + k * WIRE_ALLOC_SIZE + 2, 8);
        ck_assert_uint_eq(seq, 6 + k);
    }
    evring_destroy(&r);
}
END_TEST

/* Writes n ALLOC entries with sequences from seq, then scribbles a STACK
 * kind byte over each: a peek that read the entries would cut them as
 * 21-byte STACK entries. */
static void put_allocs_then_scribble(struct evring *r, uint64_t seq, int n)
{
    size_t at = evring_pos_bytes(atomic_load(&r->head)) & (r->cap - 1);
    for (int i = 0; i < n; i++)
        put_alloc(r, seq + (uint64_t)i);
    for (int i = 0; i < n; i++)
        r->buf[(at + (size_t)i * WIRE_ALLOC_SIZE) & (r->cap - 1)] = WIRE_ENTRY_STACK;
}

/* The count of whole entries comes with the positions: a peek of all
 * that waits, of mixed sizes, reads none of them. */
START_TEST(a_peek_counts_entries_without_reading_them)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 4096), 0);
    uint8_t out[4096];
    put_stack(&r, 1);
    put_allocs_then_scribble(&r, 1, 10);
    uint32_t count;
    /* 21 + 10 * 58 bytes, 11 entries, however their kind bytes read */
    ck_assert_uint_eq(take(&r, out, sizeof out, &count), 601);
    ck_assert_uint_eq(count, 11);
    evring_destroy(&r);
}
END_TEST

/* A run longer than the limit is cut at the mark of the last whole chunk
 * within it, without reading the entries: every 58-byte entry published
 * on its own leaves a mark in each 16 KiB chunk, the last in chunk 1
 * being 564 entries (32712 bytes) in; with every kind byte scribbled, a
 * walk would have cut elsewhere.  Then the rest comes out whole. */
START_TEST(a_long_run_is_cut_at_a_mark)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 64 << 10), 0);
    ck_assert_uint_eq(r.n_marks, 4);
    static uint8_t out[64 << 10];
    put_allocs_then_scribble(&r, 1, 860); /* 49880 bytes */
    uint32_t count;
    ck_assert_uint_eq(take(&r, out, 40000, &count), 32712);
    ck_assert_uint_eq(count, 564);
    ck_assert_uint_eq(take(&r, out, 40000, &count), 860 * 58 - 32712);
    ck_assert_uint_eq(count, 860 - 564);
    uint64_t seq;
    memcpy(&seq, out + 2, 8);
    ck_assert_uint_eq(seq, 565);
    evring_destroy(&r);
}
END_TEST

/* Without a mark in the chunk (one publish after more than a chunk was
 * written), the consumer cuts by the entries' sizes, compact ones too:
 * 9000 compact allocates (9 bytes for the first, which names its site
 * and context, then 4 each), a 21-byte STACK, one of 5 bytes (its id
 * skips the one the STACK took the place of) and then 4 each: 40000
 * bytes hold 9 + 35996 + 21 + 5 + 992 * 4 = 39999 bytes, 9994 entries. */
START_TEST(without_a_mark_a_cut_reads_entry_sizes)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 64 << 10), 0);
    static uint8_t out[64 << 10];
    struct wire_compact_enc enc;
    wire_compact_enc_init(&enc);
    for (uint64_t i = 0; i < 12000; i++) {
        uint8_t e[WIRE_COMPACT_MAX];
        if (i == 9000) {
            struct wire_stack st = {0, WIRE_NONE32, 7, WIRE_SPAN_NONE};
            ck_assert(evring_put_held(&r, e, wire_put_stack(e, &st)));
            continue;
        }
        struct wire_alloc a = {i + 1, WIRE_OP_ALLOCATE, i, WIRE_NONE64,
                               9,     {0, 0, 0},        0, WIRE_SPAN_NONE};
        ck_assert(evring_put_held(&r, e, wire_compact_put(&enc, e, &a)));
    }
    ck_assert_uint_eq(evring_used(&r), 0); /* held: nothing published */
    evring_publish(&r);
    uint32_t count;
    ck_assert_uint_eq(take(&r, out, 40000, &count), 39999);
    ck_assert_uint_eq(count, 9994);
    evring_destroy(&r);
}
END_TEST

/* A mixed run cut by the limit is cut at an entry boundary read from the
 * kind bytes: STACK, ALLOC, STACK, ALLOC (21 + 58 + 21 + 58). */
START_TEST(a_mixed_run_is_cut_between_entries)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1024), 0);
    uint8_t out[1024];
    for (uint32_t i = 0; i < 2; i++) {
        put_stack(&r, i);
        put_alloc(&r, i + 1);
    }
    uint32_t count;
    ck_assert_uint_eq(take(&r, out, 21 + 58 + 20, &count), 79);
    ck_assert_uint_eq(count, 2);
    ck_assert_uint_eq(take(&r, out, 21 + 58 + 21, &count), 79);
    ck_assert_uint_eq(count, 2);
    ck_assert_uint_eq(evring_used(&r), 0);
    evring_destroy(&r);
}
END_TEST

/* Positions count bytes modulo 2^40 and entries modulo 2^24: a ring
 * whose positions wrap both fields still tells its room, bytes and
 * counts right. */
START_TEST(positions_wrap_their_fields)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, 1024), 0);
    uint64_t start = ((EVRING_BYTES_MASK - 100) << EVRING_COUNT_BITS) | (EVRING_COUNT_MASK - 2);
    atomic_store(&r.head, start), atomic_store(&r.tail, start);
    r.tail_seen = r.written = r.published = start;
    uint8_t out[1024];
    uint32_t count;
    uint64_t seq = 1;
    for (int round = 0; round < 40; round++) {
        for (int i = 0; i < 3; i++, seq++)
            put_alloc(&r, seq);
        ck_assert_uint_eq(evring_used(&r), 3 * WIRE_ALLOC_SIZE);
        ck_assert_uint_eq(evring_space(&r), 1024 - 3 * WIRE_ALLOC_SIZE);
        ck_assert_uint_eq(take(&r, out, sizeof out, &count), 3 * WIRE_ALLOC_SIZE);
        ck_assert_uint_eq(count, 3);
        uint64_t got;
        memcpy(&got, out + 2 * WIRE_ALLOC_SIZE + 2, 8);
        ck_assert_uint_eq(got, seq - 1);
    }
    /* both fields went past their ends */
    ck_assert_uint_lt(evring_pos_bytes(atomic_load(&r.head)), 1024 * 10);
    ck_assert_uint_lt(atomic_load(&r.head) & EVRING_COUNT_MASK, 200);
    evring_destroy(&r);
}
END_TEST

START_TEST(a_ring_too_large_to_count_is_refused)
{
    struct evring r;
    ck_assert_int_eq(evring_init(&r, EVRING_MAX_CAP + 1), -1);
}
END_TEST

Suite *evring_suite(void)
{
    Suite *s = suite_create("evring");
    TCase *t = tcase_create("evring");
    tcase_add_test(t, wraparound_keeps_entries_whole);
    tcase_add_test(t, space_accounts_for_what_is_taken);
    tcase_add_test(t, a_full_ring_sees_what_the_consumer_took);
    tcase_add_test(t, claim_writes_in_place_without_wrapping);
    tcase_add_test(t, a_peek_counts_entries_without_reading_them);
    tcase_add_test(t, a_long_run_is_cut_at_a_mark);
    tcase_add_test(t, without_a_mark_a_cut_reads_entry_sizes);
    tcase_add_test(t, a_mixed_run_is_cut_between_entries);
    tcase_add_test(t, positions_wrap_their_fields);
    tcase_add_test(t, a_ring_too_large_to_count_is_refused);
    suite_add_tcase(s, t);
    return s;
}
