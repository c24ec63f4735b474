/* Tasks and channels (JETT.md, "Tasks and channels"; jett(1)): copies
 * across tasks, namespace bindings as of the spawn, join of failures,
 * the close rules, deadlock, the end of the run at main's return,
 * interrupts with blocked tasks, the worker threads, and the same output
 * for every number of workers. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/interp_harness.h"

#define HEAD "namespace t.main\n"

struct tk {
    struct interp_state *s;
    struct interp_program *p;
    char *dir;
    pthread_mutex_t lock;
    char out[1 << 16], err[1 << 16];
    char threads[1024];          /* thread names seen printing, once each */
    const char *interrupt_after; /* interrupt once this is printed and the workers idle */
    pthread_t helper;
    bool helper_started;
};

static void tk_add_thread(struct tk *t)
{
    char name[32], key[40];
    pthread_getname_np(pthread_self(), name, sizeof name);
    snprintf(key, sizeof key, "%s ", name);
    if (!strstr(t->threads, key))
        strncat(t->threads, key, sizeof t->threads - strlen(t->threads) - 1);
}

/* Whether every thread named jett-worker-* sleeps (state S): no task
 * runs, so every task is blocked. */
static bool tk_workers_idle(void)
{
    DIR *d = opendir("/proc/self/task");
    bool idle = true, any = false;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], stat[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        char *open = strchr(stat, '('), *close = strrchr(stat, ')');
        if (!open || !close || strncmp(open + 1, "jett-worker-", 12) != 0)
            continue;
        any = true;
        if (close[2] != 'S')
            idle = false;
    }
    if (d)
        closedir(d);
    return any && idle;
}

static void *tk_interrupt_when_idle(void *arg)
{
    struct tk *t = arg;
    /* started from a worker, whose name it would keep */
    pthread_setname_np(pthread_self(), "tk-helper");
    struct timespec tick = {0, 1000000};
    /* three looks in a row: a worker may sleep for a moment on a lock */
    for (int calm = 0; calm < 3;) {
        nanosleep(&tick, NULL);
        calm = tk_workers_idle() ? calm + 1 : 0;
    }
    interp_interrupt(t->s, SIGINT);
    return NULL;
}

static void tk_write(struct tk *t, char *buf, const char *data, size_t len)
{
    pthread_mutex_lock(&t->lock);
    size_t have = strlen(buf);
    if (have + len < sizeof t->out) {
        memcpy(buf + have, data, len);
        buf[have + len] = '\0';
    }
    tk_add_thread(t);
    bool go = t->interrupt_after && !t->helper_started && strstr(t->out, t->interrupt_after);
    if (go)
        t->helper_started = pthread_create(&t->helper, NULL, tk_interrupt_when_idle, t) == 0;
    pthread_mutex_unlock(&t->lock);
}

static void tk_out(void *ctx, const char *data, size_t len)
{
    struct tk *t = ctx;
    tk_write(t, t->out, data, len);
}

static void tk_err(void *ctx, const char *data, size_t len)
{
    struct tk *t = ctx;
    tk_write(t, t->err, data, len);
}

/* Loads text (which must load) for a run on `workers` workers. */
static void tk_load(struct tk *t, const char *text, uint32_t workers)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->dir = tu_tmpdir();
    harness_write(t->dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", t->dir);
    struct interp_diags d = {0};
    t->p = interp_load(path, NULL, &d);
    ck_assert_msg(t->p != NULL, "%s", d.len ? d.items[0].message : "");
    struct interp_host host = {t, tk_out, tk_err, NULL, NULL};
    struct interp_options opts = {NULL, 0, 0, workers};
    t->s = interp_new(t->p, &host, &opts);
}

static void tk_free(struct tk *t)
{
    if (t->helper_started)
        pthread_join(t->helper, NULL);
    interp_free(t->s);
    interp_program_free(t->p);
    harness_rmtree(t->dir);
    free(t->dir);
    pthread_mutex_destroy(&t->lock);
}

/* Runs `fn main() { BODY }` plus `defs` on each number of workers and
 * checks that stdout is `want` every time. */
