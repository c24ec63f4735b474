/* Tests of proto/wire: round trips, framing and every validation rule. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "proto/wire.h"
#include "proto/wire_alloc_entry.h"
#include "tests/alloc_run.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

static const char source_text[] = "namespace a\n\nfn main() {\n}\n";

static struct wire_hello sample_hello(void)
{
    struct wire_hello h = {
        WIRE_PROTOCOL_VERSION,       WIRE_MODE_CPU, {997, 500, 10, 32u << 20, 64u << 20, 16u << 20},
        S("interpreter_safe_point"), WIRE_CAP_ALL,  true};
    return h;
}

static void put_source(msgpack_sbuffer *sb, uint32_t id, const char *path)
{
    static const struct wire_source_span spans[] = {
        {WIRE_SPAN_COMMENT, 0, 9}, {WIRE_SPAN_SECRET, 13, 20}, {WIRE_SPAN_LITERAL, 14, 15}};
    uint32_t lines[8];
    uint32_t n = wire_line_starts(source_text, sizeof source_text - 1, lines, 8);
    struct wire_source s = {
        id, WIRE_ORIGIN_DEPENDENCY, {path, (uint32_t)strlen(path)}, S(source_text), spans, 3, lines,
        n};
    ck_assert_int_eq(wire_encode_source(sb, &s), 0);
}

static void put_func(msgpack_sbuffer *sb, uint32_t id, uint32_t src, struct wire_span decl)
{
    struct wire_func f = {id, S("a.b"), S("main"), src, decl};
    ck_assert_int_eq(wire_encode_func(sb, &f), 0);
}

/* HELLO, one SOURCE, two FUNCs and a root STACK: the context most
 * validation tests extend with one bad frame. */
static void put_base(msgpack_sbuffer *sb)
{
    struct wire_hello h = sample_hello();
    ck_assert_int_eq(wire_encode_hello(sb, &h), 0);
    put_source(sb, 0, "deps/x.jett");
    put_func(sb, 0, 0, (struct wire_span){12, 26});
    put_func(sb, 1, WIRE_NONE32, WIRE_SPAN_NONE);
    uint8_t bin[WIRE_STACK_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    wire_put_stack(bin, &st);
    ck_assert_int_eq(wire_encode_events(sb, 1, bin, sizeof bin), 0);
}

struct decoded {
    int records, entries;
    struct wire_error err;
};

/* Feeds `len` bytes `step` at a time; iterates every EVENTS batch. */
static int decode_all(const void *buf, size_t len, size_t step, enum wire_direction dir,
                      struct decoded *out)
{
    struct wire_decoder *d = wire_decoder_new(dir);
    const uint8_t *p = buf;
    int rc = 0;
    memset(out, 0, sizeof *out);
    size_t off = 0;
    while (rc >= 0 && off < len) {
        size_t n = len - off < step ? len - off : step;
        size_t used = wire_decoder_push(d, p + off, n);
        off += used;
        struct wire_record rec;
        while ((rc = wire_decoder_next(d, &rec)) > 0) {
            out->records++;
            if (rec.type != WIRE_EVENTS)
                continue;
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while ((rc = wire_events_next(d, &it, &ev)) > 0)
                out->entries++;
            if (rc < 0)
                break;
        }
        if (used == 0 && rc == 0)
            break;
    }
    if (rc >= 0)
        rc = wire_decoder_end(d);
    out->err = *wire_decoder_error(d);
    wire_decoder_free(d);
    return rc < 0 ? -1 : 0;
}

/* Expects the stream to fail with `code` and a message containing `needle`. */
static void expect_error(msgpack_sbuffer *sb, enum wire_errcode code, const char *needle)
{
    struct decoded r;
    ck_assert_int_eq(decode_all(sb->data, sb->size, sb->size, WIRE_TO_DAEMON, &r), -1);
    ck_assert_msg(r.err.code == code, "code %s, want %s: %s", wire_errcode_name(r.err.code),
                  wire_errcode_name(code), r.err.msg);
    ck_assert_msg(strstr(r.err.msg, needle), "message '%s' lacks '%s'", r.err.msg, needle);
}

/* ---- round trips ---- */

START_TEST(roundtrip_to_daemon_fields)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    uint8_t bin[WIRE_SAMPLE_SIZE + WIRE_ALLOC_SIZE + WIRE_STACK_SIZE + 2 * WIRE_TASK_SIZE];
    struct wire_stack st = {1, 0, 1, {14, 20}};
    struct wire_sample sm = {5, 9, {7, 8, 0}, WIRE_STATE_JETT, 1, {13, 15}};
    struct wire_alloc al = {3,   WIRE_OP_RESIZE,      1ull << 40, 100,
                            200, {WIRE_NONE32, 2, 1}, 0,          WIRE_SPAN_NONE};
    struct wire_task main_task = {1, 0, WIRE_NONE32, WIRE_SPAN_NONE}, spawned = {2, 1, 0, {13, 24}};
    size_t n = wire_put_stack(bin, &st);
    n += wire_put_sample(bin + n, &sm);
    n += wire_put_alloc(bin + n, &al);
    n += wire_put_task(bin + n, &main_task);
    n += wire_put_task(bin + n, &spawned);
    ck_assert_uint_eq(n, sizeof bin);
    ck_assert_int_eq(wire_encode_events(&sb, 5, bin, n), 0);
    struct wire_finish fin = {WIRE_TERM_INTERRUPTED, 123456789, WIRE_NONE64, 10, 2, 3, true, false};
    ck_assert_int_eq(wire_encode_finish(&sb, &fin), 0);

    /* One byte at a time: every frame arrives split at every offset. */
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec;
    int seen = 0;
    for (size_t i = 0; i < sb.size; i++) {
        ck_assert_uint_eq(wire_decoder_push(d, sb.data + i, 1), 1);
        int rc = wire_decoder_next(d, &rec);
        ck_assert_int_ge(rc, 0);
        if (rc == 0)
            continue;
        seen++;
        if (rec.type == WIRE_HELLO) {
            ck_assert_uint_eq(rec.u.hello.config.rate_hz, 997);
            ck_assert_uint_eq(rec.u.hello.config.stack_budget, 16u << 20);
            ck_assert_uint_eq(rec.u.hello.capabilities, WIRE_CAP_ALL);
            ck_assert(rec.u.hello.colour);
            ck_assert_int_eq(memcmp(rec.u.hello.backend.ptr, "interpreter_safe_point", 22), 0);
        } else if (rec.type == WIRE_SOURCE) {
            ck_assert_uint_eq(rec.u.source.origin, WIRE_ORIGIN_DEPENDENCY);
            ck_assert_uint_eq(rec.u.source.n_spans, 3);
            ck_assert_uint_eq(rec.u.source.spans[1].kind, WIRE_SPAN_SECRET);
            ck_assert_uint_eq(rec.u.source.spans[1].end, 20);
            ck_assert_uint_eq(rec.u.source.spans[2].kind, WIRE_SPAN_LITERAL);
            ck_assert_uint_eq(rec.u.source.spans[2].end, 15);
            /* "namespace a\n\nfn main() {\n}\n": lines start at 0, 12, 13, 25, 27 */
            ck_assert_uint_eq(rec.u.source.n_lines, 5);
            ck_assert_uint_eq(rec.u.source.line_starts[3], 25);
            ck_assert_uint_eq(rec.u.source.text.len, sizeof source_text - 1);
        } else if (rec.type == WIRE_FUNC && rec.u.func.func_id == 1) {
            ck_assert_uint_eq(rec.u.func.source_id, WIRE_NONE32);
            ck_assert(!wire_span_present(rec.u.func.decl));
        } else if (rec.type == WIRE_EVENTS && rec.u.events.count == 5) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_uint_eq(ev.kind, WIRE_ENTRY_STACK);
            ck_assert_uint_eq(ev.u.stack.site.start, 14);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_uint_eq(ev.u.sample.sequence, 5);
            ck_assert_uint_eq(ev.u.sample.requested_tick, 9);
            ck_assert_uint_eq(ev.u.sample.exec.actor, 8);
            ck_assert_uint_eq(ev.u.sample.stack_id, 1);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_uint_eq(ev.u.alloc.allocation_id, 1ull << 40);
            ck_assert_uint_eq(ev.u.alloc.old_size, 100);
            ck_assert_uint_eq(ev.u.alloc.exec.task, WIRE_NONE32);
            ck_assert(!wire_span_present(ev.u.alloc.span));
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_uint_eq(ev.kind, WIRE_ENTRY_TASK);
            ck_assert_uint_eq(ev.u.task.task, 1);
            ck_assert_uint_eq(ev.u.task.spawn_func, WIRE_NONE32);
            ck_assert(!wire_span_present(ev.u.task.site));
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_uint_eq(ev.u.task.task, 2);
            ck_assert_uint_eq(ev.u.task.func_id, 1);
            ck_assert_uint_eq(ev.u.task.spawn_func, 0);
            ck_assert_uint_eq(ev.u.task.site.start, 13);
            ck_assert_uint_eq(ev.u.task.site.end, 24);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 0);
        } else if (rec.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
            ck_assert_int_eq(wire_events_next(d, &it, &ev), 0);
        } else if (rec.type == WIRE_FINISH) {
            ck_assert_uint_eq(rec.u.finish.termination, WIRE_TERM_INTERRUPTED);
            ck_assert_uint_eq(rec.u.finish.wall_ns, 123456789);
            ck_assert_uint_eq(rec.u.finish.cpu_ns, WIRE_NONE64);
            ck_assert_uint_eq(rec.u.finish.dropped_ticks, 3);
            ck_assert(rec.u.finish.collector_failure);
            ck_assert(!rec.u.finish.stack_limit);
        }
    }
    ck_assert_int_eq(seen, 7);
    ck_assert(wire_decoder_finished(d));
    ck_assert_uint_eq(wire_decoder_stacks(d), 2);
    ck_assert_uint_eq(wire_decoder_tasks(d), 2);
    ck_assert_int_eq(wire_decoder_end(d), 0);
    wire_decoder_free(d);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(roundtrip_to_launcher)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_ready ready = {WIRE_PROTOCOL_VERSION};
    struct wire_result res = {S("profile:\n  schema: jett.profile.v1"), S("CPU profile\n")};
    ck_assert_int_eq(wire_encode_ready(&sb, &ready), 0);
    ck_assert_int_eq(wire_encode_result(&sb, &res), 0);
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_LAUNCHER);
    /* READY is 4 length bytes + fixarray(2) + fixint 2 + fixint 1 = 7 bytes. */
    ck_assert_uint_eq(wire_decoder_push(d, sb.data, sb.size), 7);
    struct wire_record rec;
    ck_assert_int_eq(wire_decoder_next(d, &rec), 1);
    ck_assert_uint_eq(rec.type, WIRE_READY);
    ck_assert_uint_eq(rec.u.ready.version, WIRE_PROTOCOL_VERSION);
    ck_assert_uint_eq(wire_decoder_push(d, sb.data + 7, sb.size - 7), sb.size - 7);
    ck_assert_int_eq(wire_decoder_next(d, &rec), 1);
    ck_assert_uint_eq(rec.type, WIRE_RESULT);
    ck_assert_uint_eq(rec.u.result.human.len, 12);
    ck_assert_int_eq(memcmp(rec.u.result.profile.ptr, "profile:\n", 9), 0);
    ck_assert(wire_decoder_finished(d));
    wire_decoder_free(d);

    msgpack_sbuffer_clear(&sb);
    struct wire_unsupported un = {S("safe_stack_capture")};
    ck_assert_int_eq(wire_encode_unsupported(&sb, &un), 0);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, 3, WIRE_TO_LAUNCHER, &r), 0);
    ck_assert_int_eq(r.records, 1);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* Every split of a mixed stream into two pushes decodes identically. */
