/* run_profile: spawn, handshake, manifest, start, finish, fallback. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/retain.h"
#include "cli/profd_spawn.h"
#include "cli/run_capture.h"
#include "cli/run_fallback.h"
#include "cli/run_profile.h"
#include "cli/run_stackwalk.h"
#include "cli/run_threadcpu.h"
#include "proto/capture.h"
#include "proto/toon.h"

#define HANDSHAKE_MS 5000
#define RESULT_MS 60000

/* What this backend can do, probed before main: the tick source needs a
 * monotonic clock and process CPU time the process CPU clock; task
 * attribution is there for a program that can have tasks (it names
 * spawn); the rest the interpreter always has.  Test knobs may withdraw
 * any of them. */
static uint32_t probe_caps(const struct run_testenv *t, const struct interp_program *p)
{
    struct timespec ts;
    uint32_t caps = WIRE_CAP_ALL & ~(WIRE_CAP_TASK_ATTRIBUTION | WIRE_CAP_CPU_TICK_SOURCE |
                                     WIRE_CAP_PROCESS_CPU_TIME);
    if (p && interp_program_has_tasks(p))
        caps |= WIRE_CAP_TASK_ATTRIBUTION;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
        caps |= WIRE_CAP_CPU_TICK_SOURCE;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        caps |= WIRE_CAP_PROCESS_CPU_TIME;
    return caps & ~(t ? t->withdrawn : 0);
}

static const char *backend_name(enum run_mode m)
{
    return m == RUN_MODE_CPU ? "interpreter_safe_point" : "interpreter_alloc_hooks";
}

int run_profile_open_capture(struct run_profile *rp, const struct run_args *a, char *err,
                             size_t errlen)
{
    memset(rp, 0, sizeof *rp);
    rp->args = a, rp->daemon = -1;
    return run_capture_open(&rp->capture, a->capture, a->file, err, errlen);
}

/* SOURCE with literals, comments and secrets blanked (offsets and lines
 * kept), then every FUNC and the reserved <truncated-stack>. */
static int send_manifest(struct run_profile *rp, const struct interp_program *p)
{
    for (uint32_t i = 0; i < interp_source_count(p); i++) {
        const struct interp_source *src = interp_source_get(p, i);
        char *text = interp_source_blanked(src);
        if (!text)
            return -1;
        struct wire_source ws = {src->id,
                                 (uint8_t)src->origin,
                                 {src->path, (uint32_t)strlen(src->path)},
                                 {text, src->len},
                                 (const struct wire_source_span *)src->spans,
                                 src->n_spans,
                                 src->line_starts,
                                 src->n_lines};
        int rc = collector_send_source(rp->collector, &ws);
        free(text);
        if (rc != 0)
            return -1;
    }
    uint32_t n = interp_func_count(p);
    for (uint32_t i = 0; i < n; i++) {
        const struct interp_func_info *f = interp_func_get(p, i);
        struct wire_func wf = {f->id,
                               {f->ns, (uint32_t)strlen(f->ns)},
                               {f->name, (uint32_t)strlen(f->name)},
                               f->source_id,
                               {f->decl.start, f->decl.end}};
        if (collector_send_func(rp->collector, &wf) != 0)
            return -1;
    }
    struct wire_func trunc = {
        n, {"<runtime>", 9}, {"<truncated-stack>", 17}, WIRE_NONE32, WIRE_SPAN_NONE};
    return collector_send_func(rp->collector, &trunc);
}

static enum run_profile_setup setup_failed(struct run_profile *rp, const char *msg)
{
    snprintf(rp->message, sizeof rp->message, "profiler: setup failure: %s", msg);
    return RUN_PROFILE_FAILED;
}

enum run_profile_setup run_profile_setup(struct run_profile *rp, const struct interp_program *p,
                                         bool colour)
{
    const struct run_args *a = rp->args;
    char *path, err[200];
    rp->caps = probe_caps(rp->test, p);
    if (profd_find(&path) != 0)
        return setup_failed(rp, "jett-profd not found beside jett");
    int sock;
    int rc = profd_spawn(path, &sock, &rp->daemon, err, sizeof err);
    free(path);
    if (rc != 0)
        return setup_failed(rp, err);
    rp->collector = collector_new(sock, rp->capture.fd, COLLECTOR_RING, COLLECTOR_STALL_NS);
    if (rp->collector && rp->args->mode == RUN_MODE_CPU)
        collector_set_flush_ns(rp->collector, COLLECTOR_FLUSH_CPU_NS);
    if (!rp->collector)
        return setup_failed(rp, "out of memory");
    const char *backend = backend_name(a->mode);
    const struct run_testenv *t = rp->test;
    rp->config =
        (struct wire_config){a->mode == RUN_MODE_CPU ? a->rate_hz : 0,
                             a->threshold_bp,
                             a->limit,
                             run_testenv_budget(t ? t->cpu_budget : 0, WIRE_CPU_BUDGET),
                             run_testenv_budget(t ? t->retention_budget : 0, WIRE_RETENTION_BUDGET),
                             run_testenv_budget(t ? t->stack_budget : 0, WIRE_STACK_BUDGET)};
    struct wire_hello h = {WIRE_PROTOCOL_VERSION,
                           a->mode == RUN_MODE_CPU ? WIRE_MODE_CPU : WIRE_MODE_MEMORY,
                           rp->config,
                           {backend, (uint32_t)strlen(backend)},
                           rp->caps,
                           colour};
    char missing[64];
    switch (collector_handshake(rp->collector, &h, HANDSHAKE_MS, missing, sizeof missing)) {
    case COLLECTOR_UNSUPPORTED:
        snprintf(rp->message, sizeof rp->message, "profiler: unsupported: missing capability %s",
                 missing);
        return RUN_PROFILE_UNSUPPORTED;
    case COLLECTOR_NO_ANSWER:
        return setup_failed(rp, "jett-profd did not answer");
    case COLLECTOR_READY:
        break;
    }
    if (send_manifest(rp, p) != 0)
        return setup_failed(rp, "cannot send the run manifest");
    return RUN_PROFILE_OK;
}

