/* Parser tests: node spans for declarations, statements and calls,
 * every construct accepted, and syntax errors with their positions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diag.h"
#include "agent/parser.h"
#include "tests/interp_harness.h"

struct parsed {
    struct interp_source src;
    struct arena arena;
    struct parse_consts consts;
    struct interp_diags d;
    struct ast_file f;
    int errors;
};

static void parse_text(struct parsed *x, const char *text)
{
    memset(x, 0, sizeof *x);
    x->src.path = strdup("t.jett");
    x->src.text = strdup(text);
    x->src.len = (uint32_t)strlen(text);
    source_index_lines(&x->src);
    x->errors = parse_source(&x->src, &x->arena, &x->consts, &x->d, &x->f);
}

static void parsed_free(struct parsed *x)
{
    arena_free(&x->arena);
    parse_consts_free(&x->consts);
    interp_diags_free(&x->d);
    free(x->src.path);
    free(x->src.text);
    free(x->src.line_starts);
    free(x->src.spans);
}

START_TEST(file_structure_and_spans)
{
    struct parsed x;
    parse_text(&x, "namespace a.b\nimport std.text\nlet g = 1\nconst C: int = 2\n"
                   "fn f(x: int, y) -> list {\n  return [x, y]\n}\n");
    ck_assert_int_eq(x.errors, 0);
    ck_assert_str_eq(x.f.ns, "a.b");
    ck_assert_uint_eq(x.f.n_imports, 1);
    ck_assert_str_eq(x.f.imports[0].name, "std.text");
    ck_assert_str_eq(x.f.imports[0].last, "text");
    ck_assert_uint_eq(x.f.n_globals, 2);
    ck_assert_int_eq(x.f.globals[1]->konst, 1);
    ck_assert_int_eq(x.f.globals[1]->u.let.type.base, T_INT);
    ck_assert_uint_eq(x.f.n_fns, 1);
    const struct ast_fn *fn = x.f.fns[0];
    ck_assert_str_eq(fn->name, "f");
    ck_assert_uint_eq(fn->n_params, 2);
    ck_assert_int_eq(fn->params[0].type.base, T_INT);
    ck_assert_int_eq(fn->params[1].type.base, T_NONE);
    ck_assert_int_eq(fn->ret.base, T_LIST);
    /* "fn f(x: int, y) -> list" starts at 57 and ends at 80 */
    ck_assert_uint_eq(fn->start, 57);
    ck_assert_uint_eq(fn->sig_end, 80);
    const struct ast *ret = fn->body->u.list.items[0];
    ck_assert_int_eq(ret->kind, S_RETURN);
    ck_assert_uint_eq(ret->start, 85);
    ck_assert_uint_eq(ret->end, 98);
    ck_assert_int_eq(ret->u.expr->kind, E_LIST);
    ck_assert_uint_eq(ret->u.expr->start, 92);
    parsed_free(&x);
}
END_TEST

START_TEST(call_and_operator_spans)
{
    struct parsed x;
    parse_text(&x, "namespace a\nfn m() {\n  x = std.text.up(a[1], -b) * 2\n}\n");
    ck_assert_int_eq(x.errors, 0);
    const struct ast *st = x.f.fns[0]->body->u.list.items[0];
    ck_assert_int_eq(st->kind, S_ASSIGN);
    const struct ast *mul = st->u.assign.value;
    ck_assert_int_eq(mul->kind, E_BIN);
    ck_assert_int_eq(mul->op, OP_MUL);
    const struct ast *call = mul->u.bin.a;
    ck_assert_int_eq(call->kind, E_CALL);
    /* the call "std.text.up(a[1], -b)" spans [27, 48) */
    ck_assert_uint_eq(call->start, 27);
    ck_assert_uint_eq(call->end, 48);
    ck_assert_int_eq(call->u.call.callee->kind, E_DOTTED);
    ck_assert_uint_eq(call->u.call.callee->u.dotted.n, 3);
    ck_assert_uint_eq(call->u.call.n, 2);
    ck_assert_int_eq(call->u.call.args[0]->kind, E_INDEX);
    ck_assert_int_eq(call->u.call.args[1]->kind, E_NEG);
    parsed_free(&x);
}
END_TEST