START_TEST(split_at_every_boundary)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    uint8_t bin[4 * WIRE_ALLOC_SIZE];
    size_t n = 0;
    for (uint64_t i = 1; i <= 4; i++) {
        struct wire_alloc a = {i,     WIRE_OP_ALLOCATE, i, WIRE_NONE64,
                               8 * i, {0, 0, 0},        0, WIRE_SPAN_NONE};
        n += wire_put_alloc(bin + n, &a);
    }
    ck_assert_int_eq(wire_encode_events(&sb, 4, bin, n), 0);
    struct wire_finish fin = {0, 1, 1, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&sb, &fin), 0);
    for (size_t k = 0; k <= sb.size; k++) {
        struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
        int records = 0, entries = 0;
        size_t cuts[2][2] = {{0, k}, {k, sb.size}};
        for (int c = 0; c < 2; c++) {
            size_t off = cuts[c][0];
            while (off < cuts[c][1]) {
                off += wire_decoder_push(d, sb.data + off, cuts[c][1] - off);
                struct wire_record rec;
                int rc;
                while ((rc = wire_decoder_next(d, &rec)) > 0) {
                    records++;
                    if (rec.type != WIRE_EVENTS)
                        continue;
                    struct wire_events_iter it;
                    struct wire_event ev;
                    wire_events_begin(&it, &rec.u.events);
                    while (wire_events_next(d, &it, &ev) > 0)
                        entries++;
                }
                ck_assert_int_eq(rc, 0);
            }
        }
        ck_assert_int_eq(records, 7);
        ck_assert_int_eq(entries, 5);
        ck_assert_int_eq(wire_decoder_end(d), 0);
        wire_decoder_free(d);
    }
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(batch_append_respects_capacity)
{
    uint8_t buf[WIRE_ALLOC_SIZE * 2 + 10];
    struct wire_batch b = {buf, sizeof buf, 0, 0};
    struct wire_alloc a = {1, WIRE_OP_ALLOCATE, 1, WIRE_NONE64, 1, {0, 0, 0}, 0, WIRE_SPAN_NONE};
    ck_assert(wire_batch_alloc(&b, &a));
    ck_assert(wire_batch_alloc(&b, &a));
    ck_assert(!wire_batch_alloc(&b, &a));
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    ck_assert(!wire_batch_stack(&b, &st)); /* 21 > 10 bytes left */
    ck_assert_uint_eq(b.count, 2);
    ck_assert_uint_eq(b.len, 2 * WIRE_ALLOC_SIZE);
    /* Layout: kind, op, then little-endian sequence. */
    ck_assert_uint_eq(buf[0], WIRE_ENTRY_ALLOC);
    ck_assert_uint_eq(buf[2], 1);
    ck_assert_uint_eq(buf[3], 0);
}
END_TEST

/* ---- framing ---- */

START_TEST(frame_zero_length)
{
    static const uint8_t z[4] = {0, 0, 0, 0};
    msgpack_sbuffer sb = {.data = (char *)z, .size = 4};
    expect_error(&sb, WIRE_E_FRAME_SIZE, "zero");
}
END_TEST

START_TEST(frame_oversize)
{
    /* 4 MiB + 1 announced: refused from the header, before any payload. */
    static const uint8_t h[5] = {0x00, 0x40, 0x00, 0x01, 0x90};
    msgpack_sbuffer sb = {.data = (char *)h, .size = 5};
    expect_error(&sb, WIRE_E_FRAME_SIZE, "over the 4 MiB limit");
}
END_TEST

