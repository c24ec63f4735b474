/* parser: tokens -> syntax tree (agent/ast.h), one file at a time. */
#ifndef JETT_AGENT_PARSER_H
#define JETT_AGENT_PARSER_H

#include "agent/ast.h"
#include "agent/interp.h"

/* String constants created while parsing; freed with the program. */
struct parse_consts {
    struct heap_str **items;
    size_t n, cap;
};

/* Expressions and blocks nested deeper than this are a compile error. */
#define PARSE_MAX_DEPTH 200

/* No tree the parser builds has more levels than this (a leaf is 1; each
 * operator, call, index, statement and block adds one): flat chains such
 * as 1 + 1 + ... or f()()... are built in a loop, so PARSE_MAX_DEPTH
 * alone does not bound them.  The checker and the evaluator recurse once
 * per level.  Measured per level: the checker 80 bytes of C stack (240
 * with ASan), the evaluator 128 (870 with ASan, a call chain), so one
 * function's tree fits in INTERP_STACK_MARGIN on the runtime thread and
 * the checker in any main thread stack above 1 MiB.  See jett(1), LIMITS. */
#define PARSE_MAX_HEIGHT 1000

/* Lexes and parses src into *out (allocated in arena a); appends every
 * error to diags and returns how many there were. */
int parse_source(struct interp_source *src, struct arena *a, struct parse_consts *consts,
                 struct interp_diags *diags, struct ast_file *out);
void parse_consts_free(struct parse_consts *c);

#endif
