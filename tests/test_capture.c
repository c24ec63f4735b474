/* Tests of proto/capture: reading from memory and pipes, and every way a
 * capture file can be damaged. */
#include <check.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/captext.h"
#include "proto/capture.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

/* A valid capture: magic, HELLO, FUNC, EVENTS(STACK, SAMPLE), FINISH. */
static void make_capture(msgpack_sbuffer *sb, size_t *finish_at)
{
    msgpack_sbuffer_write(sb, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    struct wire_hello h = {WIRE_PROTOCOL_VERSION,
                           WIRE_MODE_CPU,
                           {1000, 500, 10, 1, 1, 1},
                           S("interpreter_safe_point"),
                           3,
                           false};
    ck_assert_int_eq(wire_encode_hello(sb, &h), 0);
    struct wire_func f = {0, S("app"), S("main"), WIRE_NONE32, WIRE_SPAN_NONE};
    ck_assert_int_eq(wire_encode_func(sb, &f), 0);
    uint8_t bin[WIRE_STACK_SIZE + WIRE_SAMPLE_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    struct wire_sample sm = {1, 1, {0, 0, 0}, WIRE_STATE_JETT, 0, WIRE_SPAN_NONE};
    size_t n = wire_put_stack(bin, &st);
    n += wire_put_sample(bin + n, &sm);
    ck_assert_int_eq(wire_encode_events(sb, 2, bin, n), 0);
    *finish_at = sb->size;
    struct wire_finish fin = {0, 5, 4, 1, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(sb, &fin), 0);
}

/* Reads everything; returns records read, or -1 with the error copied. */
static int read_all(struct capture_reader *r, char *err, size_t errlen)
{
    struct wire_record rec;
    int n = 0, rc;
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        n++;
        if (rec.type != WIRE_EVENTS)
            continue;
        struct wire_events_iter it;
        struct wire_event ev;
        wire_events_begin(&it, &rec.u.events);
        while (wire_events_next(capture_reader_decoder(r), &it, &ev) > 0)
            ;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", capture_reader_error(r));
        return -1;
    }
    return n;
}

static void expect_mem_error(const void *data, size_t len, const char *want)
{
    struct capture_reader *r = capture_reader_mem(data, len);
    char err[400] = "";
    ck_assert_int_eq(read_all(r, err, sizeof err), -1);
    ck_assert_msg(strcmp(err, want) == 0, "error '%s', want '%s'", err, want);
    capture_reader_free(r);
}

START_TEST(roundtrip_memory)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    char err[400];
    ck_assert_int_eq(read_all(r, err, sizeof err), 4);
    capture_reader_free(r);
    /* The offset of each record is where its frame starts: FINISH last. */
    r = capture_reader_mem(sb.data, sb.size);
    struct wire_record rec;
    ck_assert_int_eq(capture_reader_next(r, &rec), 1);
    ck_assert_uint_eq(capture_reader_offset(r), CAPTURE_MAGIC_LEN);
    while (capture_reader_next(r, &rec) > 0 && rec.type != WIRE_FINISH)
        if (rec.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while (wire_events_next(capture_reader_decoder(r), &it, &ev) > 0)
                ;
        }
    ck_assert_uint_eq(rec.type, WIRE_FINISH);
    ck_assert_uint_eq(capture_reader_offset(r), fin);
    capture_reader_free(r);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* Through a pipe written in 1-byte pieces by a child: reads must cope
 * with arbitrary short reads. */
START_TEST(roundtrip_pipe_short_reads)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        for (size_t i = 0; i < sb.size; i++)
            if (write(p[1], sb.data + i, 1) != 1)
                _exit(1);
        _exit(0);
    }
    close(p[1]);
    struct capture_reader *r = capture_reader_fd(p[0]);
    char err[400];
    ck_assert_int_eq(read_all(r, err, sizeof err), 4);
    capture_reader_free(r);
    close(p[0]);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(bad_magic)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    sb.data[7] = '2';
    expect_mem_error(sb.data, sb.size, "byte 0: not a capture: bad magic (expected JETTCAP1)");
    expect_mem_error("JETT", 4, "byte 4: file ends inside the 8-byte JETTCAP1 magic");
    expect_mem_error("", 0, "byte 0: file ends inside the 8-byte JETTCAP1 magic");
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(truncated_frame)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    /* FINISH is 4 + 10 bytes: [7, 0, 5, 4, 1, 0, 0, false, false] packs as
     * fixarray + 8 fixints/bools + the type = 10 payload bytes. */
    ck_assert_uint_eq(sb.size - fin, 14);
    char want[128];
    snprintf(want, sizeof want, "byte %zu: frame cut short: its header says 10 bytes, 3 present",
             fin);
    expect_mem_error(sb.data, fin + 7, want);
    snprintf(want, sizeof want, "byte %zu: frame header cut short: 2 of 4 bytes present", fin);
    expect_mem_error(sb.data, fin + 2, want);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(missing_finish)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    char want[128];
    snprintf(want, sizeof want, "byte %zu: capture ends without FINISH", fin);
    expect_mem_error(sb.data, fin, want);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(trailing_garbage)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    size_t end = sb.size;
    msgpack_sbuffer_write(&sb, "xyz", 3);
    char want[128];
    snprintf(want, sizeof want, "byte %zu: trailing data after FINISH", end);
    expect_mem_error(sb.data, sb.size, want);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(invalid_record_offset)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_capture(&sb, &fin);
    /* Corrupt FINISH's termination (payload byte 2) to 9. */
    sb.data[fin + 4 + 2] = 9;
    char want[160];
    snprintf(want, sizeof want, "byte %zu: FINISH.termination: 9 is over the maximum 2", fin);
    expect_mem_error(sb.data, sb.size, want);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(write_all_to_pipe)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(capture_write_all(p[1], "abc", 3), 0);
    close(p[1]);
    char buf[8];
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 3);
    ck_assert_int_eq(memcmp(buf, "abc", 3), 0);
    close(p[0]);
    ck_assert_int_eq(capture_write_all(-1, "abc", 3), -1);
}
END_TEST

