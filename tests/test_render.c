/* Renderers end to end: every CPU and memory fixture replayed by jett-profd matches
 * its pinned human report and TOON byte for byte; both faces carry the
 * same totals and order; replay flags are validated like `jett run`'s;
 * a broken capture becomes a collector error in the profile.  The pinned
 * files are written by hand (see each capture's comment). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/rank.h"
#include "daemon/render.h"
#include "proto/capture.h"
#include "tests/agg_events.h"
#include "testutil.h"

Suite *render_suite(void);

static const struct {
    const char *capture, *expected, *flag, *value;
} fixtures[] = {
    {"cpu-simple", "cpu-simple", NULL, NULL},
    {"cpu-recursion", "cpu-recursion", NULL, NULL},
    {"cpu-deep", "cpu-deep", NULL, NULL},
    {"cpu-deep-waiting", "cpu-deep-waiting", NULL, NULL},
    {"cpu-states", "cpu-states", NULL, NULL},
    {"cpu-ties", "cpu-ties", NULL, NULL},
    {"cpu-waiting", "cpu-waiting", NULL, NULL},
    {"cpu-calls", "cpu-calls", NULL, NULL},
    {"cpu-threshold", "cpu-threshold", NULL, NULL},
    {"cpu-threshold", "cpu-threshold-66.66", "--profile-threshold", "66.66"},
    {"cpu-limit", "cpu-limit", NULL, NULL},
    {"cpu-budget", "cpu-budget", NULL, NULL},
    {"cpu-runtime-error", "cpu-runtime-error", NULL, NULL},
    {"cpu-interrupted", "cpu-interrupted", NULL, NULL},
    {"cpu-empty", "cpu-empty", NULL, NULL},
    {"cpu-hostile", "cpu-hostile", NULL, NULL},
    {"mem-churn", "mem-churn", NULL, NULL},
    {"mem-zero", "mem-zero", NULL, NULL},
    {"mem-frees", "mem-frees", NULL, NULL},
    {"mem-lines", "mem-lines", NULL, NULL},
    {"mem-peak", "mem-peak", NULL, NULL},
    {"mem-folds", "mem-folds", NULL, NULL},
    {"mem-unfolded", "mem-folds", NULL, NULL}, /* the same events unfolded: the same bytes */
    {"mem-retained", "mem-retained", NULL, NULL},
    {"mem-budget", "mem-budget", NULL, NULL},
    {"mem-buckets-full", "mem-buckets-full", NULL, NULL},
    {"mem-workers", "mem-workers", NULL, NULL},
    {"mem-empty", "mem-empty", NULL, NULL},
    {"mem-holders", "mem-holders", NULL, NULL},
    {"mem-holders-many", "mem-holders-many", NULL, NULL},
    {"mem-holders-cut", "mem-holders-cut", NULL, NULL},
    {"mem-holders-refused", "mem-holders-refused", NULL, NULL},
    {"mem-holders-limit", "mem-holders-limit", NULL, NULL},
};

/* Replays fixture i with `jett-profd replay` or, when `jett` is set,
 * with `jett profile replay` (the daemon over a socketpair); `agent`
 * selects TOON.  Returns stdout (malloc'd). */
static char *replay_with(int i, bool agent, bool jett, size_t *len)
{
    char rel[128];
    snprintf(rel, sizeof rel, "fixtures/%s.jcap", fixtures[i].capture);
    char *cap = tu_build_path(rel);
    char *profd = tu_build_path(jett ? "cli/jett" : "daemon/jett-profd");
    const char *argv[8] = {profd, "replay", cap, NULL, NULL, NULL, NULL, NULL};
    int n = 3;
    if (jett)
        argv[1] = "profile", argv[2] = "replay", argv[3] = cap, n = 4;
    if (fixtures[i].flag)
        argv[n++] = fixtures[i].flag, argv[n++] = fixtures[i].value;
    if (agent)
        argv[n++] = "--agent";
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s: exit %d: %s", rel, o.status, o.err);
    ck_assert_uint_eq(o.err_len, 0);
    free(o.err);
    free(cap), free(profd);
    *len = o.out_len;
    return o.out;
}

