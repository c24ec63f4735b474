/*
 * The rules of proto/wire_rules and the stream rules of the decoder, and
 * that `jett profile pack`, the decoder the daemon reads with and the
 * aggregation refuse a record with the same message.  Every expected
 * message and count is worked out from the record in the test.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_events.h"
#include "proto/captext.h"
#include "proto/wire_rules.h"
#include "tests/alloc_run.h"
#include "testutil.h"

#define HELLO_LINE                                                                                 \
    "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "          \
    "capabilities=cpu_tick_source colour=false\n"
#define MEM_HELLO_LINE                                                                             \
    "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "         \
    "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "         \
    "capabilities=jett_heap_allocation_hooks,free_and_resize_events colour=false\n"

static const char *path_why(uint8_t origin, const char *p)
{
    const char *why = NULL;
    return wire_rule_path(origin, p, (uint32_t)strlen(p), &why) == 0 ? "ok" : why;
}

START_TEST(path_rules)
{
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "src/main.jett"), "ok");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_STDLIB, "stdlib/text.jett"), "ok");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_DEPENDENCY, "json/a:b.jett"), "ok"); /* not the first */
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "src\\x.jett"), "backslash in path");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "a\x01"
                                                   "b.jett"),
                     "control character in path");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "a\x7f.jett"), "control character in path");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_STDLIB, "text.jett"),
                     "a stdlib path starts with 'stdlib/'");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "C:/x.jett"),
                     "a drive in the first segment is not allowed");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "src/../x.jett"),
                     "'..' segments are not allowed");
    ck_assert_str_eq(path_why(WIRE_ORIGIN_PROJECT, "/x.jett"), "absolute paths are not allowed");
    const char *why;
    ck_assert_int_eq(wire_rule_name("a\0b", 3, &why), -1);
    ck_assert_str_eq(why, "NUL byte in a name");
    ck_assert_int_eq(wire_rule_name("ab", 2, &why), 0);
}
END_TEST

/* Spans over a 10-byte text: `want` is "ok" or "span N why"; on success
 * the canonical order and the outermost spans are checked by the
 * caller. */
static const char *spans_why(struct wire_source_span *sp, uint32_t n, char *buf, size_t len)
{
    uint32_t at;
    const char *why;
    if (wire_rule_spans(sp, n, 10, &at, &why) == 0)
        return "ok";
    snprintf(buf, len, "span %u %s", at, why);
    return buf;
}

START_TEST(span_nesting)
{
    char buf[128];
    /* a literal inside a secret: legal, the secret first, and the only
     * outermost span */
    struct wire_source_span nested[] = {{WIRE_SPAN_LITERAL, 2, 5}, {WIRE_SPAN_SECRET, 0, 8}};
    ck_assert_str_eq(spans_why(nested, 2, buf, sizeof buf), "ok");
    ck_assert_uint_eq(nested[0].kind, WIRE_SPAN_SECRET);
    ck_assert_uint_eq(wire_spans_outermost(nested, 2), 1);
    ck_assert_uint_eq(nested[0].end, 8);
    /* same extent: the secret is the outer one */
    struct wire_source_span same[] = {{WIRE_SPAN_LITERAL, 2, 6}, {WIRE_SPAN_SECRET, 2, 6}};
    ck_assert_str_eq(spans_why(same, 2, buf, sizeof buf), "ok");
    ck_assert_uint_eq(same[0].kind, WIRE_SPAN_SECRET);
    /* disjoint spans stay; an empty span at a span's end is outside it */
    struct wire_source_span apart[] = {
        {WIRE_SPAN_LITERAL, 0, 3}, {WIRE_SPAN_COMMENT, 3, 3}, {WIRE_SPAN_SECRET, 4, 9}};
    ck_assert_str_eq(spans_why(apart, 3, buf, sizeof buf), "ok");
    ck_assert_uint_eq(wire_spans_outermost(apart, 3), 3);
    struct wire_source_span partial[] = {{WIRE_SPAN_LITERAL, 0, 5}, {WIRE_SPAN_SECRET, 3, 8}};
    ck_assert_str_eq(spans_why(partial, 2, buf, sizeof buf),
                     "span 1 overlaps another span without nesting in it");
    struct wire_source_span in_literal[] = {{WIRE_SPAN_LITERAL, 0, 8}, {WIRE_SPAN_COMMENT, 2, 4}};
    ck_assert_str_eq(spans_why(in_literal, 2, buf, sizeof buf),
                     "span 1 lies inside a span that is not a secret expression");
    struct wire_source_span past[] = {{WIRE_SPAN_LITERAL, 0, 11}};
    ck_assert_str_eq(spans_why(past, 1, buf, sizeof buf), "span 0 ends past the text");
    /* 40 secrets each inside the one before (past the 32 kept in place) */
    struct wire_source_span deep[40];
    for (uint32_t i = 0; i < 40; i++)
        deep[i] = (struct wire_source_span){WIRE_SPAN_SECRET, i / 8, 10 - i / 8};
    ck_assert_str_eq(spans_why(deep, 40, buf, sizeof buf), "ok");
    ck_assert_uint_eq(wire_spans_outermost(deep, 40), 1);
}
END_TEST

