/* Hot-line excerpts: comments, literals, secrets, control characters,
 * invalid UTF-8, trimming and the 160-byte cut.  Expected excerpts are
 * written out by hand from each line. */
#include <check.h>
#include <string.h>

#include "daemon/redact.h"

Suite *redact_suite(void);

struct src {
    struct redact_source s;
    uint32_t lines[16];
};

/* Wraps text and spans; line starts follow each '\n'. */
static struct src mk(const char *text, size_t len, const struct wire_source_span *spans, uint32_t n)
{
    struct src x = {{text, (uint32_t)len, spans, n, NULL, 1}, {0}};
    for (uint32_t i = 0; i < len; i++)
        if (text[i] == '\n')
            x.lines[x.s.n_lines++] = i + 1;
    return x;
}

/* Excerpt of line `line`; asserts the text and the redacted flag. */
static void expect(const char *text, const struct wire_source_span *spans, uint32_t n,
                   uint32_t line, const char *want, bool want_redacted)
{
    struct src x = mk(text, strlen(text), spans, n);
    x.s.lines = x.lines;
    char out[REDACT_MAX + 1];
    size_t len;
    bool red;
    ck_assert_int_eq(redact_excerpt(&x.s, line, out, &len, &red), 0);
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(len, strlen(want));
    ck_assert_msg(red == want_redacted, "redacted flag for %s", want);
}

START_TEST(plain_line_trimmed)
{
    expect("  let x = 1\t \nnext\n", NULL, 0, 0, "let x = 1", false);
    expect("  let x = 1\t \nnext\n", NULL, 0, 1, "next", false);
    expect("x = 1\r\ny\n", NULL, 0, 0, "x = 1", false); /* CR belongs to the break */
    expect("let \xc3\xbc = 1\n", NULL, 0, 0, "let \xc3\xbc = 1", false);
}
END_TEST

START_TEST(comments_dropped)
{
    /* "let x = 1 // note": comment at 10..17 */
    static const struct wire_source_span c1[] = {{WIRE_SPAN_COMMENT, 10, 17}};
    expect("let x = 1 // note\n", c1, 1, 0, "let x = 1", true);
    /* only a comment: empty excerpt, still redacted */
    static const struct wire_source_span c2[] = {{WIRE_SPAN_COMMENT, 3, 8}};
    expect("   // hi\n", c2, 1, 0, "", true);
    // "a (slash-star) x NL y (star-slash) b": the comment 2..11 spans both lines
    static const struct wire_source_span c3[] = {{WIRE_SPAN_COMMENT, 2, 11}};
    expect("a /* x\ny */ b\n", c3, 1, 0, "a", true);
    expect("a /* x\ny */ b\n", c3, 1, 1, "b", true);
    // a comment in the middle of "f(COMMENT1)" gives "f(1)"
    static const struct wire_source_span c4[] = {{WIRE_SPAN_COMMENT, 2, 7}};
    expect("f(/*c*/1)\n", c4, 1, 0, "f(1)", true);
}
END_TEST

START_TEST(literals_and_secrets)
{
    /* say("      "): contents blanked, span 5..11 */
    static const struct wire_source_span l1[] = {{WIRE_SPAN_LITERAL, 5, 11}};
    expect("say(\"      \")\n", l1, 1, 0, "say(\"<redacted-literal>\")", true);
    /* an empty literal f(""): an empty span at 3 */
    static const struct wire_source_span l2[] = {{WIRE_SPAN_LITERAL, 3, 3}};
    expect("f(\"\")\n", l2, 1, 0, "f(\"<redacted-literal>\")", true);
    /* "let k =       + 1": the secret expression blanked at 8..13 */
    static const struct wire_source_span s1[] = {{WIRE_SPAN_SECRET, 8, 13}};
    expect("let k =       + 1\n", s1, 1, 0, "let k = <secret-expression> + 1", true);
    /* a literal at the end of the line then a comment, both touch */
    static const struct wire_source_span m[] = {{WIRE_SPAN_LITERAL, 3, 5},
                                                {WIRE_SPAN_COMMENT, 8, 12}};
    expect("x(\"  \") // c\n", m, 2, 0, "x(\"<redacted-literal>\")", true);
}
END_TEST