static char *expected(int i, const char *ext, size_t *len)
{
    char rel[128];
    snprintf(rel, sizeof rel, "fixtures/expected/%s.%s", fixtures[i].expected, ext);
    char *path = tu_source_path(rel), *text = tu_read_file(path, len);
    ck_assert_msg(text != NULL, "%s", rel);
    free(path);
    return text;
}

static char *replay_fixture(int i, bool agent, size_t *len)
{
    return replay_with(i, agent, false, len);
}

START_TEST(fixture_human)
{
    size_t n, m;
    char *got = replay_fixture(_i, false, &n), *want = expected(_i, "human", &m);
    ck_assert_msg(n == m && memcmp(got, want, n) == 0, "%s.human differs:\n%s",
                  fixtures[_i].expected, got);
    free(got), free(want);
}
END_TEST

/* The document on stdout is followed by one newline; the pinned file is
 * the document alone (what toon-check proves canonical). */
START_TEST(fixture_toon)
{
    size_t n, m;
    char *got = replay_fixture(_i, true, &n), *want = expected(_i, "toon", &m);
    ck_assert_uint_eq(n, m + 1);
    ck_assert_int_eq(got[m], '\n');
    ck_assert_msg(memcmp(got, want, m) == 0, "%s.toon differs:\n%s", fixtures[_i].expected, got);
    free(got), free(want);
}
END_TEST

/* `jett profile replay` drives the daemon over a socketpair, as `jett
 * run` will, and prints the same bytes as `jett-profd replay`. */
START_TEST(fixture_via_launcher)
{
    size_t n, m;
    char *got = replay_with(_i, false, true, &n), *want = expected(_i, "human", &m);
    ck_assert_msg(n == m && memcmp(got, want, n) == 0, "%s.human differs:\n%s",
                  fixtures[_i].expected, got);
    free(got), free(want);
    got = replay_with(_i, true, true, &n);
    want = expected(_i, "toon", &m);
    ck_assert_uint_eq(n, m + 1);
    ck_assert_msg(memcmp(got, want, m) == 0, "%s.toon differs", fixtures[_i].expected);
    free(got), free(want);
}
END_TEST

/* The value after `key` up to the end of its line, or NULL. */
static char *value_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (p == NULL)
        return NULL;
    p += strlen(key);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\n");
    char *v = strndup(p, n);
    char *unit = strstr(v, " Hz");
    if (!unit)
        unit = strstr(v, " ms");
    if (unit)
        *unit = '\0';
    return v;
}

/* The states scenario (runtime, waiting, unavailable samples, no process
 * CPU time), rendered both ways: the twelve totals and the entry order
 * agree. */
