/* lexer: turns a source text into tokens (see lexer.h). */
#include "agent/lexer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/diag.h"

struct lex {
    struct interp_source *src;
    struct lex_result *out;
    struct interp_diags *diags;
    const char *t;
    uint32_t pos, len;
    int errors;
};

static const struct {
    const char *word;
    enum lex_kind kind;
} lex_keywords[] = {
    {"namespace", TK_NAMESPACE},
    {"import", TK_IMPORT},
    {"let", TK_LET},
    {"const", TK_CONST},
    {"fn", TK_FN},
    {"return", TK_RETURN},
    {"if", TK_IF},
    {"else", TK_ELSE},
    {"while", TK_WHILE},
    {"for", TK_FOR},
    {"in", TK_IN},
    {"break", TK_BREAK},
    {"continue", TK_CONTINUE},
    {"try", TK_TRY},
    {"catch", TK_CATCH},
    {"true", TK_TRUE},
    {"false", TK_FALSE},
    {"nil", TK_NIL},
};

static const char *const lex_names[] = {
    "end of file", "newline",  "identifier", "integer", "float",   "string",     "bytes",
    "'namespace'", "'import'", "'let'",      "'const'", "'fn'",    "'return'",   "'if'",
    "'else'",      "'while'",  "'for'",      "'in'",    "'break'", "'continue'", "'try'",
    "'catch'",     "'true'",   "'false'",    "'nil'",   "'('",     "')'",        "'['",
    "']'",         "'{'",      "'}'",        "','",     "':'",     "'.'",        "'..'",
    "'->'",        "'='",      "'+='",       "'-='",    "'*='",    "'+'",        "'-'",
    "'*'",         "'/'",      "'%'",        "'<'",     "'<='",    "'>'",        "'>='",
    "'=='",        "'!='",     "'&&'",       "'||'",    "'!'",
};

const char *lex_kind_name(enum lex_kind k)
{
    return lex_names[k];
}

static void lex_error(struct lex *L, uint32_t at, const char *msg)
{
    diag_add(L->diags, L->src, at, "%s", msg);
    L->errors++;
}

static struct lex_token *lex_push(struct lex *L, enum lex_kind kind, uint32_t start)
{
    struct lex_result *o = L->out;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        struct lex_token *t = realloc(o->toks, sizeof *t * cap);
        if (t == NULL)
            abort();
        o->toks = t;
        o->cap = cap;
    }
    struct lex_token *tok = &o->toks[o->n++];
    memset(tok, 0, sizeof *tok);
    tok->kind = (uint8_t)kind;
    tok->start = start;
    tok->end = L->pos;
    return tok;
}

static void lex_pool_put(struct lex *L, const char *data, size_t n)
{
    struct lex_result *o = L->out;
    if (o->pool_len + n > o->pool_cap) {
        size_t cap = o->pool_cap ? o->pool_cap * 2 : 1024;
        while (cap < o->pool_len + n)
            cap *= 2;
        char *p = realloc(o->pool, cap);
        if (p == NULL)
            abort();
        o->pool = p;
        o->pool_cap = cap;
    }
    memcpy(o->pool + o->pool_len, data, n);
    o->pool_len += n;
}

/* Appends code point cp as UTF-8 to the pool. */
static void lex_pool_utf8(struct lex *L, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    lex_pool_put(L, b, n);
}

/* \u{HEX}: 1 to 6 hex digits, a Unicode scalar value. */
static int lex_unicode_escape(struct lex *L, uint32_t at)
{
    if (L->pos >= L->len || L->t[L->pos] != '{') {
        lex_error(L, at, "expected '{' after \\u");
        return -1;
    }
    L->pos++;
    uint32_t cp = 0, digits = 0;
    while (L->pos < L->len && L->t[L->pos] != '}' && L->t[L->pos] != '"') {
        char c = L->t[L->pos++];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0 || ++digits > 6) {
            lex_error(L, at, "bad \\u{...} escape");
            return -1;
        }
        cp = cp * 16 + (uint32_t)v;
    }
    if (L->pos >= L->len || L->t[L->pos] != '}' || digits == 0 || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
        lex_error(L, at, "bad \\u{...} escape");
        return -1;
    }
    L->pos++;
    lex_pool_utf8(L, cp);
    return 0;
}

