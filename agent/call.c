/* call: Jett calls (frames, argument and return checks, the recursion
 * limit), builtin dispatch, and raising runtime errors with a trace. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/eval.h"

/* "path:line:column" of an offset in function fid's source. */
static void call_location(const struct interp_state *s, uint32_t fid, uint32_t offset, char *buf,
                          size_t size)
{
    const struct interp_func_info *fi = &s->prog->infos[fid];
    const struct interp_source *src = s->prog->sources[fi->source_id];
    uint32_t line, column;
    interp_source_position(src, offset, &line, &column);
    snprintf(buf, size, "%s:%u:%u", src->path, line, column);
}

/* Where a trace goes: a growing strbuf, or (when memory ran out) a fixed
 * buffer whose last CALL_CUT_ROOM bytes are kept for the line saying
 * that the rest is cut. */
struct call_out {
    struct strbuf *sb; /* NULL: into buf */
    char *buf;
    size_t cap, len;
    bool cut;
};

#define CALL_CUT_ROOM 64

static void call_put(struct call_out *o, const char *text)
{
    if (o->sb) {
        sb_puts(o->sb, text);
        return;
    }
    size_t n = strlen(text);
    if (o->cut || o->len + n + CALL_CUT_ROOM > o->cap) {
        o->cut = true;
        return;
    }
    memcpy(o->buf + o->len, text, n + 1);
    o->len += n;
}

/* Identical frames in a row shown before the rest of the run is counted. */
#define CALL_TRACE_RUN 10

/* Where frame i stands: the error's offset in the leaf, else its call. */
static uint32_t call_frame_offset(const struct interp_state *s, uint32_t i, uint32_t leaf_offset)
{
    return i + 1 == s->depth ? leaf_offset : s->frames[i].call_start;
}

/* "  ... 9,989 more frames of ns.fn" for a folded run of n frames. */
static void call_folded(struct call_out *o, const struct interp_func_info *fi, uint32_t n)
{
    char digits[16], grouped[24], line[600];
    int len = snprintf(digits, sizeof digits, "%" PRIu32, n), w = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            grouped[w++] = ',';
        grouped[w++] = digits[i];
    }
    grouped[w] = '\0';
    snprintf(line, sizeof line, "  \u2026 %s more frames of %s.%s\n", grouped, fi->ns, fi->name);
    call_put(o, line);
}

/* The Jett stack trace, leaf first, one "  at ns.fn (path:line:col)" a
 * line; a run of identical frames (deep recursion) shows its first
 * CALL_TRACE_RUN and one line counting the others. */
static void call_trace_to(const struct interp_state *s, uint32_t leaf_offset, struct call_out *o)
{
    for (uint32_t i = s->depth; i-- > 0 && !o->cut;) { /* the buffer is full: nothing more fits */
        uint32_t fid = s->frames[i].func_id, at = call_frame_offset(s, i, leaf_offset), n = 1;
        while (n <= i && s->frames[i - n].func_id == fid &&
               call_frame_offset(s, i - n, leaf_offset) == at)
            n++;
        const struct interp_func_info *fi = &s->prog->infos[fid];
        char where[PATH_MAX + 32], line[PATH_MAX + 600];
        call_location(s, fid, at, where, sizeof where);
        snprintf(line, sizeof line, "  at %s.%s (%s)\n", fi->ns, fi->name, where);
        for (uint32_t k = 0; k < n && k < CALL_TRACE_RUN; k++)
            call_put(o, line);
        if (o->sb) /* a deep stack's lines; not when memory ran out (no sample then) */
            safepoint_poll(s->sp);
        if (n > CALL_TRACE_RUN)
            call_folded(o, fi, n - CALL_TRACE_RUN);
        i -= n - 1;
    }
    if (o->cut)
        snprintf(o->buf + o->len, o->cap - o->len,
                 "  \u2026 (the rest is not shown: out of memory)\n");
}

static char *call_trace(const struct interp_state *s, uint32_t leaf_offset)
{
    struct strbuf b = {.sp = s->sp}; /* a deep stack's trace grows long */
    struct call_out o = {.sb = &b};
    call_trace_to(s, leaf_offset, &o);
    if (b.data == NULL)
        sb_puts(&b, "");
    return b.data;
}

