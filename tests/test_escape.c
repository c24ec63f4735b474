/* Tests of daemon/escape: the one rule by which names, paths and source
 * excerpts are shown (jett-profile(7), Escaped text), against examples
 * worked by hand and, for every code point, against Python's
 * unicodedata and the list the man page gives (escape_ref.py); then
 * through the real jett, a capture whose names hold control, bidi and
 * invisible characters in every export, report and diff. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/escape.h"
#include "testutil.h"

static void expect(const char *in, size_t n, const char *want)
{
    size_t len;
    char *got = escape_dup(in, n, &len);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_uint_eq(escape_len(in, n), strlen(want));
    ck_assert(escape_needed(in, n) == (strcmp(in, want) != 0 || n != strlen(in)));
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    escape_fwrite(f, in, n);
    fclose(f);
    ck_assert_uint_eq(blen, len);
    ck_assert_int_eq(memcmp(buf, want, len), 0);
    free(buf), free(got);
}

#define EXPECT(lit, want) expect(lit, sizeof lit - 1, want)

START_TEST(by_hand)
{
    EXPECT("plain.name", "plain.name");
    EXPECT("back\\slash", "back\\slash"); /* a backslash is as it is */
    EXPECT("\xe6\x97\xa5\xe6\x9c\xac.\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac.\xc3\xa9");
    EXPECT("a\x1b[31mb", "a\\x1b[31mb");
    EXPECT("\t\n\r\x01\x7f", "\\x09\\x0a\\x0d\\x01\\x7f");
    EXPECT("nul\0x", "nul\\x00x");
    EXPECT("c1\xc2\x80\xc2\x85\xc2\x9f|\xc2\xa0", "c1\\xc2\\x80\\xc2\\x85\\xc2\\x9f|\xc2\xa0");
    /* bidirectional controls: RLO, PDF, LRI, PDI, LRM, RLM, ALM */
    EXPECT("user\xe2\x80\xaetxt.exe", "user\\xe2\\x80\\xaetxt.exe");
    EXPECT("\xe2\x80\xac\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c",
           "\\xe2\\x80\\xac\\xe2\\x81\\xa6\\xe2\\x81\\xa9\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c");
    /* invisible: ZWSP, ZWJ, WJ, BOM, soft hyphen, a tag character */
    EXPECT("a\xe2\x80\x8b\xe2\x80\x8d\xe2\x81\xa0\xef\xbb\xbf\xc2\xad\xf3\xa0\x81\x81z",
           "a\\xe2\\x80\\x8b\\xe2\\x80\\x8d\\xe2\\x81\\xa0\\xef\\xbb\\xbf\\xc2\\xad"
           "\\xf3\\xa0\\x81\\x81z");
    /* noncharacters U+FFFE and U+FFFF; U+FFFD and U+FFFC stay */
    EXPECT("\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\xef\xbf\xbc",
           "\\xef\\xbf\\xbe\\xef\\xbf\\xbf\xef\xbf\xbd\xef\xbf\xbc");
    /* not UTF-8: a stray continuation, an overlong, a surrogate, a cut
     * sequence, a byte above F4: each byte on its own */
    EXPECT("\x80x\xc0\xafy\xed\xa0\x80z\xe2\x82", "\\x80x\\xc0\\xafy\\xed\\xa0\\x80z\\xe2\\x82");
    EXPECT("\xf5\xff", "\\xf5\\xff");
    /* neighbours of the ranges stay: U+200A, U+2010, U+2029, U+2065
     * (unassigned), U+206F's neighbour U+2070 */
    EXPECT("\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xa9\xe2\x81\xb0",
           "\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xa9\xe2\x81\xb0");
    EXPECT("\xe2\x81\xa5", "\xe2\x81\xa5");
}
END_TEST