static void expect_out(const char *defs, const char *body, const char *want)
{
    static const uint32_t workers[] = {1, 2, 3, 8};
    char src[16384];
    snprintf(src, sizeof src, HEAD "%s\nfn main() {\n%s\n}\n", defs, body);
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        struct tk t;
        tk_load(&t, src, workers[i]);
        struct interp_result r;
        ck_assert_int_eq(interp_run(t.s, &r), 0);
        ck_assert_msg(r.termination == INTERP_RETURNED, "%u workers: %s", workers[i],
                      r.message ? r.message : "?");
        ck_assert_msg(strcmp(t.out, want) == 0, "%u workers: got\n%s\nwant\n%s", workers[i], t.out,
                      want);
        interp_result_free(&r);
        tk_free(&t);
    }
}

/* Runs a program that must end with a runtime error: its message. */
static void expect_error(const char *defs, const char *body, const char *message,
                         const char *err_has)
{
    char src[16384];
    snprintf(src, sizeof src, HEAD "%s\nfn main() {\n%s\n}\n", defs, body);
    struct tk t;
    tk_load(&t, src, 2);
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.message, message);
    if (err_has)
        ck_assert_msg(strstr(r.trace, err_has), "trace: %s", r.trace);
    interp_result_free(&r);
    tk_free(&t);
}

#define SQUARE "fn square(x: int) -> int {\n    return x * x\n}\n"

START_TEST(spawn_and_join)
{
    expect_out(SQUARE,
               "    let a = spawn(square, 3)\n    let b = spawn(square, 4)\n"
               "    print(join(b), join(a), join(a))\n    print(a, b, a == a, a == b)\n",
               "16 9 9\n<task 2> <task 3> true false\n");
}
END_TEST

START_TEST(arguments_and_results_are_copies)
{
    /* the task changes its copy of the list; the spawner's is untouched,
     * and what join gives is the joiner's own copy */
    expect_out("fn grow(xs: list) -> list {\n    push(xs, 99)\n    return xs\n}\n",
               "    let xs = [1, 2]\n    let t = spawn(grow, xs)\n    push(xs, 3)\n"
               "    let r = join(t)\n    push(r, 100)\n    print(xs, r, join(t))\n",
               "[1, 2, 3] [1, 2, 99, 100] [1, 2, 99]\n");
}
END_TEST

START_TEST(copies_keep_their_shape)
{
    /* an object reached twice is copied once, and a cycle stays a cycle */
    expect_out("fn check(pair: list, ring: list) -> list {\n    push(pair[0], \"x\")\n"
               "    push(ring[0], 2)\n    return [len(pair[1]), len(ring)]\n}\n",
               "    let inner = []\n    let ring = [1]\n    ring[0] = ring\n"
               "    print(join(spawn(check, [inner, inner], ring)), len(ring))\n",
               "[1, 2] 1\n");
}
END_TEST

START_TEST(secrets_stay_secret)
{
    expect_out("fn show(v) {\n    print(v, [v])\n}\n",
               "    join(spawn(show, secret(\"pw\")))\n    let ch = channel(1)\n"
               "    send(ch, secret(5))\n    print(recv(ch))\n",
               "<secret> [<secret>]\n<secret>\n");
}
END_TEST

START_TEST(bindings_as_of_the_spawn)
{
    /* the task sees the bindings as they were when it was spawned, and its
     * own assignments are its own */
    expect_out("let counter = 1\nlet names = [\"a\"]\n"
               "fn look() -> list {\n    let seen = [counter, len(names)]\n    counter = 50\n"
               "    push(names, \"z\")\n    return seen\n}\n",
               "    counter = 2\n    let t = spawn(look)\n    counter = 3\n    push(names, \"b\")\n"
               "    print(join(t), counter, names)\n",
               "[2, 1] 3 [\"a\", \"b\"]\n");
}
END_TEST

START_TEST(channels_are_fifo_and_copy)
{
    expect_out("fn produce(ch: channel, n: int) {\n    for i in 0..n {\n        send(ch, [i])\n"
               "    }\n    close(ch)\n}\n",
               "    let ch = channel(3)\n    let p = spawn(produce, ch, 10)\n    let got = []\n"
               "    let v = recv(ch)\n    while v != nil {\n        push(got, v[0])\n"
               "        v = recv(ch)\n    }\n    join(p)\n    print(got, recv(ch))\n",
               "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9] nil\n");
}
END_TEST

