/* builtins_list: len, push, pop, insert, remove, keys, values, has,
 * contains, slice and a stable merge sort. */
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/eval.h"

int bi_len(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    struct value v = args[0];
    if (v.secret)
        return bi_want(s, call, args, 0, V_LIST);
    if (v.tag == V_STR || v.tag == V_BYTES)
        *out = val_int(v.u.s->len);
    else if (v.tag == V_LIST)
        *out = val_int(v.u.l->len);
    else if (v.tag == V_MAP)
        *out = val_int(v.u.m->len);
    else
        return interp_raise(s, call, "len: cannot take the length of %s", val_type_name(v));
    return 0;
}

int bi_push(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_LIST) < 0)
        return -1;
    heap_retain(args[1]);
    if (heap_list_push(&s->heap, args[0].u.l, args[1]) < 0)
        return interp_oom(s, call);
    *out = VAL_NIL;
    return 0;
}

int bi_pop(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_LIST) < 0)
        return -1;
    struct heap_list *l = args[0].u.l;
    if (l->len == 0)
        return interp_raise(s, call, "pop: the list is empty");
    *out = l->items[--l->len];
    return 0;
}

/* An index argument into a list of `len` items: in [0, len), or in
 * [0, len] when `end_ok` (insert may append).  The index, or -1 once the
 * error (which names len) is raised. */
static int64_t bi_index_arg(struct interp_state *s, const struct ast *call, struct value *args,
                            uint32_t i, uint32_t len, bool end_ok)
{
    if (bi_want(s, call, args, i, V_INT) < 0)
        return -1;
    if (args[i].u.i < 0 || args[i].u.i > (int64_t)len - !end_ok) {
        interp_raise(s, call, "%s: index %lld out of range (length %u)",
                     builtin_table[s->builtin].name, (long long)args[i].u.i, len);
        return -1;
    }
    return args[i].u.i;
}

int bi_insert(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_LIST) < 0)
        return -1;
    int64_t at = bi_index_arg(s, call, args, 1, args[0].u.l->len, true);
    if (at < 0)
        return -1;
    heap_retain(args[2]);
    if (heap_list_insert(&s->heap, args[0].u.l, (uint32_t)at, args[2]) < 0)
        return interp_oom(s, call);
    *out = VAL_NIL;
    return 0;
}

int bi_remove(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)n;
    if (args[0].tag == V_MAP && !args[0].secret) {
        if (bi_want(s, call, args, 1, V_STR) < 0)
            return -1;
        if (heap_map_remove(&s->heap, args[0].u.m, args[1].u.s, out) < 0)
            return interp_raise_quoted(s, call, "remove: missing map key \"", args[1].u.s->data,
                                       args[1].u.s->len, "\"");
        return 0;
    }
    if (bi_want(s, call, args, 0, V_LIST) < 0)
        return -1;
    struct heap_list *l = args[0].u.l;
    if (l->len == 0)
        return interp_raise(s, call, "remove: the list is empty");
    int64_t at = bi_index_arg(s, call, args, 1, l->len, false);
    if (at < 0)
        return -1;
    *out = l->items[at];
    safepoint_move_all(s->sp, l->items + at, l->items + at + 1,
                       sizeof *l->items * (l->len - (uint32_t)at - 1));
    l->len--;
    return 0;
}

/* keys(map) and values(map): a new list of exactly len entries. */
static int bi_map_list(struct interp_state *s, struct value *args, const struct ast *call,
                       bool keys, struct value *out)
{
    if (bi_want(s, call, args, 0, V_MAP) < 0)
        return -1;
    struct heap_map *m = args[0].u.m;
    struct heap_list *l = heap_list_new(&s->heap, m->len);
    if (l == NULL)
        return interp_oom(s, call);
    *out = val_list(l);
    for (uint32_t i = 0; i < m->used; i++) {
        if (interp_safe_point(s) < 0) {
            val_release(s, *out);
            return -1;
        }
        if (m->entries[i].key == NULL)
            continue;
        struct value v = keys ? val_str(m->entries[i].key) : m->entries[i].val;
        heap_retain(v);
        l->items[l->len++] = v;
    }
    return 0;
}

int bi_keys(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    return bi_map_list(s, args, call, true, out);
}

int bi_values(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)n;
    return bi_map_list(s, args, call, false, out);
}

int bi_has(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_MAP) < 0 || bi_want(s, call, args, 1, V_STR) < 0)
        return -1;
    *out = val_bool(heap_map_get(s->sp, args[0].u.m, args[1].u.s) != NULL);
    return 0;
}