START_TEST(human_toon_parity)
{
    static const char *const keys[][2] = {
        {"\n  requested ticks", "requested_ticks:"},
        {"\n  recorded samples", "recorded_samples:"},
        {"\n  attributed samples", "attributed_samples:"},
        {"\n  runtime samples", "runtime_samples:"},
        {"\n  waiting samples", "waiting_samples:"},
        {"\n  unavailable samples", "unavailable_samples:"},
        {"\n  coalesced ticks", "coalesced_ticks:"},
        {"\n  dropped ticks", "dropped_ticks:"},
        {"\n  truncated stacks", "truncated_stacks:"},
        {"\n  observed rate", "observed_rate_hz:"},
        {"\n  wall time", "wall_ms:"},
        {"\n  process CPU time", "process_cpu_ms:"},
    };
    struct ev e = ev_default();
    ck_assert_int_eq(ev_source(&e, 0, "src/p.jett", "fn main() {\n  f()\n}\nfn f() {\n}\n"), 0);
    ck_assert_int_eq(ev_func(&e, 0, "p", "main", 0, 0, 20), 0);
    ck_assert_int_eq(ev_func(&e, 1, "p", "f", 0, 20, 30), 0);
    ck_assert_int_eq(ev_stack(&e, 0, WIRE_NONE32, 0), 0);
    ck_assert_int_eq(ev_stack(&e, 1, 0, 1), 0);
    ck_assert_int_eq(ev_jett(&e, 1, 20, 28), 0);
    ck_assert_int_eq(ev_jett(&e, 0, 14, 17), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_RUNTIME, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_sample(&e, WIRE_STATE_WAITING, WIRE_NONE32, WIRE_NONE32, WIRE_NONE32), 0);
    ck_assert_int_eq(ev_finish(&e, WIRE_TERM_RETURNED, 2, 1), 0);
    struct rank_report r;
    ck_assert_int_eq(rank_build(e.a, NULL, &r), 0);
    char *human, *toon, err[128];
    size_t hn, tn;
    ck_assert_int_eq(render_human(&r, &human, &hn), 0);
    ck_assert_int_eq(render_toon(&r, &toon, &tn, err, sizeof err), 0);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char *h = value_after(human, keys[k][0]), *t = value_after(toon, keys[k][1]);
        ck_assert_ptr_nonnull(h);
        ck_assert_ptr_nonnull(t);
        /* the human report pads decimals: 1500.00 is the canonical 1500 */
        size_t tl = strlen(t);
        ck_assert_msg(strncmp(h, t, tl) == 0 && (h[tl] == 0 || strcmp(h + tl, ".00") == 0),
                      "%s: human %s, toon %s", keys[k][1], h, t);
        free(h), free(t);
    }
    /* 4 samples in 4 ms: 1000 Hz; f (1/2, self 1) ranks after main (2/2);
     * each has 1 of the 2 attributed samples as self time: 50.00% */
    ck_assert_ptr_nonnull(strstr(
        human, "\n#1  100.00%  self 1 (50.00%) / inclusive 2 / calls unavailable  p.main  "));
    ck_assert_ptr_nonnull(
        strstr(human, "\n#2  50.00%  self 1 (50.00%) / inclusive 1 / calls unavailable  p.f  "));
    ck_assert_ptr_nonnull(strstr(toon, "\n      self_percent: 50\n      calls: unavailable\n"));
    /* the time split opens the report: the 4 ms the run took (no CPU
     * time in this FINISH), then of the 4 recorded samples and 2
     * coalesced ticks, 2 + 2 ran Jett code, 1 waited, 1 was the
     * runtime's */
    ck_assert_ptr_nonnull(strstr(human, "CPU profile\ntime: 4 ms wall: 66.67% running Jett code, "
                                        "16.67% waiting, 16.67% runtime (4 samples, 2 "
                                        "coalesced ticks)\nstatus: "));
    const char *m = strstr(toon, "namespace: p\n      function: main\n");
    const char *f = strstr(toon, "namespace: p\n      function: f\n");
    ck_assert(m && f && m < f);
    ck_assert(strstr(human, "p.main") < strstr(human, "p.f  "));
    /* colour only when HELLO allows it: a bold heading, nothing else */
    ck_assert_int_eq(strncmp(human, "CPU profile\n", 12), 0);
    free(human), free(toon);
    r.colour = true;
    ck_assert_int_eq(render_human(&r, &human, &hn), 0);
    ck_assert_int_eq(strncmp(human, "\033[1mCPU profile\033[0m\ntime: ", 26), 0);
    free(human);
    rank_free(&r);
    agg_free(e.a);
}
END_TEST

static int run_profd(const char *const *args, struct tu_output *o)
{
    char *profd = tu_build_path("daemon/jett-profd");
    const char *argv[8] = {profd};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = args[i];
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    free(profd);
    return o->status;
}

/* Flags are validated as DESIGN section 3 says: one line naming the
 * option and its range, exit 2, nothing read. */
/* Byte counts as people read them, computed by hand: the largest unit
 * whose value rounded to hundredths stays below 1024.00, with the exact
 * count (the totals' labels already say bytes):
 *   1023 -> 1023; 1024 -> 1.00 KiB; 1536 -> 1.50 KiB;
 *   1048575 = 1023.999 KiB rounds to 1024.00, so 0.99999905 MiB: 1.00 MiB;
 *   4083292014 = 3.80286 GiB; 2^64 - 1 = 16.0 EiB (less 2^-60). */
