/* exec: statements.  Each statement passes one safe point and then marks
 * itself as the leaf frame's current statement; loops do the same once
 * per iteration.  Polling before the mark charges a tick to the statement
 * that was running when it fired (the one before), never to the next. */
#include <stdlib.h>
#include <string.h>

#include "agent/eval.h"

static enum exec_status exec_stmt(struct interp_state *s, const struct ast *n);

static inline void exec_mark(struct interp_state *s, const struct ast *n)
{
    struct interp_frame *f = &s->frames[s->depth - 1];
    f->stmt_start = n->start;
    f->stmt_end = n->end;
}

/* Applies an annotation to a value being stored (runtime check). */
static int exec_check_type(struct interp_state *s, const struct ast *n, const char *what,
                           struct ast_type t, struct value *v)
{
    if (t.base == T_NONE)
        return 0;
    if (!val_matches(*v, t)) {
        interp_raise(s, n, "type mismatch: '%s' is %s%s but the value is %s%s", what,
                     t.secret ? "secret " : "", ast_type_name(t), v->secret ? "secret " : "",
                     val_type_name(*v));
        val_release(s, *v);
        return -1;
    }
    v->secret |= t.secret;
    return 0;
}

static enum exec_status exec_let(struct interp_state *s, const struct ast *n)
{
    struct value v;
    if (eval_expr(s, n->u.let.init, &v) < 0 ||
        exec_check_type(s, n->u.let.init, n->u.let.name, n->u.let.type, &v) < 0)
        return EX_ERROR;
    struct value *slot = n->u.let.global ? &s->globals[n->u.let.slot] : &s->slots[n->u.let.slot];
    struct value old = *slot;
    *slot = v;
    val_release(s, old);
    return EX_NORMAL;
}

/* The slot a name target refers to. */
static struct value *exec_slot(struct interp_state *s, const struct ast *t)
{
    return t->kind == E_LOCAL ? &s->slots[t->u.name.slot] : &s->globals[t->u.name.slot];
}

/* x += v when x holds a string with one reference: append in place. */
static int exec_append(struct interp_state *s, const struct ast *n, struct value *slot,
                       struct value v)
{
    if (heap_str_append(&s->heap, &slot->u.s, v.u.s->data, v.u.s->len) < 0)
        return interp_oom(s, n);
    return 0;
}

/* Stores the result of `old op v` into slot (both owned by the caller). */
static int exec_compound_value(struct interp_state *s, const struct ast *n, struct value *slot,
                               struct value v)
{
    struct value r;
    if (slot->tag == V_INT && v.tag == V_INT && !(slot->secret | v.secret)) {
        if (eval_int_op(s, n, n->op, slot->u.i, v.u.i, &r) < 0)
            return -1;
        slot->u.i = r.u.i;
        return 0;
    }
    if (n->op == OP_ADD && slot->tag == V_STR && v.tag == V_STR && !(slot->secret | v.secret))
        return exec_append(s, n, slot, v);
    if (eval_binop_slow(s, n, n->op, *slot, v, &r) < 0)
        return -1;
    val_release(s, *slot);
    *slot = r;
    return 0;
}

static enum exec_status exec_assign_name(struct interp_state *s, const struct ast *n)
{
    const struct ast *t = n->u.assign.target;
    struct value v;
    if (eval_expr(s, n->u.assign.value, &v) < 0)
        return EX_ERROR;
    struct value *slot = exec_slot(s, t);
    if (n->kind == S_COMPOUND) {
        int r = exec_compound_value(s, n, slot, v);
        val_release(s, v);
        if (r < 0)
            return EX_ERROR;
        v = *slot;
        heap_retain(v);
    }
    struct ast_type type = {n->check, n->check_secret};
    if (exec_check_type(s, n->u.assign.value, t->u.name.name, type, &v) < 0)
        return EX_ERROR;
    struct value old = *slot;
    *slot = v;
    val_release(s, old);
    return EX_NORMAL;
}

