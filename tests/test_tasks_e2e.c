/*
 * End-to-end tests of profiled runs with tasks through the real binaries
 * (jett-profile(7), "Tasks"; jett-capture(5), TASK): the workers' ids on
 * every event, one TASK per task before its events, each task's samples
 * as the capture counts them, exact memory totals with several workers
 * recording at once, a program without tasks as it always was, and
 * SIGINT and the daemon's death while every task is blocked.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* CPU work without a heap event: burn(n) sums n remainders. */
#define BURN                                                                                       \
    "fn burn(n: int) -> int {\n"                                                                   \
    "    let s = 0\n"                                                                              \
    "    for i in 0..n {\n"                                                                        \
    "        s += i % 7\n"                                                                         \
    "    }\n"                                                                                      \
    "    return s\n"                                                                               \
    "}\n"

/* Four stages on a pipeline of channels: one burns CPU, the others pass
 * what it made along; lists cross every channel (copied, freed by the
 * receiver). */
static const char pipeline[] = "namespace pipe\n" BURN "fn source(out: channel, n: int) {\n"
                               "    for i in 0..n {\n"
                               "        send(out, [i, str(i)])\n"
                               "    }\n"
                               "    close(out)\n"
                               "}\n"
                               "fn work(inp: channel, out: channel) {\n"
                               "    let v = recv(inp)\n"
                               "    while v != nil {\n"
                               "        send(out, [burn(2000), v[1] + \"!\"])\n"
                               "        v = recv(inp)\n"
                               "    }\n"
                               "    close(out)\n"
                               "}\n"
                               "fn main() {\n"
                               "    let a = channel(4)\n"
                               "    let b = channel(4)\n"
                               "    spawn(source, a, 600)\n"
                               "    spawn(work, a, b)\n"
                               "    let n = 0\n"
                               "    let v = recv(b)\n"
                               "    while v != nil {\n"
                               "        n += len(v[1])\n"
                               "        v = recv(b)\n"
                               "    }\n"
                               "    print(n)\n"
                               "}\n";

/* The value of `key=` on a capture text line, -1 when absent ("-"). */
static long field(const char *line, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    if (!p || p[strlen(pat)] == '-')
        return -1;
    return atol(p + strlen(pat));
}

/* `jett profile dump` of a capture. */
static char *dump_of(const char *cap)
{
    struct tu_output o;
    const char *argv[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    char *text = o.out;
    free(o.err);
    return text;
}

/* The row of task `task` in a profile's tasks table, as "N,..." */
static const char *task_row(const char *doc, long task)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\n    %ld,", task);
    const char *tasks = strstr(doc, "\n  tasks[");
    return tasks ? strstr(tasks, pat) : NULL;
}

/* The last two comma-separated numbers of a row (samples and waiting,
 * or allocated and retained bytes). */
static void row_tail(const char *row, long long *a, long long *b)
{
    const char *end = strchr(row + 1, '\n');
    const char *c2 = end;
    while (c2 > row && *--c2 != ',')
        ;
    const char *c1 = c2;
    while (c1 > row && *--c1 != ',')
        ;
    *a = atoll(c1 + 1);
    *b = atoll(c2 + 1);
}

/* A CPU profile on three workers: every sample carries a worker id from
 * 1 to 3, the tasks are described in number order before their events,
 * and each task's row gives the jett and runtime samples and the
 * waiting samples that the capture holds for it. */