START_TEST(frame_truncated_payload_and_header)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size - 1, 7, WIRE_TO_DAEMON, &r), -1);
    ck_assert_int_eq(r.err.code, WIRE_E_TRUNCATED);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "cut short"));
    ck_assert_int_eq(decode_all(sb.data, 2, 1, WIRE_TO_DAEMON, &r), -1);
    ck_assert_int_eq(r.err.code, WIRE_E_TRUNCATED);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "header"));
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* A raw frame around `payload`. */
static void raw_frame(msgpack_sbuffer *sb, const void *payload, uint32_t n)
{
    uint8_t h[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    msgpack_sbuffer_write(sb, (const char *)h, 4);
    msgpack_sbuffer_write(sb, payload, n);
}

START_TEST(msgpack_container_claim_refused)
{
    /* array32 claiming 2^31 elements in a 6-byte payload: msgpack-c would
     * allocate 48 GiB of objects for it. */
    static const uint8_t p[6] = {0xdd, 0x80, 0x00, 0x00, 0x00, 0x01};
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    raw_frame(&sb, p, sizeof p);
    expect_error(&sb, WIRE_E_MSGPACK, "more elements");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(msgpack_garbage_and_trailing)
{
    static const uint8_t bad[2] = {0x91, 0xc1};
    static const uint8_t trailing[3] = {0x91, 0x01, 0x01};
    static const uint8_t notarray[1] = {0x01};
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    raw_frame(&sb, bad, 2);
    expect_error(&sb, WIRE_E_MSGPACK, "0xc1");
    msgpack_sbuffer_clear(&sb);
    raw_frame(&sb, trailing, 3);
    expect_error(&sb, WIRE_E_MSGPACK, "1 bytes after");
    msgpack_sbuffer_clear(&sb);
    raw_frame(&sb, notarray, 1);
    expect_error(&sb, WIRE_E_MSGPACK, "not a non-empty msgpack array");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(msgpack_too_many_objects)
{
    uint8_t p[1 + 3 + 100];
    p[0] = 0xdc, p[1] = 0, p[2] = 100; /* array16 of 100 nils */
    memset(p + 3, 0xc0, 100);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    raw_frame(&sb, p, 103);
    expect_error(&sb, WIRE_E_MSGPACK, "more than 64 msgpack objects");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* ---- record types and order ---- */

/* Packs [type, fields...] from a format: u=uint, s=str, n=nil, b=bool. */
static void pack_raw(msgpack_sbuffer *sb, const char *fmt, ...)
{
    msgpack_sbuffer body;
    msgpack_sbuffer_init(&body);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, (uint32_t)strlen(fmt));
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        if (*f == 'u')
            msgpack_pack_uint64(&pk, va_arg(ap, uint64_t));
        else if (*f == 'i')
            msgpack_pack_int64(&pk, va_arg(ap, int64_t));
        else if (*f == 's') {
            const char *s = va_arg(ap, const char *);
            msgpack_pack_str(&pk, strlen(s));
            msgpack_pack_str_body(&pk, s, strlen(s));
        } else if (*f == 'n')
            msgpack_pack_nil(&pk);
        else if (*f == 'b')
            va_arg(ap, int) ? msgpack_pack_true(&pk) : msgpack_pack_false(&pk);
    }
    va_end(ap);
    raw_frame(sb, body.data, (uint32_t)body.size);
    msgpack_sbuffer_destroy(&body);
}

START_TEST(unknown_type)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    pack_raw(&sb, "u", (uint64_t)99);
    expect_error(&sb, WIRE_E_TYPE, "unknown record type 99");
    msgpack_sbuffer_clear(&sb);
    pack_raw(&sb, "s", "HELLO");
    expect_error(&sb, WIRE_E_TYPE, "not an unsigned integer");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(wrong_direction)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_ready ready = {1};
    wire_encode_ready(&sb, &ready);
    expect_error(&sb, WIRE_E_TYPE, "READY does not travel to the daemon");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(order_rules)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_source(&sb, 0, "a.jett");
    expect_error(&sb, WIRE_E_ORDER, "SOURCE before HELLO");
    msgpack_sbuffer_clear(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    wire_encode_hello(&sb, &h);
    expect_error(&sb, WIRE_E_ORDER, "HELLO repeated");
    msgpack_sbuffer_clear(&sb);
    wire_encode_hello(&sb, &h);
    struct wire_finish fin = {0};
    wire_encode_finish(&sb, &fin);
    put_func(&sb, 0, WIRE_NONE32, WIRE_SPAN_NONE);
    expect_error(&sb, WIRE_E_ORDER, "FUNC after the stream's last record");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(arity_per_record)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    pack_raw(&sb, "uu", (uint64_t)WIRE_HELLO, (uint64_t)1);
    expect_error(&sb, WIRE_E_ARITY, "HELLO: expected 6 fields, got 1");
    const struct {
        uint64_t type;
        const char *want;
    } cases[] = {{WIRE_SOURCE, "SOURCE: expected 6 fields"},
                 {WIRE_FUNC, "FUNC: expected 5 fields"},
                 {WIRE_EVENTS, "EVENTS: expected 2 fields"},
                 {WIRE_FINISH, "FINISH: expected 8 fields"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        msgpack_sbuffer_clear(&sb);
        struct wire_hello h = sample_hello();
        wire_encode_hello(&sb, &h);
        pack_raw(&sb, "uu", cases[i].type, (uint64_t)0);
        expect_error(&sb, WIRE_E_ARITY, cases[i].want);
    }
    msgpack_sbuffer_clear(&sb);
    pack_raw(&sb, "uuu", (uint64_t)WIRE_READY, (uint64_t)1, (uint64_t)2);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_LAUNCHER, &r), -1);
    ck_assert_int_eq(r.err.code, WIRE_E_ARITY);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "READY"));
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(field_types_named)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    pack_raw(&sb, "uuusnn", (uint64_t)WIRE_FUNC, (uint64_t)2, (uint64_t)5, "f");
    expect_error(&sb, WIRE_E_FIELD_TYPE, "FUNC.namespace: expected a string, got an unsigned");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    pack_raw(&sb, "uusssn", (uint64_t)WIRE_FUNC, (uint64_t)2, "ns", "f", "0");
    expect_error(&sb, WIRE_E_FIELD_TYPE, "FUNC.source_id");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    pack_raw(&sb, "uuiuuuubb", (uint64_t)WIRE_FINISH, (uint64_t)0, (int64_t)-1, (uint64_t)0,
             (uint64_t)0, (uint64_t)0, (uint64_t)0, 0, 0);
    expect_error(&sb, WIRE_E_FIELD_TYPE,
                 "FINISH.wall_ns: expected an unsigned integer, got a "
                 "negative");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    pack_raw(&sb, "uuuuuuuub", (uint64_t)WIRE_FINISH, (uint64_t)0, (uint64_t)0, (uint64_t)0,
             (uint64_t)0, (uint64_t)0, (uint64_t)0, (uint64_t)1, 0);
    expect_error(&sb, WIRE_E_FIELD_TYPE, "FINISH.collector_failure: expected a boolean");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* HELLO with one config value changed. */
static void hello_case(struct wire_hello h, enum wire_errcode code, const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    wire_encode_hello(&sb, &h);
    expect_error(&sb, code, needle);
    msgpack_sbuffer_destroy(&sb);
}

/* A version 1 stream is still read: version 2 only added records. */
START_TEST(hello_version_1_is_read)
{
    struct wire_hello h = sample_hello();
    h.version = WIRE_PROTOCOL_MIN_VERSION;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    struct decoded out;
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_DAEMON, &out), 0);
    ck_assert_int_eq(out.records, 1);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(hello_ranges)
{
    struct wire_hello h = sample_hello();
    h.version = WIRE_PROTOCOL_VERSION + 1;
    hello_case(h, WIRE_E_RANGE, "HELLO.version: protocol 4 is not supported (this reads 1 to 3)");
    h.version = 0;
    hello_case(h, WIRE_E_RANGE, "HELLO.version: protocol 0 is not supported");
    h = sample_hello(), h.mode = 2;
    hello_case(h, WIRE_E_RANGE, "HELLO.mode");
    h = sample_hello(), h.config.rate_hz = 0;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.rate_hz");
    h = sample_hello(), h.config.rate_hz = 1001;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.rate_hz: 1001 is over the maximum 1000");
    h = sample_hello(), h.mode = WIRE_MODE_MEMORY; /* memory mode has no rate */
    hello_case(h, WIRE_E_RANGE, "HELLO.config.rate_hz: 997 is over the maximum 0");
    h = sample_hello(), h.config.threshold_bp = 10001;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.threshold_bp");
    h = sample_hello(), h.config.limit = 0;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.limit");
    h = sample_hello(), h.config.limit = 101;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.limit");
    h = sample_hello(), h.config.cpu_budget = (32u << 20) + 1;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.cpu_budget");
    h = sample_hello(), h.config.retention_budget = (64u << 20) + 1;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.retention_budget");
    h = sample_hello(), h.config.stack_budget = (16u << 20) + 1;
    hello_case(h, WIRE_E_RANGE, "HELLO.config.stack_budget");
    h = sample_hello(), h.capabilities = 1u << 8;
    hello_case(h, WIRE_E_RANGE, "HELLO.capabilities");
    h = sample_hello(), h.backend = S("");
    hello_case(h, WIRE_E_LIMIT, "HELLO.backend: length 0");
    h = sample_hello(), h.backend = S("\xff");
    hello_case(h, WIRE_E_UTF8, "HELLO.backend: malformed UTF-8");
}
END_TEST

START_TEST(unsupported_names_a_capability)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_unsupported un = {S("time_travel")};
    wire_encode_unsupported(&sb, &un);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_LAUNCHER, &r), -1);
    ck_assert_int_eq(r.err.code, WIRE_E_RANGE);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "UNSUPPORTED.capability"));
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* A SOURCE with explicit spans and text, after HELLO. */
static void source_case(const char *path, const char *text, const struct wire_source_span *spans,
                        uint32_t n_spans, int lines_delta, enum wire_errcode code,
                        const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    uint32_t lines[16];
    uint32_t n = wire_line_starts(text, (uint32_t)strlen(text), lines, 16);
    if (lines_delta)
        lines[n - 1] += (uint32_t)lines_delta;
    struct wire_source s = {0,
                            WIRE_ORIGIN_PROJECT,
                            {path, (uint32_t)strlen(path)},
                            {text, (uint32_t)strlen(text)},
                            spans,
                            n_spans,
                            lines,
                            n};
    wire_encode_source(&sb, &s);
    expect_error(&sb, code, needle);
    msgpack_sbuffer_destroy(&sb);
}

START_TEST(source_paths)
{
    source_case("/abs/x.jett", "", NULL, 0, 0, WIRE_E_PATH, "SOURCE.path: absolute");
    source_case("src/../x.jett", "", NULL, 0, 0, WIRE_E_PATH, "'..' segments");
    source_case("..", "", NULL, 0, 0, WIRE_E_PATH, "'..' segments");
    source_case("src//x.jett", "", NULL, 0, 0, WIRE_E_PATH, "empty path segment");
    source_case("src/", "", NULL, 0, 0, WIRE_E_PATH, "empty path segment");
    source_case("./x.jett", "", NULL, 0, 0, WIRE_E_PATH, "'.' segments");
    source_case("a\tb", "", NULL, 0, 0, WIRE_E_PATH, "control character");
    source_case("", "", NULL, 0, 0, WIRE_E_LIMIT, "SOURCE.path: length 0");
}
END_TEST

START_TEST(source_spans_and_lines)
{
    const struct wire_source_span kind[] = {{3, 0, 1}};
    source_case("a.jett", "abc", kind, 1, 0, WIRE_E_RANGE, "span 0 has an unknown kind");
    const struct wire_source_span past[] = {{0, 1, 4}};
    source_case("a.jett", "abc", past, 1, 0, WIRE_E_RANGE, "span 0 ends past the text");
    const struct wire_source_span back[] = {{0, 2, 1}};
    source_case("a.jett", "abc", back, 1, 0, WIRE_E_RANGE, "starts after its end");
    const struct wire_source_span unsorted[] = {{0, 2, 3}, {1, 0, 1}};
    source_case("a.jett", "abc", unsorted, 2, 0, WIRE_E_RANGE, "span 1 is not sorted");
    source_case("a.jett", "a\nb\n", NULL, 0, 1, WIRE_E_RANGE,
                "SOURCE.line_starts: entry 2 is 5, the text says 4");
    source_case("a.jett", "a\xc0\x80", NULL, 0, 0, WIRE_E_UTF8, "SOURCE.text: malformed UTF-8");
}
END_TEST

