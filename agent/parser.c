/* parser: files, declarations, statements and types (expressions are in
 * parser_expr.c).  After an error the parser skips to the end of the
 * statement and goes on, so one run reports every syntax error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diag.h"
#include "agent/heap.h"
#include "agent/parser-internal.h"

const struct lex_token *parse_next(struct parser *P)
{
    const struct lex_token *t = &P->lx.toks[P->pos];
    if (t->kind != TK_EOF)
        P->pos++;
    return t;
}

bool parse_accept(struct parser *P, enum lex_kind k)
{
    if (!parse_is(P, k))
        return false;
    parse_next(P);
    return true;
}

void parse_error(struct parser *P, uint32_t at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(P->diags, P->src, at, "%s", msg);
    P->errors++;
}

const struct lex_token *parse_expect(struct parser *P, enum lex_kind k, const char *what)
{
    if (parse_is(P, k))
        return parse_next(P);
    const struct lex_token *t = parse_peek(P);
    parse_error(P, t->start, "expected %s, found %s", what, lex_kind_name((enum lex_kind)t->kind));
    return NULL;
}

void parse_skip_newlines(struct parser *P)
{
    while (parse_is(P, TK_NEWLINE))
        P->pos++;
}

struct ast *parse_node(struct parser *P, enum ast_kind kind, uint32_t start)
{
    struct ast *n = arena_alloc(P->arena, sizeof *n);
    n->kind = (uint8_t)kind;
    n->start = start;
    n->end = P->pos ? P->lx.toks[P->pos - 1].end : start;
    n->height = 1;
    return n;
}

bool parse_hang(struct parser *P, struct ast *n, const struct ast *child)
{
    if (child == NULL || child->height < n->height)
        return true;
    if (child->height < PARSE_MAX_HEIGHT) {
        n->height = (uint16_t)(child->height + 1);
        return true;
    }
    /* at the statement that is too deep, or in an expression at the token
     * where it became too deep */
    uint32_t at = child->kind >= S_LET ? child->start : P->lx.toks[P->pos ? P->pos - 1 : 0].start;
    parse_error(P, at, "expression or block too deep: more than %d levels", PARSE_MAX_HEIGHT);
    return false;
}

const char *parse_ident_text(struct parser *P, const struct lex_token *t)
{
    return arena_strndup(P->arena, P->src->text + t->start, t->end - t->start);
}

/* Error recovery: skip to the end of the current line, jumping over any
 * bracketed group, without consuming a '}' that closes the enclosing block. */
static void parse_sync(struct parser *P)
{
    int depth = 0;
    while (!parse_is(P, TK_EOF)) {
        enum lex_kind k = (enum lex_kind)parse_peek(P)->kind;
        if (depth == 0 && (k == TK_NEWLINE || k == TK_RBRACE))
            return;
        if (k == TK_LBRACE || k == TK_LPAREN || k == TK_LBRACKET)
            depth++;
        else if ((k == TK_RBRACE || k == TK_RPAREN || k == TK_RBRACKET) && depth > 0)
            depth--;
        P->pos++;
    }
}

/* type -> 'secret' '<' type '>' | 'nil' | 'fn' | IDENT */
static bool parse_type(struct parser *P, struct ast_type *out)
{
    static const char *const names[] = {"",     "any", "int", "float", "bool", "string", "bytes",
                                        "list", "map", "",    "",      "task", "channel"};
    const struct lex_token *t = parse_next(P);
    memset(out, 0, sizeof *out);
    if (t->kind == TK_NIL || t->kind == TK_FN) {
        out->base = t->kind == TK_NIL ? T_NIL : T_FN;
        return true;
    }
    if (t->kind != TK_IDENT) {
        parse_error(P, t->start, "expected a type, found %s",
                    lex_kind_name((enum lex_kind)t->kind));
        return false;
    }
    size_t n = t->end - t->start;
    const char *s = P->src->text + t->start;
    if (n == 6 && memcmp(s, "secret", 6) == 0) {
        if (!parse_expect(P, TK_LT, "'<' after secret") || !parse_type(P, out) ||
            !parse_expect(P, TK_GT, "'>'"))
            return false;
        out->secret = 1;
        return true;
    }
    for (int i = 1; i < (int)(sizeof names / sizeof names[0]); i++)
        if (names[i][0] && strlen(names[i]) == n && memcmp(names[i], s, n) == 0) {
            out->base = (uint8_t)i;
            return true;
        }
    parse_error(P, t->start, "unknown type '%.*s'", (int)n, s);
    return false;
}

