/* Tests of proto/wire_compact.h: the compact ALLOC entries of version 3
 * read back as the records written, entry by entry and through the
 * decoder, every refusal names its field, and what the layout carries
 * over (sites, the execution context, the last resize) is what
 * jett-capture(5) says. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"
#include "proto/wire_compact.h"

Suite *wire_compact_suite(void);

static const struct wire_exec ctx0 = {WIRE_NONE32, WIRE_NONE32, 0};

static struct wire_alloc rec(uint64_t seq, uint8_t op, uint64_t id, uint64_t old, uint64_t neu,
                             uint32_t stack, struct wire_span span)
{
    return (struct wire_alloc){seq, op, id, old, neu, ctx0, stack, span};
}

static void assert_same(const struct wire_alloc *a, const struct wire_alloc *b)
{
    ck_assert_uint_eq(a->sequence, b->sequence);
    ck_assert_uint_eq(a->op, b->op);
    ck_assert_uint_eq(a->allocation_id, b->allocation_id);
    ck_assert_uint_eq(a->old_size, b->old_size);
    ck_assert_uint_eq(a->new_size, b->new_size);
    ck_assert_uint_eq(a->exec.task, b->exec.task);
    ck_assert_uint_eq(a->exec.actor, b->exec.actor);
    ck_assert_uint_eq(a->exec.thread, b->exec.thread);
    ck_assert_uint_eq(a->stack_id, b->stack_id);
    ck_assert_uint_eq(a->span.start, b->span.start);
    ck_assert_uint_eq(a->span.end, b->span.end);
}

static void rule_init(struct wire_compact_rule *r, uint32_t n_stacks)
{
    memset(r, 0, sizeof *r);
    r->r.n_stacks = n_stacks;
    wire_compact_state_init(&r->s);
}

/* Writes `n` records and reads them back, each entry as long as
 * wire_compact_size says; returns the bytes written. */
static size_t round_trip(const struct wire_alloc *in, size_t n, uint8_t *buf)
{
    struct wire_compact_enc e;
    wire_compact_enc_init(&e);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += wire_compact_put(&e, buf + len, &in[i]);
    struct wire_compact_rule r;
    rule_init(&r, 100);
    const uint8_t *p = buf, *end = buf + len;
    for (size_t i = 0; i < n; i++) {
        struct wire_alloc out;
        unsigned how, why = 0;
        size_t size = wire_compact_take(p, end, &r, &out, &how, &why);
        ck_assert_msg(size > 0, "record %zu refused (why %u)", i, why);
        ck_assert_uint_eq(size, wire_compact_size(p, end));
        assert_same(&in[i], &out);
        p += size;
    }
    ck_assert_ptr_eq(p, end);
    return len;
}

/* jett-capture(5)'s typical shapes, byte for byte: an allocate at the
 * floor naming its site and context, one more (4 bytes), a fold of it
 * (the free distance in its second byte), a free of the first (id back
 * 1 from the floor), a resize, and that allocation resized again from
 * the size the last resize left (3 bytes, no id or old size). */
/* Varints of every length read back whether eight bytes follow (the
 * reading without a loop) or the buffer ends with them, and a varint
 * longer than 10 bytes, past 2^64 - 1 or cut short is refused.  The
 * bytes of 2^7k - 1 and 2^7k are written out by hand. */