START_TEST(source_and_func_ids_dense)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    put_source(&sb, 1, "a.jett");
    expect_error(&sb, WIRE_E_SEQUENCE,
                 "SOURCE record 1: source_id does not number the records from 0");
    msgpack_sbuffer_clear(&sb);
    wire_encode_hello(&sb, &h);
    put_func(&sb, 0, WIRE_NONE32, WIRE_SPAN_NONE);
    put_func(&sb, 0, WIRE_NONE32, WIRE_SPAN_NONE);
    expect_error(&sb, WIRE_E_SEQUENCE, "FUNC record 2: func_id does not number the records from 0");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(func_references)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    put_func(&sb, 0, 0, WIRE_SPAN_NONE);
    expect_error(&sb, WIRE_E_REF, "FUNC.source_id: the source is not defined");
    msgpack_sbuffer_clear(&sb);
    wire_encode_hello(&sb, &h);
    put_func(&sb, 0, WIRE_NONE32, (struct wire_span){0, 1});
    expect_error(&sb, WIRE_E_RANGE, "FUNC.decl: a span without a source");
    msgpack_sbuffer_clear(&sb);
    wire_encode_hello(&sb, &h);
    put_source(&sb, 0, "a.jett");
    put_func(&sb, 0, 0, (struct wire_span){0, 100});
    expect_error(&sb, WIRE_E_RANGE, "FUNC.decl: span ends past its source text");
    msgpack_sbuffer_clear(&sb);
    wire_encode_hello(&sb, &h);
    put_source(&sb, 0, "a.jett");
    put_func(&sb, 0, 0, (struct wire_span){5, 4});
    expect_error(&sb, WIRE_E_RANGE, "FUNC.decl: span start 5 is after its end 4");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* put_base then one EVENTS frame holding the given entries. */
static void events_case(const struct wire_event *evs, int n, enum wire_errcode code,
                        const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    uint8_t bin[8 * WIRE_ALLOC_SIZE];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (evs[i].kind == WIRE_ENTRY_STACK)
            len += wire_put_stack(bin + len, &evs[i].u.stack);
        else if (evs[i].kind == WIRE_ENTRY_TASK)
            len += wire_put_task(bin + len, &evs[i].u.task);
        else if (evs[i].kind == WIRE_ENTRY_SAMPLE)
            len += wire_put_sample(bin + len, &evs[i].u.sample);
        else
            len += wire_put_alloc(bin + len, &evs[i].u.alloc);
    }
    wire_encode_events(&sb, (uint32_t)n, bin, len);
    expect_error(&sb, code, needle);
    msgpack_sbuffer_destroy(&sb);
}

#define STACK_EV(...)                                                                              \
    {                                                                                              \
        .kind = WIRE_ENTRY_STACK, .u.stack = { __VA_ARGS__ }                                       \
    }
#define SAMPLE_EV(...)                                                                             \
    {                                                                                              \
        .kind = WIRE_ENTRY_SAMPLE, .u.sample = { __VA_ARGS__ }                                     \
    }
#define ALLOC_EV(...)                                                                              \
    {                                                                                              \
        .kind = WIRE_ENTRY_ALLOC, .u.alloc = { __VA_ARGS__ }                                       \
    }
#define NOEXEC                                                                                     \
    {                                                                                              \
        WIRE_NONE32, WIRE_NONE32, 0                                                                \
    }
#define NOSPAN                                                                                     \
    {                                                                                              \
        WIRE_NONE32, WIRE_NONE32                                                                   \
    }

START_TEST(stack_entries)
{
    struct wire_event gap[] = {STACK_EV(2, 0, 0, {1, 2})};
    events_case(gap, 1, WIRE_E_SEQUENCE,
                "STACK record 2: stack_id does not number the records from 0");
    struct wire_event parent[] = {STACK_EV(1, 1, 0, {1, 2})};
    events_case(parent, 1, WIRE_E_REF, "STACK.parent");
    struct wire_event func[] = {STACK_EV(1, 0, 2, {1, 2})};
    events_case(func, 1, WIRE_E_REF, "STACK.func_id");
    struct wire_event site[] = {STACK_EV(1, 0, 1, {3, 2})};
    events_case(site, 1, WIRE_E_RANGE, "STACK.site");
    struct wire_event half[] = {STACK_EV(1, 0, 1, {3, WIRE_NONE32})};
    events_case(half, 1, WIRE_E_RANGE, "STACK.site");
    struct wire_event root[] = {STACK_EV(1, WIRE_NONE32, 1, {1, 2})};
    events_case(root, 1, WIRE_E_RANGE, "a root frame has no call site");
}
END_TEST

#define TASK_EV(...)                                                                               \
    {                                                                                              \
        .kind = WIRE_ENTRY_TASK, .u.task = { __VA_ARGS__ }                                         \
    }

START_TEST(task_entries)
{
    struct wire_event first[] = {TASK_EV(2, 0, WIRE_NONE32, NOSPAN)};
    events_case(first, 1, WIRE_E_SEQUENCE, "TASK record 1: task does not number the tasks from 1");
    struct wire_event gap[] = {TASK_EV(1, 0, WIRE_NONE32, NOSPAN), TASK_EV(3, 0, 0, {1, 2})};
    events_case(gap, 2, WIRE_E_SEQUENCE, "TASK record 2: task does not number the tasks from 1");
    struct wire_event func[] = {TASK_EV(1, 2, WIRE_NONE32, NOSPAN)};
    events_case(func, 1, WIRE_E_REF, "TASK.func_id: function is not defined");
    struct wire_event spawner[] = {TASK_EV(1, 0, 2, {1, 2})};
    events_case(spawner, 1, WIRE_E_REF, "TASK.spawn_func: function is not defined");
    struct wire_event orphan[] = {TASK_EV(1, 0, WIRE_NONE32, {1, 2})};
    events_case(orphan, 1, WIRE_E_RANGE, "TASK.site: a spawn site needs its function");
    struct wire_event half[] = {TASK_EV(1, 0, 1, {3, WIRE_NONE32})};
    events_case(half, 1, WIRE_E_RANGE, "TASK.site");
    struct wire_event order[] = {TASK_EV(1, 0, 1, {3, 2})};
    events_case(order, 1, WIRE_E_RANGE, "TASK.site");
}
END_TEST

START_TEST(sample_entries)
{
    struct wire_event state[] = {SAMPLE_EV(1, 1, NOEXEC, 4, 0, NOSPAN)};
    events_case(state, 1, WIRE_E_RANGE, "CPU_SAMPLE.state");
    struct wire_event seq[] = {SAMPLE_EV(5, 1, NOEXEC, WIRE_STATE_JETT, 0, NOSPAN),
                               SAMPLE_EV(5, 2, NOEXEC, WIRE_STATE_JETT, 0, NOSPAN)};
    events_case(seq, 2, WIRE_E_SEQUENCE, "CPU_SAMPLE.sequence: does not increase");
    struct wire_event tick[] = {SAMPLE_EV(1, 7, NOEXEC, WIRE_STATE_JETT, 0, NOSPAN),
                                SAMPLE_EV(2, 6, NOEXEC, WIRE_STATE_JETT, 0, NOSPAN)};
    events_case(tick, 2, WIRE_E_SEQUENCE, "CPU_SAMPLE.requested_tick: goes backwards");
    struct wire_event ref[] = {SAMPLE_EV(1, 1, NOEXEC, WIRE_STATE_JETT, 9, NOSPAN)};
    events_case(ref, 1, WIRE_E_REF, "CPU_SAMPLE.stack_id: the stack is not defined");
    struct wire_event nostack[] = {SAMPLE_EV(1, 1, NOEXEC, WIRE_STATE_JETT, WIRE_NONE32, NOSPAN)};
    events_case(nostack, 1, WIRE_E_RANGE, "a jett sample needs a stack");
    struct wire_event runtime[] = {SAMPLE_EV(1, 1, NOEXEC, WIRE_STATE_RUNTIME, 0, NOSPAN)};
    events_case(runtime, 1, WIRE_E_RANGE, "runtime and unavailable samples have no Jett stack");
    struct wire_event span[] = {
        SAMPLE_EV(1, 1, NOEXEC, WIRE_STATE_UNAVAILABLE, WIRE_NONE32, {1, 2})};
    events_case(span, 1, WIRE_E_RANGE, "CPU_SAMPLE.span: a span needs a stack");
}
END_TEST