/* Ends a simple statement: a newline, or just before '}' or end of file. */
static bool parse_end_stmt(struct parser *P)
{
    if (parse_accept(P, TK_NEWLINE) || parse_is(P, TK_RBRACE) || parse_is(P, TK_EOF))
        return true;
    const struct lex_token *t = parse_peek(P);
    parse_error(P, t->start, "expected end of statement, found %s",
                lex_kind_name((enum lex_kind)t->kind));
    return false;
}

/* let -> ('let'|'const') IDENT [':' type] '=' expr */
static struct ast *parse_let(struct parser *P, bool global)
{
    const struct lex_token *kw = parse_next(P);
    const struct lex_token *name = parse_expect(P, TK_IDENT, "a name");
    if (name == NULL)
        return NULL;
    struct ast *n = parse_node(P, S_LET, kw->start);
    n->konst = kw->kind == TK_CONST;
    n->u.let.name = parse_ident_text(P, name);
    n->u.let.name_start = name->start;
    n->u.let.global = global;
    if (parse_accept(P, TK_COLON) && !parse_type(P, &n->u.let.type))
        return NULL;
    if (!parse_expect(P, TK_ASSIGN, "'='"))
        return NULL;
    parse_skip_newlines(P);
    if ((n->u.let.init = parse_expr(P)) == NULL || !parse_hang(P, n, n->u.let.init))
        return NULL;
    n->end = n->u.let.init->end;
    return parse_end_stmt(P) ? n : NULL;
}

/* if -> 'if' expr block [ 'else' ( if | block ) ] */
static struct ast *parse_if(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    struct ast *n = parse_node(P, S_IF, kw->start);
    if ((n->u.cond.cond = parse_expr(P)) == NULL || (n->u.cond.then = parse_block(P)) == NULL ||
        !parse_hang(P, n, n->u.cond.cond) || !parse_hang(P, n, n->u.cond.then))
        return NULL;
    size_t save = P->pos;
    parse_skip_newlines(P);
    if (!parse_accept(P, TK_ELSE)) {
        P->pos = save;
        n->end = n->u.cond.then->end;
        return n;
    }
    if (parse_is(P, TK_IF)) {
        /* `else if` is `else { if ... }`: it nests like a block */
        if (++P->depth > PARSE_MAX_DEPTH) {
            parse_error(P, parse_peek(P)->start, "blocks nested too deeply");
            return NULL;
        }
        n->u.cond.els = parse_if(P);
        P->depth--;
    } else {
        n->u.cond.els = parse_block(P);
    }
    if (n->u.cond.els == NULL || !parse_hang(P, n, n->u.cond.els))
        return NULL;
    n->end = n->u.cond.els->end;
    return n;
}

/* while -> 'while' expr block */
static struct ast *parse_while(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    struct ast *n = parse_node(P, S_WHILE, kw->start);
    if ((n->u.cond.cond = parse_expr(P)) == NULL || (n->u.cond.then = parse_block(P)) == NULL ||
        !parse_hang(P, n, n->u.cond.cond) || !parse_hang(P, n, n->u.cond.then))
        return NULL;
    n->end = n->u.cond.then->end;
    return n;
}

