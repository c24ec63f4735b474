/* Evaluator tests: every statement and expression, and every runtime
 * error with its message, location and Jett stack trace. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/interp_harness.h"

#define HEAD "namespace t.main\n"

/* Runs `fn main() { BODY }` and checks stdout. */
static void expect_out(const char *body, const char *want)
{
    char src[8192];
    snprintf(src, sizeof src, HEAD "fn main() {\n%s\n}\n", body);
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.loaded, "did not load: %s", r.diags);
    ck_assert_msg(r.result.termination == INTERP_RETURNED, "error: %s",
                  r.result.message ? r.result.message : "?");
    ck_assert_str_eq(r.out, want);
    harness_free(&r);
}

/* Runs a whole program and checks the runtime error message. */
static void expect_error_src(const char *src, const char *want)
{
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.loaded, "did not load: %s", r.diags);
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_int_eq(r.result.exit_code, 1);
    ck_assert_str_eq(r.result.message, want);
    harness_free(&r);
}

static void expect_error(const char *body, const char *want)
{
    char src[8192];
    snprintf(src, sizeof src, HEAD "fn main() {\n%s\n}\n", body);
    expect_error_src(src, want);
}

START_TEST(literals_print)
{
    expect_out("print(1, -2, 1.5, 2.0, 1e3, true, false, nil)",
               "1 -2 1.5 2.0 1000.0 true false nil\n");
    expect_out("print(\"a\\tb\\\"c\\\\\", \"\\u{e9}\")", "a\tb\"c\\ \xc3\xa9\n");
    expect_out("print([1, \"a\", [nil]], {\"k\": \"v\", \"n\": 2})",
               "[1, \"a\", [nil]] {\"k\": \"v\", \"n\": 2}\n");
    expect_out("print(b\"A\\n\")", "b\"A\\n\"\n");
    expect_out("print(0.1 + 0.2)", "0.30000000000000004\n");
    expect_out("print()", "\n");
    expect_out("print(1_000)", "1000\n");
}
END_TEST

START_TEST(arithmetic)
{
    expect_out("print(7 / 2, -7 / 2, 7 % 3, -7 % 3, 7 % -3)", "3 -3 1 -1 1\n");
    expect_out("print(7 / 2.0, 1 + 2 * 3, (1 + 2) * 3, 10 - 4 - 3)", "3.5 7 9 3\n");
    expect_out("print(5.5 % 2, 2 * 0.5, -(3))", "1.5 1.0 -3\n");
    expect_out("print(1 < 2, 2 <= 2, 3 > 4, 4 >= 5, 1 == 1.0, 1 != 2, \"a\" < \"b\")",
               "true true false false true true true\n");
    expect_out("print([1, [2]] == [1, [2]], {\"a\": 1} == {\"a\": 1}, [1] == [2], nil == false)",
               "true true false false\n");
    expect_out("print(\"ab\" + \"cd\", [1] + [2, 3], b\"x\" + b\"y\")", "abcd [1, 2, 3] b\"xy\"\n");
    expect_out("print(!true, true && false, false || true, 9223372036854775807)",
               "false false true 9223372036854775807\n");
}
END_TEST

START_TEST(short_circuit)
{
    /* the right operand is not evaluated: no division by zero */
    expect_out("print(false && 1 / 0 == 0, true || 1 / 0 == 0)", "false true\n");
}
END_TEST

