/*
 * jett run: load, check and run a program, optionally profiled.
 *
 * Exit status (the first that applies): 2 usage, 3 compile error, 4
 * profiler setup failure or unsupported mode (no user code ran), 130/143
 * interrupt, 1 runtime error, 4 collector failure after a normal return,
 * else main's value.
 */
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run_args.h"
#include "cli/run_profile.h"
#include "cli/run_signals.h"
#include "cli/run_stdout.h"
#include "cli/runout.h"

#define EXIT_COMPILE 3
#define EXIT_PROFILER 4

_Static_assert(sizeof(struct interp_source_span) == sizeof(struct wire_source_span),
               "source spans travel as they are");

/* Prints the envelope (agent) and returns the status. */
static int emit(struct runout *ro, bool agent, int status)
{
    ro->exit_code = status;
    if (!agent)
        return status;
    char *doc, err[200];
    size_t len;
    if (runout_render(ro, &doc, &len, err, sizeof err) != 0) {
        fprintf(stderr, "jett: cannot write the run envelope: %s\n", err);
        return status;
    }
    fwrite(doc, 1, len, stdout);
    fputc('\n', stdout);
    free(doc);
    return status;
}

static bool has_agent_flag(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--agent") == 0)
            return true;
    return false;
}

/* Compile errors: every diagnostic, exit 3, nothing runs. */
static int compile_failed(struct runout *ro, bool agent, struct interp_diags *d)
{
    for (size_t i = 0; i < d->len; i++) {
        char line[1024];
        interp_diag_format(&d->items[i], line, sizeof line);
        if (agent)
            runout_add_diag(ro, d->items[i].path, d->items[i].line, d->items[i].column,
                            d->items[i].message);
        else
            fprintf(stderr, "%s\n", line);
    }
    runout_set_error(ro, "compile_error", "compile error: %zu error%s", d->len,
                     d->len == 1 ? "" : "s");
    return emit(ro, agent, EXIT_COMPILE);
}

struct run_ctx {
    struct run_args args;
    struct run_testenv test;
    struct runout ro;
    struct run_profile rp;
    char *fallback; /* a launcher-made profile, when the daemon gave none */
    struct collector_result res;
};

static const char *termination_name(enum interp_termination t)
{
    return t == INTERP_RETURNED        ? "returned"
           : t == INTERP_RUNTIME_ERROR ? "runtime_error"
                                       : "interrupted";
}

/* Setup failure before main: a minimal profile, exit 4, no user code. */
static int setup_failed(struct run_ctx *c, enum run_profile_setup why)
{
    bool unsupported = why == RUN_PROFILE_UNSUPPORTED;
    size_t len;
    c->fallback = run_profile_fallback(&c->args, c->rp.caps, "unavailable",
                                       unsupported ? "backend_unsupported" : "collector_failure",
                                       "not_started", &len);
    c->ro.profile = c->fallback, c->ro.profile_len = c->fallback ? len : 0;
    runout_set_error(&c->ro, unsupported ? "profiler_unsupported" : "profiler_setup_failure", "%s",
                     c->rp.message);
    if (!c->args.agent)
        fprintf(stderr, "jett: %s\n", c->rp.message);
    return emit(&c->ro, c->args.agent, EXIT_PROFILER);
}

/* A collector failure (the launcher's or the daemon's) keeps a runtime
 * error's or an interrupt's status; after a normal return it is the run's
 * failure: profiler_failure, exit 4. */
static int collector_failure_outcome(struct run_ctx *c, const struct interp_result *r, int status)
{
    if (!c->args.agent)
        fputs("jett: profiler: collector failure\n", stderr);
    if (r->termination != INTERP_RETURNED)
        return status;
    runout_set_error(&c->ro, "profiler_failure", "profiler: collector failure");
    return EXIT_PROFILER;
}

