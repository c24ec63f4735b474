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

/* eval_expr with the two commonest leaves (a local, an int literal)
 * inlined: operands of arithmetic, arguments, conditions. */
static inline int eval_fast(struct interp_state *s, const struct ast *n, struct value *out)
{
    if (n->kind == E_LOCAL) {
        *out = s->slots[n->u.name.slot];
        heap_retain(*out);
        return 0;
    }
    if (n->kind == E_INT) {
        *out = val_int(n->u.i);
        return 0;
    }
    return eval_expr(s, n, out);
}

#endif