START_TEST(statements)
{
    expect_out("let x = 1\nx = x + 1\nx += 10\nx -= 2\nx *= 3\nprint(x)", "30\n");
    expect_out("let s = \"a\"\ns += \"b\"\ns += \"c\"\nprint(s)", "abc\n");
    expect_out("let l = [1, 2]\nl[0] = 5\nl[1] += 3\nprint(l)", "[5, 5]\n");
    expect_out("let m = {}\nm[\"a\"] = 1\nm[\"a\"] += 1\nm[\"b\"] = 0\nprint(m)",
               "{\"a\": 2, \"b\": 0}\n");
    expect_out("let x = 5\nif x > 3 {\n print(\"big\")\n} else if x > 1 {\n print(\"mid\")\n} else "
               "{\n print(\"small\")\n}",
               "big\n");
    expect_out("let x = 2\nif x > 3 {\n print(\"big\")\n}\nelse if x > 1 {\n print(\"mid\")\n}",
               "mid\n");
    expect_out("let i = 0\nwhile i < 10 {\n i += 1\n if i == 2 {\n continue\n }\n if i == 4 {\n "
               "break\n }\n print(i)\n}",
               "1\n3\n");
    expect_out("for i in 0..3 {\n print(i)\n}\nfor i in 3..1 {\n print(i)\n}", "0\n1\n2\n");
    expect_out("for x in [\"a\", \"b\"] {\n print(x)\n}", "a\nb\n");
    expect_out("let m = {\"z\": 1, \"a\": 2, \"m\": 3}\nfor k in m {\n print(k, m[k])\n}",
               "z 1\na 2\nm 3\n");
    expect_out(
        "for i in 0..5 {\n if i == 1 {\n continue\n }\n if i == 3 {\n break\n }\n print(i)\n}",
        "0\n2\n");
    expect_out("let x = 1\nif true {\n let x = 2\n print(x)\n}\nprint(x)", "2\n1\n");
}
END_TEST

START_TEST(functions)
{
    const char *src = HEAD "fn add(a: int, b: int) -> int {\n return a + b\n}\n"
                           "fn apply(f: fn, x) {\n return f(x, 1)\n}\n"
                           "fn nothing() {\n}\n"
                           "fn main() {\n print(add(1, 2), apply(add, 41), nothing())\n"
                           " let g = add\n print(g(2, 2), g)\n let l = len\n print(l([1]))\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.out, "3 42 nil\n4 <fn add>\n1\n");
    harness_free(&r);
}
END_TEST

START_TEST(globals_and_init_order)
{
    const char *src = HEAD "let counter = 0\nconst BASE: int = 10\nlet table = {\"k\": BASE * 2}\n"
                           "fn bump() {\n counter += 1\n return counter\n}\n"
                           "fn main() {\n bump()\n bump()\n print(counter, BASE, table)\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.out, "2 10 {\"k\": 20}\n");
    harness_free(&r);
}
END_TEST

START_TEST(main_exit_codes)
{
    struct harness_run r;
    harness_run(&r, HEAD "fn main() -> int {\n return 7\n}\n");
    ck_assert_int_eq(r.result.termination, INTERP_RETURNED);
    ck_assert_int_eq(r.result.exit_code, 7);
    harness_free(&r);
    harness_run(&r, HEAD "fn main() {\n}\n");
    ck_assert_int_eq(r.result.exit_code, 0);
    harness_free(&r);
    expect_error_src(HEAD "fn main() {\n return 256\n}\n",
                     "main.jett:2:1: runtime error: main returned 256, outside 0..255");
}
END_TEST

START_TEST(try_catch)
{
    expect_out("try {\n fail(\"boom\")\n print(\"no\")\n} catch e {\n print(\"caught\", "
               "e)\n}\nprint(\"after\")",
               "caught boom\nafter\n");
    expect_out("try {\n let x = 1 / 0\n} catch e {\n print(e)\n}", "division by zero\n");
    expect_out("try {\n try {\n fail(1)\n } catch a {\n fail(\"again \" + a)\n }\n} catch b {\n "
               "print(b)\n}",
               "again 1\n");
}
END_TEST

START_TEST(try_catch_across_calls)
{
    const char *src =
        HEAD "fn deep(n) {\n if n == 0 {\n fail(\"bottom\")\n }\n return deep(n - 1)\n}\n"
             "fn main() {\n try {\n deep(50)\n } catch e {\n print(e)\n }\n"
             " print(deep == deep)\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.out, "bottom\ntrue\n");
    harness_free(&r);
}
END_TEST

