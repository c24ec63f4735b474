/*
 * interp-internal: the loaded program and the run state, shared by the
 * loader, checker, evaluator, builtins and runtime.  Not for the launcher.
 */
#ifndef JETT_AGENT_INTERP_INTERNAL_H
#define JETT_AGENT_INTERP_INTERNAL_H

#include <stdatomic.h>

#include "agent/ast.h"
#include "agent/interp.h"
#include "agent/interp_frame.h"
#include "agent/parser.h"
#include "agent/safepoint.h"

/* A namespace: exactly one source file declares it. */
struct interp_ns {
    const char *name;
    uint32_t source_id;
    struct ast_file *file;
    uint32_t init_fn;  /* function id of this namespace's <init> */
    uint32_t *imports; /* namespace indices, in import order */
    uint32_t n_imports;
    uint32_t first_fn, n_fns;         /* its functions' ids */
    uint32_t first_global, n_globals; /* its global slots */
};

/* A callable function (user function or a namespace's <init>). */
struct interp_fn {
    struct ast_fn *decl; /* NULL for <init> */
    uint32_t ns;
    uint32_t n_params, n_slots;
    struct ast *body;    /* S_BLOCK; for <init>, a block of global S_LETs */
    struct ast_type ret; /* copied from decl: read on every return */
    bool typed_params;   /* some parameter is annotated */
};

struct interp_global {
    const char *name;
    uint32_t ns;
    struct ast *decl; /* the S_LET */
    bool secret;      /* its value contains a secret */
    bool typed;       /* its checked type is secret<T> */
};

struct interp_program {
    struct interp_source **sources;
    uint32_t n_sources;
    struct interp_ns *nss;
    uint32_t n_ns;
    struct interp_fn *fns;
    struct interp_func_info *infos;
    uint32_t n_fns;
    struct interp_global *globals;
    uint32_t n_globals;
    struct interp_call_site *call_sites; /* every E_CALL, by its u.call.site */
    uint32_t n_call_sites, cap_call_sites;
    uint32_t *init_order; /* namespace indices, dependencies first */
    uint32_t n_init;
    uint32_t main_fn;
    uint32_t main_ns;
    bool uses_spawn; /* some expression names the builtin spawn: the run has tasks */
    struct arena arena;
    struct parse_consts consts;
};

/* C stack kept free below the deepest call: one function's tree
 * (PARSE_MAX_HEIGHT levels, under 1 MiB even with ASan) plus builtins. */
#define INTERP_STACK_MARGIN ((size_t)2 << 20)

struct interp_run;
struct interp_task;
struct sched_worker;

/* One task's execution: its frames, heap and namespace bindings.  A run
 * without tasks has one, which the launcher holds; with tasks, each task
 * has its own and the launcher holds task 1's (agent/task.h). */
struct interp_state {
    /* The word safe points poll: the worker's that runs this state (the
     * timer and interrupts set bits there; agent/sched.h). */
    struct safepoint *sp;
    _Atomic int blocked;         /* 1 while in sleep (a run without tasks) */
    struct interp_frame *frames; /* INTERP_MAX_DEPTH + 1 entries, preallocated */
    uint32_t depth;
    uint32_t deepest;      /* the greatest depth so far */
    struct value *slots;   /* the leaf frame's slots */
    uint32_t builtin;      /* the builtin being called (for its error messages) */
    uintptr_t stack_limit; /* calls below this C stack address overflow */
    const struct interp_program *prog;
    struct heap heap;
    struct value *globals; /* this task's namespace-level bindings */
    struct interp_host host;
    struct interp_run *run;
    struct interp_task *task;    /* the task it runs; NULL in a run without tasks */
    struct sched_worker *worker; /* the worker running it now */
    /* interp_count_calls: calls by function id and by call site id; with
     * tasks, the tables of the worker running the state (run_task sets
     * them), owned by the worker */
    uint64_t *fn_calls, *site_calls;
    /* the error being propagated (EX_ERROR) */
    bool interrupted;
    char *err_msg;  /* "message", which holds no NUL byte */
    size_t err_len; /* its length (it may be long: not measured again) */
    char *err_loc;  /* "path:line:column" */
    char *err_trace;
    /* Out of memory is reported without allocating: the message text and
     * its whole line are set aside by interp_new (NULL once handed out);
     * err_oom marks the error being propagated as that one. */
    bool err_oom;
    char *oom_msg;    /* "out of memory", moved into err_msg */
    char *oom_line;   /* INTERP_OOM_LINE bytes: "path:line:column: runtime error: ..." */
    char *oom_trace;  /* INTERP_OOM_TRACE bytes: the trace, cut to fit */
    struct value ret; /* the value of the return being propagated */
};

