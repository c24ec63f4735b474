/* Checker tests: name resolution, imports, arities, the annotations it
 * can see, main's shape, and the secret spans the profiler redacts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/interp_harness.h"

static void expect_diag(const char *text, const char *want)
{
    char *d = harness_load_diags(text);
    ck_assert_str_eq(d, want);
    free(d);
}

#define HEAD "namespace t.main\n"

START_TEST(names)
{
    expect_diag(HEAD "fn main() {\n  print(nope)\n}\n",
                "main.jett:3:9: error: unknown name 'nope'\n");
    expect_diag(HEAD "fn main() {\n  if true {\n    let x = 1\n  }\n  print(x)\n}\n",
                "main.jett:6:9: error: unknown name 'x'\n");
    expect_diag(HEAD "fn main() {\n  let x = 1\n  let x = 2\n}\n",
                "main.jett:4:7: error: 'x' is already declared in this scope\n");
    expect_diag(HEAD "fn f() {\n}\nfn f() {\n}\nfn main() {\n}\n",
                "main.jett:4:4: error: function 'f' is already declared\n");
    expect_diag(HEAD "const K = 1\nfn main() {\n  K = 2\n}\n",
                "main.jett:4:3: error: cannot assign to constant 'K'\n");
    expect_diag(HEAD "fn main() {\n  const k = 1\n  k += 1\n}\n",
                "main.jett:4:3: error: cannot assign to constant 'k'\n");
    expect_diag(HEAD "fn main() {\n  main = 1\n}\n",
                "main.jett:3:3: error: cannot assign to function 'main'\n");
    expect_diag(HEAD "fn main() {\n  break\n}\n", "main.jett:3:3: error: 'break' outside a loop\n");
    expect_diag(
        HEAD "fn main() {\n  let r = 0..3\n}\n",
        "main.jett:3:11: error: a range a..b is only allowed as the iterable of a for loop\n");
}
END_TEST

START_TEST(declaration_clashes)
{
    expect_diag(HEAD "let g = 1\nlet g = 2\nfn main() {\n}\n",
                "main.jett:3:5: error: 'g' is already declared\n");
    expect_diag(HEAD "let f = 1\nfn f() {\n}\nfn main() {\n}\n",
                "main.jett:3:4: error: 'f' is declared both as a function and a global\n");
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett",
                  "namespace m\nimport a.util\nimport b.util\nfn main() {\n  util.f()\n}\n");
    harness_write(dir, "a.jett", "namespace a.util\nfn f() {\n}\n");
    harness_write(dir, "b.jett", "namespace b.util\nfn f() {\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct harness_run r;
    harness_run_file(&r, path, 0);
    ck_assert_str_eq(
        r.diags, "main.jett:5:3: error: 'util' is ambiguous: more than one import ends with it\n");
    harness_free(&r);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(arity)
{
    expect_diag(HEAD "fn f(a, b) {\n}\nfn main() {\n  f(1)\n}\n",
                "main.jett:5:3: error: f expects 2 arguments, got 1\n");
    expect_diag(HEAD "fn main() {\n  len(1, 2)\n}\n",
                "main.jett:3:3: error: len expects 1 argument, got 2\n");
    expect_diag(HEAD "fn main() {\n  substr(\"a\")\n}\n",
                "main.jett:3:3: error: substr expects at least 2 arguments, got 1\n");
}
END_TEST

START_TEST(annotations)
{
    expect_diag(HEAD "fn main() {\n  let x: int = \"s\"\n}\n",
                "main.jett:3:16: error: type mismatch: x is int but the value is string\n");
    expect_diag(HEAD "fn f(n: int) {\n}\nfn main() {\n  f([1])\n}\n",
                "main.jett:5:5: error: type mismatch: n is int but the value is list\n");
    expect_diag(HEAD "fn f() -> string {\n  return 1.5\n}\nfn main() {\n}\n",
                "main.jett:3:10: error: type mismatch: the return value is string but the value is "
                "float\n");
    expect_diag(HEAD "fn f() -> int {\n  return 1\n}\nfn main() {\n  let s: string = f()\n}\n",
                "main.jett:6:19: error: type mismatch: s is string but the value is int\n");
    expect_diag(HEAD "fn main() {\n  let x: int = 1\n  x = nil\n}\n",
                "main.jett:4:7: error: type mismatch: x is int but the value is nil\n");
    expect_diag(HEAD "fn main() {\n  let t: string = env(\"K\")\n}\n",
                "main.jett:3:19: error: a secret value cannot be stored in t of type string\n");
    expect_diag(
        HEAD "fn f(n: int) -> string {\n  let s: list = n\n  return n\n}\nfn main() {\n}\n",
        "main.jett:3:17: error: type mismatch: s is list but the value is int\n"
        "main.jett:4:10: error: type mismatch: the return value is string but the value is int\n");
    /* unknown static types are left to run time */
    expect_diag(HEAD "fn main() {\n  let v = [1]\n  let x: int = v[0]\n  let f: float = 1.5\n}\n",
                "");
}
END_TEST