/* for -> 'for' IDENT 'in' expr block */
static struct ast *parse_for(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    struct ast *n = parse_node(P, S_FOR, kw->start);
    const struct lex_token *name = parse_expect(P, TK_IDENT, "a loop variable");
    if (name == NULL || !parse_expect(P, TK_IN, "'in'"))
        return NULL;
    n->u.loop.name = parse_ident_text(P, name);
    if ((n->u.loop.iter = parse_expr(P)) == NULL || (n->u.loop.body = parse_block(P)) == NULL ||
        !parse_hang(P, n, n->u.loop.iter) || !parse_hang(P, n, n->u.loop.body))
        return NULL;
    n->end = n->u.loop.body->end;
    return n;
}

/* try -> 'try' block 'catch' IDENT block */
static struct ast *parse_try(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    struct ast *n = parse_node(P, S_TRY, kw->start);
    if ((n->u.try_.body = parse_block(P)) == NULL)
        return NULL;
    parse_skip_newlines(P);
    const struct lex_token *name;
    if (!parse_expect(P, TK_CATCH, "'catch'") ||
        (name = parse_expect(P, TK_IDENT, "a name after catch")) == NULL)
        return NULL;
    n->u.try_.name = parse_ident_text(P, name);
    if ((n->u.try_.handler = parse_block(P)) == NULL || !parse_hang(P, n, n->u.try_.body) ||
        !parse_hang(P, n, n->u.try_.handler))
        return NULL;
    n->end = n->u.try_.handler->end;
    return n;
}

/* return -> 'return' [ expr ] ; break -> 'break' ; continue -> 'continue' */
static struct ast *parse_jump(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    enum ast_kind k = kw->kind == TK_RETURN  ? S_RETURN
                      : kw->kind == TK_BREAK ? S_BREAK
                                             : S_CONTINUE;
    struct ast *n = parse_node(P, k, kw->start);
    if (k == S_RETURN && !parse_is(P, TK_NEWLINE) && !parse_is(P, TK_RBRACE) &&
        !parse_is(P, TK_EOF)) {
        if ((n->u.expr = parse_expr(P)) == NULL || !parse_hang(P, n, n->u.expr))
            return NULL;
        n->end = n->u.expr->end;
    }
    return parse_end_stmt(P) ? n : NULL;
}

/* simple -> expr [ ('=' | '+=' | '-=' | '*=') expr ] */
static struct ast *parse_simple(struct parser *P)
{
    struct ast *e = parse_expr(P);
    if (e == NULL)
        return NULL;
    enum lex_kind k = (enum lex_kind)parse_peek(P)->kind;
    struct ast *n;
    if (k == TK_ASSIGN || k == TK_PLUS_ASSIGN || k == TK_MINUS_ASSIGN || k == TK_STAR_ASSIGN) {
        const struct lex_token *op = parse_next(P);
        if (e->kind != E_NAME && e->kind != E_INDEX) {
            parse_error(P, op->start, "cannot assign to this expression");
            return NULL;
        }
        parse_skip_newlines(P);
        n = parse_node(P, k == TK_ASSIGN ? S_ASSIGN : S_COMPOUND, e->start);
        n->op = k == TK_PLUS_ASSIGN ? OP_ADD : k == TK_MINUS_ASSIGN ? OP_SUB : OP_MUL;
        n->u.assign.target = e;
        if ((n->u.assign.value = parse_expr(P)) == NULL || !parse_hang(P, n, e) ||
            !parse_hang(P, n, n->u.assign.value))
            return NULL;
        n->end = n->u.assign.value->end;
    } else {
        n = parse_node(P, S_EXPR, e->start);
        n->u.expr = e;
        n->end = e->end;
        if (!parse_hang(P, n, e))
            return NULL;
    }
    return parse_end_stmt(P) ? n : NULL;
}