START_TEST(precedence)
{
    struct parsed x;
    parse_text(&x, "namespace a\nfn m() {\n  let v = a || b && c == 1 + 2 * 3\n}\n");
    ck_assert_int_eq(x.errors, 0);
    const struct ast *e = x.f.fns[0]->body->u.list.items[0]->u.let.init;
    ck_assert_int_eq(e->kind, E_OR);
    ck_assert_int_eq(e->u.bin.b->kind, E_AND);
    const struct ast *eq = e->u.bin.b->u.bin.b;
    ck_assert_int_eq(eq->op, OP_EQ);
    ck_assert_int_eq(eq->u.bin.b->op, OP_ADD);
    ck_assert_int_eq(eq->u.bin.b->u.bin.b->op, OP_MUL);
    parsed_free(&x);
}
END_TEST

START_TEST(multiline_expressions)
{
    struct parsed x;
    parse_text(&x,
               "namespace a\nfn m() {\n  let v = [\n    1,\n    2,\n  ]\n  let m = {\n \"k\": 1,\n"
               "  \"j\": 2\n}\n  let s = 1 +\n    2\n  f(\n  1,\n  2\n  )\n}\n");
    ck_assert_int_eq(x.errors, 0);
    ck_assert_uint_eq(x.f.fns[0]->body->u.list.n, 4);
    parsed_free(&x);
}
END_TEST

static void expect_diag(const char *text, const char *want)
{
    char *d = harness_load_diags(text);
    ck_assert_str_eq(d, want);
    free(d);
}

START_TEST(syntax_errors)
{
    expect_diag("fn main() {\n}\n",
                "main.jett:1:1: error: a source file must start with 'namespace NAME'\n");
    expect_diag("namespace a\nfn main() {\n  let = 3\n}\n",
                "main.jett:3:7: error: expected a name, found '='\n");
    expect_diag("namespace a\nfn main() {\n  let x = \n}\n",
                "main.jett:4:1: error: expected an expression, found '}'\n");
    expect_diag("namespace a\nfn main() {\n  print(1 2)\n}\n",
                "main.jett:3:11: error: expected ')', found integer\n");
    expect_diag("namespace a\nfn main() {\n  1 + 2 = 3\n}\n",
                "main.jett:3:9: error: cannot assign to this expression\n");
    expect_diag("namespace a\nfn main() {\n  let x: widget = 1\n}\n",
                "main.jett:3:10: error: unknown type 'widget'\n");
    expect_diag("namespace a\nfn main() {\n  try {\n  }\n}\n",
                "main.jett:5:1: error: expected 'catch', found '}'\n");
    expect_diag("namespace a\nx = 1\nfn main() {\n}\n",
                "main.jett:2:1: error: expected a declaration (fn, let, const or import), found "
                "identifier\n");
    expect_diag("namespace a\nfn main() {\n  let x = 1 let y = 2\n}\n",
                "main.jett:3:13: error: expected end of statement, found 'let'\n");
    /* two blocks are left open: both are reported */
    expect_diag("namespace a\nfn main() {\n  if true {\n",
                "main.jett:4:1: error: expected '}', found end of file\n"
                "main.jett:4:1: error: expected '}', found end of file\n");
}
END_TEST

START_TEST(limits_and_types)
{
    expect_diag("namespace a\nfn main() -> 5 {\n}\n",
                "main.jett:2:14: error: expected a type, found integer\n");
    expect_diag("namespace a\nfn main() {\n  let x: secret<int = 1\n}\n",
                "main.jett:3:21: error: expected '>', found '='\n");
    char src[8192] = "namespace a\nfn f(";
    for (int i = 0; i < 256; i++)
        sprintf(src + strlen(src), "%sp%d", i ? ", " : "", i);
    strcat(src, ") {\n}\nfn main() {\n}\n");
    char *d = harness_load_diags(src);
    ck_assert_msg(strstr(d, "error: too many parameters\n") != NULL, "%s", d);
    free(d);
    strcpy(src, "namespace a\nfn main() {\n");
    for (int i = 0; i < 201; i++)
        strcat(src, "if true {\n");
    d = harness_load_diags(src);
    /* blocks and the expressions inside them share the nesting limit */
    ck_assert_ptr_nonnull(strstr(d, "main.jett:202:4: error: expression nested too deeply\n"));
    free(d);
    strcpy(src, "namespace a\nfn main() {\n  x");
    for (int i = 0; i < 64; i++)
        strcat(src, ".y");
    strcat(src, "()\n}\n");
    d = harness_load_diags(src);
    ck_assert_msg(strstr(d, "error: qualified name too long\n") != NULL, "%s", d);
    free(d);
}
END_TEST