START_TEST(close_rules)
{
    expect_out("fn blocked_send(ch: channel, ready: channel) -> string {\n    send(ch, 1)\n"
               "    send(ready, 0)\n    try {\n        send(ch, 2)\n    } catch e {\n"
               "        return e\n    }\n    return \"sent\"\n}\n"
               "fn blocked_recv(ch: channel) {\n    return recv(ch)\n}\n",
               /* a receiver blocked on an empty channel gets nil at close */
               "    let a = channel(1)\n    let r = spawn(blocked_recv, a)\n    sleep(0)\n"
               "    close(a)\n    print(join(r))\n"
               /* a sender blocked on a full one gets the error */
               "    let b = channel(1)\n    let ready = channel(1)\n"
               "    let s = spawn(blocked_send, b, ready)\n    recv(ready)\n    close(b)\n"
               "    print(join(s))\n"
               /* what was sent before the close is still received */
               "    let c = channel(2)\n    send(c, \"kept\")\n    close(c)\n"
               "    print(recv(c), recv(c))\n"
               "    try {\n        send(c, 1)\n    } catch e {\n        print(e)\n    }\n"
               "    try {\n        close(c)\n    } catch e {\n        print(e)\n    }\n",
               "nil\nsend: the channel is closed\nkept nil\nsend: the channel is closed\n"
               "close: the channel is already closed\n");
}
END_TEST

START_TEST(join_of_a_failure)
{
    expect_out(
        "fn bad(n: int) -> int {\n    if n > 1 {\n        fail(\"too many: \" + str(n))\n"
        "    }\n    return n\n}\n",
        "    let t = spawn(bad, 7)\n    for i in 0..2 {\n        try {\n            join(t)\n"
        "        } catch e {\n            print(e)\n        }\n    }\n",
        "task 2 failed: too many: 7\ntask 2 failed: too many: 7\n");
}
END_TEST

START_TEST(failure_prints_its_trace_with_the_task)
{
    struct tk t;
    tk_load(&t,
            HEAD "fn bad() {\n    fail(\"boom\")\n}\nfn main() {\n    let t = spawn(bad)\n"
                 "    try {\n        join(t)\n    } catch e {\n        print(e)\n    }\n}\n",
            2);
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    ck_assert_str_eq(t.out, "task 2 failed: boom\n");
    ck_assert_str_eq(t.err, "main.jett:3:5: runtime error: boom\n"
                            "  at t.main.bad (main.jett:3:5)\n"
                            "  in task 2, spawned at main.jett:6:13\n");
    interp_result_free(&r);
    tk_free(&t);
}
END_TEST

START_TEST(errors_of_spawn_join_and_channels)
{
    expect_error("fn f(x: int) {\n}\n", "    let g = f\n    spawn(g, \"s\")\n",
                 "main.jett:7:5: runtime error: spawn: argument 'x' of f must be int, got string",
                 "  in task 1 (main)\n");
    expect_error("", "    let g = print\n    spawn(g)\n",
                 "main.jett:5:5: runtime error: spawn: argument 1 must be a function declared "
                 "with fn, got fn",
                 NULL);
    expect_error("fn me(t) {\n}\n",
                 "    let c = channel(1)\n    join(spawn(me, c))\n"
                 "    let x = [c]\n    join(x[0])\n",
                 "main.jett:9:5: runtime error: join: argument 1 must be task, got channel", NULL);
    expect_error("", "    let n = 0\n    channel(n)\n",
                 "main.jett:5:5: runtime error: channel: capacity must be from 1 to 1000000, got 0",
                 NULL);
    expect_error("fn self_join(ch: channel) {\n    join(recv(ch))\n}\n",
                 "    let ch = channel(1)\n    let t = spawn(self_join, ch)\n    send(ch, t)\n"
                 "    join(t)\n",
                 "main.jett:10:5: runtime error: task 2 failed: join: a task cannot join itself",
                 NULL);
}
END_TEST

