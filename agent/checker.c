/*
 * checker: resolves every name to a frame slot, global slot, function id
 * or builtin id; checks arities and the annotations it can see; computes
 * which expressions contain a secret and records the outermost ones as
 * INTERP_SPAN_SECRET spans of their source.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/diag.h"
#include "agent/interp-internal.h"

#define CHECK_MAX_SLOTS 4096

struct check_local {
    const char *name;
    uint32_t slot;
    uint32_t depth;
    struct ast_type type;
    bool secret; /* its value contains a secret: uses are secret spans */
    bool konst;
    bool typed; /* its checked type is secret<T> */
};

struct checker {
    struct interp_program *p;
    struct interp_diags *diags;
    struct interp_source *src;
    struct interp_ns *ns;
    struct interp_fn *fn;
    struct check_local *locals;
    uint32_t n_locals, cap_locals;
    uint32_t depth, loops, n_slots;
    int errors;
};

static void check_error(struct checker *C, uint32_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void check_error(struct checker *C, uint32_t at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(C->diags, C->src, at, "%s", msg);
    C->errors++;
}

static struct check_local *check_find_local(struct checker *C, const char *name)
{
    for (uint32_t i = C->n_locals; i-- > 0;)
        if (strcmp(C->locals[i].name, name) == 0)
            return &C->locals[i];
    return NULL;
}

/* Declares a local in the current block; returns its slot. */
static uint32_t check_declare(struct checker *C, const char *name, uint32_t at,
                              struct ast_type type, bool secret, bool konst)
{
    for (uint32_t i = C->n_locals; i-- > 0 && C->locals[i].depth == C->depth;)
        if (strcmp(C->locals[i].name, name) == 0)
            check_error(C, at, "'%s' is already declared in this scope", name);
    if (C->n_slots == CHECK_MAX_SLOTS) {
        check_error(C, at, "too many local variables in one function (limit %d)", CHECK_MAX_SLOTS);
        return 0;
    }
    if (C->n_locals == C->cap_locals) {
        C->cap_locals = C->cap_locals ? C->cap_locals * 2 : 32;
        C->locals = realloc(C->locals, sizeof *C->locals * C->cap_locals);
        if (C->locals == NULL)
            abort();
    }
    uint32_t slot = C->n_slots++;
    C->locals[C->n_locals++] =
        (struct check_local){name, slot, C->depth, type, secret, konst, type.secret || secret};
    return slot;
}

static void check_leave_block(struct checker *C)
{
    while (C->n_locals > 0 && C->locals[C->n_locals - 1].depth == C->depth)
        C->n_locals--;
    C->depth--;
}

static int check_find_global(struct checker *C, const struct interp_ns *ns, const char *name)
{
    for (uint32_t i = 0; i < ns->n_globals; i++)
        if (strcmp(C->p->globals[ns->first_global + i].name, name) == 0)
            return (int)(ns->first_global + i);
    return -1;
}

static int check_find_fn(struct checker *C, const struct interp_ns *ns, const char *name)
{
    for (uint32_t i = 0; i < ns->n_fns; i++)
        if (strcmp(C->p->fns[ns->first_fn + i].decl->name, name) == 0)
            return (int)(ns->first_fn + i);
    return -1;
}

/* The type a builtin always returns, where it has one the checker uses. */
static uint8_t check_builtin_type(uint32_t id)
{
    const char *name = builtin_table[id].name;
    if (strcmp(name, "spawn") == 0)
        return T_TASK;
    if (strcmp(name, "channel") == 0)
        return T_CHANNEL;
    return T_NONE;
}

/* The static type of an expression when the checker can see it. */
static uint8_t check_static_type(struct checker *C, const struct ast *e)
{
    switch (e->kind) {
    case E_INT:
        return T_INT;
    case E_FLOAT:
        return T_FLOAT;
    case E_STR:
        return T_STRING;
    case E_BYTES:
        return T_BYTES;
    case E_TRUE:
    case E_FALSE:
    case E_NOT:
        return T_BOOL;
    case E_NIL:
        return T_NIL;
    case E_LIST:
        return T_LIST;
    case E_MAP:
        return T_MAP;
    case E_FUNC:
        return T_FN;
    case E_LOCAL:
    case E_GLOBAL:
        return e->op;
    case E_CALL:
        if (e->u.call.ckind == CALL_FUNC)
            return C->p->fns[e->u.call.target].decl->ret.base;
        if (e->u.call.ckind == CALL_BUILTIN)
            return check_builtin_type(e->u.call.target);
        return T_NONE;
    default:
        return T_NONE;
    }
}

/* Reports a visible mismatch between an annotation and a value. */
static void check_annotation(struct checker *C, struct ast_type want, const struct ast *value,
                             const char *what)
{
    uint8_t got = check_static_type(C, value);
    if (want.base == T_NONE || want.base == T_ANY || got == T_NONE || got == T_ANY)
        return;
    if (got == want.base)
        return;
    check_error(C, value->start, "type mismatch: %s is %s but the value is %s", what,
                ast_type_name(want), ast_type_name((struct ast_type){got, 0}));
}

static void check_expr(struct checker *C, struct ast *e);

/* Finds an imported (or the current) namespace by full name or by its
 * last segment when exactly one import ends with it. */
static int check_find_ns(struct checker *C, const char *qual, uint32_t at)
{
    if (strcmp(C->ns->name, qual) == 0)
        return (int)(C->ns - C->p->nss);
    int found = -1, count = 0;
    for (uint32_t i = 0; i < C->ns->n_imports; i++) {
        const struct interp_ns *ns = &C->p->nss[C->ns->imports[i]];
        const char *dot = strrchr(ns->name, '.');
        if (strcmp(ns->name, qual) == 0)
            return (int)C->ns->imports[i];
        if (dot && strcmp(dot + 1, qual) == 0) {
            found = (int)C->ns->imports[i];
            count++;
        }
    }
    if (count == 1)
        return found;
    if (count > 1)
        check_error(C, at, "'%s' is ambiguous: more than one import ends with it", qual);
    else
        check_error(C, at, "unknown namespace '%s' (is it imported?)", qual);
    return -1;
}

/* a.b.f -> the function f of the namespace a.b (or of the import "b"). */
static void check_dotted(struct checker *C, struct ast *e)
{
    char qual[1024] = "";
    size_t len = 0;
    for (uint32_t i = 0; i + 1 < e->u.dotted.n; i++)
        len += (size_t)snprintf(qual + len, sizeof qual - len, "%s%s", i ? "." : "",
                                e->u.dotted.parts[i]);
    const char *name = e->u.dotted.parts[e->u.dotted.n - 1];
    int ns = check_find_ns(C, qual, e->start);
    if (ns < 0)
        return;
    int fn = check_find_fn(C, &C->p->nss[ns], name);
    int g = fn < 0 ? check_find_global(C, &C->p->nss[ns], name) : -1;
    if (g >= 0) { /* a namespace-level binding, read through its namespace */
        e->kind = E_GLOBAL;
        e->u.name.name = name;
        e->u.name.slot = (uint32_t)g;
        e->secret = C->p->globals[g].secret;
        e->check_secret = C->p->globals[g].typed;
        return;
    }
    if (fn < 0) {
        check_error(C, e->start, "unknown function '%s' in namespace %s", name, C->p->nss[ns].name);
        return;
    }
    e->kind = E_FUNC;
    e->u.name.name = name;
    e->u.name.slot = (uint32_t)fn;
}

/* A bare name: local, then global, then function, then builtin. */
static void check_name(struct checker *C, struct ast *e)
{
    const char *name = e->u.name.name;
    struct check_local *l = check_find_local(C, name);
    int g;
    if (l != NULL) {
        e->kind = E_LOCAL;
        e->u.name.slot = l->slot;
        e->secret = l->secret;
        e->check_secret = l->typed;
        e->op = l->type.base; /* its annotation, a type the checker can see */
    } else if ((g = check_find_global(C, C->ns, name)) >= 0) {
        e->kind = E_GLOBAL;
        e->u.name.slot = (uint32_t)g;
        e->secret = C->p->globals[g].secret;
        e->check_secret = C->p->globals[g].typed;
        e->op = C->p->globals[g].decl->u.let.type.base;
    } else if ((g = check_find_fn(C, C->ns, name)) >= 0) {
        e->kind = E_FUNC;
        e->u.name.slot = (uint32_t)g;
    } else if ((g = builtin_lookup(name)) >= 0) {
        e->kind = E_BUILTIN;
        e->u.name.slot = (uint32_t)g;
        if (strcmp(name, "spawn") == 0)
            C->p->uses_spawn = true; /* the run may have tasks */
    } else {
        check_error(C, e->start, "unknown name '%s'", name);
    }
}

/* A visible misuse of spawn: what it starts must be a function declared
 * with fn, called with as many arguments as it takes, of the types its
 * annotations say. */
static void check_spawn(struct checker *C, const struct ast *e)
{
    const struct ast *f = e->u.call.args[0];
    uint8_t got = check_static_type(C, f);
    if (f->kind == E_BUILTIN) {
        check_error(C, f->start, "spawn: %s is a builtin; spawn starts a function declared with fn",
                    builtin_table[f->u.name.slot].name);
        return;
    }
    if (f->kind != E_FUNC) {
        if (got != T_NONE && got != T_ANY && got != T_FN)
            check_error(C, f->start, "spawn: argument 1 must be a function, got %s",
                        ast_type_name((struct ast_type){got, 0}));
        return;
    }
    const struct ast_fn *fn = C->p->fns[f->u.name.slot].decl;
    uint32_t n = e->u.call.n - 1;
    if (n != fn->n_params) {
        check_error(C, e->start, "spawn: %s expects %u argument%s, got %u", fn->name, fn->n_params,
                    fn->n_params == 1 ? "" : "s", n);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        check_annotation(C, fn->params[i].type, e->u.call.args[i + 1], fn->params[i].name);
}

/* A visible argument of the wrong type to a task or channel builtin. */
static void check_want(struct checker *C, const char *name, const struct ast *arg, uint8_t want,
                       const char *hint)
{
    uint8_t got = check_static_type(C, arg);
    if (got == T_NONE || got == T_ANY || got == want)
        return;
    check_error(C, arg->start, "%s: argument 1 must be %s, got %s%s", name,
                ast_type_name((struct ast_type){want, 0}), ast_type_name((struct ast_type){got, 0}),
                hint);
}

/* The misuse of spawn, join, channel, send, recv and close that the
 * checker can see (the arity was checked already). */
static void check_task_call(struct checker *C, const char *name, const struct ast *e)
{
    if (e->u.call.n == 0)
        return;
    const struct ast *a0 = e->u.call.args[0];
    if (strcmp(name, "spawn") == 0) {
        check_spawn(C, e);
    } else if (strcmp(name, "join") == 0 && e->u.call.n == 1) {
        check_want(C, name, a0, T_TASK, " (join(list, separator) joins strings)");
    } else if (strcmp(name, "send") == 0 || strcmp(name, "recv") == 0 ||
               strcmp(name, "close") == 0) {
        check_want(C, name, a0, T_CHANNEL, "");
    } else if (strcmp(name, "channel") == 0) {
        if (a0->kind == E_INT && (a0->u.i < 1 || a0->u.i > 1000000))
            check_error(C, a0->start, "channel: capacity must be from 1 to 1000000, got %lld",
                        (long long)a0->u.i);
        else
            check_want(C, name, a0, T_INT, "");
    }
}

/* Numbers the call site e, in the function being checked. */
static void check_site(struct checker *C, struct ast *e)
{
    struct interp_program *p = C->p;
    if (p->n_call_sites == p->cap_call_sites) {
        p->cap_call_sites = p->cap_call_sites ? p->cap_call_sites * 2 : 64;
        p->call_sites = realloc(p->call_sites, sizeof *p->call_sites * p->cap_call_sites);
        if (p->call_sites == NULL)
            abort();
    }
    e->u.call.site = p->n_call_sites;
    p->call_sites[p->n_call_sites++] =
        (struct interp_call_site){(uint32_t)(C->fn - p->fns), {e->start, e->end}};
}

/* Checks a call's arity and argument annotations; picks its dispatch. */
static void check_call(struct checker *C, struct ast *e)
{
    check_site(C, e);
    struct ast *callee = e->u.call.callee;
    check_expr(C, callee);
    bool secret = false;
    for (uint32_t i = 0; i < e->u.call.n; i++) {
        check_expr(C, e->u.call.args[i]);
        secret |= e->u.call.args[i]->secret;
    }
    e->u.call.ckind = CALL_VALUE;
    if (callee->kind == E_FUNC) {
        const struct ast_fn *f = C->p->fns[callee->u.name.slot].decl;
        e->u.call.ckind = CALL_FUNC;
        e->u.call.target = callee->u.name.slot;
        if (e->u.call.n != f->n_params)
            check_error(C, e->start, "%s expects %u argument%s, got %u", f->name, f->n_params,
                        f->n_params == 1 ? "" : "s", e->u.call.n);
        else
            for (uint32_t i = 0; i < f->n_params; i++)
                check_annotation(C, f->params[i].type, e->u.call.args[i], f->params[i].name);
        secret |= f->ret.secret;
    } else if (callee->kind == E_BUILTIN) {
        const struct builtin_def *b = &builtin_table[callee->u.name.slot];
        e->u.call.ckind = CALL_BUILTIN;
        e->u.call.target = callee->u.name.slot;
        if (e->u.call.n < b->min_args || e->u.call.n > b->max_args)
            check_error(C, e->start, "%s expects %s%u argument%s, got %u", b->name,
                        b->min_args == b->max_args ? "" : "at least ", b->min_args,
                        b->min_args == 1 ? "" : "s", e->u.call.n);
        else
            check_task_call(C, b->name, e);
        secret |= b->secret_result;
    } else {
        secret |= callee->secret;
    }
    e->secret = secret;
}

static void check_children(struct checker *C, struct ast *e)
{
    switch (e->kind) {
    case E_LIST:
    case E_MAP:
        for (uint32_t i = 0; i < e->u.list.n; i++) {
            check_expr(C, e->u.list.items[i]);
            e->secret |= e->u.list.items[i]->secret;
        }
        break;
    case E_NEG:
    case E_NOT:
        check_expr(C, e->u.bin.a);
        e->secret = e->u.bin.a->secret;
        break;
    default: /* E_INDEX, E_BIN, E_AND, E_OR */
        check_expr(C, e->u.bin.a);
        check_expr(C, e->u.bin.b);
        e->secret = e->u.bin.a->secret || e->u.bin.b->secret;
        break;
    }
}

static void check_expr(struct checker *C, struct ast *e)
{
    switch (e->kind) {
    case E_NAME:
        check_name(C, e);
        break;
    case E_DOTTED:
        check_dotted(C, e);
        break;
    case E_CALL:
        check_call(C, e);
        break;
    case E_RANGE:
        check_error(C, e->start, "a range a..b is only allowed as the iterable of a for loop");
        break;
    case E_LIST:
    case E_MAP:
    case E_NEG:
    case E_NOT:
    case E_INDEX:
    case E_BIN:
    case E_AND:
    case E_OR:
        check_children(C, e);
        break;
    default:
        break;
    }
}

/* Records the outermost secret-containing expressions of e as spans. */
static void check_mark_secrets(struct checker *C, const struct ast *e)
{
    if (e == NULL)
        return;
    if (e->secret) {
        source_add_span(C->src, INTERP_SPAN_SECRET, e->start, e->end);
        return;
    }
    switch (e->kind) {
    case E_LIST:
    case E_MAP:
        for (uint32_t i = 0; i < e->u.list.n; i++)
            check_mark_secrets(C, e->u.list.items[i]);
        break;
    case E_CALL:
        for (uint32_t i = 0; i < e->u.call.n; i++)
            check_mark_secrets(C, e->u.call.args[i]);
        break;
    case E_NEG:
    case E_NOT:
        check_mark_secrets(C, e->u.bin.a);
        break;
    case E_INDEX:
    case E_BIN:
    case E_AND:
    case E_OR:
    case E_RANGE:
        check_mark_secrets(C, e->u.bin.a);
        check_mark_secrets(C, e->u.bin.b);
        break;
    default:
        break;
    }
}

/* Checks an expression in statement position and records its secrets. */
static void check_top_expr(struct checker *C, struct ast *e)
{
    check_expr(C, e);
    check_mark_secrets(C, e);
}

static void check_block(struct checker *C, struct ast *b);

/* Whether an expression's checked type is secret<T> (not merely derived
 * from one, as `k == "x"` is): secret bindings, calls returning secret,
 * items of a secret container. */
static bool check_secret_typed(struct checker *C, const struct ast *e)
{
    switch (e->kind) {
    case E_LOCAL:
    case E_GLOBAL:
        return e->check_secret;
    case E_CALL:
        if (e->u.call.ckind == CALL_FUNC)
            return C->p->fns[e->u.call.target].decl->ret.secret;
        if (e->u.call.ckind == CALL_BUILTIN)
            return builtin_table[e->u.call.target].secret_result;
        return false;
    case E_INDEX:
        return check_secret_typed(C, e->u.bin.a);
    default:
        return false;
    }
}

/* Statically visible secret into a non-secret annotation is an error. */
static void check_secret_store(struct checker *C, struct ast_type t, const struct ast *v,
                               const char *what)
{
    if (check_secret_typed(C, v) && t.base != T_NONE && !t.secret)
        check_error(C, v->start, "a secret value cannot be stored in %s of type %s", what,
                    ast_type_name(t));
}

static void check_let(struct checker *C, struct ast *s)
{
    check_top_expr(C, s->u.let.init);
    check_annotation(C, s->u.let.type, s->u.let.init, s->u.let.name);
    check_secret_store(C, s->u.let.type, s->u.let.init, s->u.let.name);
    bool secret = s->u.let.type.secret || s->u.let.init->secret;
    s->u.let.slot =
        check_declare(C, s->u.let.name, s->u.let.name_start, s->u.let.type, secret, s->konst);
    C->locals[C->n_locals - 1].typed = s->u.let.type.secret || check_secret_typed(C, s->u.let.init);
}

/* x = e, x[i] = e, x += e: the target must be assignable. */
static void check_assign(struct checker *C, struct ast *s)
{
    struct ast *t = s->u.assign.target;
    check_top_expr(C, s->u.assign.value);
    if (t->kind == E_INDEX) {
        check_top_expr(C, t);
        return;
    }
    check_name(C, t);
    if (t->kind == E_LOCAL) {
        struct check_local *l = check_find_local(C, t->u.name.name);
        if (l->konst)
            check_error(C, t->start, "cannot assign to constant '%s'", l->name);
        if (s->kind == S_ASSIGN)
            check_annotation(C, l->type, s->u.assign.value, l->name);
        check_secret_store(C, l->type, s->u.assign.value, l->name);
        s->check = l->type.base;
        s->check_secret = l->type.secret;
        l->secret |= s->u.assign.value->secret;
        l->typed |= check_secret_typed(C, s->u.assign.value);
    } else if (t->kind == E_GLOBAL) {
        struct interp_global *g = &C->p->globals[t->u.name.slot];
        if (g->decl->konst)
            check_error(C, t->start, "cannot assign to constant '%s'", g->name);
        s->check = g->decl->u.let.type.base;
        s->check_secret = g->decl->u.let.type.secret;
        if (s->kind == S_ASSIGN)
            check_annotation(C, g->decl->u.let.type, s->u.assign.value, g->name);
        check_secret_store(C, g->decl->u.let.type, s->u.assign.value, g->name);
    } else if (t->kind == E_FUNC || t->kind == E_BUILTIN) {
        check_error(C, t->start, "cannot assign to function '%s'", t->u.name.name);
    }
    if (t->kind == E_LOCAL || t->kind == E_GLOBAL)
        t->secret = s->u.assign.value->secret;
}

static void check_for(struct checker *C, struct ast *s)
{
    struct ast *it = s->u.loop.iter;
    if (it->kind == E_RANGE) {
        check_top_expr(C, it->u.bin.a);
        check_top_expr(C, it->u.bin.b);
    } else {
        check_top_expr(C, it);
    }
    C->depth++;
    s->u.loop.slot =
        check_declare(C, s->u.loop.name, s->start, (struct ast_type){0}, it->secret, false);
    C->loops++;
    check_block(C, s->u.loop.body);
    C->loops--;
    check_leave_block(C);
}

static void check_try(struct checker *C, struct ast *s)
{
    check_block(C, s->u.try_.body);
    C->depth++;
    s->u.try_.slot = check_declare(C, s->u.try_.name, s->u.try_.handler->start,
                                   (struct ast_type){0}, false, false);
    check_block(C, s->u.try_.handler);
    check_leave_block(C);
}

static void check_return(struct checker *C, struct ast *s)
{
    const struct ast_fn *f = C->fn->decl;
    if (s->u.expr == NULL)
        return;
    check_top_expr(C, s->u.expr);
    if (f != NULL) {
        check_annotation(C, f->ret, s->u.expr, "the return value");
        check_secret_store(C, f->ret, s->u.expr, "the return value");
    }
}

static void check_stmt(struct checker *C, struct ast *s)
{
    switch (s->kind) {
    case S_LET:
        check_let(C, s);
        break;
    case S_ASSIGN:
    case S_COMPOUND:
        check_assign(C, s);
        break;
    case S_IF:
        check_top_expr(C, s->u.cond.cond);
        check_block(C, s->u.cond.then);
        if (s->u.cond.els)
            s->u.cond.els->kind == S_IF ? check_stmt(C, s->u.cond.els)
                                        : check_block(C, s->u.cond.els);
        break;
    case S_WHILE:
        check_top_expr(C, s->u.cond.cond);
        C->loops++;
        check_block(C, s->u.cond.then);
        C->loops--;
        break;
    case S_FOR:
        check_for(C, s);
        break;
    case S_BREAK:
    case S_CONTINUE:
        if (C->loops == 0)
            check_error(C, s->start, "'%s' outside a loop",
                        s->kind == S_BREAK ? "break" : "continue");
        break;
    case S_RETURN:
        check_return(C, s);
        break;
    case S_TRY:
        check_try(C, s);
        break;
    default:
        check_top_expr(C, s->u.expr);
        break;
    }
}

static void check_block(struct checker *C, struct ast *b)
{
    C->depth++;
    for (uint32_t i = 0; i < b->u.list.n; i++)
        check_stmt(C, b->u.list.items[i]);
    check_leave_block(C);
}

/* Checks one user function: parameters are the first slots. */
static void check_fn(struct checker *C, struct interp_fn *fn)
{
    C->fn = fn;
    C->n_locals = C->n_slots = C->depth = C->loops = 0;
    const struct ast_fn *f = fn->decl;
    C->depth = 1;
    for (uint32_t i = 0; i < f->n_params; i++)
        check_declare(C, f->params[i].name, f->params[i].start, f->params[i].type,
                      f->params[i].type.secret, false);
    check_block(C, fn->body);
    fn->n_params = f->n_params;
    fn->n_slots = C->n_slots;
    fn->ret = f->ret;
    for (uint32_t i = 0; i < f->n_params; i++)
        fn->typed_params |= f->params[i].type.base != T_NONE;
}

/* Checks a namespace's global initializers (the body of its <init>). */
static void check_globals(struct checker *C, struct interp_fn *init)
{
    C->fn = init;
    C->n_locals = C->n_slots = C->depth = C->loops = 0;
    for (uint32_t i = 0; i < init->body->u.list.n; i++) {
        struct ast *s = init->body->u.list.items[i];
        struct interp_global *g = &C->p->globals[s->u.let.slot];
        check_top_expr(C, s->u.let.init);
        check_annotation(C, s->u.let.type, s->u.let.init, g->name);
        check_secret_store(C, s->u.let.type, s->u.let.init, g->name);
        g->secret = s->u.let.type.secret || s->u.let.init->secret;
        g->typed = s->u.let.type.secret || check_secret_typed(C, s->u.let.init);
    }
    init->n_slots = C->n_slots;
}

/* Reports duplicate functions/globals and name clashes within a namespace. */
static void check_ns_names(struct checker *C, struct interp_ns *ns)
{
    for (uint32_t i = 0; i < ns->n_fns; i++) {
        const struct ast_fn *f = C->p->fns[ns->first_fn + i].decl;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(C->p->fns[ns->first_fn + j].decl->name, f->name) == 0)
                check_error(C, f->name_start, "function '%s' is already declared", f->name);
        if (check_find_global(C, ns, f->name) >= 0)
            check_error(C, f->name_start, "'%s' is declared both as a function and a global",
                        f->name);
    }
    for (uint32_t i = 0; i < ns->n_globals; i++) {
        const struct ast *g = C->p->globals[ns->first_global + i].decl;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(C->p->globals[ns->first_global + j].name, g->u.let.name) == 0)
                check_error(C, g->u.let.name_start, "'%s' is already declared", g->u.let.name);
    }
}

