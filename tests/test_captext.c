/* Tests of proto/captext: dump/pack inverses and pack's line errors. */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>

#include "proto/captext.h"
#include "testutil.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

/* Dumps a capture in memory to a malloc'd string; NULL on error. */
static char *dump_mem(const void *data, size_t len, char *err, size_t errlen)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    struct capture_reader *r = capture_reader_mem(data, len);
    int rc = captext_dump(f, r, err, errlen);
    capture_reader_free(r);
    fclose(f);
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* pack(text) -> dump -> pack: both packs are byte-identical and the dump
 * of the second equals the first dump. */
static void check_roundtrip_text(const char *name, const char *text, size_t len)
{
    char err[400];
    msgpack_sbuffer a, b;
    msgpack_sbuffer_init(&a);
    msgpack_sbuffer_init(&b);
    ck_assert_msg(captext_pack(text, len, &a, err, sizeof err) == 0, "%s:%s", name, err);
    char *d1 = dump_mem(a.data, a.size, err, sizeof err);
    ck_assert_msg(d1 != NULL, "%s: %s", name, err);
    ck_assert_msg(captext_pack(d1, strlen(d1), &b, err, sizeof err) == 0, "%s dump:%s", name, err);
    ck_assert_uint_eq(a.size, b.size);
    ck_assert_msg(memcmp(a.data, b.data, a.size) == 0, "%s: pack(dump(x)) != x", name);
    char *d2 = dump_mem(b.data, b.size, err, sizeof err);
    ck_assert_str_eq(d1, d2);
    free(d1);
    free(d2);
    msgpack_sbuffer_destroy(&a);
    msgpack_sbuffer_destroy(&b);
}

START_TEST(every_fixture_roundtrips)
{
    char *dir = tu_source_path("fixtures/captures");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 9 || strcmp(e->d_name + n - 9, ".jcap.txt") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *text = tu_read_file(path, &len);
        ck_assert_ptr_nonnull(text);
        check_roundtrip_text(e->d_name, text, len);
        free(text);
        seen++;
    }
    closedir(d);
    free(dir);
    ck_assert_int_ge(seen, 3);
}
END_TEST

/* The packed fixture the build made equals packing the text here. */
START_TEST(build_packed_fixture_matches)
{
    char *txt = tu_source_path("fixtures/captures/tiny-cpu.jcap.txt");
    char *bin = tu_build_path("fixtures/tiny-cpu.jcap");
    size_t tl, bl;
    char *text = tu_read_file(txt, &tl), *cap = tu_read_file(bin, &bl);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(cap);
    msgpack_sbuffer a;
    msgpack_sbuffer_init(&a);
    char err[400];
    ck_assert_int_eq(captext_pack(text, tl, &a, err, sizeof err), 0);
    ck_assert_uint_eq(a.size, bl);
    ck_assert_int_eq(memcmp(a.data, cap, bl), 0);
    msgpack_sbuffer_destroy(&a);
    free(text), free(cap), free(txt), free(bin);
}
END_TEST

/* A capture built by the encoder (not by pack) survives dump + pack byte
 * for byte, including strings full of quoting hazards. */
