/* Builtin tests: each builtin's results and its runtime errors, and the
 * debug rows and log records handed to the host. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/interp_harness.h"

#define HEAD "namespace t.main\n"

static void expect_out(const char *body, const char *want)
{
    char src[8192];
    snprintf(src, sizeof src, HEAD "fn main() {\n%s\n}\n", body);
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.loaded, "did not load: %s", r.diags);
    ck_assert_msg(r.result.termination == INTERP_RETURNED, "%s: %s", body,
                  r.result.message ? r.result.message : "?");
    ck_assert_str_eq(r.out, want);
    harness_free(&r);
}

static void expect_error(const char *body, const char *want)
{
    char src[8192];
    snprintf(src, sizeof src, HEAD "fn main() {\n%s\n}\n", body);
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.loaded, "did not load: %s", r.diags);
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.result.message, want);
    harness_free(&r);
}

START_TEST(output)
{
    struct harness_run r;
    harness_run(&r, HEAD
                "fn main() {\n  print(\"a\", 1)\n  eprint(\"e\", [\"q\"])\n  print(\"b\")\n}\n");
    ck_assert_str_eq(r.out, "a 1\nb\n");
    ck_assert_str_eq(r.err, "e [\"q\"]\n");
    harness_free(&r);
}
END_TEST

/* sleep(ms) lasts at least ms milliseconds: 100 sleeps of 3 ms take at
 * least 300 ms by now_ms. */
START_TEST(sleep_lasts_its_milliseconds)
{
    expect_out("let t0 = now_ms()\nfor i in 0..100 {\n  sleep(3)\n}\nlet t = now_ms() - t0\n"
               "print(t >= 300, t < 3000)",
               "true true\n");
    expect_error("sleep(-1)", "main.jett:3:1: runtime error: sleep: negative duration -1");
}
END_TEST

START_TEST(lists)
{
    /* the list is printed after pop ran: arguments share the one list */
    expect_out("let l = [1]\npush(l, 2)\nprint(l, len(l), pop(l), l)", "[1] 2 2 [1]\n");
    expect_out("let l = [1, 3]\ninsert(l, 1, 2)\ninsert(l, 3, 4)\ninsert(l, 0, 0)\nprint(l)",
               "[0, 1, 2, 3, 4]\n");
    expect_out("let l = [\"a\", \"b\", \"c\"]\nprint(remove(l, 1), l)", "b [\"a\", \"c\"]\n");
    expect_out("let l = [5, 6, 7, 8]\nprint(slice(l, 1, 3), slice(l, 2), slice(l, 4))",
               "[6, 7] [7, 8] []\n");
    expect_out("print(contains([1, \"x\"], \"x\"), contains([1], 2), contains(\"hello\", \"ell\"))",
               "true false true\n");
    expect_error("pop([])", "main.jett:3:1: runtime error: pop: the list is empty");
    expect_error("insert([1], 3, 0)",
                 "main.jett:3:1: runtime error: insert: index 3 out of range (length 1)");
    expect_error("remove([1], 1)",
                 "main.jett:3:1: runtime error: remove: index 1 out of range (length 1)");
    expect_error("remove([1, 2, 3], 5)",
                 "main.jett:3:1: runtime error: remove: index 5 out of range (length 3)");
    expect_error("remove([1, 2, 3], -1)",
                 "main.jett:3:1: runtime error: remove: index -1 out of range (length 3)");
    expect_error("slice([1], 0, 2)",
                 "main.jett:3:1: runtime error: slice: range 0..2 out of bounds (length 1)");
    expect_error("push(\"s\", 1)",
                 "main.jett:3:1: runtime error: push: argument 1 must be list, got string");
    expect_error("len(3)", "main.jett:3:1: runtime error: len: cannot take the length of int");
}
END_TEST

START_TEST(sorting)
{
    expect_out("print(sort([3, 1, 2]), sort([\"b\", \"a\", \"c\"]), sort([2.5, 1, -3]))",
               "[1, 2, 3] [\"a\", \"b\", \"c\"] [-3, 1, 2.5]\n");
    /* stable: equal keys keep their order */
    const char *src =
        HEAD "fn by_first(a, b) {\n  return a[0] < b[0]\n}\n"
             "fn desc(a, b) {\n  return b - a\n}\n"
             "fn main() {\n  let l = [[2, \"a\"], [1, \"b\"], [2, \"c\"], [1, \"d\"], [0, \"e\"]]\n"
             "  sort(l, by_first)\n  print(l)\n  print(sort([1, 3, 2], desc))\n"
             "  let big = []\n  for i in 0..100 {\n    push(big, (i * 37) % 100)\n  }\n"
             "  sort(big)\n  let ok = true\n  for i in 0..100 {\n    ok = ok && big[i] == i\n  }\n"
             "  print(ok)\n}\n";
    struct harness_run r;
    harness_run(&r, src);
    ck_assert_msg(r.result.termination == INTERP_RETURNED, "%s", r.result.message);
    ck_assert_str_eq(
        r.out, "[[0, \"e\"], [1, \"b\"], [1, \"d\"], [2, \"a\"], [2, \"c\"]]\n[3, 2, 1]\ntrue\n");
    harness_free(&r);
    expect_error("sort([1, \"a\"])",
                 "main.jett:3:1: runtime error: sort: cannot compare int and string");
}
END_TEST

