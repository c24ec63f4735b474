/* eval: expressions.  Every function returns 0 with an owned result in
 * *out, or -1 with the error recorded in the state. */
#include <string.h>

#include "agent/eval.h"

/* A string of one UTF-8 character starting at byte i. */
static int eval_index_str(struct interp_state *s, const struct ast *n, struct heap_str *str,
                          int64_t i, struct value *out)
{
    if (i < 0 || i >= str->len)
        return interp_raise(s, n, "index %lld out of range (length %u)", (long long)i, str->len);
    unsigned char c = (unsigned char)str->data[i];
    if ((c & 0xc0) == 0x80)
        return interp_raise(s, n, "index %lld is inside a UTF-8 character", (long long)i);
    uint32_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (i + len > str->len)
        len = (uint32_t)(str->len - i);
    struct heap_str *r = heap_str_new(&s->heap, str->data + i, len);
    if (r == NULL)
        return interp_oom(s, n);
    *out = val_str(r);
    return 0;
}

int eval_index_get(struct interp_state *s, const struct ast *n, struct value c, struct value i,
                   struct value *out)
{
    if (c.tag == V_MAP) {
        if (i.tag != V_STR)
            return interp_raise(s, n, "map keys are strings, got %s", val_type_name(i));
        struct value *v = heap_map_get(s->sp, c.u.m, i.u.s);
        if (v == NULL && i.secret)
            return interp_raise(s, n, "missing map key \"<secret>\"");
        if (v == NULL)
            return interp_raise_quoted(s, n, "missing map key \"", i.u.s->data, i.u.s->len, "\"");
        *out = *v;
        heap_retain(*out);
    } else if (i.tag != V_INT) {
        return interp_raise(s, n, "index must be int, got %s", val_type_name(i));
    } else if (c.tag == V_LIST) {
        if (i.u.i < 0 || i.u.i >= c.u.l->len)
            return interp_raise(s, n, "index %lld out of range (length %u)", (long long)i.u.i,
                                c.u.l->len);
        *out = c.u.l->items[i.u.i];
        heap_retain(*out);
    } else if (c.tag == V_BYTES) {
        if (i.u.i < 0 || i.u.i >= c.u.s->len)
            return interp_raise(s, n, "index %lld out of range (length %u)", (long long)i.u.i,
                                c.u.s->len);
        *out = val_int((uint8_t)c.u.s->data[i.u.i]);
    } else if (c.tag == V_STR) {
        if (eval_index_str(s, n, c.u.s, i.u.i, out) < 0)
            return -1;
    } else {
        return interp_raise(s, n, "cannot index %s", val_type_name(c));
    }
    out->secret |= c.secret;
    return 0;
}

int eval_index_set(struct interp_state *s, const struct ast *n, struct value c, struct value i,
                   struct value v)
{
    if (c.tag == V_MAP && i.tag == V_STR && i.secret) {
        val_release(s, v);
        return interp_raise(s, n, "a secret cannot be a map key");
    }
    if (c.tag == V_MAP && i.tag == V_STR) {
        if (heap_map_set(&s->heap, c.u.m, i.u.s, v) < 0)
            return interp_oom(s, n);
        return 0;
    }
    if (c.tag == V_LIST && i.tag == V_INT) {
        if (i.u.i < 0 || i.u.i >= c.u.l->len) {
            val_release(s, v);
            return interp_raise(s, n, "index %lld out of range (length %u)", (long long)i.u.i,
                                c.u.l->len);
        }
        struct value old = c.u.l->items[i.u.i];
        c.u.l->items[i.u.i] = v;
        val_release(s, old);
        return 0;
    }
    val_release(s, v);
    if (c.tag == V_MAP)
        return interp_raise(s, n, "map keys are strings, got %s", val_type_name(i));
    if (c.tag == V_LIST)
        return interp_raise(s, n, "index must be int, got %s", val_type_name(i));
    return interp_raise(s, n, "cannot assign into %s", val_type_name(c));
}

static int eval_list(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct heap_list *l = heap_list_new(&s->heap, n->u.list.n);
    if (l == NULL)
        return interp_oom(s, n);
    for (uint32_t i = 0; i < n->u.list.n; i++) {
        if (eval_expr(s, n->u.list.items[i], &l->items[i]) < 0) {
            val_release(s, val_list(l));
            return -1;
        }
        l->len++;
    }
    *out = val_list(l);
    return 0;
}

