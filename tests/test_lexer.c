/* Lexer tests: token kinds and spans, literal decoding, comment and
 * literal spans, and every lexical error with its position. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diag.h"
#include "agent/lexer.h"

struct lexed {
    struct interp_source src;
    struct lex_result r;
    struct interp_diags d;
    int errors;
};

static void lex_text(struct lexed *x, const char *text)
{
    memset(x, 0, sizeof *x);
    x->src.path = strdup("t.jett");
    x->src.text = strdup(text);
    x->src.len = (uint32_t)strlen(text);
    source_index_lines(&x->src);
    x->errors = lex_source(&x->src, &x->r, &x->d);
}

static void lexed_free(struct lexed *x)
{
    lex_result_free(&x->r);
    interp_diags_free(&x->d);
    free(x->src.path);
    free(x->src.text);
    free(x->src.line_starts);
    free(x->src.spans);
}

static void expect_kinds(const char *text, const enum lex_kind *kinds, size_t n)
{
    struct lexed x;
    lex_text(&x, text);
    ck_assert_int_eq(x.errors, 0);
    ck_assert_uint_eq(x.r.n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(x.r.toks[i].kind == kinds[i], "token %zu: %s != %s", i,
                      lex_kind_name((enum lex_kind)x.r.toks[i].kind), lex_kind_name(kinds[i]));
    lexed_free(&x);
}

START_TEST(token_kinds)
{
    static const enum lex_kind a[] = {TK_LET, TK_IDENT,   TK_ASSIGN,  TK_INT, TK_DOTDOT,
                                      TK_INT, TK_NEWLINE, TK_NEWLINE, TK_EOF};
    expect_kinds("let x = 1..2\n", a, 9);
    static const enum lex_kind b[] = {TK_NAMESPACE, TK_IMPORT,   TK_CONST,   TK_FN,    TK_RETURN,
                                      TK_IF,        TK_ELSE,     TK_WHILE,   TK_FOR,   TK_IN,
                                      TK_BREAK,     TK_CONTINUE, TK_TRY,     TK_CATCH, TK_TRUE,
                                      TK_FALSE,     TK_NIL,      TK_NEWLINE, TK_EOF};
    expect_kinds("namespace import const fn return if else while for in break continue try catch "
                 "true false nil",
                 b, 19);
    static const enum lex_kind c[] = {
        TK_LPAREN,      TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE,      TK_RBRACE,
        TK_COMMA,       TK_COLON,  TK_DOT,      TK_ARROW,    TK_PLUS_ASSIGN, TK_MINUS_ASSIGN,
        TK_STAR_ASSIGN, TK_PLUS,   TK_MINUS,    TK_STAR,     TK_SLASH,       TK_PERCENT,
        TK_LT,          TK_LE,     TK_GT,       TK_GE,       TK_EQ,          TK_NE,
        TK_AND,         TK_OR,     TK_NOT,      TK_NEWLINE,  TK_EOF};
    expect_kinds("()[]{},:.->+=-=*=+-*/%<<=>>===!=&&||!", c, 29);
}
END_TEST