START_TEST(cpu_tasks_match_the_capture)
{
    char *p = tu_program("pipe.jett", pipeline), *cap = tu_tmp_path("cpu.jcap");
    struct tu_output o;
    const char *argv[] = {tu_jett,     "run", p,         "--profile",
                          "--workers", "3",   "--agent", "--profile-capture",
                          cap,         NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\n  status: complete\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n    task_attribution: true\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  tasks[3]{task,namespace,function,path,line,spawn_path,"
                                        "spawn_line,samples,waiting_samples}:\n"));
    ck_assert_ptr_nonnull(strstr(o.out, ",pipe,main,pipe.jett,23,unavailable,unavailable,"));
    ck_assert_ptr_nonnull(strstr(o.out, ",pipe,source,pipe.jett,9,pipe.jett,26,"));
    ck_assert_ptr_nonnull(strstr(o.out, ",pipe,work,pipe.jett,15,pipe.jett,27,"));
    char *text = dump_of(cap);
    long tasks = 0, running[4] = {0}, waiting[4] = {0}, samples = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  TASK ", 7) == 0) {
            ck_assert_int_eq(field(line, "task"), ++tasks);
            continue;
        }
        if (strncmp(line, "  CPU_SAMPLE ", 13) != 0)
            continue;
        samples++;
        long task = field(line, "task"), thread = field(line, "thread");
        ck_assert_msg(thread >= 1 && thread <= 3, "%s", line);
        ck_assert_msg(task == -1 || (task >= 1 && task <= tasks), "%s", line);
        if (task < 0)
            continue;
        if (strstr(line, " state=jett ") || strstr(line, " state=runtime "))
            running[task]++;
        else if (strstr(line, " state=waiting "))
            waiting[task]++;
    }
    ck_assert_int_eq(tasks, 3);
    ck_assert_int_gt(samples, 0);
    for (long t = 1; t <= 3; t++) {
        const char *row = task_row(o.out, t);
        ck_assert_ptr_nonnull(row);
        long long a, b;
        row_tail(row, &a, &b);
        ck_assert_int_eq(a, running[t]);
        ck_assert_int_eq(b, waiting[t]);
    }
    free(text);
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    free(p);
}
END_TEST

/* Runs `src` on one worker with the timer kept from ticking
 * (JETT_TEST_TIMER_ASLEEP), once its output was `out`; task `task`'s
 * running (jett) and waiting samples in the capture, and the report in
 * `report` (the caller frees it). */
static void asleep_run(const char *name, const char *src, const char *out, long task, long *running,
                       long *waiting, char **report)
{
    char *p = tu_program(name, src), *cap = tu_tmp_path("asleep.jcap");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile", "--workers", "1", "--profile-capture",
                          cap,     NULL};
    setenv("JETT_TEST_TIMER_ASLEEP", "1", 1);
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_TIMER_ASLEEP");
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_str_eq(o.out, out);
    char *text = dump_of(cap);
    *running = *waiting = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  CPU_SAMPLE ", 13) != 0 || field(line, "task") != task)
            continue;
        *running += strstr(line, " state=jett ") != NULL;
        *waiting += strstr(line, " state=waiting ") != NULL;
    }
    free(text);
    free(o.out);
    *report = o.err;
    tu_remove_in_tmpdir(cap);
    free(p);
}

/* A consumer that computes in bursts between recv calls, each burst
 * longer than the longest gap between deadlines (1.5 periods), while
 * main sleeps between sends.  With the timer thread kept from ticking
 * (JETT_TEST_TIMER_ASLEEP, as a scheduler that runs it only once a worker
 * parks would), the deadlines of each burst are ticked by the consumer as
 * it parks, before its state changes: at least one running sample per
 * burst, where a tick taken after the park made them all waiting.  One
 * worker, so that nothing else ticks while a burst runs. */
static const char bursts[] = "namespace bursts\n" BURN "fn consumer(inp: channel) -> int {\n"
                             "    let acc = 0\n"
                             "    let v = recv(inp)\n"
                             "    while v != nil {\n"
                             "        acc += burn(400000)\n"
                             "        v = recv(inp)\n"
                             "    }\n"
                             "    return acc\n"
                             "}\n"
                             "fn main() {\n"
                             "    let c = channel(1)\n"
                             "    let t = spawn(consumer, c)\n"
                             "    for i in 0..20 {\n"
                             "        send(c, i)\n"
                             "        sleep(3)\n"
                             "    }\n"
                             "    close(c)\n"
                             "    print(join(t))\n"
                             "}\n";

START_TEST(bursts_run_though_the_timer_lags)
{
    long running, waiting;
    char *report;
    asleep_run("bursts.jett", bursts, "23999940\n" /* 20 bursts of 1199997 */, 2, &running,
               &waiting, &report);
    ck_assert_msg(running >= 20, "the consumer ran 20 bursts but has %ld running samples:\n%s",
                  running, report);
    free(report);
}
END_TEST

/* The other side: main sleeps 30 times, and the deadlines of each sleep,
 * ticked by main itself as it resumes (the timer asleep again), are its
 * waiting samples, not requests of the worker it now runs on.  Main runs
 * for microseconds between two sleeps, so at most a few ticks fall while
 * it runs; taking each resume's ticks as running would give it 30. */