static int eval_map(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct heap_map *m = heap_map_new(&s->heap, n->u.list.n / 2);
    if (m == NULL)
        return interp_oom(s, n);
    *out = val_map(m);
    for (uint32_t i = 0; i < n->u.list.n; i += 2) {
        struct value k, v;
        if (eval_expr(s, n->u.list.items[i], &k) < 0)
            goto fail;
        if (k.tag != V_STR || k.secret) {
            interp_raise(s, n->u.list.items[i],
                         k.secret ? "a secret cannot be a map key" : "map keys are strings, got %s",
                         val_type_name(k));
            val_release(s, k);
            goto fail;
        }
        int r = eval_expr(s, n->u.list.items[i + 1], &v);
        if (r == 0 && heap_map_set(&s->heap, m, k.u.s, v) < 0)
            r = interp_oom(s, n);
        val_release(s, k);
        if (r < 0)
            goto fail;
    }
    return 0;
fail:
    val_release(s, *out);
    return -1;
}

static int eval_logic(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct value a;
    if (eval_expr(s, n->u.bin.a, &a) < 0)
        return -1;
    if (a.tag != V_BOOL || a.secret) {
        val_release(s, a);
        return interp_raise(s, n, "'%s' expects bool operands, got %s",
                            n->kind == E_AND ? "&&" : "||", val_type_name(a));
    }
    if (a.u.b == (n->kind == E_OR)) {
        *out = a;
        return 0;
    }
    if (eval_expr(s, n->u.bin.b, out) < 0)
        return -1;
    if (out->tag != V_BOOL || out->secret) {
        val_release(s, *out);
        return interp_raise(s, n, "'%s' expects bool operands, got %s",
                            n->kind == E_AND ? "&&" : "||", val_type_name(*out));
    }
    return 0;
}

static int eval_binary(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct value a, b;
    if (eval_fast(s, n->u.bin.a, &a) < 0)
        return -1;
    if (eval_fast(s, n->u.bin.b, &b) < 0) {
        val_release(s, a);
        return -1;
    }
    if (a.tag == V_INT && b.tag == V_INT && !(a.secret | b.secret))
        return eval_int_op(s, n, n->op, a.u.i, b.u.i, out);
    int r = eval_binop_slow(s, n, n->op, a, b, out);
    val_release(s, a);
    val_release(s, b);
    return r;
}

static int eval_index(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct value c, i;
    if (eval_expr(s, n->u.bin.a, &c) < 0)
        return -1;
    if (eval_expr(s, n->u.bin.b, &i) < 0) {
        val_release(s, c);
        return -1;
    }
    int r = eval_index_get(s, n, c, i, out);
    val_release(s, c);
    val_release(s, i);
    return r;
}

static int eval_other(struct interp_state *s, const struct ast *n, struct value *out)
{
    struct value a;
    switch (n->kind) {
    case E_LIST:
        return eval_list(s, n, out);
    case E_MAP:
        return eval_map(s, n, out);
    case E_AND:
    case E_OR:
        return eval_logic(s, n, out);
    case E_NEG:
    case E_NOT:
        if (eval_expr(s, n->u.bin.a, &a) < 0)
            return -1;
        int r = eval_unary(s, n, a, out);
        val_release(s, a);
        return r;
    case E_FUNC:
    case E_BUILTIN:
        *out = (struct value){.tag = n->kind == E_FUNC ? V_FUNC : V_BUILTIN};
        out->u.fn = n->u.name.slot;
        return 0;
    default:
        return interp_raise(s, n, "internal error: unexpected node %d", n->kind);
    }
}

int eval_expr(struct interp_state *s, const struct ast *n, struct value *out)
{
    switch (n->kind) {
    case E_INT:
        *out = val_int(n->u.i);
        return 0;
    case E_LOCAL:
        *out = s->slots[n->u.name.slot];
        heap_retain(*out);
        return 0;
    case E_BIN:
        return eval_binary(s, n, out);
    case E_CALL:
        return eval_call(s, n, out);
    case E_INDEX:
        return eval_index(s, n, out);
    case E_GLOBAL:
        *out = s->globals[n->u.name.slot];
        heap_retain(*out);
        return 0;
    case E_FLOAT:
        *out = val_float(n->u.f);
        return 0;
    case E_STR:
    case E_BYTES:
        *out = (struct value){.tag = n->kind == E_STR ? V_STR : V_BYTES};
        out->u.s = n->u.str; /* a constant: never counted */
        return 0;
    case E_TRUE:
    case E_FALSE:
        *out = val_bool(n->kind == E_TRUE);
        return 0;
    case E_NIL:
        *out = VAL_NIL;
        return 0;
    default:
        return eval_other(s, n, out);
    }
}