int run_profile_start(struct run_profile *rp, struct interp_state *s)
{
    const struct interp_program *p = interp_state_program(s);
    uint8_t mode = rp->args->mode == RUN_MODE_CPU ? WIRE_MODE_CPU : WIRE_MODE_MEMORY;
    const struct run_testenv *t = rp->test;
    rp->state = s;
    rp->profiler = profiler_new(
        rp->collector, s, mode, rp->args->rate_hz,
        run_testenv_budget(t ? t->agent_stack_budget : 0, WIRE_STACK_BUDGET), interp_func_count(p));
    if (rp->profiler && t && t->no_fold)
        profiler_set_folds(rp->profiler, false);
    if (rp->profiler && t && t->timer_asleep)
        profiler_set_timer_asleep(rp->profiler, true);
    if (rp->profiler && t && t->stack_walk && mode == WIRE_MODE_MEMORY &&
        (rp->stack_walk = calloc(1, sizeof *rp->stack_walk)) != NULL) {
        if ((rp->stack_walk->f = fopen(t->stack_walk, "w")) != NULL)
            profiler_set_event_hook(rp->profiler, run_stackwalk_event, rp->stack_walk);
    }
    const char *why = !rp->profiler                               ? "cannot create the profiler"
                      : rp->test && rp->test->fail_profiler_start ? "cannot start collection"
                      : collector_start(rp->collector) != 0       ? "cannot start the writer thread"
                      : profiler_start(rp->profiler) != 0         ? "cannot start the timer thread"
                                                                  : NULL;
    if (!why)
        return 0;
    snprintf(rp->message, sizeof rp->message, "profiler: setup failure: %s", why);
    return -1;
}

/* Test-only: JETT_TEST_HEAP_TOTALS names a file that receives the heap
 * observer's own totals, to compare with the daemon's profile. */
static void write_heap_totals(const struct profiler *p, const char *path)
{
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f)
        return;
    struct profiler_heap_totals t;
    profiler_heap_totals(p, &t);
    fprintf(f,
            "allocation_count %llu\nresize_count %llu\nallocated_bytes %llu\n"
            "freed_bytes %llu\npeak_live_bytes %llu\nretained_bytes %llu\n",
            (unsigned long long)t.allocation_count, (unsigned long long)t.resize_count,
            (unsigned long long)t.allocated_bytes, (unsigned long long)t.freed_bytes,
            (unsigned long long)t.peak_live_bytes, (unsigned long long)t.live_bytes);
    fclose(f);
}

/* After FINISH: a whole capture replaces its target; one that could not
 * be written whole is removed and its reason kept for the run's status. */
static void settle_capture(struct run_profile *rp)
{
    if (rp->capture.fd < 0 && !rp->capture.tmp)
        return;
    const char *why = collector_capture_error(rp->collector);
    char err[160];
    if (!why[0] && !collector_capture_complete(rp->collector))
        why = "the stream did not end";
    if (!why[0] && run_capture_commit(&rp->capture, err, sizeof err) != 0)
        why = err;
    if (why[0]) {
        snprintf(rp->capture_error, sizeof rp->capture_error, "%s", why);
        run_capture_discard(&rp->capture);
    }
}

static int send_retained(void *ctx, const struct wire_retained *rec)
{
    return collector_send_retained(ctx, rec);
}

/* Memory mode, once the program has ended: the walk of retained holders,
 * its records after the last EVENTS frame (a failed collector walks
 * nothing: the profile is the launcher's then). */