START_TEST(runtime_errors)
{
    expect_error("fail(\"custom\")", "main.jett:3:1: runtime error: custom");
    expect_error("let x = 1 / 0", "main.jett:3:9: runtime error: division by zero");
    expect_error("let x = 5 % 0", "main.jett:3:9: runtime error: remainder by zero");
    expect_error("let x = 1.0 / 0", "main.jett:3:9: runtime error: division by zero");
    expect_error("let x = 9223372036854775807 + 1",
                 "main.jett:3:9: runtime error: integer overflow in 9223372036854775807 + 1");
    expect_error("let m = -9223372036854775807 - 1\nlet x = m / -1",
                 "main.jett:4:9: runtime error: integer overflow in -9223372036854775808 / -1");
    expect_error("let x = 4611686018427387904 * 2",
                 "main.jett:3:9: runtime error: integer overflow in 4611686018427387904 * 2");
    expect_error("let l = [1, 2]\nprint(l[2])",
                 "main.jett:4:7: runtime error: index 2 out of range (length 2)");
    expect_error("let l = [1]\nl[-1] = 0",
                 "main.jett:4:1: runtime error: index -1 out of range (length 1)");
    expect_error("let m = {\"a\": 1}\nprint(m[\"b\"])",
                 "main.jett:4:7: runtime error: missing map key \"b\"");
    expect_error("let x = 1 + \"a\"",
                 "main.jett:3:9: runtime error: cannot apply '+' to int and string");
    expect_error("let x = [1] < [2]",
                 "main.jett:3:9: runtime error: cannot compare list and list with '<'");
    expect_error("if 1 {\n}", "main.jett:3:4: runtime error: condition must be bool, got int");
    expect_error("let x = !1", "main.jett:3:9: runtime error: '!' expects bool, got int");
    expect_error("let x = 1 && true",
                 "main.jett:3:9: runtime error: '&&' expects bool operands, got int");
    expect_error(
        "let x: int = \"a\" + \"b\"",
        "main.jett:3:14: runtime error: type mismatch: 'x' is int but the value is string");
    expect_error("for x in 5 {\n}", "main.jett:3:10: runtime error: cannot iterate over int");
    expect_error("let f = 3\nf()", "main.jett:4:1: runtime error: cannot call int");
    expect_error("let x = \"abc\"[1.0]",
                 "main.jett:3:9: runtime error: index must be int, got float");
    expect_error("let x = 5[0]", "main.jett:3:9: runtime error: cannot index int");
    expect_error("let x = -(-9223372036854775807 - 1)",
                 "main.jett:3:9: runtime error: integer overflow in -(-9223372036854775808)");
}
END_TEST

START_TEST(annotation_errors_at_runtime)
{
    expect_error_src(HEAD "fn f(a: int) {\n}\nfn main() {\n let v = \"s\"\n f(v)\n}\n",
                     "main.jett:6:2: runtime error: argument 'a' of f must be int, got string");
    expect_error_src(HEAD "fn f(a) -> int {\n return a\n}\nfn main() {\n f(\"s\")\n}\n",
                     "main.jett:3:2: runtime error: f must return int, got string");
}
END_TEST

START_TEST(stack_trace)
{
    const char *src = HEAD "fn inner(x) {\n return x / 0\n}\n"
                           "fn outer() {\n return inner(1)\n}\n"
                           "fn main() {\n outer()\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.result.message, "main.jett:3:9: runtime error: division by zero");
    ck_assert_str_eq(r.result.trace, "  at t.main.inner (main.jett:3:9)\n"
                                     "  at t.main.outer (main.jett:6:9)\n"
                                     "  at t.main.main (main.jett:9:2)\n");
    harness_free(&r);
}
END_TEST