int bi_contains(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
                struct value *out)
{
    (void)n;
    if (args[0].tag == V_LIST && !args[0].secret) {
        bool found = false;
        for (uint32_t i = 0; i < args[0].u.l->len && !found; i++) {
            if (interp_safe_point(s) < 0)
                return -1;
            found = val_equal(s->sp, args[0].u.l->items[i], args[1]);
        }
        *out = val_bool(found);
        return 0;
    }
    if (bi_want(s, call, args, 0, V_STR) < 0 || bi_want(s, call, args, 1, V_STR) < 0)
        return -1;
    int stopped;
    const char *hit = safepoint_search(s->sp, args[0].u.s->data, args[0].u.s->len,
                                       args[1].u.s->data, args[1].u.s->len, &stopped);
    *out = val_bool(hit != NULL);
    return stopped ? -1 : 0;
}

/* A string offset must not split a UTF-8 character. */
static bool bi_char_boundary(const struct heap_str *str, int64_t at)
{
    return at >= str->len || ((unsigned char)str->data[at] & 0xc0) != 0x80;
}

/* Reads [start, end) bounds: 0 <= start <= end <= len. */
int bi_bounds(struct interp_state *s, const struct ast *call, struct value *args, uint32_t n,
              int64_t len, int64_t *start, int64_t *end);
int bi_bounds(struct interp_state *s, const struct ast *call, struct value *args, uint32_t n,
              int64_t len, int64_t *start, int64_t *end)
{
    if (bi_want(s, call, args, 1, V_INT) < 0 || (n == 3 && bi_want(s, call, args, 2, V_INT) < 0))
        return -1;
    *start = args[1].u.i;
    *end = n == 3 ? args[2].u.i : len;
    if (*start < 0 || *end < *start || *end > len)
        return interp_raise(s, call, "%s: range %lld..%lld out of bounds (length %lld)",
                            builtin_table[s->builtin].name, (long long)*start, (long long)*end,
                            (long long)len);
    if ((args[0].tag == V_STR) &&
        (!bi_char_boundary(args[0].u.s, *start) || !bi_char_boundary(args[0].u.s, *end)))
        return interp_raise(s, call, "%s: range %lld..%lld splits a UTF-8 character",
                            builtin_table[s->builtin].name, (long long)*start, (long long)*end);
    return 0;
}

int bi_slice(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    int64_t a, b;
    struct value v = args[0];
    if (v.tag == V_STR || v.tag == V_BYTES) {
        if (v.secret || bi_bounds(s, call, args, n, v.u.s->len, &a, &b) < 0)
            return v.secret ? bi_want(s, call, args, 0, V_STR) : -1;
        struct heap_str *r = v.tag == V_STR ? heap_str_alloc(&s->heap, (size_t)(b - a))
                                            : heap_bytes_new(&s->heap, NULL, (size_t)(b - a));
        if (r == NULL)
            return interp_oom(s, call);
        *out = (struct value){.tag = v.tag};
        out->u.s = r;
        if (safepoint_copy(s->sp, r->data, v.u.s->data + a, (size_t)(b - a)) < 0) {
            val_release(s, *out);
            return -1;
        }
        return 0;
    }
    if (bi_want(s, call, args, 0, V_LIST) < 0 ||
        bi_bounds(s, call, args, n, v.u.l->len, &a, &b) < 0)
        return -1;
    struct heap_list *l = heap_list_new(&s->heap, (uint32_t)(b - a));
    if (l == NULL)
        return interp_oom(s, call);
    *out = val_list(l);
    for (int64_t i = a; i < b; i++) {
        if (interp_safe_point(s) < 0) {
            val_release(s, *out);
            return -1;
        }
        heap_retain(l->items[l->len++] = v.u.l->items[i]);
    }
    return 0;
}

struct sort_ctx {
    struct interp_state *s;
    const struct ast *call;
    struct value cmp; /* V_NIL: natural order */
    uint32_t builtin;
};

/* -1 error or interrupt; 1 when b must come before a (b < a); 0
 * otherwise.  One safe point per comparison. */