/* One escape after a backslash; -1 after reporting a bad one. */
static int lex_escape(struct lex *L, bool bytes)
{
    uint32_t at = L->pos - 1;
    if (L->pos >= L->len) {
        lex_error(L, at, "unterminated string literal");
        return -1;
    }
    char c = L->t[L->pos++];
    const char *map = "n\nt\t\"\"\\\\r\r0\0";
    for (int i = 0; i < 12; i += 2)
        if (map[i] == c) {
            lex_pool_put(L, &map[i + 1], 1);
            return 0;
        }
    if (c == 'u' && !bytes)
        return lex_unicode_escape(L, at);
    lex_error(L, at, "unknown escape sequence in string literal");
    return -1;
}

/* string -> '"' { char | escape } '"'; bytes -> 'b' string */
static void lex_string(struct lex *L, uint32_t start, bool bytes)
{
    uint32_t off = (uint32_t)L->out->pool_len;
    bool bad = false;
    for (;;) {
        if (L->pos >= L->len || L->t[L->pos] == '\n') {
            lex_error(L, start, "unterminated string literal");
            return;
        }
        char c = L->t[L->pos++];
        if (c == '"')
            break;
        if (c == '\\') {
            bad |= lex_escape(L, bytes) < 0;
            continue;
        }
        lex_pool_put(L, &c, 1);
    }
    struct lex_token *t = lex_push(L, bytes ? TK_BYTES : TK_STRING, start);
    t->u.s.off = off;
    t->u.s.len = (uint32_t)(L->out->pool_len - off);
    source_add_span(L->src, INTERP_SPAN_LITERAL, start, L->pos);
    (void)bad;
}

static bool lex_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* number -> digits [ '.' digits ] [ ('e'|'E') ['+'|'-'] digits ]; "1..2" is a range */
static void lex_number(struct lex *L, uint32_t start)
{
    bool is_float = false;
    while (L->pos < L->len && (lex_digit(L->t[L->pos]) || L->t[L->pos] == '_'))
        L->pos++;
    if (L->pos + 1 < L->len && L->t[L->pos] == '.' && lex_digit(L->t[L->pos + 1])) {
        is_float = true;
        L->pos++;
        while (L->pos < L->len && lex_digit(L->t[L->pos]))
            L->pos++;
    }
    if (L->pos < L->len && (L->t[L->pos] == 'e' || L->t[L->pos] == 'E')) {
        uint32_t save = L->pos++;
        if (L->pos < L->len && (L->t[L->pos] == '+' || L->t[L->pos] == '-'))
            L->pos++;
        if (L->pos < L->len && lex_digit(L->t[L->pos])) {
            is_float = true;
            while (L->pos < L->len && lex_digit(L->t[L->pos]))
                L->pos++;
        } else {
            L->pos = save;
        }
    }
    char buf[128];
    uint32_t n = 0;
    for (uint32_t i = start; i < L->pos && n < sizeof buf - 1; i++)
        if (L->t[i] != '_')
            buf[n++] = L->t[i];
    buf[n] = '\0';
    struct lex_token *t = lex_push(L, is_float ? TK_FLOAT : TK_INT, start);
    errno = 0;
    if (is_float) {
        t->u.f = strtod(buf, NULL);
        return;
    }
    t->u.i = strtoll(buf, NULL, 10);
    if (errno == ERANGE || L->pos - start > 120)
        lex_error(L, start, "integer literal too large");
}

static bool lex_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || lex_digit(c);
}

static void lex_ident(struct lex *L, uint32_t start)
{
    while (L->pos < L->len && lex_ident_char(L->t[L->pos]))
        L->pos++;
    uint32_t n = L->pos - start;
    for (size_t i = 0; i < sizeof lex_keywords / sizeof lex_keywords[0]; i++)
        if (strlen(lex_keywords[i].word) == n &&
            memcmp(lex_keywords[i].word, L->t + start, n) == 0) {
            lex_push(L, lex_keywords[i].kind, start);
            return;
        }
    lex_push(L, TK_IDENT, start);
}

