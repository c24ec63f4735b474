/*
 * interp: the public API of the Jett interpreter, for the `jett run`
 * launcher and the profiler.
 *
 *   struct interp_diags diags;
 *   struct interp_program *p = interp_load("app.jett", NULL, &diags);
 *   if (p == NULL) { print each diags.items[i] with interp_diag_format; exit 3 }
 *   struct interp_state *s = interp_new(p, &host, &opts);
 *   struct interp_result r;
 *   interp_run(s, &r);            // runs on a thread named jett-runtime
 *   ... r.termination, r.exit_code, r.message, r.trace ...
 *   interp_result_free(&r); interp_free(s); interp_program_free(p);
 *
 * interp_interrupt may be called from a signal handler at any time during
 * interp_run: the program stops at its next safe point (also out of
 * sleep), unwinds past every try, and interp_run returns `interrupted`.
 */
#ifndef JETT_AGENT_INTERP_H
#define JETT_AGENT_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/heap.h"

/* Calls deeper than this raise the runtime error "stack overflow" (in
 * every task). */
#define INTERP_MAX_DEPTH 10000
/* --workers: 1..INTERP_MAX_WORKERS; by default the CPUs, at most
 * INTERP_DEFAULT_WORKERS_MAX. */
#define INTERP_MAX_WORKERS 64
#define INTERP_DEFAULT_WORKERS_MAX 8
/* A source file larger than this is a compile error. */
#define INTERP_MAX_SOURCE (2u << 20)

/* ---- sources and diagnostics ---- */

enum interp_origin {
    INTERP_ORIGIN_PROJECT = 0,
    INTERP_ORIGIN_DEPENDENCY = 1,
    INTERP_ORIGIN_STDLIB = 2
};
enum interp_span_kind { INTERP_SPAN_COMMENT = 0, INTERP_SPAN_LITERAL = 1, INTERP_SPAN_SECRET = 2 };

struct interp_span {
    uint32_t start, end; /* byte offsets [start, end) in the source text */
};

struct interp_source_span {
    uint8_t kind; /* enum interp_span_kind */
    uint32_t start, end;
};

/* One loaded source file.  Spans are in the wire's canonical order (by
 * start, an outer span before those it holds; wire_rule_spans): secret
 * spans are the outermost expressions whose checked type contains
 * secret, and may hold literals and comments. */
struct interp_source {
    uint32_t id; /* dense from 0 in load order */
    enum interp_origin origin;
    char *path; /* logical: "src/a.jett", "NAME/x.jett", "stdlib/text.jett" */
    char *text; /* full text, NUL-terminated */
    uint32_t len;
    uint32_t *line_starts; /* offset of each line; [0] == 0 */
    uint32_t n_lines;
    struct interp_source_span *spans;
    uint32_t n_spans, cap_spans;
};

struct interp_diag {
    char *path;            /* logical path */
    uint32_t line, column; /* 1-based; column counts bytes */
    char *message;
};

struct interp_diags {
    struct interp_diag *items;
    size_t len, cap;
};

void interp_diags_free(struct interp_diags *d);
/* "path:line:column: error: message" into buf; returns the length. */
int interp_diag_format(const struct interp_diag *d, char *buf, size_t size);

/* ---- loading ---- */

struct interp_load_options {
    const char *stdlib_dir; /* NULL: the build tree's, then the installed one */
};

struct interp_program;

/* Loads, parses and checks the program file and everything it imports.
 * On any compile error returns NULL and fills *diags (every error found). */
struct interp_program *interp_load(const char *program_path, const struct interp_load_options *opts,
                                   struct interp_diags *diags);
void interp_program_free(struct interp_program *p);
/* Whether the program may have tasks: some expression names spawn. */
bool interp_program_has_tasks(const struct interp_program *p);

uint32_t interp_source_count(const struct interp_program *p);
const struct interp_source *interp_source_get(const struct interp_program *p, uint32_t id);
/* A copy of the text with every comment, string/byte literal and secret
 * expression blanked to spaces (newlines kept, so offsets and lines stay
 * valid): what the SOURCE record may carry.  Caller frees. */
char *interp_source_blanked(const struct interp_source *src);
/* 1-based line and byte column of an offset. */
void interp_source_position(const struct interp_source *src, uint32_t offset, uint32_t *line,
                            uint32_t *column);

/* A function identity: user functions, then one `<init>` per namespace. */
struct interp_func_info {
    uint32_t id;
    const char *ns;
    const char *name;
    uint32_t source_id;
    struct interp_span decl; /* from `fn` to the end of the signature */
};

