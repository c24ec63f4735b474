/* eval_arith: binary and unary operators on values.  Integer arithmetic
 * is checked for overflow; division and remainder truncate toward zero
 * as in C; a zero divisor is a runtime error for ints and floats. */
#include <math.h>
#include <string.h>

#include "agent/eval.h"

static const char *const op_text[] = {"+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!="};

int eval_int_op(struct interp_state *s, const struct ast *n, int op, int64_t a, int64_t b,
                struct value *out)
{
    int64_t r;
    switch (op) {
    case OP_ADD:
        if (__builtin_add_overflow(a, b, &r))
            goto overflow;
        break;
    case OP_SUB:
        if (__builtin_sub_overflow(a, b, &r))
            goto overflow;
        break;
    case OP_MUL:
        if (__builtin_mul_overflow(a, b, &r))
            goto overflow;
        break;
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            return interp_raise(s, n, op == OP_DIV ? "division by zero" : "remainder by zero");
        if (a == INT64_MIN && b == -1)
            goto overflow;
        r = op == OP_DIV ? a / b : a % b;
        break;
    default:
        *out = val_bool(op == OP_LT   ? a < b
                        : op == OP_LE ? a <= b
                        : op == OP_GT ? a > b
                        : op == OP_GE ? a >= b
                        : op == OP_EQ ? a == b
                                      : a != b);
        return 0;
    }
    *out = val_int(r);
    return 0;
overflow:
    return interp_raise(s, n, "integer overflow in %lld %s %lld", (long long)a, op_text[op],
                        (long long)b);
}

static int eval_float_op(struct interp_state *s, const struct ast *n, int op, double a, double b,
                         struct value *out)
{
    switch (op) {
    case OP_ADD:
        *out = val_float(a + b);
        return 0;
    case OP_SUB:
        *out = val_float(a - b);
        return 0;
    case OP_MUL:
        *out = val_float(a * b);
        return 0;
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            return interp_raise(s, n, op == OP_DIV ? "division by zero" : "remainder by zero");
        *out = val_float(op == OP_DIV ? a / b : fmod(a, b));
        return 0;
    default:
        *out = val_bool(op == OP_LT   ? a < b
                        : op == OP_LE ? a <= b
                        : op == OP_GT ? a > b
                        : op == OP_GE ? a >= b
                        : op == OP_EQ ? a == b
                                      : a != b);
        return 0;
    }
}

/* string + string, bytes + bytes, list + list: a new object, built with
 * a safe point per item or per chunk of bytes (an interrupt frees it). */
static int eval_concat(struct interp_state *s, const struct ast *n, struct value a, struct value b,
                       struct value *out)
{
    if (a.tag == V_LIST) {
        struct heap_list *l = heap_list_new(&s->heap, a.u.l->len + b.u.l->len);
        if (l == NULL)
            return interp_oom(s, n);
        *out = val_list(l);
        const struct heap_list *parts[2] = {a.u.l, b.u.l};
        for (int p = 0; p < 2; p++)
            for (uint32_t i = 0; i < parts[p]->len; i++) {
                if (interp_safe_point(s) < 0) {
                    val_release(s, *out);
                    return -1;
                }
                heap_retain(l->items[l->len++] = parts[p]->items[i]);
            }
        return 0;
    }
    size_t len = (size_t)a.u.s->len + b.u.s->len;
    struct heap_str *r =
        a.tag == V_STR ? heap_str_alloc(&s->heap, len) : heap_bytes_new(&s->heap, NULL, len);
    if (r == NULL)
        return interp_oom(s, n);
    out->tag = a.tag;
    out->secret = 0;
    out->u.s = r;
    if (safepoint_copy(s->sp, r->data, a.u.s->data, a.u.s->len) < 0 ||
        safepoint_copy(s->sp, r->data + a.u.s->len, b.u.s->data, b.u.s->len) < 0) {
        val_release(s, *out);
        return -1;
    }
    return 0;
}

static bool eval_is_num(struct value v)
{
    return v.tag == V_INT || v.tag == V_FLOAT;
}

/* Every operator on anything but two ints. */
int eval_binop_slow(struct interp_state *s, const struct ast *n, int op, struct value a,
                    struct value b, struct value *out)
{
    if (op == OP_EQ || op == OP_NE) {
        bool eq = val_equal(s->sp, a, b);
        *out = val_bool(op == OP_EQ ? eq : !eq);
        return 0;
    }
    if (a.secret || b.secret)
        return interp_raise(s, n, "a secret cannot be used with '%s'", op_text[op]);
    if (eval_is_num(a) && eval_is_num(b))
        return eval_float_op(s, n, op, a.tag == V_INT ? (double)a.u.i : a.u.f,
                             b.tag == V_INT ? (double)b.u.i : b.u.f, out);
    if (op >= OP_LT) {
        int c = val_compare(s->sp, a, b);
        if (c == -2)
            return interp_raise(s, n, "cannot compare %s and %s with '%s'", val_type_name(a),
                                val_type_name(b), op_text[op]);
        *out = val_bool(op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0);
        return 0;
    }
    if (op == OP_ADD && a.tag == b.tag && (a.tag == V_STR || a.tag == V_BYTES || a.tag == V_LIST))
        return eval_concat(s, n, a, b, out);
    return interp_raise(s, n, "cannot apply '%s' to %s and %s", op_text[op], val_type_name(a),
                        val_type_name(b));
}

int eval_unary(struct interp_state *s, const struct ast *n, struct value a, struct value *out)
{
    if (a.secret)
        return interp_raise(s, n, "a secret cannot be used with '%s'",
                            n->kind == E_NEG ? "-" : "!");
    if (n->kind == E_NOT) {
        if (a.tag != V_BOOL)
            return interp_raise(s, n, "'!' expects bool, got %s", val_type_name(a));
        *out = val_bool(!a.u.b);
        return 0;
    }
    if (a.tag == V_INT) {
        if (a.u.i == INT64_MIN)
            return interp_raise(s, n, "integer overflow in -(%lld)", (long long)a.u.i);
        *out = val_int(-a.u.i);
        return 0;
    }
    if (a.tag == V_FLOAT) {
        *out = val_float(-a.u.f);
        return 0;
    }
    return interp_raise(s, n, "'-' expects a number, got %s", val_type_name(a));
}
