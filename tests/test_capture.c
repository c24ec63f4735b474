/* Tests of proto/capture: reading from memory and pipes, and every way a
 * capture file can be damaged. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/captext.h"
#include "proto/capture.h"
#include "proto/capture_map.h"
#include "testutil.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

/* The magic, a CPU HELLO and FUNC 0. */
static void begin_capture(msgpack_sbuffer *sb)
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
}

/* A valid capture: magic, HELLO, FUNC, EVENTS(STACK, SAMPLE), FINISH. */
static void make_capture(msgpack_sbuffer *sb, size_t *finish_at)
{
    begin_capture(sb);
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

/* A capture of at least `bytes` bytes, for the mapped reader: HELLO, FUNC,
 * EVENTS frames of 97 samples (4,079 bytes a frame: no divisor of a page,
 * so frames straddle every window boundary), then FINISH unless
 * `finish_at` is NULL.  Returns the number of samples. */
static uint64_t make_big_capture(msgpack_sbuffer *sb, size_t bytes, size_t *finish_at)
{
    begin_capture(sb);
    uint8_t bin[WIRE_STACK_SIZE + 97 * WIRE_SAMPLE_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    size_t n = wire_put_stack(bin, &st);
    ck_assert_int_eq(wire_encode_events(sb, 1, bin, n), 0);
    uint64_t seq = 0;
    while (sb->size < bytes) {
        n = 0;
        for (int i = 0; i < 97; i++) {
            seq++;
            struct wire_sample sm = {seq, seq, {0, 0, 0}, WIRE_STATE_JETT, 0, WIRE_SPAN_NONE};
            n += wire_put_sample(bin + n, &sm);
        }
        ck_assert_int_eq(wire_encode_events(sb, 97, bin, n), 0);
    }
    if (finish_at) {
        *finish_at = sb->size;
        struct wire_finish fin = {0, 5, 4, seq, 0, 0, false, false};
        ck_assert_int_eq(wire_encode_finish(sb, &fin), 0);
    }
    return seq;
}

/* Reads records until the end or an error; counts records and events and
 * sums the records' offsets.  Returns capture_reader_next's last result. */
struct tally {
    uint64_t records, events, offsets;
    char err[400];
};

static int tally_all(struct capture_reader *r, struct tally *t)
{
    struct wire_record rec;
    int rc;
    memset(t, 0, sizeof *t);
    while ((rc = capture_reader_next(r, &rec)) > 0) {
        t->records++, t->offsets += capture_reader_offset(r);
        if (rec.type != WIRE_EVENTS)
            continue;
        struct wire_events_iter it;
        struct wire_event ev;
        wire_events_begin(&it, &rec.u.events);
        int erc;
        while ((erc = wire_events_next(capture_reader_decoder(r), &it, &ev)) > 0)
            t->events++;
        if (erc < 0) {
            capture_reader_decode_error(r, t->err, sizeof t->err);
            return -1;
        }
    }
    if (rc < 0)
        snprintf(t->err, sizeof t->err, "%s", capture_reader_error(r));
    return rc;
}

/* A file of `len` bytes: `prefix` junk bytes, then data; open for reading
 * at the start of the data. */
static int open_file_with(const void *data, size_t len, size_t prefix, char **path)
{
    char *dir = tu_tmpdir();
    ck_assert_int_ne(asprintf(path, "%s/c.jcap", dir), -1);
    free(dir);
    int fd = open(*path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    for (size_t i = 0; i < prefix; i++)
        ck_assert_int_eq(write(fd, "x", 1), 1);
    ck_assert_int_eq(capture_write_all(fd, data, len), 0);
    ck_assert_int_eq(lseek(fd, (off_t)prefix, SEEK_SET), (off_t)prefix);
    return fd;
}

/* Frees the reader, then closes and removes its file. */
static void done_with_file(struct capture_reader *r, int fd, char *path)
{
    capture_reader_free(r);
    close(fd);
    tu_remove_in_tmpdir(path);
}

/* A file spanning several mapped windows reads exactly as the same bytes
 * from memory, also from a descriptor that does not start at offset 0. */
START_TEST(mapped_file_reads_like_memory)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    uint64_t samples = make_big_capture(&sb, 2 * CAPTURE_MAP_WINDOW + 12345, &fin);
    struct tally mem, file;
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    ck_assert_int_eq(tally_all(r, &mem), 0);
    capture_reader_free(r);
    ck_assert_uint_eq(mem.events, samples + 1);
    for (size_t prefix = 0; prefix <= 3; prefix += 3) {
        char *path;
        int fd = open_file_with(sb.data, sb.size, prefix, &path);
        r = capture_reader_fd(fd);
        ck_assert_int_eq(tally_all(r, &file), 0);
        done_with_file(r, fd, path);
        ck_assert_uint_eq(file.records, mem.records);
        ck_assert_uint_eq(file.events, mem.events);
        ck_assert_uint_eq(file.offsets, mem.offsets);
    }
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* A damaged frame past the first window is named by its byte offset, the
 * same as when reading from memory. */
START_TEST(mapped_file_error_offset)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_big_capture(&sb, CAPTURE_MAP_WINDOW + 100000, &fin);
    sb.data[fin + 4 + 2] = 9; /* FINISH.termination */
    char want[160];
    snprintf(want, sizeof want, "byte %zu: FINISH.termination: 9 is over the maximum 2", fin);
    char *path;
    int fd = open_file_with(sb.data, sb.size, 0, &path);
    struct capture_reader *r = capture_reader_fd(fd);
    struct tally t;
    ck_assert_int_eq(tally_all(r, &t), -1);
    ck_assert_str_eq(t.err, want);
    done_with_file(r, fd, path);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* The capture in a file, and a reader of it that has read HELLO. */
static struct capture_reader *reader_past_hello(const msgpack_sbuffer *sb, int *fd, char **path)
{
    *fd = open_file_with(sb->data, sb->size, 0, path);
    struct capture_reader *r = capture_reader_fd(*fd);
    struct wire_record rec;
    ck_assert_int_eq(capture_reader_next(r, &rec), 1);
    ck_assert_uint_eq(rec.type, WIRE_HELLO);
    return r;
}

/* What is appended after the reader opened the file is read too: the
 * mapping stops at the size seen at open and reading goes on from there. */
START_TEST(mapped_file_grows)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint64_t samples = make_big_capture(&sb, CAPTURE_MAP_WINDOW + 5000, NULL);
    char *path;
    int fd;
    struct capture_reader *r = reader_past_hello(&sb, &fd, &path);
    msgpack_sbuffer fin;
    msgpack_sbuffer_init(&fin);
    struct wire_finish f = {0, 5, 4, samples, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&fin, &f), 0);
    int wfd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_eq(capture_write_all(wfd, fin.data, fin.size), 0);
    close(wfd);
    struct tally t;
    ck_assert_msg(tally_all(r, &t) == 0, "%s", t.err);
    ck_assert_uint_eq(t.events, samples + 1);
    done_with_file(r, fd, path);
    msgpack_sbuffer_destroy(&fin);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* A file truncated by someone else while it is mapped: a clear error, not
 * a bus error that kills the process. */
START_TEST(mapped_file_truncated_while_read)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    size_t fin;
    make_big_capture(&sb, 3 * CAPTURE_MAP_WINDOW, &fin);
    char *path;
    int fd;
    struct capture_reader *r = reader_past_hello(&sb, &fd, &path);
    ck_assert_int_eq(truncate(path, 1 << 20), 0);
    struct tally t;
    ck_assert_int_eq(tally_all(r, &t), -1);
    ck_assert_msg(strstr(t.err, ": the file was truncated while it was being read") != NULL,
                  "error '%s'", t.err);
    done_with_file(r, fd, path);
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
    tcase_add_test(t, mapped_file_reads_like_memory);
    tcase_add_test(t, mapped_file_error_offset);
    tcase_add_test(t, mapped_file_grows);
    tcase_add_test(t, mapped_file_truncated_while_read);
    suite_add_tcase(s, t);
    return s;
}
