/*
 * End-to-end tests of the retained section through the real binaries
 * (`jett run --profile-memory`): programs whose holders, creation sites
 * and sizes are known by construction (sizes from jett(1): a string
 * 24 + its length, a list 32 + 16 a slot, grown by push to twice its
 * capacity and at least 4, a map 48 + 40 a slot, 8 at its first insert),
 * the budget cut, a walk skipped, a runtime error, the capture's RETAINED
 * records and their replay.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Suite *retained_e2e_suite(void);

/* A global keeps N = 1000 strings of repeat("x", 100): 24 + 100 = 124
 * bytes each, made in leak.row (line 6): 124000 bytes.  The list: [] (32)
 * grown by pushes to 4, 8, ..., 1024 slots: 32 + 16 * 1024 = 16416 bytes,
 * made in leak.<init> (line 1).  Retained 140416 in 1001 objects. */
static const char leak[] = "namespace leak\n"
                           "\n"
                           "let cache = []\n"
                           "let other = 0\n"
                           "\n"
                           "fn row(i: int) -> string {\n"
                           "    return repeat(\"x\", 100)\n"
                           "}\n"
                           "\n"
                           "fn main() {\n"
                           "    for i in 0..1000 {\n"
                           "        push(cache, row(i))\n"
                           "    }\n"
                           "}\n";

static void run_ok(const char *prog, bool agent, struct tu_output *o, const char *capture)
{
    const char *argv[8] = {tu_jett, "run", prog, "--profile-memory"};
    int n = 4;
    if (agent)
        argv[n++] = "--agent";
    if (capture)
        argv[n++] = "--profile-capture", argv[n++] = capture;
    argv[n] = NULL;
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
}

static void expect_in(const char *doc, const char *want)
{
    ck_assert_msg(strstr(doc, want) != NULL, "missing:\n%s\nin:\n%s", want, doc);
}