/* main must exist in the program file's namespace with () or (args: list). */
static void check_main(struct checker *C)
{
    struct interp_ns *ns = &C->p->nss[C->p->main_ns];
    C->src = C->p->sources[ns->source_id];
    int m = check_find_fn(C, ns, "main");
    if (m < 0) {
        check_error(C, 0, "the program file has no 'fn main()' or 'fn main(args: list)'");
        return;
    }
    const struct ast_fn *f = C->p->fns[m].decl;
    if (f->n_params > 1 || (f->n_params == 1 && f->params[0].type.base != T_NONE &&
                            f->params[0].type.base != T_LIST && f->params[0].type.base != T_ANY))
        check_error(C, f->name_start, "main must be 'fn main()' or 'fn main(args: list)'");
    C->p->main_fn = (uint32_t)m;
}

int check_program(struct interp_program *p, struct interp_diags *diags)
{
    struct checker C = {.p = p, .diags = diags};
    for (uint32_t n = 0; n < p->n_ns; n++) {
        struct interp_ns *ns = &p->nss[n];
        C.ns = ns;
        C.src = p->sources[ns->source_id];
        check_ns_names(&C, ns);
        check_globals(&C, &p->fns[ns->init_fn]);
        for (uint32_t i = 0; i < ns->n_fns; i++)
            check_fn(&C, &p->fns[ns->first_fn + i]);
    }
    check_main(&C);
    for (uint32_t i = 0; i < p->n_sources; i++) {
        source_sort_spans(p->sources[i]);
        source_check_wire(p->sources[i], diags);
    }
    free(C.locals);
    return C.errors;
}