START_TEST(control_and_invalid_bytes)
{
    expect("a\x01"
           "b\x7f c\n",
           NULL, 0, 0, "a\\x01b\\x7f c", true);
    expect("a\tb\n", NULL, 0, 0, "a\\x09b", true);
    expect("a\xff"
           "b\n",
           NULL, 0, 0, "a\\xffb", true);
    expect("a\xc2\x85"
           "b\n",
           NULL, 0, 0, "a\\xc2\\x85b", true);               /* C1 NEL */
    expect("a\xe2\x82\n", NULL, 0, 0, "a\\xe2\\x82", true); /* cut sequence */
}
END_TEST

/* Bidirectional controls and invisible format characters are escaped as
 * control characters are (jett-profile(7), Escaped text): a right-to-left
 * override would show `if admin {` as something else on a terminal. */
START_TEST(format_characters)
{
    expect("  ok(\xe2\x80\xae, x)\n", NULL, 0, 0, "ok(\\xe2\\x80\\xae, x)", true); /* RLO */
    expect("a\xe2\x81\xa6"
           "b\xe2\x81\xa9\n",
           NULL, 0, 0, "a\\xe2\\x81\\xa6b\\xe2\\x81\\xa9", true); /* LRI, PDI */
    expect("z\xe2\x80\x8bw\xef\xbb\xbfs\xc2\xad\n", NULL, 0, 0,
           "z\\xe2\\x80\\x8bw\\xef\\xbb\\xbfs\\xc2\\xad", true); /* ZWSP, BOM, SHY */
    /* a 4-byte tag character, 16 bytes escaped */
    expect("t\xf3\xa0\x81\x81\n", NULL, 0, 0, "t\\xf3\\xa0\\x81\\x81", true);
    /* other characters stay: no redaction */
    expect("x \xe2\x80\x90 \xe2\x80\xa9 \xc2\xa0y\n", NULL, 0, 0,
           "x \xe2\x80\x90 \xe2\x80\xa9 \xc2\xa0y", false);
}
END_TEST

START_TEST(cut_at_160_bytes)
{
    char line[400], want[200];
    memset(line, 'a', 200);
    strcpy(line + 200, "\n");
    memset(want, 'a', 160);
    want[160] = 0;
    expect(line, NULL, 0, 0, want, true); /* 200 -> 160 */
    memset(line, 'a', 160);
    strcpy(line + 160, "\n");
    expect(line, NULL, 0, 0, want, false); /* exactly 160: unchanged */
    /* 159 'a' then a 2-byte character: 161 would split it, so 159 */
    memset(line, 'a', 159);
    strcpy(line + 159, "\xc3\xa9\n");
    want[159] = 0;
    expect(line, NULL, 0, 0, want, true);
    /* 158 'a' then \x01 (4 bytes escaped): 162, cut before the escape */
    memset(line, 'a', 158);
    strcpy(line + 158, "\x01\n");
    want[158] = 0;
    expect(line, NULL, 0, 0, want, true);
}
END_TEST

START_TEST(line_lookup)
{
    const char *t = "ab\ncd\n\nef";
    struct src x = mk(t, strlen(t), NULL, 0);
    x.s.lines = x.lines;
    ck_assert_uint_eq(x.s.n_lines, 4); /* starts 0, 3, 6, 7 */
    ck_assert_uint_eq(redact_line_of(&x.s, 0), 0);
    ck_assert_uint_eq(redact_line_of(&x.s, 2), 0);
    ck_assert_uint_eq(redact_line_of(&x.s, 3), 1);
    ck_assert_uint_eq(redact_line_of(&x.s, 6), 2);
    ck_assert_uint_eq(redact_line_of(&x.s, 8), 3);
    char out[REDACT_MAX + 1];
    size_t len;
    bool red;
    ck_assert_int_eq(redact_excerpt(&x.s, 3, out, &len, &red), 0);
    ck_assert_str_eq(out, "ef");
    ck_assert_int_eq(redact_excerpt(&x.s, 2, out, &len, &red), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(redact_excerpt(&x.s, 4, out, &len, &red), -1);
}
END_TEST

Suite *redact_suite(void)
{
    Suite *s = suite_create("redact");
    TCase *t = tcase_create("redact");
    tcase_add_test(t, plain_line_trimmed);
    tcase_add_test(t, comments_dropped);
    tcase_add_test(t, literals_and_secrets);
    tcase_add_test(t, control_and_invalid_bytes);
    tcase_add_test(t, format_characters);
    tcase_add_test(t, cut_at_160_bytes);
    tcase_add_test(t, line_lookup);
    suite_add_tcase(s, t);
    return s;
}