START_TEST(main_shape)
{
    expect_diag(
        HEAD "fn start() {\n}\n",
        "main.jett:1:1: error: the program file has no 'fn main()' or 'fn main(args: list)'\n");
    expect_diag(HEAD "fn main(a, b) {\n}\n",
                "main.jett:2:4: error: main must be 'fn main()' or 'fn main(args: list)'\n");
    expect_diag(HEAD "fn main(a: int) {\n}\n",
                "main.jett:2:4: error: main must be 'fn main()' or 'fn main(args: list)'\n");
    expect_diag(HEAD "fn main(args: list) {\n}\n", "");
}
END_TEST

START_TEST(all_errors_found)
{
    expect_diag(HEAD "fn main() {\n  a()\n  b = 1\n  print(c)\n}\n",
                "main.jett:3:3: error: unknown name 'a'\nmain.jett:4:3: error: unknown name 'b'\n"
                "main.jett:5:9: error: unknown name 'c'\n");
}
END_TEST

/* Loads text and returns its secret spans as "start-end;" text. */
static char *secret_spans(const char *text)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_msg(p != NULL, "load failed: %s", d.len ? d.items[0].message : "?");
    const struct interp_source *src = interp_source_get(p, 0);
    static char out[1024];
    out[0] = '\0';
    for (uint32_t i = 0; i < src->n_spans; i++)
        if (src->spans[i].kind == INTERP_SPAN_SECRET) {
            char one[64];
            snprintf(one, sizeof one, "%.*s;", (int)(src->spans[i].end - src->spans[i].start),
                     src->text + src->spans[i].start);
            strcat(out, one);
        }
    interp_program_free(p);
    interp_diags_free(&d);
    harness_rmtree(dir);
    free(dir);
    return out;
}

START_TEST(secret_propagation)
{
    ck_assert_str_eq(secret_spans(HEAD
                                  "fn main() {\n  let t: secret<string> = env(\"K\")\n  let u = t\n"
                                  "  let n = 1 + 2\n  print(\"x\", u)\n}\n"),
                     "env(\"K\");t;print(\"x\", u);");
    /* a function whose return is secret<T> taints its call; a secret parameter taints its uses */
    ck_assert_str_eq(secret_spans(HEAD
                                  "fn key() -> secret<string> {\n  return secret(\"k\")\n}\n"
                                  "fn use(k: secret<string>) -> bool {\n  return k == \"x\"\n}\n"
                                  "fn main() {\n  let v = [key()]\n  use(v[0])\n}\n"),
                     "secret(\"k\");k == \"x\";[key()];use(v[0]);");
    ck_assert_str_eq(secret_spans(HEAD "fn main() {\n  let a = 1\n  a = 2\n}\n"), "");
}
END_TEST

START_TEST(blanked_text)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett",
                  "namespace m // c\nfn main() {\n  let t = env(\"K\")\n  print(\"hi\", 1)\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_ptr_nonnull(p);
    char *b = interp_source_blanked(interp_source_get(p, 0));
    /* same length and lines; comment, literal and secret expression blanked */
    ck_assert_str_eq(b, "namespace m     \nfn main() {\n  let t =         \n  print(    , 1)\n}\n");
    free(b);
    interp_program_free(p);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(imports_and_qualified_calls)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "jett.toml", "");
    harness_write(dir, "main.jett",
                  "namespace app.main\nimport app.util\nimport std.math\n"
                  "fn main() {\n  print(app.util.twice(2), util.twice(3), math.square(4))\n"
                  "  print(nope.f())\n  print(util.missing())\n}\n");
    harness_write(dir, "lib/util.jett", "namespace app.util\nfn twice(x) {\n  return x * 2\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct harness_run r;
    harness_run_file(&r, path, 0);
    ck_assert_str_eq(r.diags,
                     "main.jett:6:9: error: unknown namespace 'nope' (is it imported?)\n"
                     "main.jett:7:9: error: unknown function 'missing' in namespace app.util\n");
    harness_free(&r);
    harness_write(dir, "main.jett",
                  "namespace app.main\nimport app.util\nimport std.math\n"
                  "fn main() {\n  print(app.util.twice(2), util.twice(3), math.square(4))\n}\n");
    harness_run_file(&r, path, 0);
    ck_assert_msg(r.loaded, "%s", r.diags);
    ck_assert_str_eq(r.out, "4 6 16\n");
    harness_free(&r);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

Suite *checker_suite(void);
Suite *checker_suite(void)
{
    Suite *s = suite_create("checker");
    TCase *tc = tcase_create("checker");
    tcase_add_test(tc, names);
    tcase_add_test(tc, arity);
    tcase_add_test(tc, declaration_clashes);
    tcase_add_test(tc, annotations);
    tcase_add_test(tc, main_shape);
    tcase_add_test(tc, all_errors_found);
    tcase_add_test(tc, secret_propagation);
    tcase_add_test(tc, imports_and_qualified_calls);
    tcase_add_test(tc, blanked_text);
    suite_add_tcase(s, tc);
    return s;
}