START_TEST(path_set)
{
    struct wire_path_set s = {0};
    char p[32];
    for (int i = 0; i < 500; i++) { /* past several growths */
        snprintf(p, sizeof p, "src/f%d.jett", i);
        ck_assert_int_eq(wire_path_set_add(&s, WIRE_ORIGIN_PROJECT, p, (uint32_t)strlen(p)), 1);
    }
    ck_assert_int_eq(wire_path_set_add(&s, WIRE_ORIGIN_PROJECT, "src/f7.jett", 11), 0);
    ck_assert_int_eq(wire_path_set_add(&s, WIRE_ORIGIN_DEPENDENCY, "src/f7.jett", 11), 1);
    ck_assert_int_eq(wire_path_set_add(&s, WIRE_ORIGIN_PROJECT, "src/f499.jett", 13), 0);
    wire_path_set_free(&s);
}
END_TEST

/* pack's message for `text`, without its "LINE: " prefix (which must be
 * `line`). */
static const char *pack_error(const char *text, int line, char *err, size_t len)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    int rc = captext_pack(text, strlen(text), &sb, err, len);
    msgpack_sbuffer_destroy(&sb);
    ck_assert_int_eq(rc, -1);
    char want[16];
    int n = snprintf(want, sizeof want, "%d: ", line);
    ck_assert_msg(strncmp(err, want, (size_t)n) == 0, "%s", err);
    return err + n;
}

/* The same SOURCE refused by pack (line 2, after HELLO) and by the
 * aggregation fed the record directly, with one message. */
static void source_refused(uint8_t origin, const char *path, const char *text,
                           const struct wire_source_span *spans, uint32_t n, const char *spec,
                           const char *want)
{
    static const char *const origins[] = {"project", "dependency", "stdlib"};
    char line[512], err[320], esc[128] = "";
    for (size_t i = 0, k = 0; path[i] && k + 5 < sizeof esc; i++)
        k += (size_t)((unsigned char)path[i] < 0x20 || path[i] == '\\'
                          ? snprintf(esc + k, sizeof esc - k, "\\x%02x", (unsigned char)path[i])
                          : snprintf(esc + k, sizeof esc - k, "%c", path[i]));
    snprintf(line, sizeof line,
             HELLO_LINE "SOURCE id=0 origin=%s path=\"%s\" spans=%s text=\"%s\"\n", origins[origin],
             esc, spec, text);
    ck_assert_str_eq(pack_error(line, 2, err, sizeof err), want);
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source_spans(&e, 0, origin, path, text, spans, n), -1);
    ck_assert_str_eq(agg_error(e.a), want);
    agg_free(e.a);
}

START_TEST(pack_and_daemon_agree)
{
    source_refused(WIRE_ORIGIN_PROJECT, "src\\x.jett", "abcdefghij", NULL, 0, "-",
                   "SOURCE.path: backslash in path");
    source_refused(WIRE_ORIGIN_PROJECT, "a\x01.jett", "abcdefghij", NULL, 0, "-",
                   "SOURCE.path: control character in path");
    source_refused(WIRE_ORIGIN_STDLIB, "text.jett", "abcdefghij", NULL, 0, "-",
                   "SOURCE.path: a stdlib path starts with 'stdlib/'");
    const struct wire_source_span partial[] = {{WIRE_SPAN_LITERAL, 0, 5}, {WIRE_SPAN_SECRET, 3, 8}};
    source_refused(WIRE_ORIGIN_PROJECT, "a.jett", "abcdefghij", partial, 2,
                   "literal:0-5,secret:3-8",
                   "SOURCE.spans: span 1 overlaps another span without nesting in it");
    const struct wire_source_span in_lit[] = {{WIRE_SPAN_LITERAL, 0, 8}, {WIRE_SPAN_COMMENT, 2, 4}};
    source_refused(WIRE_ORIGIN_PROJECT, "a.jett", "abcdefghij", in_lit, 2,
                   "literal:0-8,comment:2-4",
                   "SOURCE.spans: span 1 lies inside a span that is not a secret expression");
    /* a second SOURCE with the first one's origin and path: line 3 */
    char err[320];
    ck_assert_str_eq(pack_error(HELLO_LINE "SOURCE id=0 origin=project path=\"a.jett\" spans=- "
                                           "text=\"\"\n"
                                           "SOURCE id=1 origin=project path=\"a.jett\" spans=- "
                                           "text=\"\"\n",
                                3, err, sizeof err),
                     "SOURCE.path: another SOURCE has the same origin and path");
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "a.jett", ""), 0);
    ck_assert_int_eq(ev_source(&e, 1, "a.jett", ""), -1);
    ck_assert_str_eq(agg_error(e.a), "SOURCE.path: another SOURCE has the same origin and path");
    agg_free(e.a);
    /* another origin may hold the same logical path */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    const char *two = HELLO_LINE
        "SOURCE id=0 origin=project path=\"x/a.jett\" spans=- text=\"\"\n"
        "SOURCE id=1 origin=dependency path=\"x/a.jett\" spans=- text=\"\"\n"
        "FINISH termination=returned wall_ns=1 cpu_ns=1 requested=0 coalesced=0 dropped=0 "
        "collector_failure=false stack_limit=false\n";
    ck_assert_msg(captext_pack(two, strlen(two), &sb, err, sizeof err) == 0, "%s", err);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* An allocate's id must be above every earlier allocate's (an id is never
 * reused), in runs of entries as one entry at a time. */