START_TEST(human_sizes)
{
    struct rank_report r;
    memset(&r, 0, sizeof r);
    r.mode = WIRE_MODE_MEMORY;
    r.status = AGG_COMPLETE;
    r.termination = "returned";
    r.backend = "b";
    r.coverage = "jett_heap";
    r.collector_error = "";
    r.retention_budget = 1536;
    r.mem = (struct rank_mem_totals){1,           1,          1023,  1024,  1048575,
                                     4083292014u, UINT64_MAX, false, false, false};
    char *h;
    size_t n;
    ck_assert_int_eq(render_human(&r, &h, &n), 0);
    ck_assert_ptr_nonnull(strstr(h, "retention metadata budget 1.50 KiB (1536 bytes)\n"));
    ck_assert_ptr_nonnull(strstr(h, "\n  allocated bytes       1023\n"));
    ck_assert_ptr_nonnull(strstr(h, "\n  freed bytes           1.00 KiB (1024)\n"));
    ck_assert_ptr_nonnull(strstr(h, "\n  peak live bytes       1.00 MiB (1048575)\n"));
    ck_assert_ptr_nonnull(strstr(h, "\n  retained bytes        3.80 GiB (4083292014)\n"));
    ck_assert_ptr_nonnull(
        strstr(h, "\n  attributed bytes      16.00 EiB (18446744073709551615)\n"));
    free(h);
}
END_TEST