START_TEST(maps)
{
    expect_out("let m = {\"b\": 1, \"a\": 2}\nm[\"c\"] = 3\nprint(keys(m), values(m), len(m), "
               "has(m, \"a\"), has(m, \"z\"))",
               "[\"b\", \"a\", \"c\"] [1, 2, 3] 3 true false\n");
    expect_out("let m = {\"a\": 1, \"b\": 2}\nprint(remove(m, \"a\"), m)\nm[\"a\"] = 9\nprint(m)",
               "1 {\"b\": 2}\n{\"b\": 2, \"a\": 9}\n");
    expect_out("let m = {}\nfor i in 0..100 {\n  m[str(i)] = i\n}\nfor i in 0..90 {\n  remove(m, "
               "str(i))\n}\n"
               "for i in 0..20 {\n  m[\"n\" + str(i)] = i\n}\nprint(len(m), m[\"95\"], m[\"n19\"], "
               "keys(m)[0])",
               "30 95 19 90\n");
    expect_error("remove({}, \"k\")",
                 "main.jett:3:1: runtime error: remove: missing map key \"k\"");
    expect_error("let m = {1: 2}", "main.jett:3:10: runtime error: map keys are strings, got int");
}
END_TEST

START_TEST(strings)
{
    expect_out("print(str(12), str(1.5), str([1]), str(nil), int(\"-42\"), int(3.9), int(-3.9), "
               "int(true))",
               "12 1.5 [1] nil -42 3 -3 1\n");
    expect_out("print(float(2), float(\"2.5\"), substr(\"hello\", 1, 3), substr(\"hello\", 2))",
               "2.0 2.5 ell llo\n");
    expect_out("print(split(\"a,b,,c\", \",\"), split(\"abc\", \"x\"), join([\"a\", \"b\"], \", "
               "\"), join([], \"-\"))",
               "[\"a\", \"b\", \"\", \"c\"] [\"abc\"] a, b \n");
    expect_out("print(find(\"hello\", \"l\"), find(\"hello\", \"z\"), upper(\"abc\u00e9\"), "
               "lower(\"ABC\"), repeat(\"ab\", 3))",
               "2 -1 ABC\u00e9 abc ababab\n");
    expect_out("let s = \"h\u00e9llo\"\nprint(len(s), s[1], slice(s, 1, 3), s[0])",
               "6 \u00e9 \u00e9 h\n");
    expect_error("int(\"12x\")",
                 "main.jett:3:1: runtime error: int: cannot convert \"12x\" to int");
    expect_error("float(\"\")",
                 "main.jett:3:1: runtime error: float: cannot convert \"\" to float");
    expect_error("split(\"a\", \"\")",
                 "main.jett:3:1: runtime error: split: the separator is empty");
    expect_error("join([1], \",\")",
                 "main.jett:3:1: runtime error: join: item 0 must be string, got int");
    expect_error("slice(\"\u00e9\", 0, 1)",
                 "main.jett:3:1: runtime error: slice: range 0..1 splits a UTF-8 character");
    expect_error("let c = \"\u00e9\"[1]",
                 "main.jett:3:9: runtime error: index 1 is inside a UTF-8 character");
    expect_error("repeat(\"a\", -1)",
                 "main.jett:3:1: runtime error: repeat: count -1 is negative or too large");
    expect_error("substr(\"abc\", 2, 5)",
                 "main.jett:3:1: runtime error: substr: range 2..7 out of bounds (length 3)");
}
END_TEST

/* Results of the operations that work in 64 KiB chunks, with inputs on
 * both sides of a chunk boundary (65536 bytes, or 4096 list items of 16
 * bytes); every expected value follows from the inputs' definitions. */
