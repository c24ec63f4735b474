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

/* Lexes and parses src into *out (allocated in arena a); appends every
 * error to diags and returns how many there were. */
int parse_source(struct interp_source *src, struct arena *a, struct parse_consts *consts,
                 struct interp_diags *diags, struct ast_file *out);
void parse_consts_free(struct parse_consts *c);

#endif
