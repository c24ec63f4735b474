/*
 * End-to-end checks of clauses of the profiling contract that span the
 * launcher, the interpreter and the daemon: nested secret and literal
 * spans, the run manifest checked before main, collector failures in the
 * envelope, the launcher's own fallback profile, probed capabilities,
 * NUL bytes in debug rows and logs, and reports without wire ids.  Every
 * expected value is worked out from the program text in the test.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char *jett, *profd, *dir;

static void setup(void)
{
    jett = tu_build_path("cli/jett");
    profd = tu_build_path("daemon/jett-profd");
    dir = tu_tmpdir();
    ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(jett), free(profd), free(dir);
}

static char *program(const char *name, const char *text)
{
    char *path = tu_write_program(dir, name, text);
    ck_assert_ptr_nonnull(path);
    return path;
}

static void run(const char *const *argv, struct tu_output *o)
{
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
}

static bool has(const struct tu_output *o, const char *needle)
{
    return strstr(o->out, needle) != NULL;
}

/* JETT.md's own secret example, on the hot line of a loop: the secret
 * span `env("API_TOKEN")` holds the literal span `"API_TOKEN"`.  The
 * profile is complete in both modes, and the CPU hot line of line 6 is
 * the line with the whole secret expression replaced (the literal inside
 * goes with it): `let token: secret<string> = <secret-expression>`. */
START_TEST(secret_expression_holding_a_literal)
{
    char *p = program("sec.jett", "namespace sec\n"
                                  "fn main() {\n"
                                  "    let t0 = now_ms()\n"
                                  "    let n = 0\n"
                                  "    while now_ms() - t0 < 300 {\n"
                                  "        let token: secret<string> = env(\"API_TOKEN\")\n"
                                  "        n += 1\n"
                                  "    }\n"
                                  "}\n");
    setenv("API_TOKEN", "TOKEN-VALUE-77", 1);
    static const char *const modes[] = {"--profile", "--profile-memory"};
    for (int m = 0; m < 2; m++) {
        struct tu_output o;
        const char *argv[] = {jett, "run", p, modes[m], "--profile-threshold", "0", "--agent", NULL};
        run(argv, &o);
        ck_assert_msg(o.status == 0, "%s\n%s", o.out, o.err);
        ck_assert_msg(has(&o, "\n  status: complete\n  termination: returned\n"), "%s", o.out);
        ck_assert(!has(&o, "TOKEN-VALUE") && !has(&o, "API_TOKEN"));
        if (m == 0)
            ck_assert_msg(has(&o, ",6,9,") &&
                              has(&o, ",\"let token: secret<string> = <secret-expression>\",true\n"),
                          "%s", o.out);
        tu_output_free(&o);
    }
    unsetenv("API_TOKEN");
    free(p);
}
END_TEST

Suite *run_contract_suite(void)
{
    Suite *s = suite_create("run_contract");
    TCase *t = tcase_create("run_contract");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, secret_expression_holding_a_literal);
    suite_add_tcase(s, t);
    return s;
}