START_TEST(encoder_capture_roundtrips)
{
    static const char text[] = "q\"uo\\te\n\ttab\r\x01\x7f caf\xc3\xa9 \xf0\x9f\x94\xa5 = - ,:";
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_sbuffer_write(&sb, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    struct wire_hello h = {1, WIRE_MODE_MEMORY, {0, 0, 100, 0, 7, 3}, S("b e=\"x\""), 0, false};
    wire_encode_hello(&sb, &h);
    uint32_t lines[8];
    uint32_t n = wire_line_starts(text, sizeof text - 1, lines, 8);
    struct wire_source_span spans[] = {{WIRE_SPAN_SECRET, 0, 3}, {WIRE_SPAN_COMMENT, 0, 0}};
    struct wire_source src = {
        0, WIRE_ORIGIN_STDLIB, S("stdlib/a b=c.jett"), S(text), spans, 2, lines, n};
    wire_encode_source(&sb, &src);
    struct wire_func f = {0, S("ns with space"), S(text), 0, {2, 5}};
    wire_encode_func(&sb, &f);
    uint8_t bin[WIRE_STACK_SIZE + WIRE_ALLOC_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    struct wire_alloc al = {UINT64_MAX - 1, WIRE_OP_ALLOCATE, 0, WIRE_NONE64,
                            UINT64_MAX - 1, {1, 2, 3},        0, {0, 0}};
    size_t bl = wire_put_stack(bin, &st);
    bl += wire_put_alloc(bin + bl, &al);
    wire_encode_events(&sb, 2, bin, bl);
    struct wire_finish fin = {WIRE_TERM_RUNTIME_ERROR, 0, WIRE_NONE64, 0, 0, 0, false, true};
    wire_encode_finish(&sb, &fin);

    char err[400];
    char *d = dump_mem(sb.data, sb.size, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    /* Control bytes are escaped, UTF-8 is kept as is. */
    ck_assert_ptr_nonnull(strstr(d, "text=\"q\\\"uo\\\\te\\n\\ttab\\r\\x01\\x7f caf\xc3\xa9"));
    msgpack_sbuffer back;
    msgpack_sbuffer_init(&back);
    ck_assert_msg(captext_pack(d, strlen(d), &back, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(back.size, sb.size);
    ck_assert_int_eq(memcmp(back.data, sb.data, sb.size), 0);
    free(d);
    msgpack_sbuffer_destroy(&back);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* Sequences and ticks have no absent value: every u64 round-trips (found
 * by the capture fuzzer, which dumped UINT64_MAX that pack refused). */
START_TEST(extreme_sequences_roundtrip)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_sbuffer_write(&sb, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    struct wire_hello h = {1, WIRE_MODE_CPU, {1, 0, 1, 0, 0, 0}, S("b"), 0, false};
    wire_encode_hello(&sb, &h);
    struct wire_func f = {0, S("n"), S("f"), WIRE_NONE32, WIRE_SPAN_NONE};
    wire_encode_func(&sb, &f);
    uint8_t bin[WIRE_STACK_SIZE + WIRE_SAMPLE_SIZE + WIRE_ALLOC_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    struct wire_sample sm = {UINT64_MAX, UINT64_MAX, {0, 0, 0}, WIRE_STATE_JETT, 0, WIRE_SPAN_NONE};
    struct wire_alloc al = {UINT64_MAX, WIRE_OP_ALLOCATE, 1, WIRE_NONE64,
                            1,          {0, 0, 0},        0, WIRE_SPAN_NONE};
    size_t bl = wire_put_stack(bin, &st);
    bl += wire_put_sample(bin + bl, &sm);
    bl += wire_put_alloc(bin + bl, &al);
    wire_encode_events(&sb, 3, bin, bl);
    struct wire_finish fin = {0, 0, WIRE_NONE64, 0, 0, 0, false, false};
    wire_encode_finish(&sb, &fin);
    char err[400];
    char *d = dump_mem(sb.data, sb.size, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    ck_assert_ptr_nonnull(
        strstr(d, "CPU_SAMPLE seq=18446744073709551615 tick=18446744073709551615"));
    msgpack_sbuffer back;
    msgpack_sbuffer_init(&back);
    ck_assert_msg(captext_pack(d, strlen(d), &back, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(back.size, sb.size);
    ck_assert_int_eq(memcmp(back.data, sb.data, sb.size), 0);
    free(d);
    msgpack_sbuffer_destroy(&back);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

static const char hello_line[] =
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=1 "
    "retention_budget=1 stack_budget=1 backend=\"b\" capabilities=- colour=false\n";
static const char finish_line[] = "FINISH termination=returned wall_ns=1 cpu_ns=- requested=0 "
                                  "coalesced=0 dropped=0 collector_failure=false "
                                  "stack_limit=false\n";

/* Packs hello_line + body (+ finish_line) and expects `want` as the error. */
static void expect_pack_error(const char *body, bool finish, const char *want)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s%s", hello_line, body, finish ? finish_line : "");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[400] = "";
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, err, sizeof err), -1);
    ck_assert_msg(strcmp(err, want) == 0, "error '%s', want '%s'", err, want);
    msgpack_sbuffer_destroy(&sb);
}

START_TEST(pack_syntax_errors_name_line)
{
    expect_pack_error("BOGUS x=1\n", true, "2: unknown record 'BOGUS'");
    expect_pack_error("# c\n\nFUNC id=0 function=\"f\" namespace=\"n\" source=- decl=-\n", true,
                      "4: FUNC: expected field 'namespace', found 'function'");
    expect_pack_error("FUNC id=x namespace=\"n\" function=\"f\" source=- decl=-\n", true,
                      "2: id: 'x' is not a number from 0 to 4294967294");
    expect_pack_error("FUNC id=0 namespace=\"n\\q\" function=\"f\" source=- decl=-\n", true,
                      "2: unknown escape '\\q' in a string");
    expect_pack_error("FUNC id=0 namespace=\"n function=\"f\" source=- decl=-\n", true,
                      "2: expected a space after the string of 'namespace'");
    expect_pack_error("FUNC id=0 namespace=\"n\n", true, "2: string is not closed by '\"'");
    expect_pack_error("FUNC id=0 namespace=n function=\"f\" source=- decl=-\n", true,
                      "2: namespace: expected a double-quoted string");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-  extra=1\n", true,
                      "2: FUNC: unexpected field 'extra'");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=3\n", true,
                      "2: decl: '3' is not START-END or '-'");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=-\n", true,
                      "2: FUNC: missing field 'decl'");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=- word\n", true,
                      "2: expected KEY=VALUE, found 'word'");
}
END_TEST

START_TEST(pack_structure_errors)
{
    expect_pack_error("END\n", true, "2: END without EVENTS");
    expect_pack_error("EVENTS\nEND\n", true, "3: EVENTS block without entries");
    expect_pack_error("EVENTS\n", true, "3: FINISH inside an EVENTS block (missing END?)");
    expect_pack_error("EVENTS\n", false, "2: EVENTS block not closed by END");
    expect_pack_error("", false, "1: text ends without FINISH");
    expect_pack_error("SOURCE id=0 origin=project path=\"a\" spans=bogus:1-2 text=\"\"\n", true,
                      "2: spans: unknown kind 'bogus'");
    expect_pack_error("SOURCE id=0 origin=moon path=\"a\" spans=- text=\"\"\n", true,
                      "2: origin: unknown value 'moon'");
}
END_TEST

/* Records the decoder rejects are reported at the line that wrote them;
 * an invalid entry at its own line inside the batch. */
START_TEST(pack_validation_errors_name_line)
{
    expect_pack_error("SOURCE id=0 origin=project path=\"/etc/x\" spans=- text=\"\"\n", true,
                      "2: SOURCE.path: absolute paths are not allowed");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n"
                      "EVENTS\n"
                      "STACK id=0 parent=- func=0 site=-\n"
                      "CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=0 span=-\n"
                      "CPU_SAMPLE seq=1 tick=2 task=- actor=- thread=0 state=jett stack=0 span=-\n"
                      "END\n",
                      true, "6: CPU_SAMPLE.sequence: does not increase");
    expect_pack_error("FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n"
                      "STACK id=0 parent=- func=0 site=-\n"
                      "STACK id=1 parent=0 func=5 site=-\n",
                      true, "4: STACK.func_id: function is not defined");
    expect_pack_error("FINISH termination=returned wall_ns=1 cpu_ns=- requested=0 coalesced=0 "
                      "dropped=0 collector_failure=false stack_limit=false\n",
                      true, "3: FINISH after the stream's last record");
}
END_TEST

/* RETAINED: rows are FUNCTION:BYTES:OBJECTS (or '-'), a missing holder
 * is '-', and the decoder's rules name the line. */
START_TEST(pack_retained)
{
    static const char fn[] = "FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n";
    char body[1024];
    snprintf(body, sizeof body,
             "%sRETAINED namespace=- name=- source=- decl=- rows=0:5 "
             "complete=true\n",
             fn);
    expect_pack_error(body, true, "3: rows: expected FUNCTION:BYTES:OBJECTS, found '0:5'");
    snprintf(body, sizeof body,
             "%sRETAINED namespace=- name=- source=- decl=- rows=x:5:1 "
             "complete=true\n",
             fn);
    expect_pack_error(body, true, "3: rows: expected FUNCTION:BYTES:OBJECTS, found 'x:5:1'");
    snprintf(body, sizeof body,
             "%sRETAINED namespace=\"a\" name=\"b\" source=- decl=- "
             "rows=-:5:1,3:1:1 complete=true\n",
             fn);
    expect_pack_error(body, true, "3: RETAINED.rows: row 2 names a function that is not defined");
    snprintf(body, sizeof body,
             "%sRETAINED namespace=a name=- source=- decl=- rows=- "
             "complete=true\n",
             fn);
    expect_pack_error(body, true, "3: namespace: expected a double-quoted string");
    snprintf(body, sizeof body,
             "%sRETAINED namespace=\"a\" name=\"b\" source=- decl=- "
             "rows=- complete=true\n",
             fn);
    expect_pack_error(body, true, "4: FINISH before the walk's closing RETAINED");
}
END_TEST

/* Where the operation has a size, 0xff..ff is the size 2^64 - 1 and
 * dumps as that number; '-' there, or a number where the operation has
 * no size, is refused (either would read back as the other). */
START_TEST(pack_alloc_sizes)
{
    static const char body[] =
        "EVENTS\n"
        "ALLOC seq=1 op=allocate id=1 old=- new=18446744073709551615 task=- actor=- thread=0 "
        "stack=- span=-\n"
        "ALLOC seq=2 op=resize id=1 old=18446744073709551615 new=1099511627776 task=- actor=- "
        "thread=0 stack=- span=-\n"
        "ALLOC seq=3 op=free id=1 old=1099511627776 new=- task=- actor=- thread=0 stack=- "
        "span=-\n"
        "END\n";
    char text[2048], err[400];
    snprintf(text, sizeof text, "%s%s%s", hello_line, body, finish_line);
    check_roundtrip_text("alloc sizes", text, strlen(text));
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, err, sizeof err), 0);
    char *d = dump_mem(sb.data, sb.size, err, sizeof err);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(strstr(d, " op=allocate id=1 old=- new=18446744073709551615 "));
    ck_assert_ptr_nonnull(strstr(d, " op=resize id=1 old=18446744073709551615 new=1099511627776 "));
    free(d);
    msgpack_sbuffer_destroy(&sb);
    expect_pack_error("EVENTS\nALLOC seq=1 op=resize id=1 old=- new=4 task=- actor=- thread=0 "
                      "stack=- span=-\nEND\n",
                      true, "3: old: '-' is not a number from 0 to 18446744073709551615");
    expect_pack_error("EVENTS\nALLOC seq=1 op=allocate id=1 old=5 new=4 task=- actor=- thread=0 "
                      "stack=- span=-\nEND\n",
                      true, "3: old: '5', but an allocate has no old size (write '-')");
    expect_pack_error("EVENTS\nALLOC seq=1 op=free id=1 old=4 new=4 task=- actor=- thread=0 "
                      "stack=- span=-\nEND\n",
                      true, "3: new: '4', but a free has no new size (write '-')");
}
END_TEST

/* CALLS lines: both lists, empty lists, the largest count; errors name
 * the line and the item. */
START_TEST(pack_calls)
{
    static const char body[] =
        "FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n"
        "FUNC id=1 namespace=\"n\" function=\"g\" source=- decl=-\n"
        "CALLS functions=0:1,1:18446744073709551615 sites=0:3-9:300,1:0-0:0\n"
        "CALLS functions=- sites=-\n";
    char text[2048], err[400];
    snprintf(text, sizeof text, "%s%s%s", hello_line, body, finish_line);
    check_roundtrip_text("calls", text, strlen(text));
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, err, sizeof err), 0);
    char *d = dump_mem(sb.data, sb.size, err, sizeof err);
    ck_assert_ptr_nonnull(
        strstr(d, "\nCALLS functions=0:1,1:18446744073709551615 sites=0:3-9:300,1:0-0:0\n"
                  "CALLS functions=- sites=-\n"));
    free(d);
    msgpack_sbuffer_destroy(&sb);
    static const char f0[] = "FUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n";
    static const struct {
        const char *line, *want;
    } bad[] = {
        {"CALLS functions=0 sites=-\n", "3: functions: expected FUNC:CALLS, found '0'"},
        {"CALLS functions=0:x sites=-\n", "3: functions: expected FUNC:CALLS, found '0:x'"},
        {"CALLS functions=0:1, sites=-\n", "3: functions: the list ends with a comma"},
        {"CALLS functions=- sites=0:3-4\n",
         "3: sites: expected FUNC:START-END:CALLS, found '0:3-4'"},
        {"CALLS functions=- sites=0:3:1\n", "3: sites: '3' is not START-END or '-'"},
        {"CALLS functions=- sites=0:-:1\n", "3: sites: a call site needs a span, found '0:-:1'"},
        {"CALLS functions=- sites=0:3-x:1\n", "3: sites: '3-x' is not START-END or '-'"},
        {"CALLS functions=\"0:1\" sites=-\n", "3: functions: expected a list, not a string"},
        {"CALLS functions=-\n", "3: CALLS: missing field 'sites'"},
        {"CALLS functions=1:1 sites=-\n",
         "3: CALLS.functions: entry 0 names an undefined function"},
        {"CALLS functions=- sites=0:5-1:1\n",
         "3: CALLS.sites: entry 0: span start 5 is after its end 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char b[256];
        snprintf(b, sizeof b, "%s%s", f0, bad[i].line);
        expect_pack_error(b, true, bad[i].want);
    }
    expect_pack_error("CALLS functions=- sites=-\nEVENTS\nSTACK id=0 parent=- func=0 site=-\nEND\n",
                      true, "5: EVENTS after CALLS: CALLS follows the last EVENTS");
}
END_TEST

