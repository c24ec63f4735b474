/* parser_expr: expressions, by precedence climbing from || down to
 * primaries.  Newlines are skipped after binary operators and inside
 * brackets, so long expressions can be split over lines. */
#include <stdlib.h>
#include <string.h>

#include "agent/heap.h"
#include "agent/parser-internal.h"

static struct ast *parse_unary(struct parser *P);
static struct ast *parse_primary(struct parser *P);

static struct ast *parse_binary_node(struct parser *P, enum ast_kind kind, int op, struct ast *a,
                                     struct ast *b)
{
    struct ast *n = parse_node(P, kind, a->start);
    n->op = (uint8_t)op;
    n->u.bin.a = a;
    n->u.bin.b = b;
    n->end = b->end;
    return parse_hang(P, n, a) && parse_hang(P, n, b) ? n : NULL;
}

/* Maps a binary-operator token to its ast_op at a precedence level, or -1. */
static int parse_binop(enum lex_kind k, int level)
{
    switch (level) {
    case 0:
        return k == TK_EQ   ? OP_EQ
               : k == TK_NE ? OP_NE
               : k == TK_LT ? OP_LT
               : k == TK_LE ? OP_LE
               : k == TK_GT ? OP_GT
               : k == TK_GE ? OP_GE
                            : -1;
    case 1:
        return k == TK_PLUS ? OP_ADD : k == TK_MINUS ? OP_SUB : -1;
    default:
        return k == TK_STAR ? OP_MUL : k == TK_SLASH ? OP_DIV : k == TK_PERCENT ? OP_MOD : -1;
    }
}

/* mul -> unary { ('*'|'/'|'%') unary } ; add -> mul { ('+'|'-') mul } */
static struct ast *parse_arith(struct parser *P, int level)
{
    struct ast *a = level == 2 ? parse_unary(P) : parse_arith(P, level + 1);
    while (a != NULL) {
        int op = parse_binop((enum lex_kind)parse_peek(P)->kind, level);
        if (op < 0)
            break;
        parse_next(P);
        parse_skip_newlines(P);
        struct ast *b = level == 2 ? parse_unary(P) : parse_arith(P, level + 1);
        if (b == NULL)
            return NULL;
        a = parse_binary_node(P, E_BIN, op, a, b);
    }
    return a;
}

/* range -> add [ '..' add ] */
static struct ast *parse_range(struct parser *P)
{
    struct ast *a = parse_arith(P, 1);
    if (a == NULL || !parse_accept(P, TK_DOTDOT))
        return a;
    parse_skip_newlines(P);
    struct ast *b = parse_arith(P, 1);
    return b ? parse_binary_node(P, E_RANGE, 0, a, b) : NULL;
}

/* cmp -> range { ('=='|'!='|'<'|'<='|'>'|'>=') range } */
static struct ast *parse_cmp(struct parser *P)
{
    struct ast *a = parse_range(P);
    while (a != NULL) {
        int op = parse_binop((enum lex_kind)parse_peek(P)->kind, 0);
        if (op < 0)
            break;
        parse_next(P);
        parse_skip_newlines(P);
        struct ast *b = parse_range(P);
        if (b == NULL)
            return NULL;
        a = parse_binary_node(P, E_BIN, op, a, b);
    }
    return a;
}

/* and -> cmp { '&&' cmp } */
static struct ast *parse_and(struct parser *P)
{
    struct ast *a = parse_cmp(P);
    while (a != NULL && parse_accept(P, TK_AND)) {
        parse_skip_newlines(P);
        struct ast *b = parse_cmp(P);
        if (b == NULL)
            return NULL;
        a = parse_binary_node(P, E_AND, 0, a, b);
    }
    return a;
}