/* Skips a comment starting at pos ("//" or slash-star); records its span. */
static void lex_comment(struct lex *L, uint32_t start)
{
    if (L->t[start + 1] == '/') {
        while (L->pos < L->len && L->t[L->pos] != '\n')
            L->pos++;
    } else {
        L->pos += 2;
        while (L->pos + 1 < L->len && !(L->t[L->pos] == '*' && L->t[L->pos + 1] == '/'))
            L->pos++;
        if (L->pos + 1 >= L->len) {
            L->pos = L->len;
            lex_error(L, start, "unterminated block comment");
        } else {
            L->pos += 2;
        }
    }
    source_add_span(L->src, INTERP_SPAN_COMMENT, start, L->pos);
}

/* Two-character operators first, then one-character ones. */
static enum lex_kind lex_punct(struct lex *L)
{
    static const struct {
        const char *p;
        enum lex_kind k;
    } ops[] = {
        {"..", TK_DOTDOT},      {"->", TK_ARROW},   {"+=", TK_PLUS_ASSIGN}, {"-=", TK_MINUS_ASSIGN},
        {"*=", TK_STAR_ASSIGN}, {"<=", TK_LE},      {">=", TK_GE},          {"==", TK_EQ},
        {"!=", TK_NE},          {"&&", TK_AND},     {"||", TK_OR},          {"(", TK_LPAREN},
        {")", TK_RPAREN},       {"[", TK_LBRACKET}, {"]", TK_RBRACKET},     {"{", TK_LBRACE},
        {"}", TK_RBRACE},       {",", TK_COMMA},    {":", TK_COLON},        {".", TK_DOT},
        {"=", TK_ASSIGN},       {"+", TK_PLUS},     {"-", TK_MINUS},        {"*", TK_STAR},
        {"/", TK_SLASH},        {"%", TK_PERCENT},  {"<", TK_LT},           {">", TK_GT},
        {"!", TK_NOT},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i].p);
        if (L->pos + n <= L->len && memcmp(L->t + L->pos, ops[i].p, n) == 0) {
            L->pos += (uint32_t)n;
            return ops[i].k;
        }
    }
    return TK_EOF;
}

/* Lexes one token (or skips blanks/comments) at L->pos. */
static void lex_step(struct lex *L)
{
    uint32_t start = L->pos;
    char c = L->t[start];
    if (c == ' ' || c == '\t' || c == '\r') {
        L->pos++;
    } else if (c == '\n') {
        L->pos++;
        lex_push(L, TK_NEWLINE, start);
    } else if (c == '/' && start + 1 < L->len &&
               (L->t[start + 1] == '/' || L->t[start + 1] == '*')) {
        lex_comment(L, start);
    } else if (c == '"') {
        L->pos++;
        lex_string(L, start, false);
    } else if (c == 'b' && start + 1 < L->len && L->t[start + 1] == '"') {
        L->pos += 2;
        lex_string(L, start, true);
    } else if (lex_digit(c)) {
        lex_number(L, start);
    } else if (lex_ident_char(c)) {
        lex_ident(L, start);
    } else {
        enum lex_kind k = lex_punct(L);
        if (k != TK_EOF) {
            lex_push(L, k, start);
            return;
        }
        L->pos++;
        while (L->pos < L->len && ((uint8_t)L->t[L->pos] & 0xc0) == 0x80)
            L->pos++;
        lex_error(L, start, "unexpected character");
    }
}

int lex_source(struct interp_source *src, struct lex_result *out, struct interp_diags *diags)
{
    memset(out, 0, sizeof *out);
    struct lex L = {src, out, diags, src->text, 0, src->len, 0};
    while (L.pos < L.len)
        lex_step(&L);
    lex_push(&L, TK_NEWLINE, L.len);
    lex_push(&L, TK_EOF, L.len);
    return L.errors;
}

void lex_result_free(struct lex_result *r)
{
    free(r->toks);
    free(r->pool);
    memset(r, 0, sizeof *r);
}
