/* Safe points inside long operations, independent of timing.
 *
 * A test sampler re-raises the sample request every time it runs, so
 * every safe point the runtime passes takes a sample; counting the samples
 * whose leaf is one statement counts the safe points passed while it ran.
 * Without safe points inside the operation that count is 1 (the poll of
 * the statement after it).  Each case derives its lower bound from the
 * work the operation must do: one safe point per item compared, copied or
 * moved, or one per SAFEPOINT_CHUNK bytes.  An abortable operation also
 * stops early when interrupted from inside (at an eighth of its safe
 * points, it passes at most half of them).
 *
 * Every builtin is either covered by a case here or listed as bounded,
 * so a builtin added without safe points fails `every_builtin_classified`. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/safepoint.h"
#include "tests/interp_harness.h"

#define MIB (1024 * 1024)
#define CHUNKS(bytes) ((bytes) / SAFEPOINT_CHUNK - 1)

/* Inputs built before the operation, into namespace-level bindings: what
 * main's frame holds is released, its own work, as the frame returns,
 * interrupted or not, and would count at the operation's statement. */
#define SP_GLOBALS                                                                                 \
    "let xs = nil\nlet s = nil\nlet m = nil\nlet parts = nil\nlet t = nil\nlet u = nil\n"          \
    "let ys = nil\nlet ch = nil\n"
#define INTS(n) "    xs = []\n    for i in 0.." #n " {\n        push(xs, " #n " - i)\n    }\n"
#define BIG "    s = repeat(\"a\", 4194304)\n"
#define MAP "    m = {}\n    for i in 0..100000 {\n        m[str(i)] = i\n    }\n"
#define PARTS "    parts = []\n    for i in 0..100000 {\n        push(parts, \"p\")\n    }\n"
#define STRS "    parts = []\n    for i in 0..100000 {\n        push(parts, str(i))\n    }\n"
/* A map whose one key is s, and u: the same bytes, not hashed yet. */
#define LONG_KEY BIG "    m = {}\n    m[s] = 1\n    u = s + \"\"\n"
/* A needle past SAFEPOINT_LONG_NEEDLE that s does not hold. */
#define LONG_NEEDLE BIG "    u = repeat(\"a\", 8192) + \"b\"\n"
#define NESTED "    xs = []\n    for i in 0..100000 {\n        push(xs, [i])\n    }\n"

struct sp_case {
    const char *builtin; /* the builtin or operation it covers */
    const char *setup, *op;
    long min;       /* safe points the operation must pass */
    bool abortable; /* stops when interrupted */
};