START_TEST(alloc_entries)
{
    struct wire_event op[] = {ALLOC_EV(1, 3, 1, WIRE_NONE64, 1, NOEXEC, 0, NOSPAN)};
    events_case(op, 1, WIRE_E_RANGE, "ALLOC.operation");
    struct wire_event seq[] = {ALLOC_EV(2, 0, 1, WIRE_NONE64, 1, NOEXEC, 0, NOSPAN),
                               ALLOC_EV(1, 0, 2, WIRE_NONE64, 1, NOEXEC, 0, NOSPAN)};
    events_case(seq, 2, WIRE_E_SEQUENCE, "ALLOC.sequence: does not increase");
    struct wire_event id[] = {ALLOC_EV(1, 0, WIRE_NONE64, WIRE_NONE64, 1, NOEXEC, 0, NOSPAN)};
    events_case(id, 1, WIRE_E_RANGE, "ALLOC.allocation_id");
    struct wire_event aold[] = {ALLOC_EV(1, WIRE_OP_ALLOCATE, 1, 4, 1, NOEXEC, 0, NOSPAN)};
    events_case(aold, 1, WIRE_E_RANGE, "ALLOC.old_size: an allocate has no old size");
    /* (a resize's old size or an allocate's new size of 0xff..ff is the
     * size 2^64 - 1, not an absent one: alloc_sizes_full_range) */
    struct wire_event fnew[] = {ALLOC_EV(1, WIRE_OP_FREE, 1, 4, 4, NOEXEC, 0, NOSPAN)};
    events_case(fnew, 1, WIRE_E_RANGE, "ALLOC.new_size: a free has no new size");
    struct wire_event ref[] = {ALLOC_EV(1, 0, 1, WIRE_NONE64, 1, NOEXEC, 3, NOSPAN)};
    events_case(ref, 1, WIRE_E_REF, "ALLOC.stack_id: the stack is not defined");
    struct wire_event span[] = {ALLOC_EV(1, 0, 1, WIRE_NONE64, 1, NOEXEC, 0, {9, 8})};
    events_case(span, 1, WIRE_E_RANGE, "ALLOC.span");
}
END_TEST

/* ---- runs of ALLOC entries (the daemon's open, take, close) ---- */

/* A value for a field: mostly an ordinary one, sometimes one at an edge
 * of what the checks accept. */
static uint64_t pick_value(unsigned *seed, uint64_t usual, const uint64_t *edges, size_t n)
{
    return rand_r(seed) % 4 ? usual : edges[(size_t)rand_r(seed) % n];
}

/* Entries that are mostly good ALLOC entries with, now and then, a field
 * at an edge: another kind, a bad operation, a sequence that does not
 * increase, a missing id or size, an undefined stack, a bad span. */
static size_t random_entries(unsigned *seed, uint8_t *bin, size_t n, uint64_t *seq)
{
    static const uint64_t kinds[] = {WIRE_ENTRY_STACK, WIRE_ENTRY_SAMPLE, 0, 9};
    static const uint64_t ops[] = {0, 1, 2, 3, 255};
    static const uint64_t sizes[] = {WIRE_NONE64, 0, 1, WIRE_NONE64 - 1};
    static const uint64_t ids[] = {WIRE_NONE64, 0, WIRE_NONE64 - 1};
    static const uint64_t stacks[] = {0, 1, 2, WIRE_NONE32, WIRE_NONE32 - 1};
    static const uint64_t ends[] = {WIRE_NONE32, 0, 3, 4, 5, WIRE_NONE32 - 1};
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t kind = (uint8_t)pick_value(seed, WIRE_ENTRY_ALLOC, kinds, 4);
        if (kind == WIRE_ENTRY_STACK) {
            struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
            len += wire_put_stack(bin + len, &st); /* a repeated id: refused */
            continue;
        }
        struct wire_alloc a = {0};
        a.op = (uint8_t)pick_value(seed, (uint64_t)rand_r(seed) % 3, ops, 5);
        /* now and then the same or an earlier sequence */
        *seq += rand_r(seed) % 8 ? 1 + (uint64_t)(rand_r(seed) % 3) : 0;
        a.sequence = rand_r(seed) % 16 ? *seq : *seq - 1;
        a.allocation_id = pick_value(seed, 7 + i, ids, 3);
        a.old_size = pick_value(seed, a.op == 0 ? WIRE_NONE64 : 16, sizes, 4);
        a.new_size = pick_value(seed, a.op == 2 ? WIRE_NONE64 : 24, sizes, 4);
        a.exec = (struct wire_exec){(uint32_t)rand_r(seed), WIRE_NONE32, 1};
        a.stack_id = (uint32_t)pick_value(seed, 0, stacks, 5);
        a.span.start = (uint32_t)pick_value(seed, WIRE_NONE32, ends, 6);
        a.span.end = (uint32_t)pick_value(seed, a.span.start, ends, 6);
        len += wire_put_alloc(bin + len, &a);
        bin[len - WIRE_ALLOC_SIZE] = kind;
    }
    return len;
}

/* The next record of the stream in sb, pushing its bytes as needed. */
static int next_record(struct wire_decoder *d, const msgpack_sbuffer *sb, size_t *off,
                       struct wire_record *rec)
{
    int rc;
    while ((rc = wire_decoder_next(d, rec)) == 0 && *off < sb->size)
        *off += wire_decoder_push(d, sb->data + *off, sb->size - *off);
    return rc;
}

/* Reads the frame's entries one by one (runs: false) or by runs where
 * they come (true); returns how many were taken, and the error. */
static size_t take_entries(const msgpack_sbuffer *sb, bool runs, struct wire_error *err)
{
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec;
    size_t taken = 0, off = 0;
    int rc;
    while ((rc = next_record(d, sb, &off, &rec)) > 0) {
        if (rec.type != WIRE_EVENTS)
            continue;
        struct wire_events_iter it;
        struct wire_event ev;
        wire_events_begin(&it, &rec.u.events);
        for (;;) {
            size_t n = 0;
            if (runs) {
                const uint8_t *at = it.p;
                ck_assert_ptr_eq(take_alloc_run(d, &it, SIZE_MAX, &n), at);
                ck_assert_ptr_eq(it.p, at + n * WIRE_ALLOC_SIZE);
                taken += n;
            }
            const uint8_t *next = it.p;
            rc = wire_events_next(d, &it, &ev);
            /* a run ends at an ALLOC entry only when that entry is bad */
            if (runs && rc > 0)
                ck_assert_msg(ev.kind != WIRE_ENTRY_ALLOC || next[0] != WIRE_ENTRY_ALLOC,
                              "a run stopped at a good ALLOC entry (entry %zu)", taken);
            if (rc <= 0)
                break;
            taken++;
        }
        if (rc < 0)
            break;
    }
    *err = *wire_decoder_error(d);
    wire_decoder_free(d);
    return taken;
}

START_TEST(alloc_runs_check_as_entries_do)
{
    unsigned seed = 7;
    uint8_t bin[12 * WIRE_ALLOC_SIZE];
    for (int trial = 0; trial < 20000; trial++) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        put_base(&sb); /* stack 0 is defined */
        uint64_t seq = 5;
        for (int frame = 0; frame < 2; frame++) {
            size_t n = 1 + (size_t)rand_r(&seed) % 12;
            wire_encode_events(&sb, (uint32_t)n, bin, random_entries(&seed, bin, n, &seq));
        }
        struct wire_error one, run;
        size_t by_one = take_entries(&sb, false, &one);
        size_t by_run = take_entries(&sb, true, &run);
        ck_assert_msg(by_one == by_run, "trial %d: %zu entries one by one, %zu by runs", trial,
                      by_one, by_run);
        ck_assert_int_eq(one.code, run.code);
        ck_assert_str_eq(one.msg, run.msg);
        msgpack_sbuffer_destroy(&sb);
    }
}
END_TEST

/* Where the operation has a size, every u64 is one, 2^64 - 1 included:
 * allocate 2^64 - 1, resize it to 2^40, free it, taken one by one and as
 * a run, with the sizes read back as sent. */
START_TEST(alloc_sizes_full_range)
{
    const uint64_t top = UINT64_MAX, tib = UINT64_C(1) << 40;
    struct wire_alloc al[] = {{1, WIRE_OP_ALLOCATE, 1, WIRE_NONE64, top, NOEXEC, 0, NOSPAN},
                              {2, WIRE_OP_RESIZE, 1, top, tib, NOEXEC, 0, NOSPAN},
                              {3, WIRE_OP_FREE, 1, tib, WIRE_NONE64, NOEXEC, 0, NOSPAN}};
    uint8_t bin[3 * WIRE_ALLOC_SIZE];
    for (size_t i = 0; i < 3; i++)
        wire_put_alloc(bin + i * WIRE_ALLOC_SIZE, &al[i]);
    for (int runs = 0; runs < 2; runs++) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        put_base(&sb);
        wire_encode_events(&sb, 3, bin, sizeof bin);
        struct wire_error err;
        ck_assert_uint_eq(take_entries(&sb, runs, &err), 4); /* put_base's stack too */
        ck_assert_msg(err.code == WIRE_OK, "%s", err.msg);
        msgpack_sbuffer_destroy(&sb);
    }
    struct wire_alloc back;
    wire_alloc_entry_read(bin, &back);
    ck_assert_uint_eq(back.new_size, top);
    wire_alloc_entry_read(bin + WIRE_ALLOC_SIZE, &back);
    ck_assert_uint_eq(back.old_size, top);
    ck_assert_uint_eq(back.new_size, tib);
}
END_TEST

/* Runs stop at other kinds, at `max`, and at the frame's end; the
 * decoder's sequence moves past a run. */