static void walk_retained(struct run_profile *rp)
{
    const struct run_testenv *t = rp->test;
    if (rp->args->mode != RUN_MODE_MEMORY || (t && t->skip_walk) || collector_failed(rp->collector))
        return;
    collector_end_events(rp->collector);
    size_t budget = run_testenv_budget(t ? t->walk_budget : 0, rp->config.retention_budget);
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    retain_walk(rp->state, profiler_stack_table(rp->profiler), budget, send_retained,
                rp->collector);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    rp->walk_ns =
        (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
}

int run_profile_finish(struct run_profile *rp, enum interp_termination term,
                       struct collector_result *res)
{
    struct wire_finish fin = {0};
    profiler_stop(rp->profiler, &fin);
    if (rp->args->mode == RUN_MODE_MEMORY)
        write_heap_totals(rp->profiler, rp->test ? rp->test->heap_totals : NULL);
    walk_retained(rp);
    fin.termination = (uint8_t)term;
    if (!(rp->caps & WIRE_CAP_PROCESS_CPU_TIME))
        fin.cpu_ns = WIRE_NONE64; /* unavailable, never a number */
    if (rp->test && rp->test->skew_finish)
        fin.requested_ticks++;
    rp->fin = fin, rp->have_fin = true;
    const struct wire_fn_calls *fn;
    const struct wire_site_calls *site;
    uint32_t n, m;
    if (profiler_calls(rp->profiler, &fn, &n, &site, &m) == 0)
        collector_set_calls(rp->collector, fn, n, site, m);
    int rc = collector_finish(rp->collector, &fin, RESULT_MS, res);
    settle_capture(rp);
    return rc;
}

/* The profile header (schema .. termination) holds partial_reason when
 * there is one; the daemon writes it in that fixed order. */
bool run_profile_result_failed(const struct collector_result *res)
{
    static const char reason[] = "\n  partial_reason: collector_failure\n";
    const char *end =
        res->profile ? memmem(res->profile, res->profile_len, "\n  termination: ", 16) : NULL;
    return end && memmem(res->profile, (size_t)(end - res->profile) + 1, reason,
                         sizeof reason - 1) != NULL;
}

int run_profile_fallback_full(const struct run_profile *rp, const char *termination, bool colour,
                              char **toon, size_t *toon_len, char **human, size_t *human_len)
{
    struct run_fallback f = {rp->args->mode == RUN_MODE_CPU ? WIRE_MODE_CPU : WIRE_MODE_MEMORY,
                             termination,
                             backend_name(rp->args->mode),
                             rp->config,
                             rp->caps,
                             colour,
                             rp->have_fin ? &rp->fin : NULL,
                             rp->collector ? collector_error(rp->collector) : ""};
    return run_fallback_render(&f, toon, toon_len, human, human_len);
}

void run_profile_close(struct run_profile *rp)
{
    if (rp->stack_walk && rp->stack_walk->f)
        fclose(rp->stack_walk->f);
    free(rp->stack_walk);
    rp->stack_walk = NULL;
    struct run_threadcpu cpu = {0};
    /* collector_finish stopped the writer: its CPU is final */
    cpu.writer_ns = rp->collector ? collector_writer_cpu_ns(rp->collector) : 0;
    cpu.walk_ns = rp->walk_ns;
    cpu.workers_ns = rp->workers_ns, cpu.worker_max_ns = rp->worker_max_ns;
    collector_free(rp->collector);
    rp->collector = NULL;
    cpu.timer_ns = rp->profiler ? profiler_timer_cpu_ns(rp->profiler) : 0;
    profiler_free(rp->profiler);
    rp->profiler = NULL;
    if (rp->daemon > 0) {
        int st;
        struct rusage ru = {0};
        pid_t got = wait4(rp->daemon, &st, WNOHANG, &ru);
        if (got == 0) {
            kill(rp->daemon, SIGKILL);
            got = wait4(rp->daemon, &st, 0, &ru);
        }
        cpu.daemon_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
                        (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
        rp->daemon = got == rp->daemon ? -1 : -2; /* -2: its usage is unknown */
    }
    /* The daemon reaped, or none (a plain run: the zeros are exact too). */
    if (rp->daemon == -1 && rp->test)
        run_threadcpu_write(rp->test->thread_cpu, &cpu);
    rp->daemon = -1;
    run_capture_discard(&rp->capture);
}

char *run_profile_fallback(const struct run_args *a, uint32_t have, const char *status,
                           const char *reason, const char *termination, size_t *len)
{
    struct toon_value *root = toon_object(), *prof = toon_object(), *caps = toon_object();
    bool cpu = a->mode == RUN_MODE_CPU;
    toon_set(prof, "schema", toon_cstr("jett.profile.v1"));
    toon_set(prof, "mode", toon_cstr(cpu ? "cpu" : "memory"));
    toon_set(prof, "status", toon_cstr(status));
    toon_set(prof, "partial_reason", toon_cstr(reason));
    toon_set(prof, "termination", toon_cstr(termination));
    toon_set(prof, "backend", toon_cstr(backend_name(a->mode)));
    toon_set(prof, "coverage", toon_cstr(cpu ? "jett_runtime_threads" : "jett_heap"));
    for (int i = 0; i < WIRE_CAP_COUNT; i++)
        toon_set(caps, wire_capability_names[i], toon_bool(have & (1u << i)));
    toon_set(prof, "capabilities", caps);
    toon_set(root, "profile", prof);
    char *out = NULL, err[128];
    if (toon_encode(root, NULL, &out, len, err, sizeof err) != 0)
        out = NULL;
    toon_free(root);
    return out;
}