uint32_t interp_func_count(const struct interp_program *p);
const struct interp_func_info *interp_func_get(const struct interp_program *p, uint32_t id);

/* A call site: a call expression, its span in the source of the
 * function whose body holds it (a namespace's <init> for a global's
 * initializer).  Ids are dense from 0, assigned by the checker. */
struct interp_call_site {
    uint32_t func_id;
    struct interp_span span;
};

uint32_t interp_call_site_count(const struct interp_program *p);
const struct interp_call_site *interp_call_site_get(const struct interp_program *p, uint32_t id);

/* ---- running ---- */

struct interp_state;

struct interp_debug_row {
    const char *path; /* logical path of the debug(...) call */
    uint32_t line, column;
    const char *value;                /* the value as str() shows it; secrets as <secret> */
    size_t value_len;                 /* its bytes (a string may hold NUL) */
    const struct interp_state *state; /* readable during the callback */
};

struct interp_log_field {
    const char *key;
    const char *value;         /* as str() shows it; secrets as <secret> */
    size_t key_len, value_len; /* their bytes (a string may hold NUL) */
};

/* A log(level, message [, fields]) call.  `accepted` is false when the
 * level is not debug/info/warn/error, the message is not a string, the
 * fields are not a map, there are more than 32 fields or a value is over
 * 1 KiB; the launcher still consumes a sequence number for it. */
struct interp_log_record {
    bool accepted;
    const char *level;   /* NULL when not a string */
    const char *message; /* NULL when not a string */
    size_t message_len;  /* its bytes (a string may hold NUL) */
    const struct interp_log_field *fields;
    size_t n_fields;
    const char *path; /* the call site */
    uint32_t line, column;
    const char *ns, *function; /* the calling function */
    /* The run, for the caller chain: interp_stack_depth/interp_stack_frame
     * walk root to the calling function during the callback. */
    const struct interp_state *state;
};

/* Where the program's output goes; NULL members write to fd 1 / fd 2 or
 * drop debug rows and log records.  Called on the runtime thread. */
struct interp_host {
    void *ctx;
    void (*write_stdout)(void *ctx, const char *data, size_t len);
    void (*write_stderr)(void *ctx, const char *data, size_t len);
    void (*debug)(void *ctx, const struct interp_debug_row *row);
    void (*log)(void *ctx, const struct interp_log_record *rec);
};

/* For a host whose callback works on what the run handed it (the rows'
 * `state`): a safe point, and memcpy a chunk at a time with one between
 * chunks, so that copying a long value or walking a deep stack is
 * sampled as the calling builtin's work, as the run's own long work is. */
void interp_host_poll(const struct interp_state *s);
void interp_host_copy(const struct interp_state *s, void *dst, const void *src, size_t n);

struct interp_options {
    const char *const *args; /* main's `args` list */
    size_t n_args;
    uint64_t fail_alloc_at; /* test-only: fail the Nth heap allocation */
    uint32_t workers;       /* worker threads for tasks; 0: the default */
};

enum interp_termination {
    INTERP_RETURNED = 0,
    INTERP_RUNTIME_ERROR = 1,
    INTERP_INTERRUPTED = 2,
};

struct interp_result {
    enum interp_termination termination;
    int exit_code; /* returned: main's int (0 when nothing); error: 1; SIGINT 130, SIGTERM 143 */
    int signal;    /* interrupted: the signal number given to interp_interrupt */
    char *message; /* runtime error: "path:line:column: runtime error: msg" */
    char *trace;   /* runtime error: the Jett stack trace, one "  at ..." line a frame */
};

/* The test-only switch: N from JETT_TEST_FAIL_ALLOC=N (decimal, > 0), else
 * 0.  The launcher reads it once at start-up into interp_options. */
uint64_t interp_fail_alloc_from_env(void);

struct interp_state;

struct interp_state *interp_new(struct interp_program *p, const struct interp_host *host,
                                const struct interp_options *opts);
/* Frees the state; globals are torn down without heap events. */
void interp_free(struct interp_state *s);

/* Runs namespace initializers then main on a new thread named
 * jett-runtime (SIGINT and SIGTERM blocked there, so they reach the
 * caller's handler) and waits for it.  A program that names `spawn` runs
 * as task 1 on worker threads named jett-worker-K instead, and
 * interp_run returns once every task has ended.  Once per state.  -1
 * only if the thread cannot start. */
int interp_run(struct interp_state *s, struct interp_result *out);
void interp_result_free(struct interp_result *r);