static const struct sp_case cases[] = {
    /* holding, putting back and releasing n items, and n - 1 comparisons at least */
    {"sort", INTS(100000), "let r = sort(xs)", 3 * 100000 + 100000 - 1, true},
    {"sort", INTS(20000), "let r = sort(xs, before)", 3 * 20000 + 20000 - 1, true},
    {"repeat", "", "let r = repeat(\"ab\", 1048576)", CHUNKS(2 * MIB), true},
    {"split", "    s = repeat(\"a,\", 100000)\n", "let r = split(s, \",\")", 100000, true},
    {"join", PARTS, "let r = join(parts, \",\")", 100000, true},
    {"slice", INTS(100000), "let r = slice(xs, 0, 100000)", 100000, true},
    {"slice", BIG, "let r = slice(s, 0, 4194304)", CHUNKS(4 * MIB), true},
    {"keys", MAP, "let r = keys(m)", 100000, true},
    {"values", MAP, "let r = values(m)", 100000, true},
    {"contains", INTS(100000), "let r = contains(xs, -1)", 100000, true},
    {"contains", BIG, "let r = contains(s, \"b\")", CHUNKS(4 * MIB) - 1, true},
    {"find", BIG, "let r = find(s, \"b\")", CHUNKS(4 * MIB) - 1, true},
    {"substr", BIG, "let r = substr(s, 0, 4194304)", CHUNKS(4 * MIB), false},
    {"upper", BIG, "let r = upper(s)", CHUNKS(4 * MIB), true},
    {"lower", BIG, "let r = lower(s)", CHUNKS(4 * MIB), true},
    {"str", INTS(100000), "let r = str(xs)", 100000, false},
    {"print", INTS(100000), "print(xs)", 100000, false},
    {"int", "    s = repeat(\"0\", 4194304) + \"1\"\n", "let r = int(s)", CHUNKS(4 * MIB), true},
    {"float", "    s = \"1.\" + repeat(\"1\", 4194304)\n", "let r = float(s)", CHUNKS(4 * MIB),
     true},
    {"float", "    s = \"0x1.\" + repeat(\"0\", 4194304) + \"p3\"\n", "let r = float(s)",
     CHUNKS(4 * MIB), true},
    /* hashing the key, then comparing it with the map's */
    {"has", LONG_KEY, "let r = has(m, u)", 2 * CHUNKS(4 * MIB), false},
    {"map index", LONG_KEY, "let r = m[u]", 2 * CHUNKS(4 * MIB), false},
    {"string += growth", BIG "    t = s + \"\"\n", "t += \"x\"", CHUNKS(4 * MIB), false},
    {"push", INTS(131072), "push(xs, 0)", CHUNKS(131072 * 16), false},
    /* a step of the search per byte of s at least */
    {"find", LONG_NEEDLE, "let r = find(s, u)", CHUNKS(4 * MIB), true},
    {"split", LONG_NEEDLE, "let r = split(s, u)", CHUNKS(4 * MIB), true},
    {"join", BIG "    parts = [\"x\", \"y\", \"z\"]\n", "let r = join(parts, s)",
     2 * CHUNKS(4 * MIB), true},
    {"str", BIG, "let r = str([s])", CHUNKS(4 * MIB), false},
    /* formatted a chunk at a time, and written a chunk at a time */
    {"print", BIG, "print(s)", 2 * CHUNKS(4 * MIB), false},
    {"min", INTS(100000), "let r = min(xs)", 100000, true},
    {"max", INTS(100000), "let r = max(xs)", 100000, true},
    {"insert", INTS(100000), "insert(xs, 0, 1)", CHUNKS(100000 * 16), false},
    {"remove", INTS(100000), "let r = remove(xs, 0)", CHUNKS(100000 * 16), false},
    {"string +", BIG, "let r = s + s", 2 * CHUNKS(4 * MIB), true},
    {"list +", INTS(100000), "let r = xs + xs", 200000, true},
    {"string +=", BIG "    t = slice(\"xy\", 0, 1)\n", "t += s", CHUNKS(4 * MIB), false},
    {"string ==", BIG "    u = s + \"\"\n", "let r = s == u", CHUNKS(4 * MIB), false},
    {"string <", BIG "    u = s + \"\"\n", "let r = s < u", CHUNKS(4 * MIB), false},
    {"list ==", INTS(100000) "    ys = slice(xs, 0, 100000)\n", "let r = xs == ys", 100000, false},
    {"map growth", "    m = {}\n    for i in 0..131072 {\n        m[str(i)] = i\n    }\n",
     "m[\"x\"] = 1", 131072, false},
    {"free", PARTS, "parts = []", 100000, false},
    /* an item dropped, then the string it held freed */
    {"free", STRS, "parts = []", 2 * 100000, false},
    /* a value crossing tasks is copied an item at a time */
    {"send", INTS(100000) "    ch = channel(1)\n", "send(ch, xs)", 100000, true},
    {"spawn", INTS(100000), "let t = spawn(before, xs, 0)", 100000, true},
    /* 200000 items copied, the table of copies grown (32 + 64 + ... +
     * 65536 pairs moved) and the 100001 lists copied detached */
    {"send", NESTED "    ch = channel(1)\n", "send(ch, xs)", 200000 + 131040 + 100001, true},
};

/* Builtins whose work does not grow with their input (or, for sleep,
 * that wait instead of working), and those that format values as str
 * does. */
static const char *const bounded[] = {"len",    "pop",   "abs",     "now_ms", "env",
                                      "secret", "sleep", "channel", "recv",   "close"};
static const char *const formats_like_str[] = {"eprint", "debug", "log", "fail"};

struct sp_run {
    struct interp_state *s;
    uint32_t target; /* the operation's statement start */
    bool armed, saw_done;
    long samples;      /* samples at the target */
    long interrupt_at; /* 0: never */
};

static void sp_write(void *ctx, const char *data, size_t len)
{
    struct sp_run *r = ctx;
    if (len == 3 && memcmp(data, "go\n", 3) == 0) {
        r->armed = true;
        interp_request_sample(r->s);
    } else if (len == 5 && memcmp(data, "done\n", 5) == 0) {
        r->armed = false;
        r->saw_done = true;
    }
}