START_TEST(deadlock_is_an_error_in_main)
{
    expect_error("fn wait(ch: channel) {\n    recv(ch)\n}\n",
                 "    let ch = channel(1)\n    let t = spawn(wait, ch)\n    join(t)\n",
                 "main.jett:9:5: runtime error: deadlock: every task is blocked",
                 "  at t.main.main (main.jett:9:5)\n  in task 1 (main)\n");
    /* without tasks, a receive that could never end is the same error */
    struct harness_run r;
    harness_run(&r, HEAD "fn main() {\n    let ch = channel(1)\n    recv(ch)\n}\n");
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.result.message,
                     "main.jett:4:5: runtime error: deadlock: every task is blocked");
    harness_free(&r);
    /* caught, it can be retried: still a deadlock */
    expect_out("fn wait(ch: channel) {\n    recv(ch)\n}\n",
               "    let ch = channel(1)\n    let t = spawn(wait, ch)\n    for i in 0..2 {\n"
               "        try {\n            join(t)\n        } catch e {\n            print(e)\n"
               "        }\n    }\n    send(ch, 1)\n    join(t)\n    print(\"unblocked\")\n",
               "deadlock: every task is blocked\ndeadlock: every task is blocked\nunblocked\n");
}
END_TEST

START_TEST(main_return_ends_the_run)
{
    /* blocked, sleeping, spinning and never-started tasks are all
     * stopped when main returns, and nothing they would print is */
    struct tk t;
    tk_load(&t,
            HEAD "fn wait(ch: channel) {\n    recv(ch)\n    print(\"never\")\n}\n"
                 "fn nap() {\n    sleep(600000)\n    print(\"never\")\n}\n"
                 "fn spin() {\n    while true {\n    }\n}\n"
                 "fn main() -> int {\n    let ch = channel(1)\n    spawn(wait, ch)\n"
                 "    spawn(nap)\n    spawn(spin)\n    spawn(spin)\n    for i in 0..50 {\n"
                 "        spawn(wait, ch)\n    }\n    return 7\n}\n",
            2);
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    ck_assert_int_eq(r.exit_code, 7);
    ck_assert_str_eq(t.out, "");
    ck_assert_str_eq(t.err, "");
    interp_result_free(&r);
    tk_free(&t);
}
END_TEST

START_TEST(interrupt_with_blocked_tasks)
{
    struct tk t;
    tk_load(&t,
            HEAD "fn wait(ch: channel) {\n    recv(ch)\n}\nfn nap() {\n    sleep(600000)\n}\n"
                 "fn main() {\n    let ch = channel(1)\n    let a = spawn(wait, ch)\n"
                 "    spawn(nap)\n    print(\"ready\")\n    try {\n        join(a)\n"
                 "    } catch e {\n        print(\"caught\")\n    }\n}\n",
            3);
    t.interrupt_after = "ready";
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_int_eq(r.termination, INTERP_INTERRUPTED);
    ck_assert_int_eq(r.exit_code, 130);
    ck_assert_str_eq(t.out, "ready\n");
    interp_result_free(&r);
    tk_free(&t);
}
END_TEST

START_TEST(tasks_run_on_worker_threads)
{
    struct tk t;
    tk_load(&t,
            HEAD "fn hello(ch: channel) {\n    print(\"task\")\n    send(ch, 1)\n}\n"
                 "fn main() {\n    let ch = channel(1)\n    spawn(hello, ch)\n    recv(ch)\n"
                 "    print(\"main\")\n}\n",
            1);
    struct interp_result r;
    interp_run(t.s, &r);
    ck_assert_int_eq(r.termination, INTERP_RETURNED);
    ck_assert_str_eq(t.threads, "jett-worker-1 ");
    interp_result_free(&r);
    tk_free(&t);
    /* a program that never names spawn runs as ever on jett-runtime */
    tk_load(&t, HEAD "fn main() {\n    print(\"x\")\n}\n", 4);
    interp_run(t.s, &r);
    ck_assert_str_eq(t.threads, "jett-runtime ");
    interp_result_free(&r);
    tk_free(&t);
}
END_TEST