START_TEST(global_keeps_known_bytes)
{
    char *prog = tu_program("leak.jett", leak);
    struct tu_output o;
    run_ok(prog, true, &o, NULL);
    ck_assert_int_eq(o.status, 0);
    expect_in(o.out, "\n    retained_bytes: 140416\n");
    expect_in(o.out, "\n  retained_status: complete\n"
                     "  retained[2]{holder,holder_path,holder_line,namespace,function,path,line,"
                     "retained_bytes,objects}:\n"
                     "    leak.cache,leak.jett,3,leak,row,leak.jett,6,124000,1000\n"
                     "    leak.cache,leak.jett,3,leak,<init>,leak.jett,1,16416,1\n"
                     "  capabilities:\n");
    expect_in(o.out, "\n  status: complete\n");
    tu_output_free(&o);
    /* the human report opens its findings with the holder: first as the
     * lead (all 140416 bytes: 100%), then row by row; the rank 1 entry,
     * row, allocated the 124000 bytes of its line 7, 88.31% of 140416 */
    run_ok(prog, false, &o, NULL);
    expect_in(o.err, "\nlook first:\n"
                     "  largest holder  leak.cache  leak.jett:3  137.13 KiB (140416 bytes), "
                     "100.00% of retained bytes\n"
                     "  most allocated  leak.row  leak.jett:7:5  121.09 KiB (124000 bytes), "
                     "88.31% of attributed bytes\n"
                     "retained at exit: 121.09 KiB held by leak.cache (leak.jett:3): 1000 objects "
                     "created in leak.row (leak.jett:6)\n"
                     "  16.03 KiB held by leak.cache (leak.jett:3): 1 object created in "
                     "leak.<init> (leak.jett:1)\n"
                     "bottlenecks: ");
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* The leak program's capture cut short (jett-profile(7), Status): just
 * before its FINISH, every event and the whole walk read, the run's
 * exit is still unknown, so retained bytes and the section are
 * unavailable and the report has no "retained at exit" line; the peak
 * is that of the events read, here every one: nothing is freed, so it
 * is the 140416 bytes allocated (leak.row 124000 of them at the peak).
 * fixtures/programs/rowcache's cut in half, as `head -c` cuts it, has
 * events but retained is as unavailable in its totals and entries. */
START_TEST(cut_capture_retains_nothing)
{
    char *prog = tu_program("leak.jett", leak);
    char *cap = tu_tmp_path("leak.jcap"), *cut = tu_tmp_path("cut.jcap");
    struct tu_output o;
    run_ok(prog, false, &o, cap);
    tu_output_free(&o);
    size_t len;
    char *data = tu_read_file(cap, &len);
    ck_assert_ptr_nonnull(data);
    ck_assert_int_eq(tu_write_file(cut, data, tu_before_last_frame(data, len)), 0);
    const char *agent[] = {tu_jett, "profile", "replay", cut, "--agent", NULL};
    ck_assert_int_eq(tu_run(agent, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 1);
    expect_in(o.out, "\n  status: partial\n  partial_reason: collector_failure\n"
                     "  termination: unavailable\n");
    expect_in(o.out, "\n    freed_bytes: 0\n    peak_live_bytes: 140416\n"
                     "    retained_bytes: unavailable\n");
    expect_in(o.out, "\n      function: row\n");
    expect_in(o.out, "\n      retained_bytes: unavailable\n      live_at_peak_bytes: 124000\n");
    expect_in(o.out, "\n  retained_status: unavailable\n  retained: unavailable\n");
    tu_output_free(&o);
    /* the report goes to standard output, the damage to standard error */
    const char *human[] = {tu_jett, "profile", "replay", cut, NULL};
    ck_assert_int_eq(tu_run(human, NULL, 0, &o), 0);
    expect_in(o.out, "\n  retained bytes        unavailable\n");
    ck_assert_msg(strstr(o.out, "retained at exit") == NULL, "%s", o.out);
    tu_output_free(&o);
    free(data);
    /* rowcache's capture cut in half: events of the first half read */
    char *rows = tu_source_path("fixtures/programs/rowcache/before/main.jett");
    run_ok(rows, false, &o, cap);
    tu_output_free(&o);
    data = tu_read_file(cap, &len);
    ck_assert_ptr_nonnull(data);
    ck_assert_int_eq(tu_write_file(cut, data, len / 2), 0);
    ck_assert_int_eq(tu_run(human, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 1);
    expect_in(o.out, "\n  retained bytes        unavailable\n");
    ck_assert_msg(strstr(o.out, "retained at exit") == NULL, "%s", o.out);
    ck_assert_msg(strstr(o.out, ", retained unavailable, live at peak ") != NULL, "%s", o.out);
    tu_output_free(&o);
    free(data), free(rows), free(cut), free(cap), free(prog);
}
END_TEST

/* x (24 + 10 = 34 bytes, made in make) is reached by lib.store first in
 * time, then by app.b and app.a: app loads first and declares a first,
 * so a holds it.  Each list: [] and one push, 96 bytes, made in its
 * namespace's <init>.  g holds itself (96, <init>) and a map that holds
 * itself ({} then an insert: 368, main); c = [1] then itself (48 grown
 * to 96, main) is reached by no binding. */
START_TEST(holders_cycles_and_nothing)
{
    char *prog = tu_program("app.jett", "namespace app\nimport lib\nlet a = []\nlet b = []\n"
                                        "let g = []\n"
                                        "fn make() -> string {\n    return repeat(\"y\", 10)\n}\n"
                                        "fn main() {\n    let x = make()\n    lib.keep(x)\n"
                                        "    push(b, x)\n    push(a, x)\n    push(g, g)\n"
                                        "    let m = {}\n    m[\"self\"] = m\n    push(g, m)\n"
                                        "    let c = [1]\n    push(c, c)\n}\n");
    free(tu_program("lib.jett", "namespace lib\nlet store = []\n"
                                "fn keep(v: string) {\n    push(store, v)\n}\n"));
    struct tu_output o;
    run_ok(prog, true, &o, NULL);
    ck_assert_int_eq(o.status, 0);
    /* 34 + 96 * 5 + 368 = 882 bytes in 7 objects */
    expect_in(o.out, "\n    retained_bytes: 882\n");
    expect_in(o.out, "  retained[7]{holder,holder_path,holder_line,namespace,function,path,line,"
                     "retained_bytes,objects}:\n"
                     "    app.g,app.jett,5,app,main,app.jett,9,368,1\n"
                     "    app.a,app.jett,3,app,<init>,app.jett,1,96,1\n"
                     "    app.b,app.jett,4,app,<init>,app.jett,1,96,1\n"
                     "    app.g,app.jett,5,app,<init>,app.jett,1,96,1\n"
                     "    lib.store,lib.jett,2,lib,<init>,lib.jett,1,96,1\n"
                     "    unavailable,unavailable,unavailable,app,main,app.jett,9,96,1\n"
                     "    app.a,app.jett,3,app,make,app.jett,6,34,1\n");
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* A program without tasks whose binding reaches, through a channel, a
 * message (str(12345), 24 + 5 = 29 bytes), as many objects as main keeps
 * that no binding reaches (a list holding itself: [] grown to 4 slots, 32
 * + 64 = 96 bytes): the walk still credits that one to no holder.  Both
 * were made in main (line 5). */
START_TEST(no_holder_beside_a_message)
{
    char *prog = tu_program("cyc.jett", "namespace cyc\n"
                                        "\n"
                                        "let box = channel(4)\n"
                                        "\n"
                                        "fn main() {\n"
                                        "    send(box, str(12345))\n"
                                        "    let a = []\n"
                                        "    push(a, a)\n"
                                        "}\n");
    struct tu_output o;
    run_ok(prog, true, &o, NULL);
    ck_assert_int_eq(o.status, 0);
    expect_in(o.out, "\n    retained_bytes: 125\n");
    expect_in(o.out, "  retained[2]{holder,holder_path,holder_line,namespace,function,path,line,"
                     "retained_bytes,objects}:\n"
                     "    unavailable,unavailable,unavailable,cyc,main,cyc.jett,5,96,1\n"
                     "    cyc.box,cyc.jett,3,cyc,main,cyc.jett,5,29,1\n");
    tu_output_free(&o);
    free(prog);
}
END_TEST

static const char deep[] = "namespace app\nlet deep = []\n"
                           "fn main() {\n    let cur = deep\n    for i in 0..100 {\n"
                           "        let n = []\n        push(cur, n)\n        cur = n\n    }\n}\n";

/* deep holds 100 nested lists made in main (99 of one child, 96 bytes;
 * the last empty, 32): 9536, and itself (96, <init>): retained 9632 in
 * 101 objects.  The walk's slots: main, <init>, <truncated-stack> and
 * unknown, 4 * 40 = 160 bytes; with 3071 more the path holds 64 levels
 * and cannot double: the root and 64 lists are credited (6144 + 96), the
 * remainder is 9632 - 6240 = 3392 bytes in 101 - 65 = 36 objects. */
START_TEST(walk_budget_cut)
{
    char *prog = tu_program("deep.jett", deep);
    char *cap = tu_tmp_path("deep.jcap");
    setenv("JETT_TEST_WALK_BUDGET", "3231", 1);
    struct tu_output o;
    run_ok(prog, true, &o, cap);
    unsetenv("JETT_TEST_WALK_BUDGET");
    ck_assert_int_eq(o.status, 0);
    expect_in(o.out, "\n  status: complete\n");
    expect_in(o.out, "\n  retained_status: partial\n"
                     "  retained[3]{holder,holder_path,holder_line,namespace,function,path,line,"
                     "retained_bytes,objects}:\n"
                     "    app.deep,deep.jett,2,app,main,deep.jett,3,6144,64\n"
                     "    app.deep,deep.jett,2,app,<init>,deep.jett,1,96,1\n"
                     "    <remainder>,unavailable,unavailable,unavailable,unavailable,unavailable,"
                     "unavailable,3392,36\n");
    tu_output_free(&o);
    /* the capture says where the walk stopped */
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(tu_run(dump, NULL, 0, &o), 0);
    expect_in(o.out, "\nRETAINED namespace=\"app\" name=\"deep\" source=0 decl=14-27 "
                     "rows=0:6144:64,1:96:1 complete=false\n"
                     "RETAINED namespace=- name=- source=- decl=- rows=- complete=false\n"
                     "FINISH ");
    tu_output_free(&o);
    /* with the whole budget: everything, no remainder */
    run_ok(prog, true, &o, NULL);
    expect_in(o.out, "\n  retained_status: complete\n"
                     "  retained[2]{holder,holder_path,holder_line,namespace,function,path,line,"
                     "retained_bytes,objects}:\n"
                     "    app.deep,deep.jett,2,app,main,deep.jett,3,9536,100\n"
                     "    app.deep,deep.jett,2,app,<init>,deep.jett,1,96,1\n");
    tu_output_free(&o);
    free(cap), free(prog);
}
END_TEST

/* Without the walk the section is unavailable; the human report says
 * that 140416 bytes (137.13 KiB: 137.125 rounds away from zero) are
 * retained without holders. */
START_TEST(walk_skipped_is_unavailable)
{
    char *prog = tu_program("leak.jett", leak);
    setenv("JETT_TEST_SKIP_WALK", "1", 1);
    struct tu_output o;
    run_ok(prog, true, &o, NULL);
    expect_in(o.out, "\n  retained_status: unavailable\n  retained: unavailable\n");
    tu_output_free(&o);
    run_ok(prog, false, &o, NULL);
    unsetenv("JETT_TEST_SKIP_WALK");
    expect_in(o.err, "\nretained at exit: 137.13 KiB; holders unavailable\nbottlenecks: ");
    /* and no holder to point at: the leads start at the peak, which is
     * the end (nothing is freed), where row's 124000 bytes are 88.31% */
    expect_in(o.err, "\nlook first:\n  most live at peak  leak.row  leak.jett:6  121.09 KiB "
                     "(124000 bytes), 88.31% of peak live bytes\n  most allocated  leak.row  ");
    tu_output_free(&o);
    free(prog);
}
END_TEST

/* A runtime error ends the run; what the bindings hold is still walked:
 * keep holds "abc" + "d" (24 + 4 = 28 bytes, made in main) and itself
 * ([] and one push, 96, <init>).  The replay of the capture gives the
 * same section. */
START_TEST(runtime_error_still_walks)
{
    char *prog =
        tu_program("err.jett", "namespace err\nlet keep = []\n"
                               "fn main() {\n    let s = \"abc\"\n    push(keep, s + \"d\")\n"
                               "    fail(\"stop\")\n}\n");
    char *cap = tu_tmp_path("err.jcap");
    struct tu_output o;
    run_ok(prog, true, &o, cap);
    ck_assert_int_eq(o.status, 1);
    static const char rows[] =
        "\n  retained_status: complete\n"
        "  retained[2]{holder,holder_path,holder_line,namespace,function,path,line,"
        "retained_bytes,objects}:\n"
        "    err.keep,err.jett,2,err,<init>,err.jett,1,96,1\n"
        "    err.keep,err.jett,2,err,main,err.jett,3,28,1\n";
    expect_in(o.out, "\n  termination: runtime_error\n");
    expect_in(o.out, rows);
    tu_output_free(&o);
    const char *replay[] = {tu_jett, "profile", "replay", cap, "--agent", NULL};
    ck_assert_int_eq(tu_run(replay, NULL, 0, &o), 0);
    expect_in(o.out, rows);
    tu_output_free(&o);
    free(cap), free(prog);
}
END_TEST

/* The walk changes no total: the daemon's equal the heap observer's,
 * and its check of the walk against the live allocations passed (no
 * collector error); a CPU profile has no retained section. */
START_TEST(totals_unchanged_and_cpu_without)
{
    char *prog = tu_program("leak.jett", leak);
    char *totals = tu_tmp_path("heap.txt");
    setenv("JETT_TEST_HEAP_TOTALS", totals, 1);
    struct tu_output o;
    run_ok(prog, true, &o, NULL);
    unsetenv("JETT_TEST_HEAP_TOTALS");
    size_t len;
    char *heap = tu_read_file(totals, &len);
    ck_assert_ptr_nonnull(heap);
    expect_in(heap, "retained_bytes 140416\n");
    expect_in(o.out, "\n  status: complete\n");
    tu_output_free(&o);
    free(heap);
    const char *cpu[] = {tu_jett, "run", prog, "--profile", "--agent", NULL};
    ck_assert_int_eq(tu_run(cpu, NULL, 0, &o), 0);
    ck_assert_ptr_null(strstr(o.out, "retained"));
    tu_output_free(&o);
    free(totals), free(prog);
}
END_TEST

/* fixtures/programs/rowcache: report.render.row_cache (line 5) keeps
 * every row report.render.row (line 11) renders, each under a key: 2000
 * lines of 2+12+3+6+3+8+2 = 36 characters (24 + 36 = 60 bytes: 120000)
 * and 2000 keys "item-ID|dddd|dddddd" (24 + 17 + the digits of ID, ID
 * 0..1999: 82000 + 10 + 180 + 2700 + 4000 = 88890): 208890 bytes
 * (203.99 KiB) in 4000 objects.  The report's first lead names the
 * holder, and the first line after the leads the holder and the creation
 * site; once the cache is gone (after/) nothing is retained. */
START_TEST(planted_cache_named_first)
{
    char *before = tu_source_path("fixtures/programs/rowcache/before/main.jett");
    char *after = tu_source_path("fixtures/programs/rowcache/after/main.jett");
    struct tu_output o;
    run_ok(before, false, &o, NULL);
    ck_assert_int_eq(o.status, 0);
    static const char first[] = "\nretained at exit: 203.99 KiB held by report.render.row_cache "
                                "(src/render.jett:5): 4000 objects created in report.render.row "
                                "(src/render.jett:11)\n";
    expect_in(o.err, first);
    expect_in(o.err,
              "\nlook first:\n  largest holder  report.render.row_cache  src/render.jett:5  ");
    /* right after the leads, before the bottlenecks */
    const char *at = strstr(o.err, first), *prev = at;
    while (prev > o.err && prev[-1] != '\n')
        prev--;
    ck_assert_msg(strncmp(prev, "  most allocated  ", 18) == 0, "%s", o.err);
    expect_in(o.out, "pages: 40 rows: 2000 written bytes: 73960\n");
    tu_output_free(&o);
    run_ok(after, false, &o, NULL);
    expect_in(o.err, "\n  retained bytes        0\n");
    expect_in(o.err, "\nretained at exit: nothing\nbottlenecks: ");
    expect_in(o.out, "pages: 40 rows: 2000 written bytes: 73960\n");
    tu_output_free(&o);
    free(before), free(after);
}
END_TEST

Suite *retained_e2e_suite(void)
{
    Suite *s = suite_create("retained_e2e");
    TCase *t = tcase_create("retained");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, global_keeps_known_bytes);
    tcase_add_test(t, cut_capture_retains_nothing);
    tcase_add_test(t, holders_cycles_and_nothing);
    tcase_add_test(t, no_holder_beside_a_message);
    tcase_add_test(t, walk_budget_cut);
    tcase_add_test(t, walk_skipped_is_unavailable);
    tcase_add_test(t, runtime_error_still_walks);
    tcase_add_test(t, totals_unchanged_and_cpu_without);
    tcase_add_test(t, planted_cache_named_first);
    suite_add_tcase(s, t);
    return s;
}
