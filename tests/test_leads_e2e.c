/*
 * End-to-end tests of the leads (jett-profile(7), "Leads") through the
 * real binaries: programs with one planted cause each, whose report must
 * open with that cause, in the human report and in the TOON.  Sizes come
 * from jett(1) (a string is 24 + its length; a list 32 + 16 a slot,
 * grown by push to twice its capacity and at least 4).
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Suite *leads_e2e_suite(void);

static void run_ok(const char *prog, const char *mode, bool agent, struct tu_output *o)
{
    const char *argv[8] = {tu_jett, "run", prog, mode, "--workers", "2"};
    int n = 6;
    if (agent)
        argv[n++] = "--agent";
    argv[n] = NULL;
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    ck_assert_msg(o->status == 0, "%s", o->err);
}

/* The lines under "look first:", up to the next section. */
static char *leads_of(const char *report)
{
    const char *at = strstr(report, "\nlook first:\n");
    ck_assert_msg(at != NULL, "no leads in:\n%s", report);
    at += 13;
    const char *end = at;
    while (strncmp(end, "  ", 2) == 0)
        end = strchr(end, '\n') + 1;
    return strndup(at, (size_t)(end - at));
}

/* Runs the program `src` as `name` in `mode` and returns its human
 * report's leads, once its output was `out`. */
static char *human_leads(const char *name, const char *src, const char *mode, const char *out)
{
    char *prog = tu_program(name, src);
    struct tu_output o;
    run_ok(prog, mode, false, &o);
    ck_assert_str_eq(o.out, out);
    char *leads = leads_of(o.err);
    tu_output_free(&o);
    free(prog);
    return leads;
}

static void starts_with(const char *s, const char *prefix)
{
    ck_assert_msg(strncmp(s, prefix, strlen(prefix)) == 0, "%s\ndoes not start with\n%s", s,
                  prefix);
}

/* 1000 strings of 100 bytes in a list, dropped at the return. */
#define LOAD                                                                                       \
    "fn load() -> int {\n"                                                                         \
    "    let rows = []\n"                                                                          \
    "    for i in 0..1000 {\n"                                                                     \
    "        push(rows, repeat(\"r\", 100))\n"                                                     \
    "    }\n"                                                                                      \
    "    return len(rows)\n"                                                                       \
    "}\n"

/* A load builds 1000 strings of 100 bytes in a list and drops it, then a
 * churn allocates 2000 strings of 200 bytes, each freed at once.  The
 * peak is load's: the list (32 + 16 * 1024 = 16416) and its strings
 * (1000 * 124 = 124000), 140416 bytes, all created in p.load, while
 * p.churn allocated the most (2000 * 224 = 448000 of 588416 bytes in
 * all: 76.14%).  Nothing is retained, so there is no holder lead. */
static const char peak_src[] = "namespace p\n"
                               "\n" LOAD "\n"
                               "fn churn() -> int {\n"
                               "    let n = 0\n"
                               "    for i in 0..2000 {\n"
                               "        let s = repeat(\"z\", 200)\n"
                               "        n += len(s)\n"
                               "    }\n"
                               "    return n\n"
                               "}\n"
                               "\n"
                               "fn main() {\n"
                               "    print(load() + churn())\n"
                               "}\n";