/* Async-signal-safe: asks the program to stop at its next safe point. */
void interp_interrupt(struct interp_state *s, int signo);

/* ---- profiler hooks ---- */

/* Called on the runtime thread at a safe point after interp_request_sample. */
typedef void (*interp_sampler_fn)(void *ctx, struct interp_state *s);

void interp_set_sampler(struct interp_state *s, interp_sampler_fn fn, void *ctx);
/* Any thread: set the pending bit (one relaxed atomic OR). */
void interp_request_sample(struct interp_state *s);
/* True while the runtime thread is blocked (in sleep). */
bool interp_is_blocked(struct interp_state *s);

/* Counts every call from now on, in this state (one runtime thread):
 * the calls of each function and the calls made from each call site
 * (a builtin's calls of a Jett function count at the builtin's call).
 * The tables are allocated here, once, so that counting a call is two
 * increments.  Before interp_run; 0, or -1 when memory runs out. */
int interp_count_calls(struct interp_state *s);
/* The counts so far, by function id and by call site id; NULL when not
 * counting.  Read them once the runtime thread has ended. */
const uint64_t *interp_fn_calls(const struct interp_state *s);
const uint64_t *interp_site_calls(const struct interp_state *s);

/* The heap observer; the stack at the event is readable from the state. */
void interp_set_heap_observer(struct interp_state *s, const struct heap_observer *o, void *ctx);

/* ---- a run with tasks (the program names spawn) ---- */

bool interp_has_tasks(const struct interp_state *s);
/* Worker threads (1 without tasks). */
uint32_t interp_worker_count(const struct interp_state *s);
/* Once the run ended: the CPU time of the worker threads, summed and of
 * the busiest (0 without tasks), for benchmarks. */
void interp_worker_cpu(const struct interp_state *s, uint64_t *sum_ns, uint64_t *max_ns);
/* The heap observer of every task: o gets the state of the task whose
 * heap had the event as its ctx, and interp_heap_observer_ctx of that
 * state gives back `ctx`. */
void interp_set_task_heap_observer(struct interp_state *s, const struct heap_observer *o,
                                   void *ctx);
void *interp_heap_observer_ctx(const struct interp_state *s);
/* The timer's view of worker k (1..count): whether it runs a task now,
 * and its sample bit (one relaxed atomic OR). */
bool interp_worker_busy(struct interp_state *s, uint32_t k);
void interp_worker_request(struct interp_state *s, uint32_t k);
/* Whether worker k runs the task of state t now; and its sample bit
 * cleared, by a profiler that takes the sample itself (a task parking). */
bool interp_worker_runs(struct interp_state *s, uint32_t k, const struct interp_state *t);
void interp_worker_take_sample(struct interp_state *s, uint32_t k);
/* The task a state runs (0 without tasks) and the run-local id of the
 * thread running it (K of jett-worker-K; 0: jett-runtime). */
uint32_t interp_task_number(const struct interp_state *s);
uint32_t interp_thread_id(const struct interp_state *s);
/* A word the profiler keeps with the task from its suspension to its
 * resumption (NULL without tasks). */
uint64_t *interp_task_mark(struct interp_state *s);

struct interp_task_hooks;
/* The profiler's hooks on a run with tasks (agent/run.h). */
void interp_set_task_hooks(struct interp_state *s, const struct interp_task_hooks *h, void *ctx);

/* One Jett frame as a sampler sees it, root (0) to leaf (depth - 1). */
struct interp_frame_info {
    uint32_t func_id;
    struct interp_span span; /* leaf: current statement; others: the call being executed */
};

uint32_t interp_stack_depth(const struct interp_state *s);
struct interp_frame_info interp_stack_frame(const struct interp_state *s, uint32_t i);

/* The profiler's stack node kept with frame i: every call starts its frame
 * with INTERP_NODE_UNKNOWN, and what the profiler stores stays until the
 * frame returns (a frame's callers and call site never change while it
 * runs, so neither does its node). */
#define INTERP_NODE_UNKNOWN UINT32_MAX
uint32_t interp_stack_node(const struct interp_state *s, uint32_t i);
void interp_set_stack_node(struct interp_state *s, uint32_t i, uint32_t node);
/* The frames array (agent/interp_frame.h), root first: allocated once
 * for the deepest stack, so the pointer holds for the whole run. */
struct interp_frame *interp_frames(struct interp_state *s);
/* Where the current depth is kept, for the same reason. */
const uint32_t *interp_depth_at(const struct interp_state *s);
const struct interp_program *interp_state_program(const struct interp_state *s);

#endif