/* expr -> and { '||' and } */
struct ast *parse_expr(struct parser *P)
{
    if (++P->depth > PARSE_MAX_DEPTH) {
        parse_error(P, parse_peek(P)->start, "expression nested too deeply");
        P->depth--;
        return NULL;
    }
    struct ast *a = parse_and(P);
    while (a != NULL && parse_accept(P, TK_OR)) {
        parse_skip_newlines(P);
        struct ast *b = parse_and(P);
        if (b == NULL) {
            a = NULL;
            break;
        }
        a = parse_binary_node(P, E_OR, 0, a, b);
    }
    P->depth--;
    return a;
}

/* Parses a comma-separated list up to `close`, skipping newlines, as
 * children of `parent`.  With `pairs`, each item is `expr ':' expr`
 * (map literal entries). */
static bool parse_items(struct parser *P, struct ast *parent, enum lex_kind close, bool pairs,
                        struct ast ***out, uint32_t *count)
{
    struct ast **items = NULL;
    uint32_t n = 0, cap = 0;
    parse_skip_newlines(P);
    while (!parse_is(P, close)) {
        if (n + 2 > cap) {
            cap = cap ? cap * 2 : 8;
            struct ast **grown = arena_alloc(P->arena, sizeof *grown * cap);
            if (n)
                memcpy(grown, items, sizeof *grown * n);
            items = grown;
        }
        if ((items[n++] = parse_expr(P)) == NULL || !parse_hang(P, parent, items[n - 1]))
            return false;
        if (pairs) {
            parse_skip_newlines(P);
            if (!parse_expect(P, TK_COLON, "':' after a map key"))
                return false;
            parse_skip_newlines(P);
            if ((items[n++] = parse_expr(P)) == NULL || !parse_hang(P, parent, items[n - 1]))
                return false;
        }
        parse_skip_newlines(P);
        if (!parse_accept(P, TK_COMMA))
            break;
        parse_skip_newlines(P);
    }
    if (!parse_expect(P, close, close == TK_RPAREN ? "')'" : close == TK_RBRACKET ? "']'" : "'}'"))
        return false;
    *out = items;
    *count = n;
    return true;
}

/* postfix -> primary { '(' args ')' | '[' expr ']' } */
static struct ast *parse_postfix(struct parser *P, struct ast *e)
{
    while (e != NULL) {
        if (parse_accept(P, TK_LPAREN)) {
            struct ast *c = parse_node(P, E_CALL, e->start);
            c->u.call.callee = e;
            if (!parse_items(P, c, TK_RPAREN, false, &c->u.call.args, &c->u.call.n))
                return NULL;
            c->end = P->lx.toks[P->pos - 1].end;
            if (!parse_hang(P, c, e))
                return NULL;
            e = c;
        } else if (parse_accept(P, TK_LBRACKET)) {
            parse_skip_newlines(P);
            struct ast *i = parse_expr(P);
            parse_skip_newlines(P);
            if (i == NULL || !parse_expect(P, TK_RBRACKET, "']'"))
                return NULL;
            struct ast *x = parse_node(P, E_INDEX, e->start);
            x->u.bin.a = e;
            x->u.bin.b = i;
            x->end = P->lx.toks[P->pos - 1].end;
            if (!parse_hang(P, x, e) || !parse_hang(P, x, i))
                return NULL;
            e = x;
        } else {
            break;
        }
    }
    return e;
}

/* unary -> ('-'|'!') unary | postfix */
static struct ast *parse_unary(struct parser *P)
{
    const struct lex_token *t = parse_peek(P);
    if (t->kind != TK_MINUS && t->kind != TK_NOT)
        return parse_postfix(P, parse_primary(P));
    parse_next(P);
    if (++P->depth > PARSE_MAX_DEPTH) {
        parse_error(P, t->start, "expression nested too deeply");
        return NULL;
    }
    struct ast *a = parse_unary(P);
    P->depth--;
    if (a == NULL)
        return NULL;
    struct ast *n = parse_node(P, t->kind == TK_MINUS ? E_NEG : E_NOT, t->start);
    n->u.bin.a = a;
    n->end = a->end;
    return parse_hang(P, n, a) ? n : NULL;
}