/* Entries two at a time from an EVENTS frame of three: 2, then 1 and the
 * end; the stack each entry names (none for a STACK entry). */
START_TEST(events_in_batches)
{
    static const char text[] =
        "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "
        "capabilities=jett_heap_allocation_hooks colour=false\n"
        "FUNC id=0 namespace=\"m\" function=\"f\" source=- decl=-\n"
        "STACK id=0 parent=- func=0 site=-\n"
        "ALLOC seq=1 op=allocate id=1 old=- new=8 task=- actor=- thread=0 stack=0 span=-\n"
        "ALLOC seq=2 op=allocate id=2 old=- new=8 task=- actor=- thread=0 stack=- span=-\n"
        "FINISH termination=returned wall_ns=1 cpu_ns=1 requested=0 coalesced=0 dropped=0 "
        "collector_failure=false stack_limit=false\n";
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[320];
    ck_assert_msg(captext_pack(text, sizeof text - 1, &sb, err, sizeof err) == 0, "%s", err);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    struct wire_record rec;
    int seen = 0;
    while (capture_reader_next(r, &rec) > 0) {
        if (rec.type != WIRE_EVENTS)
            continue;
        struct wire_events_iter it;
        struct wire_event ev[2];
        unsigned n = 9;
        wire_events_begin(&it, &rec.u.events);
        ck_assert_int_eq(wire_events_batch(capture_reader_decoder(r), &it, ev, 2, &n), 1);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(wire_event_stack(&ev[0]), WIRE_NONE32);
        ck_assert_uint_eq(wire_event_stack(&ev[1]), 0);
        ck_assert_int_eq(wire_events_batch(capture_reader_decoder(r), &it, ev, 2, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(ev[0].u.alloc.allocation_id, 2);
        ck_assert_uint_eq(wire_event_stack(&ev[0]), WIRE_NONE32);
        seen++;
    }
    ck_assert_int_eq(seen, 1);
    capture_reader_free(r);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

Suite *capture_suite(void)
{
    Suite *s = suite_create("capture");
    TCase *t = tcase_create("capture");
    tcase_add_test(t, roundtrip_memory);
    tcase_add_test(t, events_in_batches);
    tcase_add_test(t, roundtrip_pipe_short_reads);
    tcase_add_test(t, bad_magic);
    tcase_add_test(t, truncated_frame);
    tcase_add_test(t, missing_finish);
    tcase_add_test(t, trailing_garbage);
    tcase_add_test(t, invalid_record_offset);
    tcase_add_test(t, write_all_to_pipe);
    suite_add_tcase(s, t);
    return s;
}