START_TEST(error_in_init_frame)
{
    const char *src = HEAD "let broken = 1 / 0\nfn main() {\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.result.message, "main.jett:2:14: runtime error: division by zero");
    ck_assert_str_eq(r.result.trace, "  at t.main.<init> (main.jett:2:14)\n");
    harness_free(&r);
}
END_TEST

START_TEST(recursion_limit)
{
    /* 100,000 deep: the documented limit (10,000 calls) raises an error */
    const char *src =
        HEAD "fn down(n) {\n if n == 0 {\n return 0\n }\n return 1 + down(n - 1)\n}\n"
             "fn main() {\n print(down(9000))\n try {\n down(100000)\n } catch e {\n print(e)\n }\n"
             " down(100000)\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.out, "9000\nstack overflow: more than 10000 nested calls\n");
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.result.message,
                     "main.jett:6:13: runtime error: stack overflow: more than 10000 nested calls");
    /* main and 9,999 frames of down, all at the same call: the first 10
     * of those, then one line for the other 9,989 */
    char want[1024] = "";
    for (int i = 0; i < 10; i++)
        strcat(want, "  at t.main.down (main.jett:6:13)\n");
    strcat(want, "  \u2026 9,989 more frames of t.main.down\n  at t.main.main (main.jett:15:2)\n");
    ck_assert_str_eq(r.result.trace, want);
    harness_free(&r);
}
END_TEST

/* Only identical frames in a row fold: mutual recursion alternates two
 * lines, and a run of exactly 10 is shown whole. */
START_TEST(trace_folds_identical_runs_only)
{
    const char *src = HEAD "fn a(n) {\n  return b(n)\n}\nfn b(n) {\n  if n == 0 {\n"
                           "    return 1 / 0\n  }\n  return a(n - 1)\n}\n"
                           "fn c(n) {\n  if n == 0 {\n    return a(2)\n  }\n  return c(n - 1)\n}\n"
                           "fn main() {\n  c(10)\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_str_eq(r.result.message, "main.jett:7:12: runtime error: division by zero");
    /* b(0) fails; above it a, b, a, b, a (from c(0)'s a(2)); then c(0)
     * at its a(2) call, c(1)..c(10) at their c(n - 1) call (10 identical
     * frames, all shown), main */
    char want[2048] = "  at t.main.b (main.jett:7:12)\n";
    for (int i = 0; i < 2; i++)
        strcat(want, "  at t.main.a (main.jett:3:10)\n  at t.main.b (main.jett:9:10)\n");
    strcat(want, "  at t.main.a (main.jett:3:10)\n  at t.main.c (main.jett:13:12)\n");
    for (int i = 0; i < 10; i++)
        strcat(want, "  at t.main.c (main.jett:15:10)\n");
    strcat(want, "  at t.main.main (main.jett:18:3)\n");
    ck_assert_str_eq(r.result.trace, want);
    harness_free(&r);
}
END_TEST

START_TEST(runtime_stack_guard)
{
    /* each call nests 150 additions: the C stack runs out before 10,000
     * calls, which is a runtime error, not a crash */
    char src[8192] = HEAD "fn deep(n) {\n  if n == 0 {\n    return 0\n  }\n  return ";
    for (int i = 0; i < 150; i++)
        strcat(src, "1 + (");
    strcat(src, "deep(n - 1)");
    for (int i = 0; i < 150; i++)
        strcat(src, ")");
    strcat(src, "\n}\nfn main() {\n  try {\n    deep(9000)\n  } catch e {\n    print(e)\n  }\n"
                "  print(deep(10))\n}\n");
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_int_eq(r.result.termination, INTERP_RETURNED);
    ck_assert_str_eq(r.out, "stack overflow: the runtime stack is exhausted\n1500\n");
    harness_free(&r);
}
END_TEST