START_TEST(a_mid_run_peak_is_led_by_its_function)
{
    char *prog = tu_program("peak.jett", peak_src);
    struct tu_output o;
    run_ok(prog, "--profile-memory", false, &o);
    ck_assert_str_eq(o.out, "401000\n");
    char *leads = leads_of(o.err);
    ck_assert_str_eq(leads, "  most live at peak  p.load  peak.jett:3  137.13 KiB (140416 bytes), "
                            "100.00% of peak live bytes\n"
                            "  most allocated  p.churn  peak.jett:14:9  437.50 KiB (448000 bytes), "
                            "76.14% of attributed bytes\n");
    free(leads);
    tu_output_free(&o);
    run_ok(prog, "--profile-memory", true, &o);
    ck_assert_msg(
        strstr(o.out,
               "\n  leads[2]{kind,task,namespace,name,path,line,column,value,unit,percent,of}:\n"
               "    peak,unavailable,p,load,peak.jett,3,unavailable,140416,bytes,100,"
               "peak_live_bytes\n"
               "    allocated,unavailable,p,churn,peak.jett,14,9,448000,bytes,76.14,"
               "attributed_allocated_bytes\n"),
        "%s", o.out);
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* The same peak with a binding that keeps a little to the end: `kept`, an
 * empty list (32 bytes) made before the peak, gets a literal after it
 * (a constant, no allocation), so 32 + 16 * 4 = 96 bytes of list are
 * retained, under 5% of the peak (140416 + 32 = 140448).  A
 * holder of so little is not where the memory went: no holder lead, the
 * peak's function first, though the retained section lists the holder. */
static const char small_holder_src[] = "namespace p\n"
                                       "\n"
                                       "let kept: list = []\n"
                                       "\n" LOAD "\n"
                                       "fn main() {\n"
                                       "    let n = load()\n"
                                       "    push(kept, \"done\")\n"
                                       "    print(n)\n"
                                       "}\n";

START_TEST(a_small_holder_does_not_lead)
{
    char *prog = tu_program("small.jett", small_holder_src);
    struct tu_output o;
    run_ok(prog, "--profile-memory", false, &o);
    ck_assert_str_eq(o.out, "1000\n");
    ck_assert_msg(strstr(o.err, "\nretained at exit: 96 bytes held by p.kept (small.jett:3)"), "%s",
                  o.err);
    char *leads = leads_of(o.err);
    starts_with(leads, "  most live at peak  p.load  small.jett:5  137.13 KiB (140416 bytes), "
                       "99.98% of peak live bytes\n");
    ck_assert_ptr_null(strstr(leads, "largest holder"));
    free(leads);
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* Four tasks: one computes for long, the others pass a few values along
 * and wait for it.  The first lead is that task, at its function, and no
 * waiting lead points back at the tasks that wait for it. */
static const char starve_src[] = "namespace s\n"
                                 "\n"
                                 "fn slow(out: channel) {\n"
                                 "    let h = 0\n"
                                 "    for i in 0..1500000 {\n"
                                 "        h = (h * 31 + i) % 1000003\n"
                                 "    }\n"
                                 "    send(out, h)\n"
                                 "}\n"
                                 "\n"
                                 "fn relay(input: channel, out: channel) {\n"
                                 "    send(out, recv(input))\n"
                                 "}\n"
                                 "\n"
                                 "fn main() {\n"
                                 "    let a = channel(1)\n"
                                 "    let b = channel(1)\n"
                                 "    let t = spawn(slow, a)\n"
                                 "    let r = spawn(relay, a, b)\n"
                                 "    print(recv(b) >= 0)\n"
                                 "    join(t)\n"
                                 "    join(r)\n"
                                 "}\n";

START_TEST(a_starving_task_leads)
{
    char *leads = human_leads("starve.jett", starve_src, "--profile", "true\n");
    starts_with(leads, "  busiest task 2  s.slow  starve.jett:3  ");
    ck_assert_msg(strstr(leads, "most waiting") == NULL, "%s", leads);
    ck_assert_msg(strstr(leads, "\n  most self time  s.slow  starve.jett:6:9  "), "%s", leads);
    free(leads);
    char *prog = tu_program("starve.jett", starve_src);
    struct tu_output o;
    run_ok(prog, "--profile", true, &o);
    ck_assert_msg(strstr(o.out, "\n    task,2,s,slow,starve.jett,3,unavailable,"), "%s", o.out);
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* Two tasks that take turns through a pair of channels, each doing the
 * same work a turn: about half the samples each, one of them a little
 * more than half (a loaded machine stretches whichever runs when it is
 * preempted), never twice the other's.  Neither is the cause of the
 * other's waiting, so no task leads.  (The reference model's random
 * captures check the rule's bound exactly.) */
static const char turns_src[] = "namespace t\n"
                                "\n"
                                "fn side(input: channel, out: channel, n: int) -> int {\n"
                                "    let h = 0\n"
                                "    for r in 0..200 {\n"
                                "        let v = recv(input)\n"
                                "        for i in 0..n {\n"
                                "            h = (h * 31 + i) % 1000003\n"
                                "        }\n"
                                "        send(out, v + 1)\n"
                                "    }\n"
                                "    return h\n"
                                "}\n"
                                "\n"
                                "fn main() {\n"
                                "    let a = channel(1)\n"
                                "    let b = channel(1)\n"
                                "    send(a, 0)\n"
                                "    let p = spawn(side, a, b, 25000)\n"
                                "    let q = spawn(side, b, a, 25000)\n"
                                "    print(join(p) >= 0, join(q) >= 0, recv(a))\n"
                                "}\n";

START_TEST(tasks_taking_turns_give_no_task_lead)
{
    char *leads = human_leads("turns.jett", turns_src, "--profile", "true true 400\n");
    ck_assert_msg(strstr(leads, "busiest task") == NULL, "%s", leads);
    free(leads);
}
END_TEST

/* Without tasks, a run that mostly sleeps leads with where it slept; its
 * self lead follows. */
static const char sleepy_src[] = "namespace w\n"
                                 "\n"
                                 "fn fetch(i: int) -> int {\n"
                                 "    sleep(40)\n"
                                 "    return i\n"
                                 "}\n"
                                 "\n"
                                 "fn main() {\n"
                                 "    let n = 0\n"
                                 "    for i in 0..5 {\n"
                                 "        n += fetch(i)\n"
                                 "    }\n"
                                 "    print(n)\n"
                                 "}\n";

START_TEST(a_waiting_run_leads_with_where_it_waited)
{
    char *leads = human_leads("sleepy.jett", sleepy_src, "--profile", "10\n");
    starts_with(leads, "  most waiting  w.fetch  sleepy.jett:4:5  ");
    ck_assert_msg(strstr(leads, ", 100.00% of waiting samples\n"), "%s", leads);
    free(leads);
}
END_TEST

/* A linear search inside a loop: the function with the most self time
 * is the search, led at its comparison, with its exact calls (400 of
 * them), though main is the first bottleneck by inclusive samples. */
static const char search_src[] = "namespace q\n"
                                 "\n"
                                 "fn index_of(xs: list, v: int) -> int {\n"
                                 "    for i in 0..len(xs) {\n"
                                 "        if xs[i] == v {\n"
                                 "            return i\n"
                                 "        }\n"
                                 "    }\n"
                                 "    return -1\n"
                                 "}\n"
                                 "\n"
                                 "fn main() {\n"
                                 "    let xs = []\n"
                                 "    for i in 0..20000 {\n"
                                 "        push(xs, i)\n"
                                 "    }\n"
                                 "    let found = 0\n"
                                 "    for k in 0..400 {\n"
                                 "        if index_of(xs, 19999 - k) >= 0 {\n"
                                 "            found += 1\n"
                                 "        }\n"
                                 "    }\n"
                                 "    print(found)\n"
                                 "}\n";

START_TEST(hidden_quadratic_work_leads_with_self_time)
{
    char *prog = tu_program("search.jett", search_src);
    struct tu_output o;
    run_ok(prog, "--profile", false, &o);
    ck_assert_str_eq(o.out, "400\n");
    ck_assert_msg(strstr(o.err, "\n#1  100.00%  "), "%s", o.err);
    char *leads = leads_of(o.err);
    starts_with(leads, "  most self time  q.index_of  search.jett:");
    ck_assert_msg(strstr(leads, ", 400 calls\n"), "%s", leads);
    free(leads);
    tu_output_free(&o);
    free(prog);
}
END_TEST

Suite *leads_e2e_suite(void)
{
    Suite *s = suite_create("leads_e2e");
    TCase *t = tcase_create("leads");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, a_mid_run_peak_is_led_by_its_function);
    tcase_add_test(t, a_small_holder_does_not_lead);
    tcase_add_test(t, a_starving_task_leads);
    tcase_add_test(t, tasks_taking_turns_give_no_task_lead);
    tcase_add_test(t, a_waiting_run_leads_with_where_it_waited);
    tcase_add_test(t, hidden_quadratic_work_leads_with_self_time);
    suite_add_tcase(s, t);
    return s;
}