static void sp_sampler(void *ctx, struct interp_state *s)
{
    struct sp_run *r = ctx;
    if (!r->armed)
        return;
    uint32_t depth = interp_stack_depth(s);
    if (depth > 0 && interp_stack_frame(s, depth - 1).span.start == r->target &&
        ++r->samples == r->interrupt_at)
        interp_interrupt(s, SIGINT);
    interp_request_sample(s);
}

/* Runs the case; the samples at its operation. */
static long sp_run_case(const struct sp_case *c, long interrupt_at, struct interp_result *res,
                        bool *saw_done)
{
    char text[4096];
    snprintf(text, sizeof text,
             "namespace t.main\n" SP_GLOBALS
             "fn before(a, b) {\n    return a < b\n}\nfn main() {\n%s"
             "    print(\"go\")\n    %s\n    print(\"done\")\n}\n",
             c->setup, c->op);
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_msg(p != NULL, "%s: %s", c->op, d.len ? d.items[0].message : "");
    struct sp_run r = {0};
    r.target = (uint32_t)(strstr(text, "print(\"go\")\n    ") - text + 16);
    r.interrupt_at = interrupt_at;
    struct interp_host host = {&r, sp_write, sp_write, NULL, NULL};
    struct interp_options opts = {.workers = 1}; /* one thread samples */
    r.s = interp_new(p, &host, &opts);
    interp_set_sampler(r.s, sp_sampler, &r);
    interp_run(r.s, res);
    interp_free(r.s);
    interp_program_free(p);
    harness_rmtree(dir);
    free(dir);
    *saw_done = r.saw_done;
    return r.samples;
}

START_TEST(operation_passes_safe_points)
{
    const struct sp_case *c = &cases[_i];
    struct interp_result res;
    bool done;
    long n = sp_run_case(c, 0, &res, &done);
    ck_assert_msg(res.termination == INTERP_RETURNED && done, "%s: %s", c->op,
                  res.message ? res.message : "did not finish");
    interp_result_free(&res);
    ck_assert_msg(n >= c->min, "%s (%s): %ld safe points, at least %ld expected", c->op, c->builtin,
                  n, c->min);
    if (!c->abortable)
        return;
    long stop_at = n / 8;
    long m = sp_run_case(c, stop_at, &res, &done);
    ck_assert_msg(res.termination == INTERP_INTERRUPTED && !done, "%s: not interrupted", c->op);
    interp_result_free(&res);
    ck_assert_msg(m <= n / 2, "%s: interrupted at %ld of %ld safe points, went on to %ld", c->op,
                  stop_at, n, m);
}
END_TEST

/* A callee's teardown is its own: the samples taken while the locals of
 * build are released (a safe point per entry of its 300-entry map) have
 * build at its return statement as their leaf, never main at the call.
 * By hand, per call of build: 300 entries dropped, 301 objects freed (the
 * map and its 300 keys) and the safe point after them at build's return;
 * at main's call statement, the safe point
 * before the call pushes build's frame and the loop's next one (the
 * iteration's, or after the last, print's statement's) before main marks
 * another statement. */
static const char teardown_text[] = "namespace t.main\n"
                                    "fn build(n: int) -> int {\n"
                                    "    let m = {}\n"
                                    "    for i in 0..n {\n"
                                    "        m[str(i)] = i\n"
                                    "    }\n"
                                    "    return len(m)\n"
                                    "}\n"
                                    "fn main() {\n"
                                    "    print(\"go\")\n"
                                    "    let total = 0\n"
                                    "    for k in 0..20 {\n"
                                    "        total += build(300)\n"
                                    "    }\n"
                                    "    print(\"done\")\n"
                                    "}\n";

struct td_run {
    struct sp_run base;
    uint32_t ret_at, call_at; /* the two statements' offsets */
    long at_return, at_call;
};

static void td_sampler(void *ctx, struct interp_state *s)
{
    struct td_run *r = ctx;
    if (!r->base.armed)
        return;
    uint32_t depth = interp_stack_depth(s);
    struct interp_frame_info f = interp_stack_frame(s, depth - 1);
    if (depth == 2 && f.span.start == r->ret_at)
        r->at_return++;
    else if (depth == 1 && f.span.start == r->call_at)
        r->at_call++;
    interp_request_sample(s);
}