int interp_raise_text(struct interp_state *s, const struct ast *n, char *msg, size_t len)
{
    s->err_oom = false;
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    s->err_msg = msg;
    s->err_len = msg ? len : 0;
    const struct interp_frame *f = &s->frames[s->depth - 1];
    uint32_t offset = n ? n->start : f->stmt_start;
    char where[PATH_MAX + 32];
    call_location(s, f->func_id, offset, where, sizeof where);
    s->err_loc = strdup(where);
    s->err_trace = call_trace(s, offset);
    return -1;
}

int interp_raise(struct interp_state *s, const struct ast *n, const char *fmt, ...)
{
    char *msg;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&msg, fmt, ap);
    va_end(ap);
    return interp_raise_text(s, n, len < 0 ? NULL : msg, len < 0 ? 0 : (size_t)len);
}

void sb_error_line(struct strbuf *b, const struct interp_state *s)
{
    if (s->err_loc)
        sb_printf(b, "%s: ", s->err_loc);
    sb_puts(b, "runtime error: ");
    if (s->err_msg)
        sb_put(b, s->err_msg, s->err_len);
    else
        sb_puts(b, "error");
}

int interp_raise_quoted(struct interp_state *s, const struct ast *n, const char *before,
                        const char *text, size_t len, const char *after)
{
    struct strbuf b = {.sp = s->sp};
    sb_puts(&b, before);
    for (size_t at = 0; at < len;) { /* up to the first NUL, as "%s" took it */
        size_t k = len - at < SAFEPOINT_CHUNK ? len - at : SAFEPOINT_CHUNK;
        const char *nul = memchr(text + at, '\0', k);
        sb_put(&b, text + at, nul ? (size_t)(nul - (text + at)) : k);
        if (nul)
            break;
        if ((at += k) < len)
            safepoint_poll(s->sp);
    }
    sb_puts(&b, after);
    return interp_raise_text(s, n, b.data, b.len);
}

/* Memory has just run out, so nothing here allocates: the result's line
 * and the trace go into the buffers interp_new set aside (handed to the
 * result by runtime_finish), the message is a copy or else the one kept
 * in reserve. */
int interp_oom(struct interp_state *s, const struct ast *n)
{
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    s->err_loc = s->err_trace = NULL;
    s->err_oom = true;
    if ((s->err_msg = strdup("out of memory")) == NULL) {
        s->err_msg = s->oom_msg;
        s->oom_msg = NULL;
    }
    s->err_len = s->err_msg ? strlen(s->err_msg) : 0;
    const struct interp_frame *f = &s->frames[s->depth - 1];
    uint32_t offset = n ? n->start : f->stmt_start;
    char where[PATH_MAX + 32];
    call_location(s, f->func_id, offset, where, sizeof where);
    if (s->oom_line == NULL) /* a task without the reserve: the location if it can */
        s->err_loc = strdup(where);
    if (s->oom_line)
        snprintf(s->oom_line, INTERP_OOM_LINE, "%s: runtime error: out of memory", where);
    if (s->oom_trace) {
        struct call_out o = {.buf = s->oom_trace, .cap = INTERP_OOM_TRACE};
        s->oom_trace[0] = '\0';
        call_trace_to(s, offset, &o);
    }
    return -1;
}

static void call_release_slots(struct interp_state *s, struct value *slots, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        val_release(s, slots[i]);
}

/* Checks parameter annotations before the frame is pushed. */
static int call_check_params(struct interp_state *s, const struct interp_fn *fn,
                             struct value *slots, const struct ast *site)
{
    for (uint32_t i = 0; i < fn->n_params; i++) {
        struct ast_type t = fn->decl->params[i].type;
        if (t.base == T_NONE)
            continue;
        if (!val_matches(slots[i], t))
            return interp_raise(s, site, "argument '%s' of %s must be %s%s, got %s%s",
                                fn->decl->params[i].name, fn->decl->name, t.secret ? "secret " : "",
                                ast_type_name(t), slots[i].secret ? "secret " : "",
                                val_type_name(slots[i]));
        slots[i].secret |= t.secret;
    }
    return 0;
}