/* A string or bytes literal becomes a program constant. */
static struct ast *parse_literal_str(struct parser *P, const struct lex_token *t)
{
    struct ast *n = parse_node(P, t->kind == TK_STRING ? E_STR : E_BYTES, t->start);
    /* the lexer's pool is NULL until a literal has contents */
    const char *text = t->u.s.len ? P->lx.pool + t->u.s.off : "";
    struct heap_str *s = heap_str_const(text, t->u.s.len);
    if (s == NULL)
        abort();
    if (t->kind == TK_BYTES)
        s->h.type = HEAP_BYTES;
    struct parse_consts *c = P->consts;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->items = realloc(c->items, sizeof *c->items * c->cap);
        if (c->items == NULL)
            abort();
    }
    c->items[c->n++] = s;
    n->u.str = s;
    return n;
}

/* name -> IDENT { '.' IDENT } */
static struct ast *parse_name(struct parser *P, const struct lex_token *t)
{
    if (!parse_is(P, TK_DOT)) {
        struct ast *n = parse_node(P, E_NAME, t->start);
        n->u.name.name = parse_ident_text(P, t);
        return n;
    }
    const char *parts[64];
    uint32_t n = 0;
    parts[n++] = parse_ident_text(P, t);
    while (parse_accept(P, TK_DOT)) {
        const struct lex_token *p = parse_expect(P, TK_IDENT, "a name after '.'");
        if (p == NULL)
            return NULL;
        if (n == 64) {
            parse_error(P, p->start, "qualified name too long");
            return NULL;
        }
        parts[n++] = parse_ident_text(P, p);
    }
    struct ast *d = parse_node(P, E_DOTTED, t->start);
    d->u.dotted.parts = arena_alloc(P->arena, sizeof *parts * n);
    memcpy(d->u.dotted.parts, parts, sizeof *parts * n);
    d->u.dotted.n = n;
    return d;
}

/* primary -> INT | FLOAT | STRING | BYTES | true | false | nil | name
 *          | '(' expr ')' | '[' items ']' | '{' pairs '}' */
static struct ast *parse_primary(struct parser *P)
{
    const struct lex_token *t = parse_next(P);
    struct ast *n;
    switch (t->kind) {
    case TK_INT:
        n = parse_node(P, E_INT, t->start);
        n->u.i = t->u.i;
        return n;
    case TK_FLOAT:
        n = parse_node(P, E_FLOAT, t->start);
        n->u.f = t->u.f;
        return n;
    case TK_STRING:
    case TK_BYTES:
        return parse_literal_str(P, t);
    case TK_TRUE:
        return parse_node(P, E_TRUE, t->start);
    case TK_FALSE:
        return parse_node(P, E_FALSE, t->start);
    case TK_NIL:
        return parse_node(P, E_NIL, t->start);
    case TK_IDENT:
        return parse_name(P, t);
    case TK_LPAREN:
        parse_skip_newlines(P);
        n = parse_expr(P);
        parse_skip_newlines(P);
        if (n == NULL || !parse_expect(P, TK_RPAREN, "')'"))
            return NULL;
        return n;
    case TK_LBRACKET:
    case TK_LBRACE:
        n = parse_node(P, t->kind == TK_LBRACKET ? E_LIST : E_MAP, t->start);
        if (!parse_items(P, n, t->kind == TK_LBRACKET ? TK_RBRACKET : TK_RBRACE,
                         t->kind == TK_LBRACE, &n->u.list.items, &n->u.list.n))
            return NULL;
        n->end = P->lx.toks[P->pos - 1].end;
        return n;
    default:
        parse_error(P, t->start, "expected an expression, found %s",
                    lex_kind_name((enum lex_kind)t->kind));
        P->pos--;
        return NULL;
    }
}