/* Runs text on one worker (when it has tasks) with a sampler whose
 * context starts with an sp_run; asserts it returned and printed done. */
static void run_sampled(const char *text, interp_sampler_fn sampler, struct sp_run *r)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", text);
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_ptr_nonnull(p);
    struct interp_host host = {r, sp_write, sp_write, NULL, NULL};
    struct interp_options opts = {.workers = 1};
    r->s = interp_new(p, &host, &opts);
    interp_set_sampler(r->s, sampler, r);
    struct interp_result res;
    interp_run(r->s, &res);
    ck_assert_int_eq(res.termination, INTERP_RETURNED);
    ck_assert(r->saw_done);
    interp_result_free(&res);
    interp_free(r->s);
    interp_program_free(p);
    harness_rmtree(dir);
    free(dir);
}

START_TEST(callee_teardown_is_the_callee_s)
{
    struct td_run r = {0};
    r.ret_at = (uint32_t)(strstr(teardown_text, "return len(m)") - teardown_text);
    r.call_at = (uint32_t)(strstr(teardown_text, "total += build") - teardown_text);
    run_sampled(teardown_text, td_sampler, &r.base);
    ck_assert_int_eq(r.at_return, 20 * (300 + 301 + 1));
    ck_assert_int_eq(r.at_call, 20 * 2);
}
END_TEST

/* A task's result is copied by the task, in its function's frame at the
 * return statement, and the join takes that copy without copying again.
 * By hand, on one worker: task 2 at its return passes a safe point per
 * item copied of its 100000-item list, one per object of the copy as it
 * is detached (the list: ints are no objects) and the one that ends the
 * call;
 * main, blocked in join until task 2 ended, passes none in the join and
 * then the safe point of its next statement before that marks itself. */
static const char result_text[] = "namespace t.main\n"
                                  "fn make(n: int) -> list {\n"
                                  "    let out = []\n"
                                  "    for i in 0..n {\n"
                                  "        push(out, i)\n"
                                  "    }\n"
                                  "    return out\n"
                                  "}\n"
                                  "fn main() {\n"
                                  "    print(\"go\")\n"
                                  "    let t = spawn(make, 100000)\n"
                                  "    let r = join(t)\n"
                                  "    print(\"done\")\n"
                                  "}\n";

static void result_sampler(void *ctx, struct interp_state *s)
{
    struct td_run *r = ctx;
    uint32_t depth = interp_stack_depth(s);
    if (!r->base.armed)
        return;
    if (depth > 0) { /* none: the worker between tasks */
        struct interp_frame_info f = interp_stack_frame(s, depth - 1);
        if (interp_task_number(s) == 2 && f.span.start == r->ret_at)
            r->at_return++;
        else if (interp_task_number(s) == 1 && f.span.start == r->call_at)
            r->at_call++;
    }
    interp_request_sample(s);
}

START_TEST(task_result_copied_in_the_task)
{
    struct td_run r = {0};
    r.ret_at = (uint32_t)(strstr(result_text, "return out") - result_text);
    r.call_at = (uint32_t)(strstr(result_text, "let r = join(t)") - result_text);
    run_sampled(result_text, result_sampler, &r.base);
    ck_assert_int_eq(r.at_return, 100000 + 1 + 1);
    ck_assert_int_eq(r.at_call, 1);
}
END_TEST

static bool sp_listed(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

START_TEST(every_builtin_classified)
{
    for (uint32_t b = 0; b < builtin_count; b++) {
        const char *name = builtin_table[b].name;
        bool tested = false;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            tested |= strcmp(cases[i].builtin, name) == 0;
        ck_assert_msg(tested || sp_listed(name, bounded, sizeof bounded / sizeof bounded[0]) ||
                          sp_listed(name, formats_like_str,
                                    sizeof formats_like_str / sizeof formats_like_str[0]),
                      "builtin %s has no safe-point case", name);
    }
}
END_TEST

Suite *safepoints_suite(void);
Suite *safepoints_suite(void)
{
    Suite *s = suite_create("safepoints");
    TCase *tc = tcase_create("safepoints");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, operation_passes_safe_points, 0, sizeof cases / sizeof cases[0]);
    tcase_add_test(tc, every_builtin_classified);
    tcase_add_test(tc, callee_teardown_is_the_callee_s);
    tcase_add_test(tc, task_result_copied_in_the_task);
    suite_add_tcase(s, tc);
    return s;
}