/* Runs the body of a pushed frame; the result is owned by *out. */
static int call_body(struct interp_state *s, const struct interp_fn *fn, struct value *out)
{
    enum exec_status st = exec_block(s, fn->body);
    if (st == EX_ERROR)
        return -1;
    *out = VAL_NIL;
    if (st == EX_RETURN) {
        *out = s->ret;
        s->ret = VAL_NIL;
    }
    struct ast_type t = fn->ret;
    if (t.base != T_NONE && !val_matches(*out, t)) {
        interp_raise(s, NULL, "%s must return %s%s, got %s", fn->decl->name,
                     t.secret ? "secret " : "", ast_type_name(t), val_type_name(*out));
        val_release(s, *out);
        return -1;
    }
    out->secret |= t.secret;
    return 0;
}

/* The end of a call, its frame still current: the callee's locals are
 * released (freeing a large one is its own work, at the statement it
 * returned from), then a safe point, so that a tick from its last
 * statement or its teardown is the callee's, not its caller's at the
 * call.  r is call_body's; the result stays in *out when it is 0. */
static int call_leave(struct interp_state *s, const struct interp_fn *fn, struct value *slots,
                      int r, struct value *out)
{
    call_release_slots(s, slots, fn->n_slots);
    if (r == 0 && interp_safe_point(s) < 0) {
        val_release(s, *out);
        return -1;
    }
    return r;
}

/* A call: the frame pushed, the body run, the result checked and passed
 * to `at_return` (when given) while the frame is still current, the
 * frame left.  Inlined into both callers, so that an ordinary call tests
 * no hook. */
static inline __attribute__((always_inline)) int
call_run(struct interp_state *s, uint32_t fn_id, struct value *slots, const struct ast *site,
         eval_return_fn at_return, void *ctx, struct value *out)
{
    const struct interp_fn *fn = &s->prog->fns[fn_id];
    char probe; /* its address: how deep the C stack is */
    if (s->depth >= INTERP_MAX_DEPTH || (uintptr_t)&probe < s->stack_limit) {
        call_release_slots(s, slots, fn->n_slots);
        if (s->depth >= INTERP_MAX_DEPTH)
            return interp_raise(s, site, "stack overflow: more than %d nested calls",
                                INTERP_MAX_DEPTH);
        return interp_raise(s, site, "stack overflow: the runtime stack is exhausted");
    }
    if (s->depth > 0 && site != NULL) {
        s->frames[s->depth - 1].call_start = site->start;
        s->frames[s->depth - 1].call_end = site->end;
    }
    /* Before the push: a tick from evaluating the arguments is the
     * caller's, at the call. */
    if (interp_safe_point(s) < 0 ||
        (fn->typed_params && call_check_params(s, fn, slots, site) < 0)) {
        call_release_slots(s, slots, fn->n_slots);
        return -1;
    }
    struct value *caller_slots = s->slots;
    struct interp_frame *f = &s->frames[s->depth++];
    if (s->depth > s->deepest)
        s->deepest = s->depth;
    f->func_id = fn_id;
    f->stack_node = INTERP_NODE_UNKNOWN;
    f->stmt_start = fn->body->start;
    f->stmt_end = fn->body->end;
    f->slots = s->slots = slots;
    /* Counting, once asked to: no clock, no allocation (site is always
     * the E_CALL that made the call, a builtin's for its callbacks). */
    if (s->fn_calls) {
        s->fn_calls[fn_id]++;
        if (site)
            s->site_calls[site->u.call.site]++;
    }
    int r = call_body(s, fn, out);
    if (r == 0 && at_return && at_return(s, out, ctx) < 0) {
        val_release(s, *out);
        r = -1;
    }
    r = call_leave(s, fn, slots, r, out);
    s->depth--;
    s->slots = caller_slots;
    return r;
}