/* The launcher's own profile when the daemon gave none. */
static void use_fallback(struct run_ctx *c, const struct interp_result *r)
{
    char *human = NULL;
    size_t len = 0, hlen = 0;
    bool colour = isatty(STDERR_FILENO) && !getenv("NO_COLOR") && !c->args.agent;
    if (run_profile_fallback_full(&c->rp, termination_name(r->termination), colour, &c->fallback,
                                  &len, &human, &hlen) != 0)
        c->fallback = NULL, len = 0;
    c->ro.profile = c->fallback, c->ro.profile_len = len;
    if (!c->args.agent && human) {
        run_stdout_flush();
        fwrite(human, 1, hlen, stderr);
    }
    free(human);
}

/* After the run: the profile (the daemon's or, on collector failure, the
 * launcher's), its report, and the exit status's precedence. */
static int finish_profile(struct run_ctx *c, const struct interp_result *r, int status)
{
    if (run_profile_finish(&c->rp, r->termination, &c->res) != 0) {
        use_fallback(c, r);
        return collector_failure_outcome(c, r, status);
    }
    c->ro.profile = c->res.profile, c->ro.profile_len = c->res.profile_len;
    if (!c->args.agent) {
        run_stdout_flush();
        fwrite(c->res.human, 1, c->res.human_len, stderr);
    }
    return run_profile_result_failed(&c->res) ? collector_failure_outcome(c, r, status) : status;
}

/* The run's own outcome: termination, error fields, status. */
static int outcome(struct run_ctx *c, const struct interp_result *r)
{
    c->ro.termination = termination_name(r->termination);
    if (r->termination == INTERP_RUNTIME_ERROR) {
        runout_set_error(&c->ro, "runtime_error", "%s", r->message ? r->message : "");
        if (!c->args.agent)
            fprintf(stderr, "%s\n%s", r->message ? r->message : "", r->trace ? r->trace : "");
    } else if (r->termination == INTERP_INTERRUPTED) {
        runout_set_error(&c->ro, "interrupted", "interrupted by %s",
                         r->signal == SIGTERM ? "SIGTERM" : "SIGINT");
    }
    return r->exit_code;
}

/* A capture that could not be written whole is a profiler failure: on
 * stderr (or in the envelope), and exit 4 when the program returned; the
 * profile is still printed. */
static int capture_outcome(struct run_ctx *c, const struct interp_result *r, int status)
{
    const char *why = c->rp.capture_error;
    if (!why[0])
        return status;
    bool returned = r->termination == INTERP_RETURNED;
    if (!c->args.agent || !returned)
        fprintf(stderr, "jett: --profile-capture: cannot write '%s': %s\n", c->args.capture, why);
    if (!returned)
        return status;
    if (c->ro.error_kind)
        runout_set_error(&c->ro, "profiler_failure",
                         "profiler: collector failure; cannot write the capture: %s", why);
    else
        runout_set_error(&c->ro, "profiler_failure", "profiler: cannot write the capture: %s", why);
    return EXIT_PROFILER;
}

/* A signal after the program's last safe point (while the profile is
 * finished) still ends the run as interrupted: 130/143 rank above a
 * runtime error, a collector failure and main's value. */