static const char sleeper[] = "namespace sleeper\n"
                              "fn nothing() -> int {\n"
                              "    return 1\n"
                              "}\n"
                              "fn main() {\n"
                              "    let n = join(spawn(nothing))\n"
                              "    for i in 0..30 {\n"
                              "        sleep(4)\n"
                              "    }\n"
                              "    print(n)\n"
                              "}\n";

START_TEST(waits_wait_though_the_timer_lags)
{
    long running, waiting;
    char *report;
    asleep_run("sleeper.jett", sleeper, "1\n", 1, &running, &waiting, &report);
    ck_assert_msg(running < 10 && waiting >= 30 * 4 * 2 / 3,
                  "main slept 30 times 4 ms: %ld running, %ld waiting samples:\n%s", running,
                  waiting, report);
    free(report);
}
END_TEST

/* Memory with four workers recording at once: ids and sequences in one
 * order (no collector error), every total equal to the heap observer's
 * own, and the allocated bytes of the tasks adding up to the run's (every
 * heap event of a run with tasks is some task's). */
START_TEST(memory_exact_with_several_workers)
{
    char *p = tu_program("pipe.jett", pipeline);
    char totals[600];
    snprintf(totals, sizeof totals, "%s/heap.txt", tu_dir);
    setenv("JETT_TEST_HEAP_TOTALS", totals, 1);
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--workers", "4", "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    unsetenv("JETT_TEST_HEAP_TOTALS");
    ck_assert_msg(o.status == 0, "%s", o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\n  status: complete\n"));
    tu_expect_heap_totals(o.out, totals);
    long long sum = 0;
    for (long t = 1; t <= 3; t++) {
        const char *row = task_row(o.out, t);
        ck_assert_ptr_nonnull(row);
        long long alloc, kept;
        row_tail(row, &alloc, &kept);
        sum += alloc;
    }
    ck_assert_int_eq(sum, tu_profile_total(o.out, "allocated_bytes"));
    ck_assert_int_gt(sum, 0);
    tu_output_free(&o);
    free(p);
}
END_TEST

/* Each worker keeps its heap events and appends them to the stream a
 * block at a time (agent/memblock.h): objects that live across blocks
 * (a string appended to, and moved, and a list grown over more events
 * than a block holds), values sent to a task that frees them on another
 * worker while the sender goes on without a heap event, a task's
 * result dropped by its worker, and a task spawned just after another
 * ended, with no event between (its state may take the other's place).  With four workers
 * the stream has no collector error, matches the heap observer's own
 * totals, and everything but the peak (which the interleaving decides)
 * is what one worker, which keeps no blocks, gives. */
static const char blocks[] = "namespace blocks\n"
                             "fn grow(n: int) -> list {\n"
                             "    let out = []\n"
                             "    let s = \"\"\n"
                             "    for i in 0..n {\n"
                             "        s += \"ab\"\n"
                             "        push(out, str(i))\n"
                             "    }\n"
                             "    push(out, s)\n"
                             "    return out\n"
                             "}\n" BURN "fn produce(out: channel, rounds: int) {\n"
                             "    for r in 0..rounds {\n"
                             "        send(out, grow(300))\n"
                             "        send(out, [str(r)])\n"
                             "        burn(20000)\n"
                             "    }\n"
                             "    close(out)\n"
                             "}\n"
                             "fn consume(inp: channel) -> int {\n"
                             "    let n = 0\n"
                             "    let v = recv(inp)\n"
                             "    while v != nil {\n"
                             "        n += len(v)\n"
                             "        v = recv(inp)\n"
                             "    }\n"
                             "    return n\n"
                             "}\n"
                             "fn label(n: int) -> int {\n"
                             "    let out = []\n"
                             "    for x in 0..n {\n"
                             "        push(out, str(x))\n"
                             "    }\n"
                             "    return len(out)\n"
                             "}\n"
                             "fn main() {\n"
                             "    let l = join(spawn(label, 5))\n"
                             "    let m = join(spawn(label, 7))\n"
                             "    print(l + m)\n"
                             "    let c = channel(8)\n"
                             "    spawn(produce, c, 20)\n"
                             "    let t = spawn(consume, c)\n"
                             "    let k = spawn(grow, 3000)\n"
                             "    let kept = join(k)\n"
                             "    print(join(t) + len(kept))\n"
                             "}\n";

/* The tasks table of doc, up to the next field. */
static char *tasks_table(const char *doc)
{
    const char *at = strstr(doc, "\n  tasks[");
    ck_assert_ptr_nonnull(at);
    const char *end = strstr(at + 1, "\n  ");
    while (end && end[3] == ' ')
        end = strstr(end + 1, "\n  ");
    return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

START_TEST(memory_blocks_agree_with_one_worker)
{
    char *p = tu_program("blocks.jett", blocks);
    char totals[600];
    snprintf(totals, sizeof totals, "%s/heap.txt", tu_dir);
    struct tu_output one, four;
    const char *argv1[] = {tu_jett,     "run", p,         "--profile-memory",
                           "--workers", "1",   "--agent", NULL};
    ck_assert_int_eq(tu_run(argv1, NULL, 0, &one), 0);
    ck_assert_msg(one.status == 0, "%s", one.out);
    setenv("JETT_TEST_HEAP_TOTALS", totals, 1);
    const char *argv4[] = {tu_jett,     "run", p,         "--profile-memory",
                           "--workers", "4",   "--agent", NULL};
    ck_assert_int_eq(tu_run(argv4, NULL, 0, &four), 0);
    unsetenv("JETT_TEST_HEAP_TOTALS");
    ck_assert_msg(four.status == 0, "%s", four.out);
    ck_assert_msg(strstr(four.out, "\n  status: complete\n"), "%s", four.out);
    ck_assert_ptr_nonnull(strstr(four.out, "\nstdout: \"12\\n9041\\n\"\n"));
    tu_expect_heap_totals(four.out, totals);
    for (size_t i = 0; i < 6; i++) /* the peak aside, which the interleaving decides */
        if (strcmp(tu_heap_total_keys[i], "peak_live_bytes") != 0)
            ck_assert_int_eq(tu_profile_total(four.out, tu_heap_total_keys[i]),
                             tu_profile_total(one.out, tu_heap_total_keys[i]));
    /* about 14,000 events: many blocks */
    ck_assert_int_gt(tu_profile_total(four.out, "allocation_count"), 10000);
    char *t1 = tasks_table(one.out), *t4 = tasks_table(four.out);
    ck_assert_str_eq(t4, t1);
    free(t1), free(t4);
    tu_output_free(&one), tu_output_free(&four);
    free(p);
}
END_TEST

/* A program that never names spawn: no TASK in its capture, no task and
 * worker 0 on every event, no tasks field and no task attribution, and
 * one thread jett-runtime, whatever --workers says. */
START_TEST(program_without_tasks_unchanged)
{
    char *p = tu_program("plain.jett", "namespace plain\nfn main() {\n    let s = []\n"
                                       "    for i in 0..20000 {\n        push(s, str(i))\n"
                                       "    }\n    print(len(s))\n}\n");
    char *cap = tu_tmp_path("plain.jcap");
    struct tu_output o;
    const char *argv[] = {tu_jett,     "run", p,         "--profile-memory",
                          "--workers", "8",   "--agent", "--profile-capture",
                          cap,         NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_null(strstr(o.out, "tasks"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n    task_attribution: false\n"));
    char *text = dump_of(cap);
    ck_assert_ptr_null(strstr(text, "TASK "));
    long events = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "  ALLOC ", 8) == 0) {
            events++;
            ck_assert_int_eq(field(line, "task"), -1);
            ck_assert_int_eq(field(line, "thread"), 0);
        }
    ck_assert_int_gt(events, 20000);
    free(text);
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    free(p);
}
END_TEST

/* Calls counted on three workers at once add up exactly: step is called
 * 1000 + 2000 + 3000 times from its one call site (in work, at offset
 * 139), work 3 times (each task's entry is a call, from no call site),
 * main and <init> once.  Function ids: step 0, work 1, main 2, <init> 3. */
START_TEST(calls_exact_across_workers)
{
    char *p = tu_program("calls.jett", "namespace calls.main\n"
                                       "\n"
                                       "fn step(i: int) -> int {\n"
                                       "    return i % 7\n"
                                       "}\n"
                                       "\n"
                                       "fn work(n: int) -> int {\n"
                                       "    let s = 0\n"
                                       "    for i in 0..n {\n"
                                       "        s += step(i)\n"
                                       "    }\n"
                                       "    return s\n"
                                       "}\n"
                                       "\n"
                                       "fn main() {\n"
                                       "    let a = spawn(work, 1000)\n"
                                       "    let b = spawn(work, 2000)\n"
                                       "    let c = spawn(work, 3000)\n"
                                       "    print(join(a) + join(b) + join(c))\n"
                                       "}\n");
    char *cap = tu_tmp_path("calls.jcap");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", "--workers", "3", p, "--profile", "--profile-capture",
                          cap,     NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_str_eq(o.out, "17986\n"); /* i % 7 over 0..n: 2997 + 5995 + 8994 */
    char *text = dump_of(cap);
    ck_assert_msg(strstr(text, "\nCALLS functions=0:6000,1:3,2:1,3:1 sites=1:139-146:6000\n"), "%s",
                  text);
    free(text);
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    free(p);
}
END_TEST

/* Every task blocked or asleep: main sleeps in a loop, two tasks wait on
 * a channel no one sends to, one waits to join them. */
static const char blocked[] = "namespace blocked\n"
                              "fn wait(ch: channel) {\n"
                              "    recv(ch)\n"
                              "}\n"
                              "fn joiner(t: task) {\n"
                              "    join(t)\n"
                              "}\n"
                              "fn main() {\n"
                              "    let ch = channel(1)\n"
                              "    let t = spawn(wait, ch)\n"
                              "    spawn(wait, ch)\n"
                              "    spawn(joiner, t)\n"
                              "    print(\"ready\")\n"
                              "    while true {\n"
                              "        sleep(1000)\n"
                              "    }\n"
                              "}\n";

/* SIGINT once every worker is idle: the run ends interrupted (130), the
 * profile is the daemon's, partial / interrupted, with its four tasks. */
START_TEST(sigint_with_tasks_blocked)
{
    char *p = tu_program("blocked.jett", blocked), *out = tu_tmp_path("int.toon");
    const char *argv[] = {tu_jett, "run", p, "--profile", "--workers", "2", "--agent", NULL};
    pid_t pid = tu_spawn(argv, out);
    ck_assert_int_eq(tu_wait_idle_workers(pid, 2), 0);
    kill(pid, SIGINT);
    ck_assert_int_eq(tu_wait(pid), 130);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_ptr_nonnull(strstr(doc, "\ntermination: interrupted\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\n  partial_reason: interrupted\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\n  tasks[4]{"));
    free(doc);
    tu_remove_in_tmpdir(out);
    free(p);
}
END_TEST

/* The daemon killed while every task is blocked, then SIGINT: the run
 * still ends interrupted, with the launcher's own profile. */
START_TEST(daemon_death_with_tasks_blocked)
{
    char *p = tu_program("blocked.jett", blocked), *out = tu_tmp_path("dead.toon");
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--workers", "3", "--agent", NULL};
    ck_assert_int_eq(tu_disturb_daemon_idle(argv, out, 3, SIGKILL, SIGINT), 130);
    size_t len;
    char *doc = tu_read_file(out, &len);
    ck_assert_ptr_nonnull(doc);
    ck_assert_ptr_nonnull(strstr(doc, "\n  status: unavailable\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\n  partial_reason: collector_failure\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\n  tasks: unavailable\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\nerror_kind: interrupted\n"));
    free(doc);
    tu_remove_in_tmpdir(out);
    free(p);
}
END_TEST

/* The retained walk of a run with tasks goes from task 1's bindings
 * through the channels and tasks they hold.  By hand (jett(1)'s sizes):
 * the list send copies holds 5 strings of 24 + 100 bytes and has a
 * capacity of 5: 5 * 124 + 32 + 5 * 16 = 732 bytes in 6 objects, created
 * in filler (the send's statement); task 3's result is make's own list,
 * grown to 4 slots, and 3 strings: 32 + 4 * 16 + 3 * 124 = 468 bytes in 4
 * objects, created in make; `done` itself grew from 0 to 4 slots: 96
 * bytes, created in <init>. */
START_TEST(retained_through_channels_and_tasks)
{
    char *p = tu_program("ret.jett", "namespace ret\n"
                                     "let box = channel(10)\n"
                                     "let done = []\n"
                                     "fn make(n: int) -> list {\n"
                                     "    let out = []\n"
                                     "    for i in 0..n {\n"
                                     "        push(out, repeat(\"x\", 100))\n"
                                     "    }\n"
                                     "    return out\n"
                                     "}\n"
                                     "fn filler(ch: channel) {\n"
                                     "    send(ch, make(5))\n"
                                     "}\n"
                                     "fn main() {\n"
                                     "    join(spawn(filler, box))\n"
                                     "    push(done, spawn(make, 3))\n"
                                     "    join(done[0])\n"
                                     "}\n");
    struct tu_output o;
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--workers", "2", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(strstr(o.err,
                         "retained at exit: 732 bytes held by ret.box (ret.jett:2): 6 objects "
                         "created in ret.filler (ret.jett:11)\n"
                         "  468 bytes held by ret.done (ret.jett:3): 4 objects created in "
                         "ret.make (ret.jett:4)\n"
                         "  96 bytes held by ret.done (ret.jett:3): 1 object created in "
                         "ret.<init> (ret.jett:1)\n"),
                  "%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.err, "  retained bytes        1.27 KiB (1296)\n"));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* A task's result crosses by the copy the task makes as its function
 * returns: the first join takes it, a second join copies the result
 * again as the joiner's work.  By hand (jett(1)'s sizes): make's list
 * grows from 32 bytes to 4 then 8 slots (64 bytes each time) and holds
 * five strings of 24 + 100 bytes, 5 * 124 + 160 = 780 bytes in six
 * allocations; its copy at `return out` has a capacity of 5: 32 + 5 * 16
 * + 620 = 732 bytes in six allocations, which task 2 made (780 + 732 =
 * 1512) and main keeps in `kept`.  The second join is main's own copy of
 * 732 bytes, at its statement, kept in `again`.  The original goes with
 * the task when main's frame releases its handle. */
static const char keep_text[] = "namespace keep\n"
                                "\n"
                                "let kept = nil\n"
                                "let again = nil\n"
                                "\n"
                                "fn make(n: int) -> list {\n"
                                "    let out = []\n"
                                "    for i in 0..n {\n"
                                "        push(out, repeat(\"x\", 100))\n"
                                "    }\n"
                                "    return out\n"
                                "}\n"
                                "\n"
                                "fn main() {\n"
                                "    let t = spawn(make, 5)\n"
                                "    kept = join(t)\n"
                                "    again = join(t)\n"
                                "}\n";

START_TEST(result_copied_by_the_task)
{
    char *p = tu_program("keep.jett", keep_text);
    const char *workers = _i == 0 ? "1" : "2";
    struct tu_output o;
    const char *argv[] = {tu_jett,     "run",   p,         "--profile-memory",
                          "--workers", workers, "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\n  status: complete\n"));
    const char *want[] = {
        /* the tasks table: what each task made, and what of it is left */
        "\n    2,keep,make,keep.jett,6,keep.jett,15,1512,732\n"
        "    1,keep,main,keep.jett,14,unavailable,unavailable,732,732\n",
        /* the holders: the first join kept task 2's objects, made in make */
        "\n    keep.again,keep.jett,4,keep,main,keep.jett,14,732,6\n"
        "    keep.kept,keep.jett,3,keep,make,keep.jett,6,732,6\n",
        /* the copies' lines: make's return, main's second join */
        "\n        keep.jett,11,5,6,732,return out,false\n",
        "\n        keep.jett,17,5,6,732,again = join(t),false\n",
        "\n    retained_bytes: 1464\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(o.out, want[i]), "--workers %s: no %s in\n%s", workers, want[i],
                      o.out);
    tu_output_free(&o);
    free(p);
}
END_TEST

Suite *tasks_e2e_suite(void);
Suite *tasks_e2e_suite(void)
{
    Suite *s = suite_create("tasks_e2e");
    TCase *t = tcase_create("tasks_e2e");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, cpu_tasks_match_the_capture);
    tcase_add_test(t, bursts_run_though_the_timer_lags);
    tcase_add_test(t, waits_wait_though_the_timer_lags);
    tcase_add_test(t, memory_exact_with_several_workers);
    tcase_add_test(t, memory_blocks_agree_with_one_worker);
    tcase_add_test(t, program_without_tasks_unchanged);
    tcase_add_test(t, calls_exact_across_workers);
    tcase_add_test(t, sigint_with_tasks_blocked);
    tcase_add_test(t, daemon_death_with_tasks_blocked);
    tcase_add_test(t, retained_through_channels_and_tasks);
    tcase_add_loop_test(t, result_copied_by_the_task, 0, 2);
    suite_add_tcase(s, t);
    return s;
}