/* Spans that start together pack in the order the dump prints them
 * (end descending: the secret 2-8 before the literal 2-4 it holds),
 * whatever their order in the text, so that pack(dump(x)) is x; spans
 * not sorted by start are still refused. */
START_TEST(pack_span_ties_in_dump_order)
{
    static const char src[] = "SOURCE id=0 origin=project path=\"a.jett\" "
                              "spans=literal:2-4,secret:2-8 text=\"abcdefghij\"\n";
    char text[2048], err[400];
    snprintf(text, sizeof text, "%s%s%s", hello_line, src, finish_line);
    check_roundtrip_text("ties", text, strlen(text));
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(captext_pack(text, strlen(text), &sb, err, sizeof err), 0);
    char *d = dump_mem(sb.data, sb.size, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(d, " spans=secret:2-8,literal:2-4 "));
    free(d);
    msgpack_sbuffer_destroy(&sb);
    expect_pack_error("SOURCE id=0 origin=project path=\"a.jett\" spans=comment:5-6,comment:1-2 "
                      "text=\"abcdefghij\"\n",
                      true, "2: SOURCE.spans: span 1 is not sorted by start");
}
END_TEST

/* Loose entries form one frame per run; a record line ends the run. */
START_TEST(pack_implicit_batches)
{
    char text[2048];
    snprintf(text, sizeof text,
             "%sFUNC id=0 namespace=\"n\" function=\"f\" source=- decl=-\n"
             "STACK id=0 parent=- func=0 site=-\n"
             "# a comment does not end the run\n"
             "CPU_SAMPLE seq=1 tick=1 task=- actor=- thread=0 state=jett stack=0 span=-\n"
             "FUNC id=1 namespace=\"n\" function=\"g\" source=- decl=-\n"
             "CPU_SAMPLE seq=2 tick=2 task=- actor=- thread=0 state=jett stack=0 span=-\n%s",
             hello_line, finish_line);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    char err[400];
    ck_assert_msg(captext_pack(text, strlen(text), &sb, err, sizeof err) == 0, "%s", err);
    struct capture_reader *r = capture_reader_mem(sb.data, sb.size);
    struct wire_record rec;
    int events = 0, counts[2] = {0};
    while (capture_reader_next(r, &rec) > 0)
        if (rec.type == WIRE_EVENTS) {
            counts[events++] = (int)rec.u.events.count;
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while (wire_events_next(capture_reader_decoder(r), &it, &ev) > 0)
                ;
        }
    capture_reader_free(r);
    ck_assert_int_eq(events, 2);
    ck_assert_int_eq(counts[0], 2);
    ck_assert_int_eq(counts[1], 1);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

Suite *captext_suite(void)
{
    Suite *s = suite_create("captext");
    TCase *t = tcase_create("captext");
    tcase_add_test(t, every_fixture_roundtrips);
    tcase_add_test(t, build_packed_fixture_matches);
    tcase_add_test(t, encoder_capture_roundtrips);
    tcase_add_test(t, extreme_sequences_roundtrip);
    tcase_add_test(t, pack_syntax_errors_name_line);
    tcase_add_test(t, pack_structure_errors);
    tcase_add_test(t, pack_validation_errors_name_line);
    tcase_add_test(t, pack_implicit_batches);
    tcase_add_test(t, pack_alloc_sizes);
    tcase_add_test(t, pack_calls);
    tcase_add_test(t, pack_span_ties_in_dump_order);
    tcase_add_test(t, pack_retained);
    suite_add_tcase(s, t);
    return s;
}