START_TEST(allocation_ids_increase)
{
    char err[320];
    ck_assert_str_eq(
        pack_error(MEM_HELLO_LINE
                   "ALLOC seq=1 op=allocate id=5 old=- new=8 task=- actor=- thread=0 stack=- "
                   "span=-\n"
                   "ALLOC seq=2 op=free id=5 old=8 new=- task=- actor=- thread=0 stack=- span=-\n"
                   "ALLOC seq=3 op=allocate id=5 old=- new=8 task=- actor=- thread=0 stack=- "
                   "span=-\n",
                   4, err, sizeof err),
        "ALLOC.allocation_id: an allocate's id does not increase (ids are never reused)");
    /* the same three entries through the run fast path: it takes the
     * first two and stops before the third, which the slow path refuses */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    uint8_t bin[3 * WIRE_ALLOC_SIZE];
    size_t len = 0;
    const struct wire_exec ex = {WIRE_NONE32, WIRE_NONE32, 0};
    struct wire_alloc a[3] = {
        {1, WIRE_OP_ALLOCATE, 5, WIRE_NONE64, 8, ex, WIRE_NONE32, WIRE_SPAN_NONE},
        {2, WIRE_OP_FREE, 5, 8, WIRE_NONE64, ex, WIRE_NONE32, WIRE_SPAN_NONE},
        {3, WIRE_OP_ALLOCATE, 5, WIRE_NONE64, 8, ex, WIRE_NONE32, WIRE_SPAN_NONE}};
    for (int i = 0; i < 3; i++)
        len += wire_put_alloc(bin + len, &a[i]);
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.mode = WIRE_MODE_MEMORY, h.config.rate_hz = 0;
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    ck_assert_int_eq(wire_encode_events(&sb, 3, bin, len), 0);
    struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
    struct wire_record rec;
    size_t off = 0;
    int rc = 0;
    for (int k = 0; k < 8 && !(rc == 1 && rec.type == WIRE_EVENTS); k++) {
        off += wire_decoder_push(d, sb.data + off, sb.size - off);
        rc = wire_decoder_next(d, &rec); /* HELLO, then the EVENTS */
    }
    ck_assert_int_eq(rc, 1);
    ck_assert_uint_eq(rec.type, WIRE_EVENTS);
    struct wire_events_iter it;
    struct wire_event ev;
    size_t n;
    wire_events_begin(&it, &rec.u.events);
    take_alloc_run(d, &it, 3, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(wire_events_next(d, &it, &ev), -1);
    ck_assert_str_eq(wire_decoder_error(d)->msg,
                     "ALLOC.allocation_id: an allocate's id does not increase (ids are never "
                     "reused)");
    wire_decoder_free(d);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* What only the aggregation can see (every-record's leaf span outside
 * its source and ALLOC entries in a CPU capture) does not stop pack: it
 * writes the capture and says what a replay will report. */
START_TEST(pack_warns_of_collector_errors)
{
    char *jett = tu_build_path("cli/jett"),
         *txt = tu_source_path("fixtures/captures/every-record.jcap.txt");
    char *dir = tu_tmpdir(), out[600];
    snprintf(out, sizeof out, "%s/e.jcap", dir);
    const char *argv[] = {jett, "profile", "pack", txt, "-o", out, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.err, ": warning: a replay reports 4 collector errors, the first: "
                                "CPU_SAMPLE: leaf span [0, 5) outside its source\n"),
                  "%s", o.err);
    size_t len;
    char *bytes = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(bytes);
    free(bytes);
    tu_output_free(&o);
    ck_assert_int_eq(tu_rmtree(dir), 0);
    free(jett), free(txt), free(dir);
}
END_TEST

Suite *wire_rules_suite(void)
{
    Suite *s = suite_create("wire_rules");
    TCase *t = tcase_create("rules");
    tcase_add_test(t, path_rules);
    tcase_add_test(t, span_nesting);
    tcase_add_test(t, path_set);
    tcase_add_test(t, pack_and_daemon_agree);
    tcase_add_test(t, allocation_ids_increase);
    tcase_add_test(t, pack_warns_of_collector_errors);
    suite_add_tcase(s, t);
    return s;
}
