/* Runtime tests: the jett-runtime thread, cooperative interrupts (in a
 * loop, in sleep, inside try), the blocked flag, and the sampler hook's
 * view of the stack at a safe point. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/interp_harness.h"

struct rt {
    struct interp_state *s;
    struct interp_program *p;
    char *dir;
    char out[4096];
    char thread_name[32];
    char samples[1024];
    int interrupt_on_print; /* 0: no; else the signal */
    int sample_on_print;
};

static void rt_write(void *ctx, const char *data, size_t len)
{
    struct rt *t = ctx;
    strncat(t->out, data, len < sizeof t->out - strlen(t->out) - 1 ? len : 0);
    pthread_getname_np(pthread_self(), t->thread_name, sizeof t->thread_name);
    if (t->interrupt_on_print)
        interp_interrupt(t->s, t->interrupt_on_print);
    if (t->sample_on_print)
        interp_request_sample(t->s);
}

/* Records "fn@start-end" per frame, root first. */
static void rt_sampler(void *ctx, struct interp_state *s)
{
    struct rt *t = ctx;
    char one[128];
    for (uint32_t i = 0; i < interp_stack_depth(s); i++) {
        struct interp_frame_info f = interp_stack_frame(s, i);
        snprintf(one, sizeof one, "%s@%u-%u ",
                 interp_func_get(interp_state_program(s), f.func_id)->name, f.span.start,
                 f.span.end);
        strncat(t->samples, one, sizeof t->samples - strlen(t->samples) - 1);
    }
    strncat(t->samples, "| ", sizeof t->samples - strlen(t->samples) - 1);
}

