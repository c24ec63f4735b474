/* Standard library tests: every function of std.text, std.list, std.map
 * and std.math, through programs that import them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/interp_harness.h"

static void expect_out(const char *imports, const char *body, const char *want)
{
    char src[8192];
    snprintf(src, sizeof src, "namespace t.main\n%s\nfn main() {\n%s\n}\n", imports, body);
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.loaded, "did not load: %s", r.diags);
    ck_assert_msg(r.result.termination == INTERP_RETURNED, "%s",
                  r.result.message ? r.result.message : "?");
    ck_assert_str_eq(r.out, want);
    harness_free(&r);
}

START_TEST(text)
{
    const char *imp = "import std.text";
    expect_out(imp,
               "print(text.starts_with(\"hello\", \"he\"), text.starts_with(\"h\", \"he\"), "
               "text.ends_with(\"hello\", \"lo\"), text.ends_with(\"o\", \"lo\"))",
               "true false true false\n");
    expect_out(
        imp,
        "print(\"[\" + text.trim(\"  a b \\n\") + \"]\", \"[\" + text.trim_left(\" x \") + \"]\", "
        "\"[\" + text.trim_right(\" x \") + \"]\", \"[\" + text.trim(\"   \") + \"]\")",
        "[a b] [x ] [ x] []\n");
    expect_out(imp,
               "print(text.replace(\"a-b-c\", \"-\", \"+\"), text.count(\"banana\", \"an\"), "
               "text.pad_left(\"7\", 3, \"0\"), text.pad_right(\"ab\", 4, \".\"), "
               "text.pad_left(\"long\", 2, \" \"))",
               "a+b+c 2 007 ab.. long\n");
    expect_out(imp,
               "print(text.lines(\"a\\nb\"), text.words(\"  one two\\tthree \"), text.words(\"\"))",
               "[\"a\", \"b\"] [\"one\", \"two\", \"three\"] []\n");
    expect_out(imp,
               "print(text.is_digits(\"0123\"), text.is_digits(\"12a\"), text.is_digits(\"\"))",
               "true false false\n");
}
END_TEST

START_TEST(list)
{
    const char *imp =
        "import std.list\nfn double(x) {\n  return x * 2\n}\nfn odd(x) {\n  return x % 2 == 1\n}\n"
        "fn add(a, b) {\n  return a + b\n}";
    expect_out(imp,
               "let l = list.range(1, 6)\nprint(l, list.map(l, double), list.filter(l, odd), "
               "list.reduce(l, add, 100), l)",
               "[1, 2, 3, 4, 5] [2, 4, 6, 8, 10] [1, 3, 5] 115 [1, 2, 3, 4, 5]\n");
    expect_out(
        imp,
        "print(list.reverse([1, 2, 3]), list.sum([1, 2.5]), list.index_of([\"a\", \"b\"], \"b\"), "
        "list.index_of([], 1), list.flatten([[1], [], [2, 3]]))",
        "[3, 2, 1] 3.5 1 -1 [1, 2, 3]\n");
    expect_out(imp,
               "print(list.take([1, 2, 3], 2), list.take([1], 5), list.drop([1, 2, 3], 2), "
               "list.drop([1], 3))",
               "[1, 2] [1] [3] []\n");
}
END_TEST

START_TEST(map)
{
    const char *imp = "import std.map";
    expect_out(imp,
               "let m = {\"a\": 1}\nprint(map.get(m, \"a\", 0), map.get(m, \"z\", 0), "
               "map.merge({\"a\": 1, \"b\": 2}, {\"b\": 3, \"c\": 4}))",
               "1 0 {\"a\": 1, \"b\": 3, \"c\": 4}\n");
    expect_out(
        imp,
        "let it = map.items({\"x\": 1, \"y\": 2})\nprint(it, map.from_items(it), "
        "map.count([\"a\", \"b\", \"a\"]), map.sorted_keys({\"b\": 1, \"a\": 2}))",
        "[[\"x\", 1], [\"y\", 2]] {\"x\": 1, \"y\": 2} {\"a\": 2, \"b\": 1} [\"a\", \"b\"]\n");
}
END_TEST

START_TEST(math)
{
    const char *imp = "import std.math";
    expect_out(imp,
               "print(math.square(7), math.pow(2, 10), math.pow(1.5, 2), math.pow(3, 0), "
               "math.gcd(12, -18), "
               "math.clamp(15, 0, 10), math.clamp(-1, 0, 10), math.sum([1, 2, 3]), math.PI > 3.14)",
               "49 1024 2.25 1 6 10 0 6 true\n");
    struct harness_run r;
    harness_run(&r, "namespace t.main\nimport std.math\nfn main() {\n  math.pow(2, -1)\n}\n");
    ck_assert_str_eq(r.result.message,
                     "stdlib/math.jett:14:9: runtime error: pow: negative exponent");
    ck_assert_str_eq(
        r.result.trace,
        "  at std.math.pow (stdlib/math.jett:14:9)\n  at t.main.main (main.jett:4:3)\n");
    harness_free(&r);
}
END_TEST

Suite *stdlib_suite(void);
Suite *stdlib_suite(void)
{
    Suite *s = suite_create("stdlib");
    TCase *tc = tcase_create("stdlib");
    tcase_add_test(tc, text);
    tcase_add_test(tc, list);
    tcase_add_test(tc, map);
    tcase_add_test(tc, math);
    suite_add_tcase(s, tc);
    return s;
}
