/* parser-internal: the parser state shared by parser.c and parser_expr.c. */
#ifndef JETT_AGENT_PARSER_INTERNAL_H
#define JETT_AGENT_PARSER_INTERNAL_H

#include "agent/lexer.h"
#include "agent/parser.h"

struct parser {
    struct interp_source *src;
    struct arena *arena;
    struct parse_consts *consts;
    struct interp_diags *diags;
    struct lex_result lx;
    size_t pos;
    int errors;
    int depth;
};

static inline const struct lex_token *parse_peek(struct parser *P)
{
    return &P->lx.toks[P->pos];
}
static inline bool parse_is(struct parser *P, enum lex_kind k)
{
    return P->lx.toks[P->pos].kind == k;
}

const struct lex_token *parse_next(struct parser *P);
bool parse_accept(struct parser *P, enum lex_kind k);
/* Consumes a token of kind k or reports "expected K" and returns NULL. */
const struct lex_token *parse_expect(struct parser *P, enum lex_kind k, const char *what);
void parse_error(struct parser *P, uint32_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void parse_skip_newlines(struct parser *P);
struct ast *parse_node(struct parser *P, enum ast_kind kind, uint32_t start);
/* Makes n at least one level taller than child; reports "too deep" and
 * returns false when n would exceed PARSE_MAX_HEIGHT. */
bool parse_hang(struct parser *P, struct ast *n, const struct ast *child);
const char *parse_ident_text(struct parser *P, const struct lex_token *t);

struct ast *parse_expr(struct parser *P);
struct ast *parse_block(struct parser *P);

#endif
