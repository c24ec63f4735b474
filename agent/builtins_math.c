/* builtins_math: abs, min and max (of arguments or of one list). */
#include "agent/builtins.h"

int bi_abs(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    struct value v = args[0];
    if (v.tag == V_FLOAT && !v.secret) {
        *out = val_float(v.u.f < 0 ? -v.u.f : v.u.f);
        return 0;
    }
    if (bi_want(s, call, args, 0, V_INT) < 0)
        return -1;
    if (v.u.i == INT64_MIN)
        return interp_raise(s, call, "integer overflow in abs(%lld)", (long long)v.u.i);
    *out = val_int(v.u.i < 0 ? -v.u.i : v.u.i);
    return 0;
}

/* min/max over args, or over the items of a single list argument. */
static int bi_extreme(struct interp_state *s, struct value *args, uint32_t n,
                      const struct ast *call, int sign, struct value *out)
{
    const char *name = builtin_table[s->builtin].name;
    if (n == 1 && args[0].tag == V_LIST && !args[0].secret) {
        if (args[0].u.l->len == 0)
            return interp_raise(s, call, "%s: the list is empty", name);
        n = args[0].u.l->len;
        args = args[0].u.l->items;
    }
    struct value best = args[0];
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].secret)
            return interp_raise(s, call, "%s: a secret cannot be compared", name);
        if (interp_safe_point(s) < 0)
            return -1;
        int c = val_compare(s->sp, args[i], best);
        if (c == -2)
            return interp_raise(s, call, "%s: cannot compare %s and %s", name,
                                val_type_name(args[i]), val_type_name(best));
        if (c == sign)
            best = args[i];
    }
    *out = best;
    heap_retain(best);
    return 0;
}

int bi_min(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    return bi_extreme(s, args, n, call, -1, out);
}

int bi_max(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    return bi_extreme(s, args, n, call, 1, out);
}