START_TEST(secrets)
{
    expect_out(
        "let t = secret(\"hunter2\")\nprint(t, [t], str(t))\nprint(t == \"hunter2\", t != \"x\")",
        "<secret> [<secret>] <secret>\ntrue true\n");
    expect_error("let t = secret(\"k\")\nlet s = \"Bearer \" + t",
                 "main.jett:4:9: runtime error: a secret cannot be used with '+'");
    expect_error("let t = secret(\"k\")\nlet n = len(t)",
                 "main.jett:4:9: runtime error: len: argument 1 must be list, got secret string");
    expect_out("let t: secret<string> = \"plain\"\nprint(t)", "<secret>\n");
    /* map keys lose no flag: a secret key is refused, a secret value prints as <secret> */
    expect_error("let t = secret(\"k\")\nlet m = {}\nm[t] = 1",
                 "main.jett:5:1: runtime error: a secret cannot be a map key");
    expect_error("let t = secret(\"k\")\nlet m = {t: 1}",
                 "main.jett:4:10: runtime error: a secret cannot be a map key");
    expect_out("let m = {\"k\": secret(1)}\nprint(m, m[\"k\"] == 1)", "{\"k\": <secret>} true\n");
}
END_TEST

START_TEST(more_semantics)
{
    /* nested targets, iteration over a list that grows, function values with a wrong arity */
    expect_out("let g = [[1, 2], [3]]\ng[0][1] += 5\ng[1][0] = \"x\"\nprint(g)",
               "[[1, 7], [\"x\"]]\n");
    expect_out("let l = [1, 2]\nfor x in l {\n if x < 3 {\n push(l, x + 2)\n }\n print(x)\n}",
               "1\n2\n3\n4\n");
    expect_out("let m = {\"a\": {\"b\": 1}}\nm[\"a\"][\"b\"] *= 7\nprint(m)",
               "{\"a\": {\"b\": 7}}\n");
    expect_out("let total = 0\nfor i in -3..3 {\n total += i\n}\nprint(total)", "-3\n");
    expect_error_src(HEAD "fn two(a, b) {\n}\nfn main() {\n let f = two\n f(1)\n}\n",
                     "main.jett:6:2: runtime error: two expects 2 arguments, got 1");
    expect_error("let f = len\nf(1, 2)",
                 "main.jett:4:1: runtime error: len expects 1 argument, got 2");
}
END_TEST

START_TEST(main_args)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", HEAD "fn main(args: list) {\n print(len(args), args)\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    const char *args[] = {"one", "two words"};
    struct harness_run r;
    harness_run_args(&r, path, 0, args, 2);
    ck_assert_int_eq(r.result.termination, INTERP_RETURNED);
    ck_assert_str_eq(r.out, "2 [\"one\", \"two words\"]\n");
    harness_free(&r);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

Suite *eval_suite(void);
Suite *eval_suite(void)
{
    Suite *s = suite_create("eval");
    TCase *tc = tcase_create("eval");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, literals_print);
    tcase_add_test(tc, arithmetic);
    tcase_add_test(tc, short_circuit);
    tcase_add_test(tc, statements);
    tcase_add_test(tc, functions);
    tcase_add_test(tc, globals_and_init_order);
    tcase_add_test(tc, main_exit_codes);
    tcase_add_test(tc, try_catch);
    tcase_add_test(tc, try_catch_across_calls);
    tcase_add_test(tc, runtime_errors);
    tcase_add_test(tc, annotation_errors_at_runtime);
    tcase_add_test(tc, stack_trace);
    tcase_add_test(tc, error_in_init_frame);
    tcase_add_test(tc, recursion_limit);
    tcase_add_test(tc, runtime_stack_guard);
    tcase_add_test(tc, trace_folds_identical_runs_only);
    tcase_add_test(tc, secrets);
    tcase_add_test(tc, more_semantics);
    tcase_add_test(tc, main_args);
    suite_add_tcase(s, tc);
    return s;
}
