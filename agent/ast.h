/*
 * ast: the syntax tree the parser builds, the checker resolves and the
 * evaluator walks.  Every node keeps its byte span [start, end) in its
 * source.  Nodes live in the program's arena and are never freed one by
 * one.  After checking, no E_NAME / E_DOTTED node remains: names are
 * frame slots (E_LOCAL), global slots (E_GLOBAL), function ids (E_FUNC)
 * or builtin ids (E_BUILTIN), and each call records how to dispatch.
 */
#ifndef JETT_AGENT_AST_H
#define JETT_AGENT_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_str;

enum ast_kind {
    /* expressions */
    E_INT,
    E_FLOAT,
    E_STR,
    E_BYTES,
    E_TRUE,
    E_FALSE,
    E_NIL,
    E_NAME,   /* unresolved: u.name */
    E_DOTTED, /* unresolved: u.dotted (a.b.f) */
    E_LOCAL,  /* u.name.slot: frame slot */
    E_GLOBAL, /* u.name.slot: global slot */
    E_FUNC,   /* u.name.slot: function id */
    E_BUILTIN,
    E_LIST,  /* u.list */
    E_MAP,   /* u.list: key, value, key, value ... */
    E_INDEX, /* u.bin: a[b] */
    E_CALL,
    E_NEG,   /* u.bin.a */
    E_NOT,   /* u.bin.a */
    E_BIN,   /* u.bin, op */
    E_AND,   /* u.bin */
    E_OR,    /* u.bin */
    E_RANGE, /* u.bin: a..b (only as a for iterable) */
    /* statements */
    S_LET,      /* u.let: also namespace-level let/const (global slot) */
    S_ASSIGN,   /* u.assign */
    S_COMPOUND, /* u.assign, op = ast_op of += -= *= */
    S_IF,       /* u.cond */
    S_WHILE,    /* u.cond: cond, then = body */
    S_FOR,      /* u.loop */
    S_BREAK,
    S_CONTINUE,
    S_RETURN, /* u.expr (may be NULL) */
    S_TRY,    /* u.try_ */
    S_EXPR,   /* u.expr */
    S_BLOCK,  /* u.list */
};

enum ast_op { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };

/* Types in annotations. */
enum ast_base {
    T_NONE = 0, /* no annotation */
    T_ANY,
    T_INT,
    T_FLOAT,
    T_BOOL,
    T_STRING,
    T_BYTES,
    T_LIST,
    T_MAP,
    T_NIL,
    T_FN,
    T_TASK,
    T_CHANNEL,
};

struct ast_type {
    uint8_t base;   /* enum ast_base */
    uint8_t secret; /* secret<T> */
};

enum ast_call_kind { CALL_FUNC = 0, CALL_BUILTIN, CALL_VALUE };

struct ast {
    uint8_t kind;   /* enum ast_kind */
    uint8_t op;     /* enum ast_op for E_BIN / S_COMPOUND; E_LOCAL/E_GLOBAL: annotation */
    uint8_t secret; /* checker: the expression's type contains secret */
    uint8_t konst;  /* S_LET: a const binding */
    uint8_t check;  /* S_ASSIGN/S_COMPOUND: the target's annotation (enum ast_base) */
    uint8_t check_secret;
    uint16_t height; /* parser: levels of the subtree, 1 for a leaf (<= PARSE_MAX_HEIGHT) */
    uint32_t start, end;
    union {
        int64_t i;
        double f;
        struct heap_str *str; /* E_STR / E_BYTES: a program constant */
        struct {
            const char *name;
            uint32_t slot;
        } name;
        struct {
            const char **parts;
            uint32_t n;
        } dotted;
        struct {
            struct ast **items;
            uint32_t n;
        } list;
        struct {
            struct ast *a, *b;
        } bin;
        struct {
            struct ast *callee;
            struct ast **args;
            uint32_t n;
            uint32_t target; /* function or builtin id */
            uint32_t site;   /* checker: the call site's id (interp_call_site_get) */
            uint8_t ckind;   /* enum ast_call_kind */
        } call;
        struct {
            const char *name;
            uint32_t slot;
            uint32_t name_start;
            struct ast_type type;
            struct ast *init;
            bool global;
        } let;
        struct {
            struct ast *target, *value;
        } assign;
        struct {
            struct ast *cond, *then, *els;
        } cond;
        struct {
            const char *name;
            uint32_t slot;
            struct ast *iter, *body;
        } loop;
        struct {
            struct ast *body, *handler;
            const char *name;
            uint32_t slot;
        } try_;
        struct ast *expr;
    } u;
};

struct ast_param {
    const char *name;
    uint32_t start;
    struct ast_type type;
};

/* A function declaration as parsed. */
struct ast_fn {
    const char *name;
    uint32_t start, sig_end, name_start;
    struct ast_param *params;
    uint32_t n_params;
    struct ast_type ret;
    struct ast *body; /* S_BLOCK */
};

struct ast_import {
    const char *name; /* "a.b" */
    const char *last; /* "b" */
    uint32_t start;
};

/* One parsed file. */
struct ast_file {
    const char *ns;
    uint32_t ns_start;
    struct ast_import *imports;
    uint32_t n_imports;
    struct ast_fn **fns;
    uint32_t n_fns;
    struct ast **globals; /* S_LET nodes with global = true */
    uint32_t n_globals;
};

/* A bump allocator for everything the tree holds. */
struct arena_chunk;
struct arena {
    struct arena_chunk *head;
};

void *arena_alloc(struct arena *a, size_t size);
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);

#endif