static int sort_before(struct sort_ctx *c, struct value a, struct value b)
{
    if (interp_safe_point(c->s) < 0)
        return -1;
    if (c->cmp.tag == V_NIL && a.tag == V_INT && b.tag == V_INT)
        return b.u.i < a.u.i; /* the common case, without a call */
    if (c->cmp.tag == V_NIL) {
        int r = val_compare(c->s->sp, b, a);
        if (r == -2)
            return interp_raise(c->s, c->call, "sort: cannot compare %s and %s", val_type_name(a),
                                val_type_name(b));
        return r < 0;
    }
    struct value args[2] = {b, a}, r;
    if (eval_call_value(c->s, c->cmp, args, 2, c->call, &r) < 0)
        return -1;
    int res = r.tag == V_BOOL ? r.u.b : r.tag == V_INT ? r.u.i < 0 : -2;
    val_release(c->s, r);
    if (res == -2) {
        c->s->builtin = c->builtin;
        return interp_raise(c->s, c->call, "sort: the compare function must return bool or int");
    }
    return res;
}

/* Stable merge of runs [lo, mid) and [mid, hi) through tmp. */
static int sort_merge(struct sort_ctx *c, struct value *v, struct value *tmp, uint32_t lo,
                      uint32_t mid, uint32_t hi)
{
    uint32_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        int before = sort_before(c, v[i], v[j]);
        if (before < 0)
            return -1;
        tmp[k++] = before ? v[j++] : v[i++];
    }
    if ((size_t)(hi - lo) * sizeof *v <= SAFEPOINT_CHUNK) { /* most merges: no call */
        while (i < mid)
            tmp[k++] = v[i++];
        while (j < hi)
            tmp[k++] = v[j++];
        memcpy(v + lo, tmp + lo, sizeof *v * (hi - lo));
        return 0;
    }
    size_t rest = mid - i;
    safepoint_copy_all(c->s->sp, tmp + k, v + i, sizeof *v * rest);
    safepoint_copy_all(c->s->sp, tmp + k + rest, v + j, sizeof *v * (hi - j));
    safepoint_copy_all(c->s->sp, v + lo, tmp + lo, sizeof *v * (hi - lo));
    return 0;
}

/* Bottom-up merge sort after insertion-sorting runs of 8. */
static int sort_values(struct sort_ctx *c, struct value *v, struct value *tmp, uint32_t n)
{
    for (uint32_t lo = 0; lo < n; lo += 8) {
        uint32_t hi = lo + 8 < n ? lo + 8 : n;
        for (uint32_t i = lo + 1; i < hi; i++)
            for (uint32_t j = i; j > lo; j--) {
                int before = sort_before(c, v[j - 1], v[j]);
                if (before < 0)
                    return -1;
                if (!before)
                    break;
                struct value t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
    }
    for (uint32_t w = 8; w < n; w *= 2)
        for (uint32_t lo = 0; lo + w < n; lo += 2 * w)
            if (sort_merge(c, v, tmp, lo, lo + w, lo + 2 * w < n ? lo + 2 * w : n) < 0)
                return -1;
    return 0;
}

/* sort(list [, cmp]): sorts in place (stable) and returns the list.
 * cmp(a, b) returns true (or a negative int) when a goes before b. */
int bi_sort(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    if (bi_want(s, call, args, 0, V_LIST) < 0)
        return -1;
    struct sort_ctx c = {s, call, n == 2 ? args[1] : VAL_NIL, s->builtin};
    if (n == 2 && args[1].tag != V_FUNC && args[1].tag != V_BUILTIN)
        return interp_raise(s, call, "sort: argument 2 must be fn, got %s", val_type_name(args[1]));
    struct heap_list *l = args[0].u.l;
    uint32_t len = l->len;
    struct value *copy = malloc(sizeof *copy * (len ? 2 * len : 1));
    if (copy == NULL)
        return interp_oom(s, call);
    safepoint_copy_all(s->sp, copy, l->items, sizeof *copy * len);
    uint32_t held = 0; /* the compare function may change the list: hold the items */
    int r = 0;
    for (; held < len && r == 0; held++) {
        r = interp_safe_point(s);
        heap_retain(copy[held]);
    }
    if (r == 0)
        r = sort_values(&c, copy, copy + len, len);
    if (r == 0 && l->len == len) {
        for (uint32_t i = 0; i < len; i++) {
            interp_safe_point(s);
            struct value old = l->items[i];
            l->items[i] = copy[i];
            copy[i] = old;
        }
    }
    for (uint32_t i = 0; i < held; i++) {
        interp_safe_point(s);
        val_release(s, copy[i]);
    }
    free(copy);
    if (r < 0)
        return -1;
    *out = args[0];
    heap_retain(*out);
    return 0;
}