START_TEST(replay_flags)
{
    char *cap = tu_build_path("fixtures/cpu-simple.jcap");
    struct tu_output o;
    const char *bad_pct[] = {"replay", cap, "--profile-threshold", "5.001", NULL};
    ck_assert_int_eq(run_profd(bad_pct, &o), 2);
    ck_assert_str_eq(o.err, "jett-profd: --profile-threshold: expects a PERCENT from 0 to 100 "
                            "(at most two decimals)\n");
    ck_assert_uint_eq(o.out_len, 0);
    tu_output_free(&o);
    const char *bad_lim[] = {"replay", "--profile-limit", "0", cap, NULL};
    ck_assert_int_eq(run_profd(bad_lim, &o), 2);
    ck_assert_str_eq(o.err, "jett-profd: --profile-limit: expects a COUNT from 1 to 100\n");
    tu_output_free(&o);
    const char *twice[] = {"replay", cap, "--agent", "--agent", NULL};
    ck_assert_int_eq(run_profd(twice, &o), 2);
    ck_assert_str_eq(o.err, "jett-profd: --agent: repeated option\n");
    tu_output_free(&o);
    const char *unknown[] = {"replay", cap, "--profile-rate", "5", NULL};
    ck_assert_int_eq(run_profd(unknown, &o), 2);
    ck_assert_str_eq(o.err, "jett-profd: --profile-rate: unknown option\n");
    tu_output_free(&o);
    /* cpu-simple has 4 eligible entries: limit 1 emits main only */
    const char *lim[] = {"replay", "--profile-limit", "1", cap, NULL};
    ck_assert_int_eq(run_profd(lim, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "limit 1, "));
    ck_assert_ptr_nonnull(strstr(o.out, "bottlenecks: 4 eligible, 1 emitted, 3 truncated\n#1 "));
    ck_assert_ptr_null(strstr(o.out, "#2 "));
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* Writes magic + the frames in `sb` to a temporary capture file. */
static char *write_capture(msgpack_sbuffer *sb, const char *name)
{
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = CAPTURE_MAGIC_LEN + sb->size;
    char *buf = malloc(n);
    memcpy(buf, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    memcpy(buf + CAPTURE_MAGIC_LEN, sb->data, sb->size);
    ck_assert_int_eq(tu_write_file(path, buf, n), 0);
    free(buf), free(dir);
    return strdup(path);
}

/* A capture cut before FINISH: the profile is still printed, partial /
 * collector_failure with unknown termination; exit 1.  One without
 * HELLO: unavailable. */
START_TEST(broken_captures)
{
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    char *cap = write_capture(&sb, "nofinish.jcap");
    struct tu_output o;
    const char *args[] = {"replay", cap, NULL};
    ck_assert_int_eq(run_profd(args, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.err, "capture ends without FINISH"));
    ck_assert_ptr_nonnull(strstr(o.out, "status: partial (collector_failure), termination: "
                                        "unavailable\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "  requested ticks       unavailable\n"));
    tu_output_free(&o);
    const char *agent[] = {"replay", cap, "--agent", NULL};
    ck_assert_int_eq(run_profd(agent, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.out, "  status: partial\n  partial_reason: collector_failure\n"
                                        "  termination: unavailable\n"));
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    msgpack_sbuffer_clear(&sb);
    struct wire_finish f = {0, 1, WIRE_NONE64, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&sb, &f), 0);
    cap = write_capture(&sb, "nohello.jcap");
    const char *nohello[] = {"replay", cap, "--agent", NULL};
    ck_assert_int_eq(run_profd(nohello, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.out, "  status: unavailable\n  partial_reason: "
                                        "collector_failure\n"));
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

static int run_jett(const char *const *args, struct tu_output *o)
{
    char *jett = tu_build_path("cli/jett");
    const char *argv[8] = {jett, "profile", "replay"};
    for (int i = 0; args[i] && i < 4; i++)
        argv[i + 3] = args[i];
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    free(jett);
    return o->status;
}

/* Through the launcher: a backend without safe stack capture is refused
 * at HELLO (UNSUPPORTED, exit 4, no profile); a capture cut before FINISH
 * still gets the daemon's profile, with the collector failure (exit 1). */
START_TEST(launcher_unsupported_and_broken)
{
    struct wire_hello h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    h.capabilities &= ~(uint32_t)WIRE_CAP_SAFE_STACK_CAPTURE;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    struct wire_finish f = {0, 1, WIRE_NONE64, 0, 0, 0, false, false};
    ck_assert_int_eq(wire_encode_finish(&sb, &f), 0);
    char *cap = write_capture(&sb, "unsupported.jcap");
    struct tu_output o;
    const char *args[] = {cap, NULL};
    ck_assert_int_eq(run_jett(args, &o), 4);
    ck_assert_str_eq(o.err, "jett: profiler unsupported: the backend lacks safe_stack_capture\n");
    ck_assert_uint_eq(o.out_len, 0);
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    msgpack_sbuffer_clear(&sb);
    h = ev_hello_rec(AGG_CPU_BUDGET_MAX, AGG_STACK_BUDGET_MAX);
    ck_assert_int_eq(wire_encode_hello(&sb, &h), 0);
    cap = write_capture(&sb, "nofinish.jcap");
    const char *agent[] = {cap, "--agent", NULL};
    ck_assert_int_eq(run_jett(agent, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.err, "capture ends without FINISH"));
    ck_assert_ptr_nonnull(strstr(o.out, "  status: partial\n  partial_reason: collector_failure\n"
                                        "  termination: unavailable\n"));
    tu_output_free(&o);
    const char *bad[] = {cap, "--profile-limit", "101", NULL};
    ck_assert_int_eq(run_jett(bad, &o), 2);
    ck_assert_str_eq(o.err, "jett: --profile-limit: expects a COUNT from 1 to 100\n");
    tu_output_free(&o);
    tu_remove_in_tmpdir(cap);
    msgpack_sbuffer_destroy(&sb);
}
END_TEST

Suite *render_suite(void)
{
    Suite *s = suite_create("render");
    TCase *t = tcase_create("render");
    int n = (int)(sizeof fixtures / sizeof fixtures[0]);
    tcase_add_loop_test(t, fixture_human, 0, n);
    tcase_add_loop_test(t, fixture_toon, 0, n);
    tcase_add_loop_test(t, fixture_via_launcher, 0, n);
    tcase_add_test(t, human_toon_parity);
    tcase_add_test(t, human_sizes);
    tcase_add_test(t, replay_flags);
    tcase_add_test(t, broken_captures);
    tcase_add_test(t, launcher_unsupported_and_broken);
    suite_add_tcase(s, t);
    return s;
}