START_TEST(alloc_runs_stop_where_they_should)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    uint8_t bin[3 * WIRE_ALLOC_SIZE + WIRE_STACK_SIZE];
    size_t len = 0;
    for (uint64_t i = 1; i <= 2; i++) { /* the first ALLOC may have sequence 0 */
        struct wire_alloc a = {i - 1, 0, i, WIRE_NONE64, 8, NOEXEC, 0, NOSPAN};
        len += wire_put_alloc(bin + len, &a);
    }
    struct wire_stack st = {1, 0, 0, {12, 14}};
    len += wire_put_stack(bin + len, &st);
    struct wire_alloc last = {2, 2, 1, 8, WIRE_NONE64, NOEXEC, 1, NOSPAN};
    len += wire_put_alloc(bin + len, &last);
    wire_encode_events(&sb, 4, bin, len);
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec;
    size_t off = 0;
    struct wire_events_iter it;
    struct wire_event ev;
    while (next_record(d, &sb, &off, &rec) > 0 && rec.type != WIRE_EVENTS)
        ;
    wire_events_begin(&it, &rec.u.events); /* put_base's stack 0 */
    ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
    ck_assert_int_eq(wire_events_next(d, &it, &ev), 0);
    ck_assert_int_eq(next_record(d, &sb, &off, &rec), 1);
    ck_assert_int_eq(rec.type, WIRE_EVENTS);
    size_t n;
    wire_events_begin(&it, &rec.u.events);
    const uint8_t *run = take_alloc_run(d, &it, 1, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(wire_alloc_entry_sequence(run), 0);
    run = take_alloc_run(d, &it, SIZE_MAX, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(wire_alloc_entry_id(run), 2);
    ck_assert_uint_eq(wire_alloc_entry_new_size(run), 8);
    take_alloc_run(d, &it, SIZE_MAX, &n);
    ck_assert_uint_eq(n, 0); /* the STACK */
    ck_assert_int_eq(wire_events_next(d, &it, &ev), 1);
    ck_assert_int_eq(ev.kind, WIRE_ENTRY_STACK);
    run = take_alloc_run(d, &it, SIZE_MAX, &n);
    ck_assert_uint_eq(n, 1); /* stack 1 is defined now */
    ck_assert_int_eq(wire_alloc_entry_op(run), WIRE_OP_FREE);
    ck_assert_uint_eq(wire_alloc_entry_old_size(run), 8);
    ck_assert_uint_eq(wire_alloc_entry_stack(run), 1);
    take_alloc_run(d, &it, SIZE_MAX, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(wire_events_next(d, &it, &ev), 0);
    /* the next ALLOC must come after sequence 2 */
    msgpack_sbuffer_clear(&sb);
    struct wire_alloc again = {2, 0, 4, WIRE_NONE64, 8, NOEXEC, 0, NOSPAN};
    wire_encode_events(&sb, 1, bin, wire_put_alloc(bin, &again));
    off = 0;
    ck_assert_int_eq(next_record(d, &sb, &off, &rec), 1);
    wire_events_begin(&it, &rec.u.events);
    take_alloc_run(d, &it, SIZE_MAX, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(wire_events_next(d, &it, &ev), -1);
    ck_assert_ptr_nonnull(strstr(wire_decoder_error(d)->msg, "ALLOC.sequence: does not increase"));
    wire_decoder_free(d);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(events_structure)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint8_t bin[2 * WIRE_STACK_SIZE + 9] = {0};
    struct wire_stack st = {1, 0, 0, WIRE_SPAN_NONE};
    wire_put_stack(bin, &st);
    /* version 3's smallest entry is a 3-byte RESIZE_AGAIN */
    put_base(&sb);
    wire_encode_events(&sb, 8, bin, WIRE_STACK_SIZE);
    expect_error(&sb, WIRE_E_ARITY, "EVENTS.count: 8 entries cannot fit in 21 bytes");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    wire_encode_events(&sb, 1, bin, WIRE_STACK_SIZE + 3);
    expect_error(&sb, WIRE_E_ARITY, "EVENTS.count: 3 bytes after the last counted entry");
    msgpack_sbuffer_clear(&sb);
    /* 51 bytes hold two 21-byte entries, but the second is an ALLOC (58). */
    put_base(&sb);
    bin[WIRE_STACK_SIZE] = WIRE_ENTRY_ALLOC;
    wire_encode_events(&sb, 2, bin, WIRE_STACK_SIZE + 30);
    expect_error(&sb, WIRE_E_TRUNCATED, "EVENTS.entries: entry 1 is cut short");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    bin[WIRE_STACK_SIZE] = 9;
    wire_encode_events(&sb, 2, bin, 2 * WIRE_STACK_SIZE);
    expect_error(&sb, WIRE_E_TYPE, "entry 1 has unknown kind 9");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    wire_encode_events(&sb, 0, bin, 0);
    expect_error(&sb, WIRE_E_RANGE, "EVENTS.count: a batch holds at least one entry");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* ---- CALLS ---- */

/* Decodes a stream whose last record is CALLS with a new decoder *d
 * (the caller frees it); returns the record, its bins pointing into
 * `sb`. */
static struct wire_calls decode_calls(const msgpack_sbuffer *sb, struct wire_decoder **dp)
{
    struct wire_decoder *d = *dp = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec = {0};
    size_t off = 0;
    while (off < sb->size) {
        off += wire_decoder_push(d, sb->data + off, sb->size - off);
        int rc = wire_decoder_next(d, &rec);
        ck_assert_msg(rc > 0, "%s", wire_decoder_error(d)->msg);
        if (rec.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while (wire_events_next(d, &it, &ev) > 0)
                ;
        }
    }
    ck_assert_int_eq(rec.type, WIRE_CALLS);
    return rec.u.calls;
}

/* Every field comes back, the largest count included, and a decoded
 * record encodes to the same bytes. */
START_TEST(calls_roundtrip)
{
    msgpack_sbuffer sb, again;
    msgpack_sbuffer_init(&sb);
    msgpack_sbuffer_init(&again);
    put_base(&sb);
    size_t at = sb.size;
    const struct wire_fn_calls fn[] = {{0, 1}, {1, UINT64_MAX}};
    const struct wire_site_calls site[] = {
        {0, {14, 20}, 300}, {0, {14, 21}, 2}, {0, {15, 15}, 0}, {1, {3, 9}, 7}};
    ck_assert_int_eq(wire_encode_calls(&sb, fn, 2, site, 4), 0);
    /* header 4, array 0x93, type 9, bin8 24 bytes, bin8 80 bytes */
    ck_assert_uint_eq(sb.size - at, 4 + 1 + 1 + 2 + 24 + 2 + 80);
    struct wire_decoder *d;
    struct wire_calls c = decode_calls(&sb, &d);
    ck_assert_uint_eq(c.n_functions, 2);
    ck_assert_uint_eq(c.n_sites, 4);
    ck_assert_uint_eq(wire_calls_function(&c, 1).func_id, 1);
    ck_assert(wire_calls_function(&c, 1).calls == UINT64_MAX);
    struct wire_site_calls e = wire_calls_site(&c, 1);
    ck_assert_uint_eq(e.func_id, 0);
    ck_assert_uint_eq(e.site.start, 14);
    ck_assert_uint_eq(e.site.end, 21);
    ck_assert_uint_eq(e.calls, 2);
    ck_assert_uint_eq(wire_calls_site(&c, 3).calls, 7);
    struct wire_record rec = {.type = WIRE_CALLS, .u.calls = c};
    ck_assert_int_eq(wire_encode_record(&again, &rec), 0);
    ck_assert_uint_eq(again.size, sb.size - at);
    ck_assert_int_eq(memcmp(again.data, sb.data + at, again.size), 0);
    wire_decoder_free(d);
    /* empty lists and several records are allowed, then FINISH */
    ck_assert_int_eq(wire_encode_calls(&sb, NULL, 0, NULL, 0), 0);
    c = decode_calls(&sb, &d);
    ck_assert_uint_eq(c.n_functions + c.n_sites, 0);
    wire_decoder_free(d);
    struct wire_finish fin = {0};
    wire_encode_finish(&sb, &fin);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, 7, WIRE_TO_DAEMON, &r), 0);
    ck_assert_int_eq(r.records, 8);
    msgpack_sbuffer_destroy(&sb);
    msgpack_sbuffer_destroy(&again);
}
END_TEST

static void calls_case(const struct wire_fn_calls *fn, uint32_t n,
                       const struct wire_site_calls *site, uint32_t m, enum wire_errcode code,
                       const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    ck_assert_int_eq(wire_encode_calls(&sb, fn, n, site, m), 0);
    expect_error(&sb, code, needle);
    msgpack_sbuffer_destroy(&sb);
}

/* A CALLS bin of `n` bytes, as no encoder writes it. */
static void calls_raw(msgpack_sbuffer *sb, uint32_t fn_bytes, uint32_t site_bytes)
{
    static const char zero[64];
    msgpack_sbuffer body;
    msgpack_sbuffer_init(&body);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_uint8(&pk, WIRE_CALLS);
    msgpack_pack_bin(&pk, fn_bytes);
    msgpack_pack_bin_body(&pk, zero, fn_bytes);
    msgpack_pack_bin(&pk, site_bytes);
    msgpack_pack_bin_body(&pk, zero, site_bytes);
    raw_frame(sb, body.data, (uint32_t)body.size);
    msgpack_sbuffer_destroy(&body);
}

START_TEST(calls_rules)
{
    const struct wire_fn_calls undefined[] = {{2, 1}}, unsorted[] = {{1, 1}, {0, 1}},
                               twice[] = {{0, 1}, {0, 2}};
    calls_case(undefined, 1, NULL, 0, WIRE_E_REF,
               "CALLS.functions: entry 0 names an undefined function");
    calls_case(unsorted, 2, NULL, 0, WIRE_E_RANGE,
               "CALLS.functions: entry 1 does not come after the one before it");
    calls_case(twice, 2, NULL, 0, WIRE_E_RANGE, "CALLS.functions: entry 1 does not come after");
    const struct wire_site_calls s_undefined[] = {{5, {0, 1}, 1}}, backwards[] = {{0, {9, 3}, 1}},
                                 s_unsorted[] = {{1, {0, 1}, 1}, {0, {4, 5}, 1}},
                                 same[] = {{0, {4, 5}, 1}, {0, {4, 5}, 3}},
                                 by_end[] = {{0, {4, 6}, 1}, {0, {4, 5}, 3}},
                                 sentinel[] = {{0, {3, WIRE_NONE32}, 1}};
    calls_case(NULL, 0, s_undefined, 1, WIRE_E_REF,
               "CALLS.sites: entry 0 names an undefined function");
    calls_case(NULL, 0, backwards, 1, WIRE_E_RANGE,
               "CALLS.sites: entry 0: span start 9 is after its end 3");
    calls_case(NULL, 0, s_unsorted, 2, WIRE_E_RANGE,
               "CALLS.sites: entry 1 does not come after the one before it");
    calls_case(NULL, 0, same, 2, WIRE_E_RANGE, "CALLS.sites: entry 1 does not come after");
    calls_case(NULL, 0, by_end, 2, WIRE_E_RANGE, "CALLS.sites: entry 1 does not come after");
    calls_case(NULL, 0, sentinel, 1, WIRE_E_RANGE,
               "CALLS.sites: entry 0: span end 4294967295 is not an offset");

    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    calls_raw(&sb, 13, 0);
    expect_error(&sb, WIRE_E_LIMIT,
                 "CALLS.functions: 13 bytes is not a whole number of 12-byte entries");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    calls_raw(&sb, 12, 19);
    expect_error(&sb, WIRE_E_LIMIT, "CALLS.sites: 19 bytes is not a whole number of 20-byte");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    pack_raw(&sb, "uu", (uint64_t)WIRE_CALLS, (uint64_t)1);
    expect_error(&sb, WIRE_E_ARITY, "CALLS: expected 2 fields, got 1");
    /* CALLS follows the last EVENTS */
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    ck_assert_int_eq(wire_encode_calls(&sb, NULL, 0, NULL, 0), 0);
    uint8_t bin[WIRE_STACK_SIZE];
    struct wire_stack st = {1, 0, 0, WIRE_SPAN_NONE};
    wire_put_stack(bin, &st);
    wire_encode_events(&sb, 1, bin, sizeof bin);
    expect_error(&sb, WIRE_E_ORDER, "EVENTS after CALLS");
    msgpack_sbuffer_clear(&sb);
    ck_assert_int_eq(wire_encode_calls(&sb, NULL, 0, NULL, 0), 0);
    expect_error(&sb, WIRE_E_ORDER, "CALLS before HELLO");
    /* launchers only send it */
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_LAUNCHER, &r), -1);
    ck_assert_str_eq(r.err.msg, "CALLS does not travel to the launcher");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* One record holds at most WIRE_CALLS_MAX_ENTRIES entries. */
START_TEST(calls_encoder_bound)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint32_t n = WIRE_CALLS_MAX_ENTRIES;
    struct wire_site_calls *site = calloc(n + 1, sizeof *site);
    for (uint32_t i = 0; i <= n; i++)
        site[i] = (struct wire_site_calls){0, {i, i}, 1};
    struct wire_fn_calls fn = {0, 1};
    ck_assert_int_eq(wire_encode_calls(&sb, &fn, 1, site, n), -1);
    ck_assert_uint_eq(sb.size, 0);
    ck_assert_int_eq(wire_encode_calls(&sb, NULL, 0, site, n), 0);
    ck_assert_uint_le(sb.size, WIRE_MAX_FRAME + WIRE_FRAME_HEADER);
    free(site);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(encoder_refuses_oversize)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t big = WIRE_MAX_FRAME;
    uint8_t *bin = calloc(1, big);
    ck_assert_int_eq(wire_encode_events(&sb, 1, bin, big), -1);
    ck_assert_uint_eq(sb.size, 0);
    free(bin);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* The header a sender writes before a bin it sends from where it lies,
 * worked out by hand from the msgpack spec: prefix = big-endian payload
 * length; 0x93 array of 3; 0x06 EVENTS; count as fixint / uint8 (0xcc) /
 * uint16 (0xcd) / uint32 (0xce); bin8 (0xc4) / bin16 (0xc5) / bin32 (0xc6). */
START_TEST(events_header_bytes)
{
    static const struct {
        uint32_t count;
        size_t bin;
        size_t n;
        uint8_t head[WIRE_EVENTS_HEADER_MAX];
    } cases[] = {
        /* 1 + 1 + 1 + 2 + 42 = 47 */
        {1, 42, 9, {0, 0, 0, 47, 0x93, 0x06, 0x01, 0xc4, 42}},
        /* 1 + 1 + 2 + 3 + 300 = 307 = 0x133 */
        {200, 300, 11, {0, 0, 0x01, 0x33, 0x93, 0x06, 0xcc, 200, 0xc5, 0x01, 0x2c}},
        /* 1 + 1 + 3 + 5 + 70000 = 70010 = 0x1117a */
        {300,
         70000,
         14,
         {0, 0x01, 0x11, 0x7a, 0x93, 0x06, 0xcd, 0x01, 0x2c, 0xc6, 0, 0x01, 0x11, 0x70}},
        /* 1 + 1 + 5 + 3 + 65520 = 65530 = 0xfffa */
        {70000,
         65520,
         14,
         {0, 0, 0xff, 0xfa, 0x93, 0x06, 0xce, 0, 0x01, 0x11, 0x70, 0xc5, 0xff, 0xf0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t head[WIRE_EVENTS_HEADER_MAX];
        size_t n = wire_encode_events_header(head, cases[i].count, cases[i].bin);
        ck_assert_uint_eq(n, cases[i].n);
        ck_assert_mem_eq(head, cases[i].head, n);
        /* and what wire_encode_events appends starts the same way */
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        uint8_t *bin = calloc(1, cases[i].bin);
        ck_assert_int_eq(wire_encode_events(&sb, cases[i].count, bin, cases[i].bin), 0);
        ck_assert_uint_eq(sb.size, n + cases[i].bin);
        ck_assert_mem_eq(sb.data, cases[i].head, n);
        free(bin);
        msgpack_sbuffer_destroy(&sb);
    }
    /* a payload over WIRE_MAX_FRAME has no header */
    uint8_t head[WIRE_EVENTS_HEADER_MAX];
    ck_assert_uint_eq(wire_encode_events_header(head, 1, WIRE_MAX_FRAME - 7), 0);
    ck_assert_uint_eq(wire_encode_events_header(head, 1, WIRE_MAX_FRAME - 8), 4 + 1 + 1 + 1 + 5);
}
END_TEST

START_TEST(errors_carry_frame_offset)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    struct wire_hello h = sample_hello();
    wire_encode_hello(&sb, &h);
    size_t second = sb.size;
    pack_raw(&sb, "u", (uint64_t)42);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, 5, WIRE_TO_DAEMON, &r), -1);
    ck_assert_uint_eq(r.err.offset, second);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* ---- RETAINED ---- */

/* A RETAINED record of `n` rows (func, bytes, objects triples). */
static void put_retained(msgpack_sbuffer *sb, struct wire_str ns, struct wire_str name,
                         uint32_t src, struct wire_span decl, bool complete, uint32_t n,
                         const struct wire_retained_row *rows)
{
    uint8_t bin[4 * WIRE_RETAINED_ROW_SIZE];
    for (uint32_t i = 0; i < n; i++)
        wire_put_retained_row(bin + (size_t)i * WIRE_RETAINED_ROW_SIZE, &rows[i]);
    struct wire_retained r = {ns, name, src, decl, bin, n, complete};
    ck_assert_int_eq(wire_encode_retained(sb, &r), 0);
}

static const struct wire_str no_name = {NULL, 0};

START_TEST(retained_roundtrip)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    const struct wire_retained_row rows[] = {{1, 120, 3}, {WIRE_NONE32, UINT64_MAX, UINT64_MAX}};
    put_retained(&sb, S("a.b"), S("cache"), 0, (struct wire_span){13, 20}, true, 2, rows);
    put_retained(&sb, no_name, no_name, WIRE_NONE32, WIRE_SPAN_NONE, false, 0, NULL);
    struct wire_finish fin = {0};
    wire_encode_finish(&sb, &fin);
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec;
    int seen = 0;
    for (size_t off = 0; off < sb.size;) {
        off += wire_decoder_push(d, sb.data + off, sb.size - off);
        ck_assert_int_eq(wire_decoder_next(d, &rec), 1);
        if (rec.type != WIRE_RETAINED)
            continue;
        const struct wire_retained *r = &rec.u.retained;
        if (seen++ == 0) {
            ck_assert(r->ns.len == 3 && memcmp(r->ns.ptr, "a.b", 3) == 0);
            ck_assert(r->name.len == 5 && memcmp(r->name.ptr, "cache", 5) == 0);
            ck_assert_uint_eq(r->source_id, 0);
            ck_assert(r->decl.start == 13 && r->decl.end == 20);
            ck_assert(r->complete);
            ck_assert_uint_eq(r->n_rows, 2);
            struct wire_retained_row a = wire_retained_row_at(r, 0), b = wire_retained_row_at(r, 1);
            ck_assert(a.func_id == 1 && a.bytes == 120 && a.objects == 3);
            ck_assert(b.func_id == WIRE_NONE32 && b.bytes == UINT64_MAX && b.objects == UINT64_MAX);
        } else {
            ck_assert(r->ns.ptr == NULL && r->name.ptr == NULL);
            ck_assert_uint_eq(r->source_id, WIRE_NONE32);
            ck_assert(!wire_span_present(r->decl) && !r->complete && r->n_rows == 0);
        }
    }
    wire_decoder_free(d);
    ck_assert_int_eq(seen, 2);
    struct decoded all;
    ck_assert_int_eq(decode_all(sb.data, sb.size, 3, WIRE_TO_DAEMON, &all), 0);
    ck_assert_int_eq(all.records, 8);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* put_base, then one RETAINED record, then expect the error. */
static void retained_case(struct wire_str ns, struct wire_str name, uint32_t src,
                          struct wire_span decl, struct wire_retained_row row,
                          enum wire_errcode code, const char *needle)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    put_retained(&sb, ns, name, src, decl, true, 1, &row);
    expect_error(&sb, code, needle);
    msgpack_sbuffer_destroy(&sb);
}