/* stmt -> let | if | while | for | try | return | break | continue | simple */
static struct ast *parse_stmt(struct parser *P)
{
    switch (parse_peek(P)->kind) {
    case TK_LET:
    case TK_CONST:
        return parse_let(P, false);
    case TK_IF:
        return parse_if(P);
    case TK_WHILE:
        return parse_while(P);
    case TK_FOR:
        return parse_for(P);
    case TK_TRY:
        return parse_try(P);
    case TK_RETURN:
    case TK_BREAK:
    case TK_CONTINUE:
        return parse_jump(P);
    default:
        return parse_simple(P);
    }
}

/* Appends to a growable arena array of node pointers. */
static void parse_append(struct parser *P, struct ast ***items, uint32_t *n, uint32_t *cap,
                         struct ast *x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        struct ast **grown = arena_alloc(P->arena, sizeof *grown * *cap);
        if (*n)
            memcpy(grown, *items, sizeof *grown * *n);
        *items = grown;
    }
    (*items)[(*n)++] = x;
}

/* block -> '{' { stmt | NEWLINE } '}' */
struct ast *parse_block(struct parser *P)
{
    const struct lex_token *open = parse_expect(P, TK_LBRACE, "'{'");
    if (open == NULL)
        return NULL;
    if (++P->depth > PARSE_MAX_DEPTH) {
        parse_error(P, open->start, "blocks nested too deeply");
        return NULL;
    }
    struct ast *b = parse_node(P, S_BLOCK, open->start);
    uint32_t cap = 0;
    for (;;) {
        parse_skip_newlines(P);
        if (parse_is(P, TK_RBRACE) || parse_is(P, TK_EOF))
            break;
        struct ast *s = parse_stmt(P);
        if (s != NULL && !parse_hang(P, b, s))
            s = NULL;
        if (s == NULL)
            parse_sync(P);
        else
            parse_append(P, &b->u.list.items, &b->u.list.n, &cap, s);
    }
    P->depth--;
    if (!parse_expect(P, TK_RBRACE, "'}'"))
        return NULL;
    b->end = P->lx.toks[P->pos - 1].end;
    return b;
}

/* dotted -> IDENT { '.' IDENT }; returns the text or NULL */
static const char *parse_dotted(struct parser *P, uint32_t *start)
{
    const struct lex_token *first = parse_expect(P, TK_IDENT, "a namespace name");
    if (first == NULL)
        return NULL;
    uint32_t end = first->end;
    while (parse_accept(P, TK_DOT)) {
        const struct lex_token *t = parse_expect(P, TK_IDENT, "a name after '.'");
        if (t == NULL)
            return NULL;
        end = t->end;
    }
    *start = first->start;
    return arena_strndup(P->arena, P->src->text + first->start, end - first->start);
}

/* param -> IDENT [ ':' type ] */
static bool parse_param(struct parser *P, struct ast_param *out)
{
    const struct lex_token *t = parse_expect(P, TK_IDENT, "a parameter name");
    if (t == NULL)
        return false;
    memset(out, 0, sizeof *out);
    out->name = parse_ident_text(P, t);
    out->start = t->start;
    return !parse_accept(P, TK_COLON) || parse_type(P, &out->type);
}

/* fn -> 'fn' IDENT '(' [ param { ',' param } ] ')' [ '->' type ] block */
static struct ast_fn *parse_fn(struct parser *P)
{
    const struct lex_token *kw = parse_next(P);
    const struct lex_token *name = parse_expect(P, TK_IDENT, "a function name");
    if (name == NULL || !parse_expect(P, TK_LPAREN, "'('"))
        return NULL;
    struct ast_fn *f = arena_alloc(P->arena, sizeof *f);
    f->name = parse_ident_text(P, name);
    f->start = kw->start;
    f->name_start = name->start;
    struct ast_param params[256];
    parse_skip_newlines(P);
    while (!parse_is(P, TK_RPAREN)) {
        if (f->n_params == 255) {
            parse_error(P, parse_peek(P)->start, "too many parameters");
            return NULL;
        }
        if (!parse_param(P, &params[f->n_params++]))
            return NULL;
        parse_skip_newlines(P);
        if (!parse_accept(P, TK_COMMA))
            break;
        parse_skip_newlines(P);
    }
    if (!parse_expect(P, TK_RPAREN, "')'"))
        return NULL;
    if (parse_accept(P, TK_ARROW) && !parse_type(P, &f->ret))
        return NULL;
    f->sig_end = P->lx.toks[P->pos - 1].end;
    f->params = arena_alloc(P->arena, sizeof *params * (f->n_params + 1));
    memcpy(f->params, params, sizeof *params * f->n_params);
    return (f->body = parse_block(P)) ? f : NULL;
}

