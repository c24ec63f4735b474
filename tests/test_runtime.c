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
    suite_add_tcase(s, tc);
    return s;
}