START_TEST(chunked_results)
{
    /* repeat: every copy is the unit, for units that divide the chunk,
     * do not, and are longer than it */
    expect_out("let ok = true\n"
               "for u in [\"a\", \"abc\", \"0123456\", repeat(\"xyz\", 30000)] {\n"
               "  for c in [0, 1, 2, 5, 21846, 65537] {\n"
               "    if len(u) * c <= 4000000 {\n"
               "      let r = repeat(u, c)\n"
               "      ok = ok && len(r) == len(u) * c\n"
               "      for i in [0, c / 3, c / 2, c - 1] {\n"
               "        if c > 0 {\n"
               "          ok = ok && substr(r, i * len(u), len(u)) == u\n"
               "        }\n"
               "      }\n"
               "    }\n"
               "  }\n"
               "}\n"
               "print(ok)",
               "true\n");
    /* find and contains: a needle ending at, straddling and starting at
     * the chunk boundary, and past it */
    expect_out("let ok = true\n"
               "for at in [65533, 65534, 65535, 65536, 65537, 200000] {\n"
               "  let s = repeat(\"a\", at) + \"bcd\" + repeat(\"a\", 100000)\n"
               "  ok = ok && find(s, \"bcd\") == at && contains(s, \"abcda\")\n"
               "  ok = ok && find(s, \"bce\") == -1 && !contains(s, \"bce\")\n"
               "}\n"
               "print(ok)",
               "true\n");
    /* needles past 4096 bytes (searched a byte at a time): the only "abc"
     * of s is at 6000, so a needle of 2500 "ab" then "abc" starts 5000
     * bytes before it, at 1000; one that fails near its end is nowhere; a
     * separator of 4097 "w" splits 5000 of them once, after "q": the rest
     * is 903 "w" and "e" */
    expect_out("let s = repeat(\"ab\", 3000) + \"abc\" + repeat(\"x\", 70000)\n"
               "let n = repeat(\"ab\", 2500) + \"abc\"\n"
               "print(find(s, n), contains(s, n), find(s, n + \"xz\"), contains(s, \"x\" + n))\n"
               "let p = split(\"q\" + repeat(\"w\", 5000) + \"e\", repeat(\"w\", 4097))\n"
               "print(len(p), p[0], len(p[1]))",
               "1000 true -1 false\n2 q 904\n");
    /* split and join over 70000 fields */
    expect_out("let parts = split(repeat(\"ab,\", 70000), \",\")\n"
               "let j = join(parts, \"-\")\n"
               "print(len(parts), parts[69999], parts[70000] == \"\", len(j), substr(j, 209997))",
               "70001 ab true 210000 ab-\n");
    /* upper and lower past the first chunk (65535 = 3 * 21845) */
    expect_out("let u = upper(repeat(\"aB1\", 30000))\nlet l = lower(u)\n"
               "print(len(u), substr(u, 89997), substr(l, 65535, 3))",
               "90000 AB1 ab1\n");
    /* comparison and equality that differ only after the first chunk */
    expect_out("let a = repeat(\"x\", 70000) + \"a\"\nlet b = repeat(\"x\", 70000) + \"b\"\n"
               "print(a < b, b < a, a == b, a == repeat(\"x\", 70000) + \"a\")",
               "true false false true\n");
    /* insert and remove that move more than a chunk of items */
    expect_out("let l = []\nfor i in 0..10000 {\n  push(l, i)\n}\n"
               "insert(l, 0, -1)\ninsert(l, 5000, -2)\n"
               "print(len(l), l[0], l[1], l[5000], l[5001], l[10001])\n"
               "print(remove(l, 0), remove(l, 4999), len(l), l[0], l[9999])",
               "10002 -1 0 -2 4999 9999\n-1 -2 10000 0 9999\n");
    /* concatenation and slices longer than a chunk */
    expect_out("let s = repeat(\"0123456789\", 10000) + repeat(\"z\", 5)\n"
               "let t = slice(s, 65530, 65545)\nlet c = s + s\n"
               "print(t, len(c), substr(c, 99998, 9))",
               "012345678901234 200010 89zzzzz01\n");
}
END_TEST

START_TEST(math)
{
    expect_out("print(abs(-3), abs(2.5), abs(-0.5), min(3, 1, 2), max(3, 1, 2), min([4, 2]), "
               "max(\"a\", \"b\"), max(1, 2.5))",
               "3 2.5 0.5 1 3 2 b 2.5\n");
    expect_error("abs(-9223372036854775807 - 1)",
                 "main.jett:3:1: runtime error: integer overflow in abs(-9223372036854775808)");
    expect_error("min([])", "main.jett:3:1: runtime error: min: the list is empty");
    expect_error("max(1, \"a\")",
                 "main.jett:3:1: runtime error: max: cannot compare string and int");
}
END_TEST