#define INTERP_OOM_LINE 4200
#define INTERP_OOM_TRACE 32768

enum exec_status { EX_NORMAL = 0, EX_BREAK, EX_CONTINUE, EX_RETURN, EX_ERROR };

/* ---- checker ---- */
int check_program(struct interp_program *p, struct interp_diags *diags);

/* ---- evaluator ---- */
int eval_expr(struct interp_state *s, const struct ast *n, struct value *out);
enum exec_status exec_block(struct interp_state *s, const struct ast *b);
/* Calls function `fn` with args (borrowed); result in *out (owned). */
int eval_call_value(struct interp_state *s, struct value fn, struct value *args, uint32_t n,
                    const struct ast *site, struct value *out);
int eval_call_fn(struct interp_state *s, uint32_t fn_id, struct value *slots,
                 const struct ast *site, struct value *out);
/* What a task's entry call does with its result as its function returns,
 * in its frame at the return statement: 0, or -1 (raised; the result is
 * still the caller's, which releases it). */
typedef int (*eval_return_fn)(struct interp_state *s, const struct value *result, void *ctx);
/* A call from no call site (a task's entry) with that hook. */
int eval_call_entry(struct interp_state *s, uint32_t fn_id, struct value *slots,
                    eval_return_fn at_return, void *ctx, struct value *out);
/* Raises a runtime error at node n (in the leaf frame's source). */
int interp_raise(struct interp_state *s, const struct ast *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with a message already built (malloc'd, taken; NULL when
 * memory ran out building it), of `len` bytes. */
int interp_raise_text(struct interp_state *s, const struct ast *n, char *msg, size_t len);
/* The same with the message before, then the program's text up to its
 * first NUL byte, then after: a long text is copied a chunk at a time
 * with a poll between, as the builtins' work is. */
int interp_raise_quoted(struct interp_state *s, const struct ast *n, const char *before,
                        const char *text, size_t len, const char *after);
int interp_oom(struct interp_state *s, const struct ast *n);
/* Takes a pending sample, notes a pending interrupt: -1 when interrupted. */
int interp_safe_point_slow(struct interp_state *s);

/* A safe point: 0, or -1 when the run is interrupted. */
static inline int interp_safe_point(struct interp_state *s)
{
    return safepoint_poll(s->sp);
}

/* Around every call of the host (output, debug rows, log records): with
 * tasks, one at a time. */
void interp_host_lock(struct interp_state *s);
void interp_host_unlock(struct interp_state *s);

static inline void val_release(struct interp_state *s, struct value v)
{
    heap_release(&s->heap, v);
}

/* ---- values: formatting, comparing (value.c) ---- */
/* Text being built.  With `sp` set, it grows and takes long pieces a
 * chunk at a time with a poll between (val_format sets it). */
struct strbuf {
    char *data;
    size_t len, cap;
    struct safepoint *sp;
};
void sb_put(struct strbuf *b, const char *data, size_t n);
void sb_puts(struct strbuf *b, const char *str);
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct strbuf *b);
/* Appends the line of the raised error of s, "LOC: runtime error: MSG"
 * (without LOC when it has none), as the launcher prints it. */
void sb_error_line(struct strbuf *b, const struct interp_state *s);
/* Appends v as print shows it; `quoted` for strings inside containers.
 * These walk whole values, polling `sp` per item and per chunk of bytes
 * (they always finish: an interrupt stays pending for the caller); the
 * buffer polls it too from then on. */
void val_format(const struct interp_program *p, struct safepoint *sp, struct value v, bool quoted,
                struct strbuf *b);
bool val_equal(struct safepoint *sp, struct value a, struct value b);
/* -2 when a and b cannot be ordered; else -1, 0, 1. */
int val_compare(struct safepoint *sp, struct value a, struct value b);
bool val_matches(struct value v, struct ast_type t);
const char *ast_type_name(struct ast_type t);

#endif