START_TEST(sleep_gives_the_worker_up)
{
    /* on one worker, a task that sleeps lets another run meanwhile */
    expect_out("fn late(ch: channel) {\n    sleep(200)\n    send(ch, \"late\")\n}\n"
               "fn early(ch: channel) {\n    send(ch, \"early\")\n}\n",
               "    let ch = channel(2)\n    spawn(late, ch)\n    spawn(early, ch)\n"
               "    print(recv(ch), recv(ch))\n",
               "early late\n");
}
END_TEST

START_TEST(recursion_limit_in_a_task)
{
    expect_out(
        "fn deep(n: int) -> int {\n    return deep(n + 1)\n}\n",
        "    try {\n        join(spawn(deep, 0))\n    } catch e {\n        print(e)\n    }\n",
        "task 2 failed: stack overflow: more than 10000 nested calls\n");
}
END_TEST

START_TEST(same_output_on_every_worker_count)
{
    /* a pipeline whose result does not depend on timing */
    const char *src =
        HEAD "fn stage(inp: channel, out: channel, k: int) {\n    let v = recv(inp)\n"
             "    while v != nil {\n        send(out, v * k + 1)\n        v = recv(inp)\n    }\n"
             "    close(out)\n}\n"
             "fn source(out: channel, n: int) {\n    for i in 0..n {\n        send(out, i)\n    }\n"
             "    close(out)\n}\n"
             "fn main() {\n    let a = channel(2)\n    let b = channel(5)\n    let c = channel(1)\n"
             "    spawn(source, a, 2000)\n    spawn(stage, a, b, 3)\n    spawn(stage, b, c, 5)\n"
             "    let sum = 0\n    let count = 0\n    let v = recv(c)\n    while v != nil {\n"
             "        sum += v\n        count += 1\n        v = recv(c)\n    }\n"
             "    print(count, sum)\n}\n";
    static const uint32_t workers[] = {1, 2, 5, 64};
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        struct tk t;
        tk_load(&t, src, workers[i]);
        struct interp_result r;
        interp_run(t.s, &r);
        ck_assert_int_eq(r.termination, INTERP_RETURNED);
        /* sum over i of 5 * (3i + 1) + 1 = 15 * 1999000 + 6 * 2000 */
        ck_assert_str_eq(t.out, "2000 29997000\n");
        interp_result_free(&r);
        tk_free(&t);
    }
}
END_TEST

START_TEST(task_and_channel_annotations)
{
    expect_out("fn take(t: task, c: channel) -> list {\n    return [join(t), recv(c)]\n}\n" SQUARE,
               "    let t: task = spawn(square, 5)\n    let c: channel = channel(1)\n"
               "    send(c, \"x\")\n    print(take(t, c))\n",
               "[25, \"x\"]\n");
    expect_error("fn take(t: task) {\n}\n", "    let c = channel(1)\n    take(c)\n",
                 "main.jett:7:5: runtime error: argument 't' of take must be task, got channel",
                 NULL);
}
END_TEST