static int late_interrupt(struct run_ctx *c, const struct interp_result *r, int status)
{
    int sig = run_signals_received();
    if (!sig || r->termination == INTERP_INTERRUPTED)
        return status;
    runout_set_error(&c->ro, "interrupted", "interrupted by %s",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return 128 + sig;
}

static int run_program(struct run_ctx *c, struct interp_program *p)
{
    struct interp_host host = runout_host(&c->ro);
    struct interp_options opts = {(const char *const *)c->args.prog_argv, (size_t)c->args.prog_argc,
                                  c->test.fail_alloc, c->args.workers};
    struct interp_state *s = interp_new(p, &host, &opts);
    if (!s) {
        fprintf(stderr, "jett: out of memory\n");
        return 1;
    }
    c->ro.state = s;
    bool profiling = c->args.mode != RUN_MODE_NONE;
    if (profiling && run_profile_start(&c->rp, s) != 0) {
        c->ro.state = NULL;
        interp_free(s);
        return setup_failed(c, RUN_PROFILE_FAILED);
    }
    run_signals_running(s);
    struct interp_result r = {0};
    int status = interp_run(s, &r) == 0 ? outcome(c, &r) : 1;
    interp_worker_cpu(s, &c->rp.workers_ns, &c->rp.worker_max_ns);
    run_signals_finishing(profiling ? c->rp.collector : NULL, r.termination == INTERP_INTERRUPTED);
    if (!c->args.agent)
        run_stdout_flush();
    if (profiling)
        status = capture_outcome(c, &r, finish_profile(c, &r, status));
    status = late_interrupt(c, &r, status);
    c->ro.state = NULL;
    interp_result_free(&r);
    interp_free(s);
    return emit(&c->ro, c->args.agent, status);
}

static const char run_usage_text[] =
    "usage: jett run FILE.jett [--profile | --profile-memory] [--profile-threshold PERCENT]\n"
    "                [--profile-limit COUNT] [--profile-rate HZ] [--profile-capture PATH]\n"
    "                [--agent] [--workers N] [-- ARGS...]\n"
    "\n"
    "  --profile                 CPU profile\n"
    "  --profile-memory          Jett heap profile\n"
    "  --profile-threshold P     minimum impact in percent, 0..100, at most two\n"
    "                            decimals (default 5)\n"
    "  --profile-limit N         at most N bottlenecks, 1..100 (default 10)\n"
    "  --profile-rate HZ         --profile only: samples per second, 1..1000\n"
    "                            (default 1000)\n"
    "  --profile-capture PATH    also save the event stream (see jett-capture(5))\n"
    "  --agent                   one RunOutputV1 TOON document on stdout\n"
    "  --workers N               worker threads for tasks, 1..64 (default: the\n"
    "                            CPUs, at most 8)\n"
    "  -h, --help                print this help\n"
    "  -- ARGS...                the program's arguments\n"
    "\n"
    "See jett-run(1).\n";

/* A program path that is a folder would read as an empty file. */
static int check_program_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "run: '%s' is a directory, not a FILE.jett", path);
        return -1;
    }
    return 0;
}

int cli_run_main(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (cli_is_help(argv[i]))
            return fputs(run_usage_text, stdout), CLI_EXIT_OK;
    run_signals_install();
    struct run_ctx c;
    memset(&c, 0, sizeof c);
    char err[512];
    bool agent = has_agent_flag(argc, argv);
    runout_init(&c.ro, agent);
    run_testenv_read(&c.test);
    int status;
    if (run_args_parse(argc, argv, &c.args, err, sizeof err) != 0 ||
        check_program_path(c.args.file, err, sizeof err) != 0 ||
        run_profile_open_capture(&c.rp, &c.args, err, sizeof err) != 0) {
        fprintf(stderr, "jett: %s\n", err);
        runout_set_error(&c.ro, "usage_error", "%s", err);
        status = emit(&c.ro, agent, CLI_EXIT_USAGE);
        runout_free(&c.ro);
        return status;
    }
    c.rp.test = &c.test;
    if (run_signals_prepare_quit(&c.ro, agent, c.rp.capture.tmp) != 0)
        fprintf(stderr, "jett: out of memory\n");
    struct interp_diags diags = {0};
    struct interp_program *p = interp_load(c.args.file, NULL, &diags);
    if (!p) {
        status = compile_failed(&c.ro, agent, &diags);
    } else if (c.args.mode != RUN_MODE_NONE) {
        bool colour = isatty(STDERR_FILENO) && !getenv("NO_COLOR") && !agent;
        enum run_profile_setup su = run_profile_setup(&c.rp, p, colour);
        run_signals_daemon(c.rp.daemon);
        status = su == RUN_PROFILE_OK ? run_program(&c, p) : setup_failed(&c, su);
    } else {
        status = run_program(&c, p);
    }
    run_signals_free();
    run_profile_close(&c.rp);
    collector_result_free(&c.res);
    free(c.fallback);
    interp_diags_free(&diags);
    interp_program_free(p);
    runout_free(&c.ro);
    return status;
}