START_TEST(all_errors_reported)
{
    expect_diag("namespace a\nfn main() {\n  let = 1\n  let y = )\n  print(y)\n}\nfn g( {\n}\n",
                "main.jett:3:7: error: expected a name, found '='\n"
                "main.jett:4:11: error: expected an expression, found ')'\n"
                "main.jett:7:7: error: expected a parameter name, found '{'\n");
}
END_TEST

START_TEST(nesting_limit)
{
    char src[4096] = "namespace a\nfn main() {\n  let x = ";
    for (int i = 0; i < 300; i++)
        strcat(src, "(");
    strcat(src, "1\n}\n");
    char *d = harness_load_diags(src);
    ck_assert_msg(strstr(d, "error: expression nested too deeply") != NULL, "%s", d);
    free(d);
}
END_TEST

/* An else-if chain nests like blocks (PARSE_MAX_DEPTH): main's body is
 * one level, each `else if` one, its condition or block one more, so 198
 * links parse and 120,000 (a source just under 2 MiB) are refused
 * without exhausting the parser's stack. */
START_TEST(else_if_chain_limit)
{
    for (int round = 0; round < 2; round++) {
        unsigned links = round == 0 ? 198 : 120000;
        size_t cap = 64 + 20 * (size_t)links;
        char *src = malloc(cap);
        size_t n = (size_t)snprintf(src, cap, "namespace a\nfn main() {\n  if true {\n  }");
        for (unsigned i = 0; i < links; i++)
            n += (size_t)snprintf(src + n, cap - n, " else if true {}");
        snprintf(src + n, cap - n, "\n}\n");
        char *d = harness_load_diags(src);
        if (round == 0)
            ck_assert_str_eq(d, "");
        else
            ck_assert_msg(strstr(d, "error: expression nested too deeply\n") != NULL, "%.500s", d);
        free(d);
        free(src);
    }
}
END_TEST

/* Blocks count toward the 1000 levels of a tree: 150 nested whiles are 2
 * levels each (statement and block) around a chain of N terms, inside
 * main's body, so N = 1000 - 301 - 1 (the let) runs and N + 1 does not:
 * the error is at the outermost while, the statement main's body cannot
 * hold. */
START_TEST(height_limit_counts_blocks)
{
    for (int round = 0; round < 2; round++) {
        unsigned terms = 1000 - 301 - 1 + (unsigned)round;
        size_t cap = 4096 + 4 * (size_t)terms;
        char *src = malloc(cap);
        size_t n = (size_t)snprintf(src, cap, "namespace a\nfn main() {\n");
        for (int i = 0; i < 150; i++)
            n += (size_t)snprintf(src + n, cap - n, "while true {\n");
        n += (size_t)snprintf(src + n, cap - n, "let x = 1");
        for (unsigned i = 1; i < terms; i++)
            n += (size_t)snprintf(src + n, cap - n, "+1");
        n += (size_t)snprintf(src + n, cap - n, "\nreturn x %% 256\n");
        for (int i = 0; i < 150; i++)
            n += (size_t)snprintf(src + n, cap - n, "}\n");
        snprintf(src + n, cap - n, "}\n");
        struct harness_run r;
        harness_run(&r, src);
        if (round == 0) {
            ck_assert_msg(r.loaded, "%s", r.diags);
            ck_assert_int_eq(r.result.exit_code, (int)terms % 256);
        } else {
            ck_assert_str_eq(r.diags,
                             "main.jett:3:1: error: expression or block too deep: more than 1000 "
                             "levels\n");
        }
        harness_free(&r);
        free(src);
    }
}
END_TEST

Suite *parser_suite(void);
Suite *parser_suite(void)
{
    Suite *s = suite_create("parser");
    TCase *tc = tcase_create("parser");
    tcase_add_test(tc, file_structure_and_spans);
    tcase_add_test(tc, call_and_operator_spans);
    tcase_add_test(tc, precedence);
    tcase_add_test(tc, multiline_expressions);
    tcase_add_test(tc, syntax_errors);
    tcase_add_test(tc, all_errors_reported);
    tcase_add_test(tc, limits_and_types);
    tcase_add_test(tc, nesting_limit);
    tcase_add_test(tc, else_if_chain_limit);
    tcase_add_test(tc, height_limit_counts_blocks);
    suite_add_tcase(s, tc);
    return s;
}
