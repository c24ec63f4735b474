/* call: Jett calls (frames, argument and return checks, the recursion
 * limit), builtin dispatch, and raising runtime errors with a trace. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/eval.h"

/* "path:line:column" of an offset in function fid's source. */
static void call_location(const struct interp_state *s, uint32_t fid, uint32_t offset,
                          struct strbuf *b)
{
    const struct interp_func_info *fi = &s->prog->infos[fid];
    const struct interp_source *src = s->prog->sources[fi->source_id];
    uint32_t line, column;
    interp_source_position(src, offset, &line, &column);
    sb_printf(b, "%s:%u:%u", src->path, line, column);
}

/* The Jett stack trace, leaf first, one "  at ns.fn (path:line:col)" a line. */
static char *call_trace(const struct interp_state *s, uint32_t leaf_offset)
{
    struct strbuf b = {0};
    for (uint32_t i = s->depth; i-- > 0;) {
        const struct interp_frame *f = &s->frames[i];
        const struct interp_func_info *fi = &s->prog->infos[f->func_id];
        sb_printf(&b, "  at %s.%s (", fi->ns, fi->name);
        call_location(s, f->func_id, i + 1 == s->depth ? leaf_offset : f->call_start, &b);
        sb_puts(&b, ")\n");
    }
    if (b.data == NULL)
        sb_puts(&b, "");
    return b.data;
}

int interp_raise(struct interp_state *s, const struct ast *n, const char *fmt, ...)
{
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s->err_msg, fmt, ap) < 0)
        s->err_msg = NULL;
    va_end(ap);
    const struct interp_frame *f = &s->frames[s->depth - 1];
    uint32_t offset = n ? n->start : f->stmt_start;
    struct strbuf loc = {0};
    call_location(s, f->func_id, offset, &loc);
    s->err_loc = loc.data;
    s->err_trace = call_trace(s, offset);
    return -1;
}

int interp_oom(struct interp_state *s, const struct ast *n)
{
    return interp_raise(s, n, "out of memory");
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
    /* Still in the callee: a tick from its last statement is its own. */
    if (interp_safe_point(s) < 0) {
        val_release(s, *out);
        return -1;
    }
    return 0;
}

int eval_call_fn(struct interp_state *s, uint32_t fn_id, struct value *slots,
                 const struct ast *site, struct value *out)
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
    s->stack_gen++;
    f->func_id = fn_id;
    f->stmt_start = fn->body->start;
    f->stmt_end = fn->body->end;
    f->slots = s->slots = slots;
    int r = call_body(s, fn, out);
    s->depth--;
    s->stack_gen++;
    s->slots = caller_slots;
    call_release_slots(s, slots, fn->n_slots);
    return r;
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
