/* eval: internal entry points shared by the evaluator's files. */
#ifndef JETT_AGENT_EVAL_H
#define JETT_AGENT_EVAL_H

#include "agent/interp-internal.h"

int eval_int_op(struct interp_state *s, const struct ast *n, int op, int64_t a, int64_t b,
                struct value *out);
int eval_binop_slow(struct interp_state *s, const struct ast *n, int op, struct value a,
                    struct value b, struct value *out);
int eval_unary(struct interp_state *s, const struct ast *n, struct value a, struct value *out);
/* c[i] for a list, string, bytes or map (borrowed operands). */
int eval_index_get(struct interp_state *s, const struct ast *n, struct value c, struct value i,
                   struct value *out);
/* c[i] = v; v is owned (consumed even on error). */
int eval_index_set(struct interp_state *s, const struct ast *n, struct value c, struct value i,
                   struct value v);
int eval_call(struct interp_state *s, const struct ast *n, struct value *out);

#endif