START_TEST(checker_sees_misuse)
{
    struct {
        const char *src, *want;
    } cases[] = {
        {"fn main() {\n    spawn(print, 1)\n}\n",
         "main.jett:3:11: error: spawn: print is a builtin; spawn starts a function declared "
         "with fn\n"},
        {SQUARE "fn main() {\n    spawn(square)\n}\n",
         "main.jett:6:5: error: spawn: square expects 1 argument, got 0\n"},
        {SQUARE "fn main() {\n    spawn(square, \"s\")\n}\n",
         "main.jett:6:19: error: type mismatch: x is int but the value is string\n"},
        {"fn main() {\n    spawn(5)\n}\n",
         "main.jett:3:11: error: spawn: argument 1 must be a function, got int\n"},
        {"fn main() {\n    join([1])\n}\n",
         "main.jett:3:10: error: join: argument 1 must be task, got list (join(list, "
         "separator) joins strings)\n"},
        {"fn main() {\n    send(\"c\", 1)\n    recv([])\n    close({})\n}\n",
         "main.jett:3:10: error: send: argument 1 must be channel, got string\n"
         "main.jett:4:10: error: recv: argument 1 must be channel, got list\n"
         "main.jett:5:11: error: close: argument 1 must be channel, got map\n"},
        {"fn main() {\n    channel(0)\n    channel(1000001)\n    channel(\"x\")\n}\n",
         "main.jett:3:13: error: channel: capacity must be from 1 to 1000000, got 0\n"
         "main.jett:4:13: error: channel: capacity must be from 1 to 1000000, got 1000001\n"
         "main.jett:5:13: error: channel: argument 1 must be int, got string\n"},
        {SQUARE "fn main() {\n    let t: int = spawn(square, 1)\n    let c: task = channel(1)\n}\n",
         "main.jett:6:18: error: type mismatch: t is int but the value is task\n"
         "main.jett:7:19: error: type mismatch: c is task but the value is channel\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[4096];
        snprintf(src, sizeof src, HEAD "%s", cases[i].src);
        char *d = harness_load_diags(src);
        ck_assert_msg(strcmp(d, cases[i].want) == 0, "case %zu: got\n%s", i, d);
        free(d);
    }
}
END_TEST

START_TEST(stress_many_tasks_and_messages)
{
    /* 10,000 tasks alive at once, then a million messages through two
     * channels, on 64 workers (more than this machine's CPUs) */
    struct tk t;
    tk_load(&t,
            HEAD "fn hold(gate: channel, i: int) -> int {\n    recv(gate)\n    return i\n}\n"
                 "fn feed(ch: channel, n: int) {\n    for i in 0..n {\n        send(ch, i)\n"
                 "    }\n    close(ch)\n}\n"
                 "fn relay(inp: channel, out: channel) {\n    let v = recv(inp)\n"
                 "    while v != nil {\n        send(out, v)\n        v = recv(inp)\n    }\n"
                 "    close(out)\n}\n"
                 "fn main() {\n    let gate = channel(10000)\n    let ts = []\n"
                 "    for i in 0..10000 {\n        push(ts, spawn(hold, gate, i))\n    }\n"
                 "    for i in 0..10000 {\n        send(gate, 0)\n    }\n    let sum = 0\n"
                 "    for x in ts {\n        sum += join(x)\n    }\n    print(sum)\n"
                 "    let a = channel(64)\n    let b = channel(64)\n    spawn(feed, a, 500000)\n"
                 "    spawn(relay, a, b)\n    let n = 0\n    let v = recv(b)\n"
                 "    while v != nil {\n        n += 1\n        v = recv(b)\n    }\n"
                 "    print(n)\n}\n",
            64);
    struct interp_result r;
    ck_assert_int_eq(interp_run(t.s, &r), 0);
    ck_assert_msg(r.termination == INTERP_RETURNED, "%s", r.message ? r.message : "?");
    ck_assert_str_eq(t.out, "49995000\n500000\n");
    interp_result_free(&r);
    tk_free(&t);
}
END_TEST

Suite *tasks_suite(void);
Suite *tasks_suite(void)
{
    Suite *s = suite_create("tasks");
    TCase *tc = tcase_create("semantics");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, spawn_and_join);
    tcase_add_test(tc, arguments_and_results_are_copies);
    tcase_add_test(tc, copies_keep_their_shape);
    tcase_add_test(tc, secrets_stay_secret);
    tcase_add_test(tc, bindings_as_of_the_spawn);
    tcase_add_test(tc, channels_are_fifo_and_copy);
    tcase_add_test(tc, close_rules);
    tcase_add_test(tc, join_of_a_failure);
    tcase_add_test(tc, failure_prints_its_trace_with_the_task);
    tcase_add_test(tc, errors_of_spawn_join_and_channels);
    tcase_add_test(tc, deadlock_is_an_error_in_main);
    tcase_add_test(tc, main_return_ends_the_run);
    tcase_add_test(tc, interrupt_with_blocked_tasks);
    tcase_add_test(tc, tasks_run_on_worker_threads);
    tcase_add_test(tc, sleep_gives_the_worker_up);
    tcase_add_test(tc, recursion_limit_in_a_task);
    tcase_add_test(tc, same_output_on_every_worker_count);
    tcase_add_test(tc, task_and_channel_annotations);
    tcase_add_test(tc, checker_sees_misuse);
    suite_add_tcase(s, tc);
    TCase *st = tcase_create("stress");
    tcase_set_timeout(st, 600);
    tcase_add_test(st, stress_many_tasks_and_messages);
    suite_add_tcase(s, st);
    return s;
}