/* import -> 'import' dotted NEWLINE */
static bool parse_import(struct parser *P, struct ast_file *out, uint32_t *cap)
{
    parse_next(P);
    struct ast_import imp = {0};
    if ((imp.name = parse_dotted(P, &imp.start)) == NULL)
        return false;
    const char *dot = strrchr(imp.name, '.');
    imp.last = dot ? dot + 1 : imp.name;
    if (out->n_imports == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        struct ast_import *g = arena_alloc(P->arena, sizeof *g * *cap);
        if (out->n_imports)
            memcpy(g, out->imports, sizeof *g * out->n_imports);
        out->imports = g;
    }
    out->imports[out->n_imports++] = imp;
    return parse_end_stmt(P);
}

/* decl -> import | fn | let | const */
static bool parse_decl(struct parser *P, struct ast_file *out, uint32_t caps[3])
{
    const struct lex_token *t = parse_peek(P);
    if (t->kind == TK_IMPORT)
        return parse_import(P, out, &caps[0]);
    if (t->kind == TK_FN) {
        struct ast_fn *f = parse_fn(P);
        if (f == NULL)
            return false;
        parse_append(P, (struct ast ***)&out->fns, &out->n_fns, &caps[1], (struct ast *)f);
        return parse_end_stmt(P);
    }
    if (t->kind == TK_LET || t->kind == TK_CONST) {
        struct ast *g = parse_let(P, true);
        if (g != NULL)
            parse_append(P, &out->globals, &out->n_globals, &caps[2], g);
        return g != NULL;
    }
    parse_error(P, t->start, "expected a declaration (fn, let, const or import), found %s",
                lex_kind_name((enum lex_kind)t->kind));
    return false;
}

/* file -> { NEWLINE } 'namespace' dotted NEWLINE { decl | NEWLINE } EOF */
static void parse_file(struct parser *P, struct ast_file *out)
{
    parse_skip_newlines(P);
    if (parse_peek(P)->kind != TK_NAMESPACE) {
        parse_error(P, parse_peek(P)->start, "a source file must start with 'namespace NAME'");
        return;
    }
    parse_next(P);
    if ((out->ns = parse_dotted(P, &out->ns_start)) == NULL || !parse_end_stmt(P))
        return;
    uint32_t caps[3] = {0, 0, 0};
    for (;;) {
        parse_skip_newlines(P);
        if (parse_is(P, TK_EOF))
            break;
        if (!parse_decl(P, out, caps)) {
            parse_sync(P);
            if (parse_is(P, TK_RBRACE))
                P->pos++;
        }
    }
}

int parse_source(struct interp_source *src, struct arena *a, struct parse_consts *consts,
                 struct interp_diags *diags, struct ast_file *out)
{
    struct parser P = {.src = src, .arena = a, .consts = consts, .diags = diags};
    memset(out, 0, sizeof *out);
    int errors = lex_source(src, &P.lx, diags);
    if (errors == 0)
        parse_file(&P, out);
    lex_result_free(&P.lx);
    return errors + P.errors;
}

void parse_consts_free(struct parse_consts *c)
{
    for (size_t i = 0; i < c->n; i++)
        heap_str_const_free(c->items[i]);
    free(c->items);
    memset(c, 0, sizeof *c);
}