/* c[i] = v and c[i] op= v */
static enum exec_status exec_assign_index(struct interp_state *s, const struct ast *n)
{
    const struct ast *t = n->u.assign.target;
    struct value c, i, v, old;
    if (eval_expr(s, t->u.bin.a, &c) < 0)
        return EX_ERROR;
    if (eval_expr(s, t->u.bin.b, &i) < 0)
        goto fail_c;
    if (eval_expr(s, n->u.assign.value, &v) < 0)
        goto fail_i;
    if (n->kind == S_COMPOUND) {
        if (eval_index_get(s, t, c, i, &old) < 0) {
            val_release(s, v);
            goto fail_i;
        }
        struct value r;
        int rc = old.tag == V_INT && v.tag == V_INT && !(old.secret | v.secret)
                     ? eval_int_op(s, n, n->op, old.u.i, v.u.i, &r)
                     : eval_binop_slow(s, n, n->op, old, v, &r);
        val_release(s, old);
        val_release(s, v);
        if (rc < 0)
            goto fail_i;
        v = r;
    }
    int rc = eval_index_set(s, t, c, i, v);
    val_release(s, c);
    val_release(s, i);
    return rc < 0 ? EX_ERROR : EX_NORMAL;
fail_i:
    val_release(s, i);
fail_c:
    val_release(s, c);
    return EX_ERROR;
}

/* Evaluates a condition that must be a (non-secret) bool. */
static int exec_cond(struct interp_state *s, const struct ast *e, bool *out)
{
    struct value v;
    if (eval_fast(s, e, &v) < 0)
        return -1;
    if (v.tag != V_BOOL || v.secret) {
        interp_raise(s, e, "condition must be bool, got %s%s", v.secret ? "secret " : "",
                     val_type_name(v));
        val_release(s, v);
        return -1;
    }
    *out = v.u.b;
    return 0;
}

static enum exec_status exec_if(struct interp_state *s, const struct ast *n)
{
    bool c;
    if (exec_cond(s, n->u.cond.cond, &c) < 0)
        return EX_ERROR;
    if (c)
        return exec_block(s, n->u.cond.then);
    if (n->u.cond.els == NULL)
        return EX_NORMAL;
    if (n->u.cond.els->kind == S_IF)
        return exec_stmt(s, n->u.cond.els);
    return exec_block(s, n->u.cond.els);
}

static enum exec_status exec_while(struct interp_state *s, const struct ast *n)
{
    for (;;) {
        if (interp_safe_point(s) < 0)
            return EX_ERROR;
        exec_mark(s, n);
        bool c;
        if (exec_cond(s, n->u.cond.cond, &c) < 0)
            return EX_ERROR;
        if (!c)
            return EX_NORMAL;
        enum exec_status st = exec_block(s, n->u.cond.then);
        if (st == EX_BREAK)
            return EX_NORMAL;
        if (st == EX_RETURN || st == EX_ERROR)
            return st;
    }
}

/* Runs one loop body iteration with the loop variable set to v (owned). */
static enum exec_status exec_iteration(struct interp_state *s, const struct ast *n, struct value v)
{
    if (interp_safe_point(s) < 0) {
        val_release(s, v);
        return EX_ERROR;
    }
    exec_mark(s, n);
    struct value *slot = &s->slots[n->u.loop.slot];
    struct value old = *slot;
    *slot = v;
    val_release(s, old);
    enum exec_status st = exec_block(s, n->u.loop.body);
    return st == EX_CONTINUE ? EX_NORMAL : st;
}

static enum exec_status exec_for_range(struct interp_state *s, const struct ast *n)
{
    const struct ast *r = n->u.loop.iter;
    struct value a, b;
    if (eval_expr(s, r->u.bin.a, &a) < 0)
        return EX_ERROR;
    if (eval_expr(s, r->u.bin.b, &b) < 0) {
        val_release(s, a);
        return EX_ERROR;
    }
    if (a.tag != V_INT || b.tag != V_INT || a.secret || b.secret) {
        interp_raise(s, r, "range bounds must be int, got %s..%s", val_type_name(a),
                     val_type_name(b));
        val_release(s, a);
        val_release(s, b);
        return EX_ERROR;
    }
    for (int64_t i = a.u.i; i < b.u.i; i++) {
        enum exec_status st = exec_iteration(s, n, val_int(i));
        if (st == EX_BREAK)
            break;
        if (st != EX_NORMAL)
            return st;
    }
    return EX_NORMAL;
}