static void rt_load(struct rt *t, const char *text)
{
    memset(t, 0, sizeof *t);
    t->dir = tu_tmpdir();
    harness_write(t->dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", t->dir);
    struct interp_diags d;
    t->p = interp_load(path, NULL, &d);
    ck_assert_msg(t->p != NULL, "%s", d.len ? d.items[0].message : "");
    struct interp_host host = {t, rt_write, rt_write, NULL, NULL};
    t->s = interp_new(t->p, &host, NULL);
    interp_set_sampler(t->s, rt_sampler, t);
}

static void rt_free(struct rt *t)
{
    interp_free(t->s);
    interp_program_free(t->p);
    harness_rmtree(t->dir);
    free(t->dir);
}

START_TEST(runs_on_named_thread)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn main() {\n  print(\"hi\")\n}\n");
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_str_eq(t.thread_name, "jett-runtime");
    ck_assert_str_eq(t.out, "hi\n");
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

START_TEST(interrupt_in_loop)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn main() {\n  print(\"go\")\n  let i = 0\n  while true {\n    "
                "i += 1\n  }\n}\n");
    t.interrupt_on_print = SIGINT;
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_INTERRUPTED);
    ck_assert_int_eq(r.exit_code, 130);
    ck_assert_int_eq(r.signal, SIGINT);
    ck_assert_ptr_null(r.message);
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

START_TEST(interrupt_not_caught_by_try)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn spin() {\n  while true {\n  }\n}\nfn main() {\n  try {\n    "
                "print(\"go\")\n"
                "    spin()\n  } catch e {\n    print(\"caught\")\n  }\n  print(\"after\")\n}\n");
    t.interrupt_on_print = SIGTERM;
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_INTERRUPTED);
    ck_assert_int_eq(r.exit_code, 143);
    ck_assert_str_eq(t.out, "go\n");
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

static void *rt_interrupt_when_blocked(void *arg)
{
    struct rt *t = arg;
    struct timespec tick = {0, 1000000};
    while (!interp_is_blocked(t->s))
        nanosleep(&tick, NULL);
    interp_interrupt(t->s, SIGINT);
    return NULL;
}

START_TEST(interrupt_out_of_sleep)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn main() {\n  try {\n    sleep(600000)\n  } catch e {\n    "
                "print(\"caught\")\n  }\n}\n");
    pthread_t helper;
    pthread_create(&helper, NULL, rt_interrupt_when_blocked, &t);
    struct interp_result r;
    interp_run(t.s, &r);
    pthread_join(helper, NULL);
    ck_assert_int_eq(r.termination, INTERP_INTERRUPTED);
    ck_assert(!interp_is_blocked(t.s));
    ck_assert_str_eq(t.out, "");
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

START_TEST(sleep_returns)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn main() {\n  let a = now_ms()\n  sleep(20)\n  print(now_ms() "
                "- a >= 20)\n}\n");
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    ck_assert_str_eq(t.out, "true\n");
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

START_TEST(sampler_sees_stack_at_safe_point)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn leaf() {\n    print(\"sample\")\n    let x = 1\n}\nfn main() "
                "{\n    leaf()\n}\n");
    t.sample_on_print = 1;
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    /* main is executing the call leaf() [81, 87); the request came while
     * leaf ran `print("sample")` [33, 48), so the sample is there, not at
     * the statement after it */
    ck_assert_str_eq(t.samples, "main@81-87 leaf@33-48 | ");
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

START_TEST(fail_alloc_switch_from_env)
{
    setenv("JETT_TEST_FAIL_ALLOC", "17", 1);
    ck_assert_uint_eq(interp_fail_alloc_from_env(), 17);
    setenv("JETT_TEST_FAIL_ALLOC", "0", 1);
    ck_assert_uint_eq(interp_fail_alloc_from_env(), 0);
    setenv("JETT_TEST_FAIL_ALLOC", "12x", 1);
    ck_assert_uint_eq(interp_fail_alloc_from_env(), 0);
    unsetenv("JETT_TEST_FAIL_ALLOC");
    ck_assert_uint_eq(interp_fail_alloc_from_env(), 0);
}
END_TEST

/* The calls of the function named `name` (the first of that name). */
static uint64_t calls_of(const struct rt *t, const char *name)
{
    for (uint32_t i = 0; i < interp_func_count(t->p); i++)
        if (strcmp(interp_func_get(t->p, i)->name, name) == 0)
            return interp_fn_calls(t->s)[i];
    ck_abort_msg("no function %s", name);
    return 0;
}

/* The calls made from the call site whose text starts with `call` (the
 * first such site in the program's text). */
static uint64_t calls_from(const struct rt *t, const char *text, const char *call)
{
    uint32_t at = (uint32_t)(strstr(text, call) - text);
    for (uint32_t i = 0; i < interp_call_site_count(t->p); i++)
        if (interp_call_site_get(t->p, i)->span.start == at)
            return interp_site_calls(t->s)[i];
    ck_abort_msg("no call site at %s", call);
    return 0;
}

/* Exact counts, known by construction: a loop of 300 calls; fact(10)
 * is 1 call from main and 9 from its own recursive call; the compare
 * function sort calls counts at the sort call, as often as the program
 * itself counted (its global `compared`); main and <init> once each; a
 * global's initializer's call belongs to <init>. */
START_TEST(call_counts_exact)
{
    static const char text[] =
        "namespace t.main\n"
        "let compared = 0\n"
        "let start = twice(1)\n"
        "fn twice(x) {\n  return x * 2\n}\n"
        "fn fact(n) {\n  if n <= 1 {\n    return 1\n  }\n  return n * fact(n - 1)\n}\n"
        "fn cmp(a, b) {\n  compared += 1\n  return a - b\n}\n"
        "fn main() {\n"
        "  let s = 0\n"
        "  for i in 0..300 {\n    s += twice(i)\n  }\n"
        "  print(fact(10))\n"
        "  let xs = sort([5, 3, 9, 1, 7, 2, 8], cmp)\n"
        "  print(compared)\n"
        "}\n";
    struct rt t;
    rt_load(&t, text);
    ck_assert_ptr_null(interp_fn_calls(t.s));
    ck_assert_int_eq(interp_count_calls(t.s), 0);
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    unsigned long compared = strtoul(strchr(t.out, '\n') + 1, NULL, 10);
    ck_assert_uint_gt(compared, 0);
    ck_assert_uint_eq(calls_of(&t, "twice"), 301);
    ck_assert_uint_eq(calls_from(&t, text, "twice(i)"), 300);
    ck_assert_uint_eq(calls_from(&t, text, "twice(1)"), 1);
    ck_assert_uint_eq(calls_of(&t, "fact"), 10);
    ck_assert_uint_eq(calls_from(&t, text, "fact(10)"), 1);
    ck_assert_uint_eq(calls_from(&t, text, "fact(n - 1)"), 9);
    ck_assert_uint_eq(calls_of(&t, "cmp"), compared);
    ck_assert_uint_eq(calls_from(&t, text, "sort("), compared);
    ck_assert_uint_eq(calls_from(&t, text, "print(compared)"), 0);
    ck_assert_uint_eq(calls_of(&t, "main"), 1);
    ck_assert_uint_eq(calls_of(&t, "<init>"), 1);
    /* each site belongs to the function whose body holds it */
    for (uint32_t i = 0; i < interp_call_site_count(t.p); i++) {
        const struct interp_call_site *cs = interp_call_site_get(t.p, i);
        const char *fn = interp_func_get(t.p, cs->func_id)->name;
        uint32_t line = 1;
        for (uint32_t k = 0; k < cs->span.start; k++)
            line += text[k] == '\n';
        ck_assert_str_eq(fn, line <= 3    ? "<init>"
                             : line <= 12 ? "fact"
                             : line <= 16 ? "cmp"
                                          : "main");
    }
    ck_assert_ptr_null(interp_call_site_get(t.p, interp_call_site_count(t.p)));
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

/* Without interp_count_calls nothing is counted (and nothing is kept). */
START_TEST(calls_not_counted_unless_asked)
{
    struct rt t;
    rt_load(&t, "namespace t.main\nfn f() {\n}\nfn main() {\n  f()\n}\n");
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_ptr_null(interp_fn_calls(t.s));
    ck_assert_ptr_null(interp_site_calls(t.s));
    ck_assert_uint_eq(interp_call_site_count(t.p), 1);
    interp_result_free(&r);
    rt_free(&t);
}
END_TEST

Suite *runtime_suite(void);
Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("runtime");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, runs_on_named_thread);
    tcase_add_test(tc, interrupt_in_loop);
    tcase_add_test(tc, interrupt_not_caught_by_try);
    tcase_add_test(tc, interrupt_out_of_sleep);
    tcase_add_test(tc, sleep_returns);
    tcase_add_test(tc, sampler_sees_stack_at_safe_point);
    tcase_add_test(tc, fail_alloc_switch_from_env);
    tcase_add_test(tc, call_counts_exact);
    tcase_add_test(tc, calls_not_counted_unless_asked);
    suite_add_tcase(s, tc);
    return s;
}