int eval_call_fn(struct interp_state *s, uint32_t fn_id, struct value *slots,
                 const struct ast *site, struct value *out)
{
    return call_run(s, fn_id, slots, site, NULL, NULL, out);
}

int eval_call_entry(struct interp_state *s, uint32_t fn_id, struct value *slots,
                    eval_return_fn at_return, void *ctx, struct value *out)
{
    return call_run(s, fn_id, slots, NULL, at_return, ctx, out);
}

/* Calls a user function with borrowed arguments (from a builtin like sort). */
static int call_user_value(struct interp_state *s, uint32_t fid, struct value *args, uint32_t n,
                           const struct ast *site, struct value *out)
{
    const struct interp_fn *fn = &s->prog->fns[fid];
    if (n != fn->n_params)
        return interp_raise(s, site, "%s expects %u argument%s, got %u", fn->decl->name,
                            fn->n_params, fn->n_params == 1 ? "" : "s", n);
    struct value slots[fn->n_slots ? fn->n_slots : 1];
    for (uint32_t i = 0; i < fn->n_slots; i++)
        slots[i] = i < n ? args[i] : VAL_NIL;
    for (uint32_t i = 0; i < n; i++)
        heap_retain(args[i]);
    return eval_call_fn(s, fid, slots, site, out);
}

static int call_builtin(struct interp_state *s, uint32_t bid, struct value *args, uint32_t n,
                        const struct ast *site, struct value *out)
{
    const struct builtin_def *b = &builtin_table[bid];
    if (n < b->min_args || n > b->max_args)
        return interp_raise(s, site, "%s expects %s%u argument%s, got %u", b->name,
                            b->min_args == b->max_args ? "" : "at least ", b->min_args,
                            b->min_args == 1 ? "" : "s", n);
    s->builtin = bid;
    return b->fn(s, args, n, site, out);
}

int eval_call_value(struct interp_state *s, struct value fn, struct value *args, uint32_t n,
                    const struct ast *site, struct value *out)
{
    if (fn.tag == V_FUNC)
        return call_user_value(s, fn.u.fn, args, n, site, out);
    if (fn.tag == V_BUILTIN)
        return call_builtin(s, fn.u.fn, args, n, site, out);
    return interp_raise(s, site, "cannot call %s", val_type_name(fn));
}

/* Evaluates args[0..n) into vals; on error releases what was evaluated. */
static int call_eval_args(struct interp_state *s, const struct ast *n, struct value *vals)
{
    for (uint32_t i = 0; i < n->u.call.n; i++)
        if (eval_fast(s, n->u.call.args[i], &vals[i]) < 0) {
            call_release_slots(s, vals, i);
            return -1;
        }
    return 0;
}

/* A call to a known user function: arguments go straight into its slots. */
static int call_direct(struct interp_state *s, const struct ast *n, struct value *out)
{
    const struct interp_fn *fn = &s->prog->fns[n->u.call.target];
    struct value slots[fn->n_slots ? fn->n_slots : 1];
    if (call_eval_args(s, n, slots) < 0)
        return -1;
    for (uint32_t i = n->u.call.n; i < fn->n_slots; i++)
        slots[i] = VAL_NIL;
    return eval_call_fn(s, n->u.call.target, slots, n, out);
}

static int call_indirect(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct value args[n->u.call.n ? n->u.call.n : 1];
    struct value fn = VAL_NIL;
    if (n->u.call.ckind == CALL_VALUE && eval_expr(s, n->u.call.callee, &fn) < 0)
        return -1;
    if (call_eval_args(s, n, args) < 0)
        return -1;
    int r;
    if (n->u.call.ckind == CALL_BUILTIN) {
        s->builtin = n->u.call.target;
        r = builtin_table[n->u.call.target].fn(s, args, n->u.call.n, n, out);
    } else
        r = eval_call_value(s, fn, args, n->u.call.n, n, out);
    call_release_slots(s, args, n->u.call.n);
    return r;
}

int eval_call(struct interp_state *s, const struct ast *n, struct value *out)
{
    if (n->u.call.ckind == CALL_FUNC)
        return call_direct(s, n, out);
    return call_indirect(s, n, out);
}