START_TEST(varints_of_every_length)
{
    for (unsigned len = 1; len <= 10; len++) {
        /* 2^7(len-1) is len bytes: len - 1 of 0x80, then 0x01; 2^7len - 1
         * is len - 1 of 0xff, then 0x7f (2^64 - 1 is ten bytes, the last 0x01) */
        uint64_t lo = len == 1 ? 0 : UINT64_C(1) << (7 * (len - 1));
        uint64_t hi = len == 10 ? UINT64_MAX : (UINT64_C(1) << (7 * len)) - 1;
        uint8_t blo[10], bhi[10];
        for (unsigned i = 0; i + 1 < len; i++)
            blo[i] = len == 1 ? 0 : 0x80, bhi[i] = 0xff;
        blo[len - 1] = len == 1 ? 0 : 0x01, bhi[len - 1] = len == 10 ? 0x01 : 0x7f;
        const uint64_t want[2] = {lo, hi};
        const uint8_t *bytes[2] = {blo, bhi};
        for (int k = 0; k < 2; k++) {
            uint8_t buf[32];
            memset(buf, 0xee, sizeof buf);
            ck_assert_uint_eq((size_t)(wire_varint_put(buf, want[k]) - buf), len);
            ck_assert_int_eq(memcmp(buf, bytes[k], len), 0);
            for (size_t slack = 0; slack <= 9; slack++) {
                uint64_t v = 0;
                const uint8_t *q = wire_varint_get(buf, buf + len + slack, &v);
                ck_assert_ptr_eq(q, buf + len);
                ck_assert_uint_eq(v, want[k]);
            }
            uint64_t v;
            ck_assert_ptr_null(wire_varint_get(buf, buf + len - 1, &v));
        }
    }
    uint8_t eleven[16] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    uint8_t past[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    uint64_t v;
    ck_assert_ptr_null(wire_varint_get(eleven, eleven + sizeof eleven, &v));
    ck_assert_ptr_null(wire_varint_get(past, past + sizeof past, &v));
}
END_TEST

START_TEST(typical_entries_are_a_few_bytes)
{
    const struct wire_span sp = {10, 14};
    struct wire_alloc in[] = {
        rec(1, WIRE_OP_ALLOCATE, 0, WIRE_NONE64, 25, 2, sp),
        rec(2, WIRE_OP_ALLOCATE, 1, WIRE_NONE64, 30, 2, sp),
        rec(3, WIRE_OP_FOLD, 2, 6, 40, 2, sp), /* freed at sequence 6 */
        rec(4, WIRE_OP_FREE, 0, 25, WIRE_NONE64, 2, sp),
        rec(5, WIRE_OP_RESIZE, 1, 30, 300, 2, sp),
        rec(7, WIRE_OP_RESIZE, 1, 300, 299, 2, sp),
    };
    uint8_t buf[256];
    size_t len = round_trip(in, 6, buf);
    static const uint8_t want[] = {
        /* kind, distance, header (site new, context new), size, site
         * (stack 2 + 1, start 10 + 1, length 4), context (-, -, 0 + 1) */
        4, 0, 0x18, 25, 3, 11, 4, 0, 0, 1,
        /* the next sequence, the floor, the same site and context */
        4, 0, 0x00, 30,
        /* a fold freed 3 sequences on */
        4, 3, 0x00, 40,
        /* a free: id 0 is 2 back from the floor 3 (varint 2), old size */
        6, 0x00, 2, 25,
        /* a resize: id 1 (varint 1), old size 30 (30), zigzag(+270) 540 */
        5, 0x00, 1, 30, 0x9c, 0x04,
        /* the same allocation again, two sequences on: zigzag(-1) = 1 */
        7, 0x01, 1};
    ck_assert_uint_eq(len, sizeof want);
    ck_assert(memcmp(buf, want, len) == 0);
}
END_TEST

/* Every field at its extremes: sizes of 0 and 2^64 - 1, ids past the
 * floor and far below it, sequences far apart, absent stacks and spans,
 * contexts that change, the two sites alternating. */
START_TEST(random_records_read_back)
{
    static uint8_t buf[4000 * WIRE_COMPACT_MAX];
    struct wire_alloc in[4000];
    unsigned seed = 7;
    uint64_t seq = 0, next = 0;
    for (size_t i = 0; i < 4000; i++) {
        unsigned r = (unsigned)rand_r(&seed);
        seq += r % 5 ? 1 + r % 3 : 1 + ((uint64_t)r << 12);
        uint64_t big = r % 7 == 0 ? UINT64_MAX - r % 3 : r % 7 == 1 ? (uint64_t)r << 20 : r % 200;
        struct wire_span sp = r % 4 ? (struct wire_span){r % 50, r % 50 + r % 9} : WIRE_SPAN_NONE;
        uint32_t stack = r % 5 ? r % 100 : WIRE_NONE32;
        if (stack == WIRE_NONE32)
            sp = WIRE_SPAN_NONE;
        if (i > 0 && r % 3 == 0)
            stack = in[i - 1].stack_id, sp = in[i - 1].span;
        unsigned op = (r >> 8) % 4;
        if (op == WIRE_OP_ALLOCATE || op == WIRE_OP_FOLD || next == 0) {
            uint64_t id = next + (r % 11 == 0 ? (uint64_t)r << 3 : 0);
            next = id + 1;
            in[i] = rec(seq, op == WIRE_OP_FOLD ? WIRE_OP_FOLD : WIRE_OP_ALLOCATE, id,
                        op == WIRE_OP_FOLD ? seq + 1 + r % 255 : WIRE_NONE64, big, stack, sp);
        } else {
            uint64_t id = r % 13 == 0 ? next + r : next - 1 - r % next; /* unknown ids too */
            in[i] = rec(seq, op, id, big, op == WIRE_OP_RESIZE ? big ^ (r & 0xffff) : WIRE_NONE64,
                        stack, sp);
            if (op == WIRE_OP_RESIZE && i + 1 < 4000 && r % 2) { /* resized again */
                in[i + 1] = in[i];
                in[i + 1].sequence = ++seq;
                in[i + 1].old_size = in[i].new_size;
                in[i + 1].new_size = in[i].new_size + r % 100;
                i++;
            }
        }
        if (r % 17 == 0)
            in[i].exec = (struct wire_exec){r % 5, WIRE_NONE32, r % 3};
        else if (i > 0)
            in[i].exec = in[i - 1].exec;
    }
    round_trip(in, 4000, buf);
}
END_TEST

/* What the layout cannot hold is refused, each with its reason. */
START_TEST(bad_entries_are_refused_with_their_reason)
{
    static const struct {
        uint8_t bytes[12];
        size_t len;
        unsigned why;
    } cases[] = {
        {{3, 0, 0}, 3, WIRE_CW_KIND},
        {{4, 0}, 2, WIRE_CW_CUT},
        {{4, 0, 0x40, 1}, 4, WIRE_CW_HEADER},              /* reserved bit */
        {{4, 0, 0x0c, 1}, 4, WIRE_CW_HEADER},              /* site field 3 */
        {{6, 0x20, 0, 1}, 4, WIRE_CW_HEADER},              /* an id bit on a free */
        {{4, 0, 0x00, 0x80}, 4, WIRE_CW_VARINT},           /* cut short */
        {{4, 0, 0x08, 1, 120, 0}, 6, WIRE_CW_STACK},       /* stack 119 of 100 */
        {{4, 0, 0x08, 1, 0, 1, 0}, 7, WIRE_CW_SPAN_STACK}, /* a span, no stack */
        {{4, 0, 0x08, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0}, 11, WIRE_CW_SPAN},
        {{4, 0, 0x10, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0}, 11, WIRE_CW_EXEC},
        {{7, 0x00, 1}, 3, WIRE_CW_AGAIN}, /* no resize before */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct wire_compact_rule r;
        rule_init(&r, 100);
        struct wire_alloc out;
        unsigned how, why = 99;
        ck_assert_uint_eq(
            wire_compact_take(cases[i].bytes, cases[i].bytes + cases[i].len, &r, &out, &how, &why),
            0);
        ck_assert_msg(why == cases[i].why, "case %zu: why %u, want %u", i, why, cases[i].why);
        ck_assert(!r.r.have); /* the rule did not move */
    }
}
END_TEST

/* A sequence that would pass 2^64 - 1, and one that does not increase
 * past the last taken entry of any layout, are refused. */
START_TEST(sequences_only_increase)
{
    struct wire_compact_rule r;
    rule_init(&r, 0);
    r.r.have = true, r.r.last = UINT64_MAX - 1;
    const uint8_t two[] = {4, 0, 0x01, 1}; /* the last + 2 */
    struct wire_alloc out;
    unsigned how, why = 0;
    ck_assert_uint_eq(wire_compact_take(two, two + 4, &r, &out, &how, &why), 0);
    ck_assert_uint_eq(why, WIRE_CW_SEQUENCE);
    const uint8_t one[] = {4, 0, 0x00, 1}; /* the last + 1: 2^64 - 1 */
    ck_assert_uint_eq(wire_compact_take(one, one + 4, &r, &out, &how, &why), 4);
    ck_assert_uint_eq(out.sequence, UINT64_MAX);
}
END_TEST

/* The decoder reads compact entries in a version 3 stream as ALLOC
 * events and refuses them in an older one (whose entries they are not). */
static int decode_one(uint32_t version, const uint8_t *bin, size_t len, struct wire_event *ev,
                      char *msg, size_t msglen)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = {version,
                           WIRE_MODE_MEMORY,
                           {0, 500, 10, 32u << 20, 64u << 20, 16u << 20},
                           {"t", 1},
                           WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS,
                           false};
    uint32_t lines[1] = {0};
    struct wire_source src = {0, WIRE_ORIGIN_PROJECT, {"a.jett", 6}, {"", 0}, NULL, 0, lines, 1};
    struct wire_func fn = {0, {"a", 1}, {"f", 1}, 0, WIRE_SPAN_NONE};
    uint8_t stack[WIRE_STACK_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    wire_put_stack(stack, &st);
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    ck_assert_int_eq(wire_encode_source(&sb, &src), 0);
    ck_assert_int_eq(wire_encode_func(&sb, &fn), 0);
    ck_assert_int_eq(wire_encode_events(&sb, 1, stack, sizeof stack), 0);
    ck_assert_int_eq(wire_encode_events(&sb, 1, bin, len), 0);
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record r;
    size_t off = 0;
    int rc = 0, events = 0;
    while (off < sb.size || rc > 0) {
        off += wire_decoder_push(d, sb.data + off, sb.size - off);
        rc = wire_decoder_next(d, &r);
        if (rc < 0)
            break;
        if (rc > 0 && r.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            wire_events_begin(&it, &r.u.events);
            if (++events == 2) {
                rc = wire_events_next(d, &it, ev);
                break;
            }
            while ((rc = wire_events_next(d, &it, ev)) > 0)
                ;
            if (rc < 0)
                break;
            rc = 1;
        }
    }
    snprintf(msg, msglen, "%s", wire_decoder_error(d)->msg);
    wire_decoder_free(d);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

START_TEST(compact_entries_need_version_3)
{
    struct wire_compact_enc e;
    wire_compact_enc_init(&e);
    uint8_t bin[WIRE_COMPACT_MAX];
    struct wire_alloc a = rec(1, WIRE_OP_FOLD, 1, 4, 64, 0, WIRE_SPAN_NONE);
    size_t n = wire_compact_put(&e, bin, &a);
    struct wire_event ev;
    char msg[300];
    ck_assert_msg(decode_one(3, bin, n, &ev, msg, sizeof msg) == 1, "%s", msg);
    ck_assert_uint_eq(ev.kind, WIRE_ENTRY_ALLOC);
    assert_same(&ev.u.alloc, &a);
    ck_assert_uint_eq(wire_fold_free_seq(&ev.u.alloc), 4);
    uint8_t padded[64] = {0}; /* as long as any older entry */
    memcpy(padded, bin, n);
    ck_assert_int_eq(decode_one(2, padded, sizeof padded, &ev, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "entry 0 has unknown kind 4") != NULL, "%s", msg);
    /* a refusal names its field and entry */
    const uint8_t again[] = {7, 0x00, 1};
    ck_assert_int_eq(decode_one(3, again, 3, &ev, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "ALLOC: a RESIZE_AGAIN before any compact resize (entry 0)");
}
END_TEST

Suite *wire_compact_suite(void)
{
    Suite *s = suite_create("wire_compact");
    TCase *t = tcase_create("wire_compact");
    tcase_add_test(t, varints_of_every_length);
    tcase_add_test(t, typical_entries_are_a_few_bytes);
    tcase_add_test(t, random_records_read_back);
    tcase_add_test(t, bad_entries_are_refused_with_their_reason);
    tcase_add_test(t, sequences_only_increase);
    tcase_add_test(t, compact_entries_need_version_3);
    suite_add_tcase(s, t);
    return s;
}