START_TEST(retained_rules)
{
    const struct wire_retained_row ok = {0, 10, 1};
    const struct wire_span none = WIRE_SPAN_NONE, decl = {13, 20};
    retained_case(S("a"), no_name, 0, decl, ok, WIRE_E_RANGE,
                  "RETAINED: a holder has both a namespace and a name");
    retained_case(no_name, no_name, 0, none, ok, WIRE_E_RANGE,
                  "the closing record names no source and no span");
    retained_case(S("a"), S("x"), WIRE_NONE32, decl, ok, WIRE_E_RANGE, "a span without a source");
    retained_case(S("a"), S("x"), 1, none, ok, WIRE_E_REF,
                  "RETAINED.source_id: the source is not defined");
    retained_case(S("a"), S("x"), 0, (struct wire_span){13, 900}, ok, WIRE_E_RANGE,
                  "RETAINED.decl: span ends past its source text");
    retained_case(S("a"), (struct wire_str){"x\0y", 3}, 0, decl, ok, WIRE_E_RANGE,
                  "RETAINED.name:");
    retained_case(S("a"), S("x"), 0, decl, (struct wire_retained_row){2, 10, 1}, WIRE_E_REF,
                  "RETAINED.rows: row 1 names a function that is not defined");
    retained_case(S("a"), S("x"), 0, decl, (struct wire_retained_row){0, 10, 0}, WIRE_E_RANGE,
                  "RETAINED.rows: row 1 counts no object");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    pack_raw(&sb, "unnnnub", (uint64_t)WIRE_RETAINED, (uint64_t)7, 1);
    expect_error(&sb, WIRE_E_FIELD_TYPE, "RETAINED.rows: expected a bin");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    pack_raw(&sb, "uu", (uint64_t)WIRE_RETAINED, (uint64_t)0);
    expect_error(&sb, WIRE_E_ARITY, "RETAINED: expected 6 fields, got 1");
    msgpack_sbuffer_clear(&sb);
    pack_raw(&sb, "u", (uint64_t)11); /* the type after RETAINED is not defined here */
    expect_error(&sb, WIRE_E_TYPE, "unknown record type 11");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(retained_rows_whole)
{
    msgpack_sbuffer sb, body;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    msgpack_sbuffer_init(&body);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 7);
    msgpack_pack_uint8(&pk, WIRE_RETAINED);
    for (int i = 0; i < 4; i++)
        msgpack_pack_nil(&pk);
    static const uint8_t odd[WIRE_RETAINED_ROW_SIZE + 1] = {0};
    msgpack_pack_bin(&pk, sizeof odd);
    msgpack_pack_bin_body(&pk, odd, sizeof odd);
    msgpack_pack_true(&pk);
    raw_frame(&sb, body.data, (uint32_t)body.size);
    expect_error(&sb, WIRE_E_LIMIT, "RETAINED.rows: 21 bytes is not a whole number of rows");
    msgpack_sbuffer_destroy(&body);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* The walk comes after every EVENTS frame and closes before FINISH. */
START_TEST(retained_order)
{
    const struct wire_retained_row row = {0, 10, 1};
    const struct wire_span decl = {13, 20};
    struct wire_finish fin = {0};
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    put_base(&sb);
    put_retained(&sb, S("a"), S("x"), 0, decl, true, 1, &row);
    uint8_t bin[WIRE_STACK_SIZE];
    struct wire_stack st = {1, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    wire_put_stack(bin, &st);
    wire_encode_events(&sb, 1, bin, sizeof bin);
    expect_error(&sb, WIRE_E_ORDER, "EVENTS after RETAINED");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    put_retained(&sb, no_name, no_name, WIRE_NONE32, WIRE_SPAN_NONE, true, 1, &row);
    put_retained(&sb, no_name, no_name, WIRE_NONE32, WIRE_SPAN_NONE, true, 1, &row);
    put_retained(&sb, S("a"), S("x"), 0, decl, true, 1, &row);
    expect_error(&sb, WIRE_E_ORDER, "RETAINED: a holder after the closing record");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    put_retained(&sb, S("a"), S("x"), 0, decl, false, 1, &row);
    put_retained(&sb, S("a"), S("y"), 0, decl, true, 1, &row);
    expect_error(&sb, WIRE_E_ORDER, "RETAINED: a holder after an incomplete record");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    put_retained(&sb, S("a"), S("x"), 0, decl, true, 1, &row);
    wire_encode_finish(&sb, &fin);
    expect_error(&sb, WIRE_E_ORDER, "FINISH before the walk's closing RETAINED");
    msgpack_sbuffer_clear(&sb);
    put_base(&sb); /* a capture without a walk, and one cut short, are whole */
    wire_encode_finish(&sb, &fin);
    struct decoded r;
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_DAEMON, &r), 0);
    msgpack_sbuffer_clear(&sb);
    put_base(&sb);
    put_retained(&sb, S("a"), S("x"), 0, decl, false, 1, &row);
    put_retained(&sb, no_name, no_name, WIRE_NONE32, WIRE_SPAN_NONE, false, 0, NULL);
    wire_encode_finish(&sb, &fin);
    ck_assert_int_eq(decode_all(sb.data, sb.size, sb.size, WIRE_TO_DAEMON, &r), 0);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

Suite *wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *t = tcase_create("roundtrip");
    tcase_add_test(t, roundtrip_to_daemon_fields);
    tcase_add_test(t, roundtrip_to_launcher);
    tcase_add_test(t, split_at_every_boundary);
    tcase_add_test(t, batch_append_respects_capacity);
    tcase_add_test(t, retained_roundtrip);
    suite_add_tcase(s, t);
    t = tcase_create("framing");
    tcase_add_test(t, frame_zero_length);
    tcase_add_test(t, frame_oversize);
    tcase_add_test(t, frame_truncated_payload_and_header);
    tcase_add_test(t, msgpack_container_claim_refused);
    tcase_add_test(t, msgpack_garbage_and_trailing);
    tcase_add_test(t, msgpack_too_many_objects);
    tcase_add_test(t, encoder_refuses_oversize);
    tcase_add_test(t, events_header_bytes);
    tcase_add_test(t, errors_carry_frame_offset);
    suite_add_tcase(s, t);
    t = tcase_create("validation");
    tcase_add_test(t, unknown_type);
    tcase_add_test(t, wrong_direction);
    tcase_add_test(t, order_rules);
    tcase_add_test(t, arity_per_record);
    tcase_add_test(t, field_types_named);
    tcase_add_test(t, hello_ranges);
    tcase_add_test(t, hello_version_1_is_read);
    tcase_add_test(t, unsupported_names_a_capability);
    tcase_add_test(t, source_paths);
    tcase_add_test(t, source_spans_and_lines);
    tcase_add_test(t, source_and_func_ids_dense);
    tcase_add_test(t, func_references);
    tcase_add_test(t, stack_entries);
    tcase_add_test(t, task_entries);
    tcase_add_test(t, sample_entries);
    tcase_add_test(t, alloc_entries);
    tcase_add_test(t, events_structure);
    tcase_add_test(t, alloc_runs_check_as_entries_do);
    tcase_add_test(t, alloc_runs_stop_where_they_should);
    tcase_add_test(t, alloc_sizes_full_range);
    tcase_add_test(t, calls_roundtrip);
    tcase_add_test(t, calls_rules);
    tcase_add_test(t, calls_encoder_bound);
    tcase_add_test(t, retained_rules);
    tcase_add_test(t, retained_rows_whole);
    tcase_add_test(t, retained_order);
    suite_add_tcase(s, t);
    return s;
}