/* Iterates a list's items or a map's keys; the container is held for
 * the whole loop, and a list that shrinks ends the loop early. */
static enum exec_status exec_for_container(struct interp_state *s, const struct ast *n,
                                           struct value c)
{
    enum exec_status st = EX_NORMAL;
    for (uint32_t i = 0;; i++) {
        struct value v;
        if (c.tag == V_LIST) {
            if (i >= c.u.l->len)
                break;
            v = c.u.l->items[i];
        } else {
            while (i < c.u.m->used && c.u.m->entries[i].key == NULL)
                i++;
            if (i >= c.u.m->used)
                break;
            v = val_str(c.u.m->entries[i].key);
        }
        heap_retain(v);
        v.secret |= c.secret;
        st = exec_iteration(s, n, v);
        if (st == EX_BREAK) {
            st = EX_NORMAL;
            break;
        }
        if (st != EX_NORMAL)
            break;
    }
    val_release(s, c);
    return st;
}

static enum exec_status exec_for(struct interp_state *s, const struct ast *n)
{
    if (n->u.loop.iter->kind == E_RANGE)
        return exec_for_range(s, n);
    struct value c;
    if (eval_expr(s, n->u.loop.iter, &c) < 0)
        return EX_ERROR;
    if (c.tag != V_LIST && c.tag != V_MAP) {
        interp_raise(s, n->u.loop.iter, "cannot iterate over %s", val_type_name(c));
        val_release(s, c);
        return EX_ERROR;
    }
    return exec_for_container(s, n, c);
}

/* try/catch: a runtime error binds its message; an interrupt passes. */
static enum exec_status exec_try(struct interp_state *s, const struct ast *n)
{
    uint32_t depth = s->depth;
    enum exec_status st = exec_block(s, n->u.try_.body);
    if (st != EX_ERROR || s->interrupted)
        return st;
    s->depth = depth;
    const char *msg = s->err_msg ? s->err_msg : "error";
    struct heap_str *m = heap_str_new(&s->heap, msg, s->err_msg ? s->err_len : 5);
    if (m == NULL)
        return interp_oom(s, n), EX_ERROR;
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    s->err_msg = s->err_loc = s->err_trace = NULL;
    struct value *slot = &s->slots[n->u.try_.slot];
    struct value old = *slot;
    *slot = val_str(m);
    val_release(s, old);
    return exec_block(s, n->u.try_.handler);
}

static enum exec_status exec_return(struct interp_state *s, const struct ast *n)
{
    struct value v = VAL_NIL;
    if (n->u.expr != NULL && eval_fast(s, n->u.expr, &v) < 0)
        return EX_ERROR;
    s->ret = v;
    return EX_RETURN;
}

static enum exec_status exec_stmt(struct interp_state *s, const struct ast *n)
{
    if (interp_safe_point(s) < 0)
        return EX_ERROR;
    exec_mark(s, n);
    struct value v;
    switch (n->kind) {
    case S_EXPR:
        if (eval_expr(s, n->u.expr, &v) < 0)
            return EX_ERROR;
        val_release(s, v);
        return EX_NORMAL;
    case S_LET:
        return exec_let(s, n);
    case S_ASSIGN:
    case S_COMPOUND:
        return n->u.assign.target->kind == E_INDEX ? exec_assign_index(s, n)
                                                   : exec_assign_name(s, n);
    case S_IF:
        return exec_if(s, n);
    case S_WHILE:
        return exec_while(s, n);
    case S_FOR:
        return exec_for(s, n);
    case S_RETURN:
        return exec_return(s, n);
    case S_BREAK:
        return EX_BREAK;
    case S_CONTINUE:
        return EX_CONTINUE;
    case S_TRY:
        return exec_try(s, n);
    default:
        interp_raise(s, n, "internal error: unexpected statement %d", n->kind);
        return EX_ERROR;
    }
}

enum exec_status exec_block(struct interp_state *s, const struct ast *b)
{
    for (uint32_t i = 0; i < b->u.list.n; i++) {
        enum exec_status st = exec_stmt(s, b->u.list.items[i]);
        if (st != EX_NORMAL)
            return st;
    }
    return EX_NORMAL;
}