/* Messages that quote the program's text take it up to its first NUL
 * byte, as they always have, however long it is: the catch sees "a" of
 * fail("a\u{0}b"), the key and the text up to their NUL, and all of a
 * 100000-byte message; join() of a task that failed so adds "task 2
 * failed: " (15 bytes). */
START_TEST(error_texts)
{
    expect_out("try {\n  fail(\"a\\u{0}b\")\n} catch e {\n  print(len(e), e)\n}\n"
               "try {\n  let v = {}[\"k\\u{0}z\"]\n} catch e {\n  print(e)\n}\n"
               "try {\n  remove({}, \"x\\u{0}y\")\n} catch e {\n  print(e)\n}\n"
               "try {\n  int(\"12\\u{0}3\")\n} catch e {\n  print(e)\n}\n"
               "try {\n  float(\"1.5e\")\n} catch e {\n  print(e)\n}\n"
               "try {\n  fail(repeat(\"z\", 100000))\n} catch e {\n  print(len(e))\n}\n"
               "try {\n  join(spawn(boom))\n} catch e {\n  print(len(e), substr(e, 0, 16))\n}\n"
               "}\nfn boom() {\n  fail(repeat(\"z\", 100000))",
               "1 a\nmissing map key \"k\"\nremove: missing map key \"x\"\n"
               "int: cannot convert \"12\" to int\nfloat: cannot convert \"1.5e\" to float\n"
               "100000\n100015 task 2 failed: z\n");
}
END_TEST

START_TEST(env_secret_fail)
{
    setenv("JETT_TEST_TOKEN", "s3cret", 1);
    unsetenv("JETT_TEST_UNSET");
    expect_out(
        "let t = env(\"JETT_TEST_TOKEN\")\nprint(t, t == \"s3cret\", env(\"JETT_TEST_UNSET\"))",
        "<secret> true nil\n");
    expect_error("fail([1, 2])", "main.jett:3:1: runtime error: [1, 2]");
}
END_TEST

START_TEST(debug_rows)
{
    struct harness_run r;
    harness_run(&r, HEAD "fn main() {\n  debug([1, \"a\"])\n    debug(secret(5))\n}\n");
    ck_assert_str_eq(r.debug, "main.jett:3:3 [1, \"a\"]\nmain.jett:4:5 <secret>\n");
    ck_assert_str_eq(r.out, "");
    harness_free(&r);
}
END_TEST

START_TEST(log_records)
{
    struct harness_run r;
    harness_run(&r,
                HEAD "fn work() {\n  log(\"info\", \"started\", {\"n\": 3, \"who\": \"me\", \"k\": "
                     "secret(\"x\")})\n}\n"
                     "fn main() {\n  work()\n  log(\"loud\", \"bad level\")\n  log(\"warn\", 42)\n"
                     "  log(\"error\", \"too long\", {\"v\": repeat(\"x\", 1025)})\n  "
                     "log(\"debug\", \"plain\")\n}\n");
    ck_assert_int_eq(r.result.termination, INTERP_RETURNED);
    const char *want_prefix =
        "ok info started main.jett:3:3 t.main.work [main>work] n=3 who=me k=<secret>\n"
        "rejected loud bad level main.jett:7:3 t.main.main [main]\n"
        "rejected warn - main.jett:8:3 t.main.main [main]\n"
        "rejected error too long main.jett:9:3 t.main.main [main] v=";
    ck_assert_int_eq(strncmp(r.logs, want_prefix, strlen(want_prefix)), 0);
    ck_assert_ptr_nonnull(strstr(r.logs, "\nok debug plain main.jett:10:3 t.main.main [main]\n"));
    harness_free(&r);
}
END_TEST

Suite *builtins_suite(void);
Suite *builtins_suite(void)
{
    Suite *s = suite_create("builtins");
    TCase *tc = tcase_create("builtins");
    tcase_add_test(tc, output);
    tcase_add_test(tc, lists);
    tcase_add_test(tc, sleep_lasts_its_milliseconds);
    tcase_add_test(tc, sorting);
    tcase_add_test(tc, maps);
    tcase_add_test(tc, strings);
    tcase_add_test(tc, chunked_results);
    tcase_add_test(tc, math);
    tcase_add_test(tc, error_texts);
    tcase_add_test(tc, env_secret_fail);
    tcase_add_test(tc, debug_rows);
    tcase_add_test(tc, log_records);
    suite_add_tcase(s, tc);
    return s;
}