/* The code point as UTF-8 into b; its length. */
static size_t encode(uint32_t cp, char *b)
{
    if (cp < 0x80)
        return b[0] = (char)cp, 1;
    if (cp < 0x800)
        return b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    b[0] = (char)(0xf0 | cp >> 18), b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    b[2] = (char)(0x80 | (cp >> 6 & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Every code point but the surrogates: escaped exactly when it is a
 * control character, U+FFFE, U+FFFF or of category Cf in Python's
 * unicodedata (Unicode 14.0 on Debian 12; a later Unicode may only add
 * to Cf, so ours must then be a subset), and the man page's list, which
 * the reference model reads, is Python's Cf (escape_ref.py --check). */
START_TEST(every_code_point)
{
    char *ref = tu_source_path("tests/reference/escape_ref.py");
    const char *check[] = {"/usr/bin/python3", ref, "--check", NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(check, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
    tu_output_free(&o);
    free(ref);
    const char *cf[] = {"/usr/bin/python3", "-c",
                        "import unicodedata as u\n"
                        "print(u.unidata_version)\n"
                        "print(' '.join('%x' % c for c in range(0x110000)"
                        " if u.category(chr(c)) == 'Cf'))\n",
                        NULL};
    ck_assert_int_eq(tu_run(cf, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    bool same_version = strncmp(o.out, "14.0.0\n", 7) == 0;
    unsigned char *is_cf = calloc(0x110000, 1);
    for (char *p = strchr(o.out, '\n') + 1; *p && *p != '\n';) {
        char *end;
        unsigned long c = strtoul(p, &end, 16);
        ck_assert(end != p && c < 0x110000);
        is_cf[c] = 1;
        p = *end == ' ' ? end + 1 : end;
    }
    tu_output_free(&o);
    unsigned escaped_cf = 0;
    for (uint32_t cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff)
            continue;
        char b[4];
        size_t n = encode(cp, b);
        bool esc;
        ck_assert_uint_eq(escape_unit(b, n, &esc), n);
        bool control = cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0xfffe || cp == 0xffff;
        if (control) {
            ck_assert_msg(esc, "U+%04X is not escaped", cp);
            continue;
        }
        escaped_cf += esc;
        ck_assert_msg(same_version ? esc == is_cf[cp] : !esc || is_cf[cp],
                      "U+%04X: escaped %d, Cf %d", cp, esc, is_cf[cp]);
    }
    ck_assert_uint_eq(escaped_cf, 163); /* the man page's list */
    free(is_cf);
}
END_TEST

/* ---- every report and export of names-escape (and its memory twin) ---- */

/* Raw bytes of the fixtures' names and source that no output may hold:
 * ESC, CR, DEL, NEL, RLO, LRI, ZWSP, BOM, SHY, ALM, RLM, the tag U+E0041,
 * U+FFFE, and the name's newline. */
static const char *const raw_units[] = {
    "\x1b",         "\r",           "\x7f",         "\xc2\x85",         "\xe2\x80\xae",
    "\xe2\x81\xa6", "\xe2\x80\x8b", "\xef\xbb\xbf", "\xc2\xad",         "\xd8\x9c",
    "\xe2\x80\x8f", "\xef\xbf\xbe", "two\nlines",   "\xf3\xa0\x81\x81", "tab\ttab"};

/* The names as every output shows them (jett-profile(7), Escaped text). */
static const char *const shown[] = {
    "esc.red\\x1b[31mtext",
    "nl.two\\x0alines\\x0dcr\\x09tab",
    "bidi.user\\xe2\\x80\\xaetxt.exe\\xe2\\x81\\xa6",
    "zw.a\\xe2\\x80\\x8bb\\xef\\xbb\\xbfc\\xc2\\xadd\\xd8\\x9ce\\xe2\\x80\\x8f",
    "c1.del\\x7fnel\\xc2\\x85tag\\xf3\\xa0\\x81\\x81non\\xef\\xbf\\xbe",
};
#define SHOWN_PATH "src/ma\\xe2\\x80\\xaein.jett"

static bool holds(const char *text, size_t len, const char *what)
{
    return memmem(text, len, what, strlen(what)) != NULL;
}

/* No raw unit in the output; every name (the first n of shown) and the
 * path as shown. */
static void expect_clean(const char *what, const char *text, size_t len, size_t n, bool path)
{
    for (size_t k = 0; k < sizeof raw_units / sizeof raw_units[0]; k++)
        ck_assert_msg(!holds(text, len, raw_units[k]), "%s holds raw unit %zu", what, k);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(holds(text, len, shown[k]), "%s lacks %s", what, shown[k]);
    ck_assert_msg(!path || holds(text, len, SHOWN_PATH), "%s lacks the path", what);
}

/* Runs jett with the arguments (NULL-terminated) and nothing on stdin:
 * asserts exit 0 and returns the outputs. */
static void run_ok(struct tu_output *o, ...)
{
    va_list ap;
    va_start(ap, o);
    int status = tu_run_jettv(o, ap);
    va_end(ap);
    ck_assert_msg(status == 0, "exit %d: %s", status, o->err);
}

START_TEST(collapsed_lines)
{
    char *cap = tu_capture_path("names-escape");
    struct tu_output o;
    run_ok(&o, "profile", "export", cap, "--format", "collapsed", NULL);
    ck_assert_str_eq(o.out, "app.main 1\n"
                            "app.main;bidi.user\\xe2\\x80\\xaetxt.exe\\xe2\\x81\\xa6 1\n"
                            "app.main;c1.del\\x7fnel\\xc2\\x85tag\\xf3\\xa0\\x81\\x81non"
                            "\\xef\\xbf\\xbe 1\n"
                            "app.main;esc.red\\x1b[31mtext 1\n"
                            "app.main;nl.two\\x0alines\\x0dcr\\x09tab 1\n"
                            "app.main;zw.a\\xe2\\x80\\x8bb\\xef\\xbb\\xbfc\\xc2\\xadd\\xd8\\x9ce"
                            "\\xe2\\x80\\x8f 1\n");
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* Our own export passes our own checker, and callgrind_annotate shows
 * the names as text: nothing reaches a terminal. */
START_TEST(callgrind_checked_and_annotated)
{
    char *cap = tu_capture_path("names-escape"), *cg = tu_tmp_path("names.callgrind");
    struct tu_output o;
    run_ok(&o, "profile", "export", cap, "--format", "callgrind", "-o", cg, NULL);
    tu_output_free(&o);
    size_t len;
    char *text = tu_read_file(cg, &len);
    expect_clean("the Callgrind export", text, len, 5, true);
    free(text);
    run_ok(&o, "callgrind", "check", cg, NULL);
    /* six self costs, one for each function; main's five calls */
    ck_assert_str_eq(strchr(o.out, ':'), ": 1 part, 11 records\n"
                                         "part 1: events Samples; positions line; 11 records "
                                         "(6 cost, 5 call)\n");
    tu_output_free(&o);
    for (int tree = 0; tree < 2; tree++) {
        const char *argv[] = {"/usr/bin/callgrind_annotate", "--inclusive=yes",
                              tree ? "--tree=caller" : "--threshold=100", cg, NULL};
        ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
        ck_assert_msg(o.status == 0, "%s", o.err);
        expect_clean("callgrind_annotate", o.out, o.out_len, 5, true);
        ck_assert_ptr_nonnull(strstr(o.out, "???:esc.red\\x1b[31mtext\n"));
        tu_output_free(&o);
    }
    free(cap), free(cg);
}
END_TEST

START_TEST(svg_and_speedscope)
{
    char *cap = tu_capture_path("names-escape");
    struct tu_output o;
    run_ok(&o, "profile", "export", cap, "--format", "svg", NULL);
    expect_clean("the SVG", o.out, o.out_len, 5, true);
    ck_assert_ptr_nonnull(strstr(o.out, "<title>esc.red\\x1b[31mtext: 1 sample (16.67%)</title>"));
    ck_assert_ptr_nonnull(strstr(o.out, " data-p=\"" SHOWN_PATH ":2\""));
    tu_output_free(&o);
    run_ok(&o, "profile", "diff", cap, cap, "--format", "svg", NULL);
    expect_clean("the differential SVG", o.out, o.out_len, 5, true);
    tu_output_free(&o);
    /* JSON strings hold the text \xNN: its backslash is JSON's \\ */
    run_ok(&o, "profile", "export", cap, "--format", "speedscope", NULL);
    expect_clean("the speedscope file", o.out, o.out_len, 0, false);
    ck_assert_ptr_nonnull(strstr(o.out, "{\"name\":\"esc.red\\\\x1b[31mtext\"}"));
    ck_assert_ptr_nonnull(strstr(o.out, "\"file\":\"src/ma\\\\xe2\\\\x80\\\\xaein.jett\""));
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* The human report, its hot line's code excerpt included, and the
 * human diff; the TOON keeps the exact names. */
START_TEST(human_report_and_diff)
{
    char *cap = tu_capture_path("names-escape");
    struct tu_output o;
    run_ok(&o, "profile", "replay", cap, NULL);
    expect_clean("the report", o.out, o.out_len, 5, true);
    ck_assert_ptr_nonnull(
        strstr(o.out, "| run\\xe2\\x80\\xae(\\x1b[2J)\\xe2\\x80\\x8b  (redacted)\n"));
    tu_output_free(&o);
    run_ok(&o, "profile", "replay", cap, "--agent", NULL);
    /* the excerpt, a TOON string, escapes its backslashes */
    ck_assert_ptr_nonnull(strstr(o.out, ",\"run\\\\xe2\\\\x80\\\\xae(\\\\x1b[2J)"
                                        "\\\\xe2\\\\x80\\\\x8b\",true\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "user\xe2\x80\xaetxt.exe")); /* exact in TOON */
    tu_output_free(&o);
    run_ok(&o, "profile", "diff", cap, cap, NULL);
    expect_clean("the diff", o.out, o.out_len, 5, true);
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* The timeline's legend, data attributes and summary. */
START_TEST(timeline_and_summary)
{
    char *cap = tu_capture_path("names-escape-mem");
    struct tu_output o;
    run_ok(&o, "profile", "export", cap, "--format", "timeline", NULL);
    expect_clean("the timeline", o.out, o.out_len, 1, true);
    ck_assert_ptr_nonnull(strstr(o.out, "data-site=\"esc.red\\x1b[31mtext\""));
    ck_assert_str_eq(o.err, "jett: timeline: peak 140 bytes live at 140 bytes allocated; "
                            "retained at exit 110 bytes of 150 allocated\n"
                            "jett: timeline: largest growing site: "
                            "bidi.user\\xe2\\x80\\xaetxt.exe\\xe2\\x81\\xa6 (" SHOWN_PATH
                            ":3), 100 bytes retained at exit (at most 100 live)\n");
    tu_output_free(&o);
    free(cap);
}
END_TEST

Suite *escape_suite(void)
{
    Suite *s = suite_create("escape");
    TCase *t = tcase_create("escape");
    tcase_add_test(t, by_hand);
    tcase_add_test(t, every_code_point);
    suite_add_tcase(s, t);
    TCase *e = tcase_create("outputs");
    tcase_add_checked_fixture(e, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(e, collapsed_lines);
    tcase_add_test(e, callgrind_checked_and_annotated);
    tcase_add_test(e, svg_and_speedscope);
    tcase_add_test(e, human_report_and_diff);
    tcase_add_test(e, timeline_and_summary);
    suite_add_tcase(s, e);
    return s;
}