START_TEST(spans_and_values)
{
    struct lexed x;
    lex_text(&x, "x1 = 1.5e3 // note\n  \"a\\n\\u{41}\" b\"\\0z\" 42");
    ck_assert_int_eq(x.errors, 0);
    ck_assert_int_eq(x.r.toks[0].kind, TK_IDENT);
    ck_assert_uint_eq(x.r.toks[0].start, 0);
    ck_assert_uint_eq(x.r.toks[0].end, 2);
    ck_assert_int_eq(x.r.toks[2].kind, TK_FLOAT);
    ck_assert(x.r.toks[2].u.f == 1500.0);
    ck_assert_uint_eq(x.r.toks[2].start, 5);
    ck_assert_uint_eq(x.r.toks[2].end, 10);
    ck_assert_int_eq(x.r.toks[3].kind, TK_NEWLINE);
    const struct lex_token *s = &x.r.toks[4];
    ck_assert_int_eq(s->kind, TK_STRING);
    ck_assert_uint_eq(s->start, 21);
    ck_assert_uint_eq(s->end, 32);
    ck_assert_uint_eq(s->u.s.len, 3);
    ck_assert_int_eq(memcmp(x.r.pool + s->u.s.off, "a\nA", 3), 0);
    const struct lex_token *b = &x.r.toks[5];
    ck_assert_int_eq(b->kind, TK_BYTES);
    ck_assert_uint_eq(b->u.s.len, 2);
    ck_assert_int_eq(memcmp(x.r.pool + b->u.s.off, "\0z", 2), 0);
    ck_assert_int_eq(x.r.toks[6].kind, TK_INT);
    ck_assert_int_eq(x.r.toks[6].u.i, 42);
    /* comment [11, 18), then the two literals */
    ck_assert_uint_eq(x.src.n_spans, 3);
    ck_assert_int_eq(x.src.spans[0].kind, INTERP_SPAN_COMMENT);
    ck_assert_uint_eq(x.src.spans[0].start, 11);
    ck_assert_uint_eq(x.src.spans[0].end, 18);
    ck_assert_int_eq(x.src.spans[1].kind, INTERP_SPAN_LITERAL);
    ck_assert_uint_eq(x.src.spans[1].start, 21);
    ck_assert_uint_eq(x.src.spans[1].end, 32);
    ck_assert_int_eq(x.src.spans[2].kind, INTERP_SPAN_LITERAL);
    ck_assert_uint_eq(x.src.spans[2].start, 33);
    ck_assert_uint_eq(x.src.spans[2].end, 39);
    lexed_free(&x);
}
END_TEST

START_TEST(block_comment_span)
{
    struct lexed x;
    lex_text(&x, "a /* one\ntwo */ b");
    ck_assert_int_eq(x.errors, 0);
    ck_assert_uint_eq(x.src.n_spans, 1);
    ck_assert_uint_eq(x.src.spans[0].start, 2);
    ck_assert_uint_eq(x.src.spans[0].end, 15);
    ck_assert_int_eq(x.r.toks[1].kind, TK_IDENT); /* no newline token inside a comment */
    lexed_free(&x);
}
END_TEST

static void expect_error(const char *text, const char *want)
{
    struct lexed x;
    lex_text(&x, text);
    ck_assert_int_ge(x.errors, 1);
    char line[512];
    interp_diag_format(&x.d.items[0], line, sizeof line);
    ck_assert_str_eq(line, want);
    lexed_free(&x);
}

START_TEST(errors)
{
    expect_error("let s = \"abc", "t.jett:1:9: error: unterminated string literal");
    expect_error("x\n  \"a\\q\"", "t.jett:2:5: error: unknown escape sequence in string literal");
    expect_error("\"\\u{110000}\"", "t.jett:1:2: error: bad \\u{...} escape");
    expect_error("\"\\u41\"", "t.jett:1:2: error: expected '{' after \\u");
    expect_error("a $ b", "t.jett:1:3: error: unexpected character");
    expect_error("a /* never", "t.jett:1:3: error: unterminated block comment");
    expect_error("x = 99999999999999999999", "t.jett:1:5: error: integer literal too large");
    expect_error("b\"\\u{41}\"", "t.jett:1:3: error: unknown escape sequence in string literal");
}
END_TEST

START_TEST(every_error_reported)
{
    struct lexed x;
    lex_text(&x, "a $\nb @\n");
    ck_assert_int_eq(x.errors, 2);
    ck_assert_uint_eq(x.d.items[1].line, 2);
    ck_assert_uint_eq(x.d.items[1].column, 3);
    lexed_free(&x);
}
END_TEST

Suite *lexer_suite(void);
Suite *lexer_suite(void)
{
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("lexer");
    tcase_add_test(tc, token_kinds);
    tcase_add_test(tc, spans_and_values);
    tcase_add_test(tc, block_comment_span);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, every_error_reported);
    suite_add_tcase(s, tc);
    return s;
}
