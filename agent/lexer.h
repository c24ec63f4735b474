/*
 * lexer: Jett source text -> tokens with byte spans.
 *
 * Newlines are tokens (they end statements); the parser skips them where
 * an expression obviously continues.  String and byte literals are
 * decoded into the lexer's pool; comment and literal spans are recorded
 * into the source for the profiler's redaction.
 */
#ifndef JETT_AGENT_LEXER_H
#define JETT_AGENT_LEXER_H

#include <stddef.h>
#include <stdint.h>

#include "agent/interp.h"

enum lex_kind {
    TK_EOF = 0,
    TK_NEWLINE,
    TK_IDENT,
    TK_INT,
    TK_FLOAT,
    TK_STRING,
    TK_BYTES,
    /* keywords */
    TK_NAMESPACE,
    TK_IMPORT,
    TK_LET,
    TK_CONST,
    TK_FN,
    TK_RETURN,
    TK_IF,
    TK_ELSE,
    TK_WHILE,
    TK_FOR,
    TK_IN,
    TK_BREAK,
    TK_CONTINUE,
    TK_TRY,
    TK_CATCH,
    TK_TRUE,
    TK_FALSE,
    TK_NIL,
    /* punctuation */
    TK_LPAREN,
    TK_RPAREN,
    TK_LBRACKET,
    TK_RBRACKET,
    TK_LBRACE,
    TK_RBRACE,
    TK_COMMA,
    TK_COLON,
    TK_DOT,
    TK_DOTDOT,
    TK_ARROW,
    TK_ASSIGN,
    TK_PLUS_ASSIGN,
    TK_MINUS_ASSIGN,
    TK_STAR_ASSIGN,
    TK_PLUS,
    TK_MINUS,
    TK_STAR,
    TK_SLASH,
    TK_PERCENT,
    TK_LT,
    TK_LE,
    TK_GT,
    TK_GE,
    TK_EQ,
    TK_NE,
    TK_AND,
    TK_OR,
    TK_NOT,
};

struct lex_token {
    uint8_t kind; /* enum lex_kind */
    uint32_t start, end;
    union {
        int64_t i;
        double f;
        struct {
            uint32_t off, len; /* decoded literal in lex_result.pool */
        } s;
    } u;
};

struct lex_result {
    struct lex_token *toks;
    size_t n, cap;
    char *pool; /* decoded string and byte literals */
    size_t pool_len, pool_cap;
};

/* Tokenizes src->text; appends comment and literal spans to src and one
 * diagnostic per lexical error to diags.  Returns the number of errors. */
int lex_source(struct interp_source *src, struct lex_result *out, struct interp_diags *diags);
void lex_result_free(struct lex_result *r);
const char *lex_kind_name(enum lex_kind k);

#endif
