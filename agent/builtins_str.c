/* builtins_str: conversions and string functions.  Offsets and lengths
 * are in bytes; an offset that would split a UTF-8 character is an
 * error; upper/lower change ASCII letters only. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/numparse.h"

int bi_bounds(struct interp_state *s, const struct ast *call, struct value *args, uint32_t n,
              int64_t len, int64_t *start, int64_t *end);

static int bi_new_str(struct interp_state *s, const struct ast *call, const char *data, size_t len,
                      struct value *out)
{
    struct heap_str *r = heap_str_new(&s->heap, data, len);
    if (r == NULL)
        return interp_oom(s, call);
    *out = val_str(r);
    return 0;
}

int bi_str(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    if (args[0].tag == V_STR && !args[0].secret) {
        *out = args[0];
        heap_retain(*out);
        return 0;
    }
    struct strbuf b = {0};
    val_format(s->prog, s->sp, args[0], false, &b);
    int r = bi_new_str(s, call, b.data ? b.data : "", b.len, out);
    sb_free(&b);
    return r;
}

/* int(s) for a string: optional sign and decimal digits, nothing else. */
static int bi_parse_int(struct interp_state *s, const struct ast *call, const struct heap_str *str,
                        struct value *out)
{
    int64_t v;
    enum numparse_status st = numparse_int(s->sp, str->data, str->len, &v);
    if (st == NUMPARSE_STOPPED)
        return -1;
    if (st == NUMPARSE_BAD)
        return interp_raise_quoted(s, call, "int: cannot convert \"", str->data, str->len,
                                   "\" to int");
    *out = val_int(v);
    return 0;
}

int bi_int(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    struct value v = args[0];
    if (v.secret)
        return bi_want(s, call, args, 0, V_INT);
    switch (v.tag) {
    case V_INT:
        *out = v;
        return 0;
    case V_BOOL:
        *out = val_int(v.u.b);
        return 0;
    case V_FLOAT:
        if (!(v.u.f > -9223372036854775808.0 - 1 && v.u.f < 9223372036854775808.0))
            return interp_raise(s, call, "int: %g does not fit in an int", v.u.f);
        *out = val_int((int64_t)v.u.f);
        return 0;
    case V_STR:
        return bi_parse_int(s, call, v.u.s, out);
    default:
        return interp_raise(s, call, "int: cannot convert %s to int", val_type_name(v));
    }
}

int bi_float(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    struct value v = args[0];
    if (v.secret)
        return bi_want(s, call, args, 0, V_FLOAT);
    if (v.tag == V_FLOAT) {
        *out = v;
        return 0;
    }
    if (v.tag == V_INT) {
        *out = val_float((double)v.u.i);
        return 0;
    }
    if (v.tag == V_STR) {
        double f;
        enum numparse_status st = numparse_float(s->sp, v.u.s->data, v.u.s->len, &f);
        if (st == NUMPARSE_STOPPED)
            return -1;
        if (st == NUMPARSE_BAD)
            return interp_raise_quoted(s, call, "float: cannot convert \"", v.u.s->data, v.u.s->len,
                                       "\" to float");
        *out = val_float(f);
        return 0;
    }
    return interp_raise(s, call, "float: cannot convert %s to float", val_type_name(v));
}

/* substr(s, start [, length]) */
int bi_substr(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    if (bi_want(s, call, args, 0, V_STR) < 0 || bi_want(s, call, args, 1, V_INT) < 0 ||
        (n == 3 && bi_want(s, call, args, 2, V_INT) < 0))
        return -1;
    struct value b[3] = {args[0], args[1], args[1]};
    if (n == 3 && (args[2].u.i < 0 || __builtin_add_overflow(args[1].u.i, args[2].u.i, &b[2].u.i)))
        return interp_raise(s, call, "substr: negative or too large length %lld",
                            (long long)args[2].u.i);
    int64_t a, e;
    if (bi_bounds(s, call, b, n, args[0].u.s->len, &a, &e) < 0)
        return -1;
    return bi_new_str(s, call, args[0].u.s->data + a, (size_t)(e - a), out);
}

int bi_split(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_STR) < 0 || bi_want(s, call, args, 1, V_STR) < 0)
        return -1;
    const struct heap_str *str = args[0].u.s, *sep = args[1].u.s;
    if (sep->len == 0)
        return interp_raise(s, call, "split: the separator is empty");
    struct heap_list *l = heap_list_new(&s->heap, 0);
    if (l == NULL)
        return interp_oom(s, call);
    *out = val_list(l);
    const char *p = str->data, *end = str->data + str->len;
    for (;;) {
        int stopped;
        const char *hit =
            safepoint_search(s->sp, p, (size_t)(end - p), sep->data, sep->len, &stopped);
        if (stopped || interp_safe_point(s) < 0) {
            val_release(s, *out);
            return -1;
        }
        const char *stop = hit ? hit : end;
        struct heap_str *part = heap_str_new(&s->heap, p, (size_t)(stop - p));
        if (part == NULL || heap_list_push(&s->heap, l, part ? val_str(part) : VAL_NIL) < 0) {
            val_release(s, *out);
            return interp_oom(s, call);
        }
        if (hit == NULL)
            return 0;
        p = hit + sep->len;
    }
}

int bi_join(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    if (n == 1)
        return bi_join_task(s, args, call, out);
    if (bi_want(s, call, args, 0, V_LIST) < 0 || bi_want(s, call, args, 1, V_STR) < 0)
        return -1;
    const struct heap_list *l = args[0].u.l;
    size_t total = 0;
    for (uint32_t i = 0; i < l->len; i++) {
        if (interp_safe_point(s) < 0)
            return -1;
        if (l->items[i].tag != V_STR || l->items[i].secret)
            return interp_raise(s, call, "join: item %u must be string, got %s%s", i,
                                l->items[i].secret ? "secret " : "", val_type_name(l->items[i]));
        total += l->items[i].u.s->len + (i ? args[1].u.s->len : 0);
    }
    struct heap_str *r = heap_str_alloc(&s->heap, total);
    if (r == NULL)
        return interp_oom(s, call);
    *out = val_str(r);
    char *w = r->data;
    const struct heap_str *sep = args[1].u.s;
    for (uint32_t i = 0; i < l->len; i++) {
        if (i && safepoint_copy(s->sp, w, sep->data, sep->len) < 0) {
            val_release(s, *out);
            return -1;
        }
        w += i ? sep->len : 0;
        if (interp_safe_point(s) < 0 ||
            safepoint_copy(s->sp, w, l->items[i].u.s->data, l->items[i].u.s->len) < 0) {
            val_release(s, *out);
            return -1;
        }
        w += l->items[i].u.s->len;
    }
    return 0;
}

int bi_find(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_STR) < 0 || bi_want(s, call, args, 1, V_STR) < 0)
        return -1;
    int stopped;
    const char *hit = safepoint_search(s->sp, args[0].u.s->data, args[0].u.s->len,
                                       args[1].u.s->data, args[1].u.s->len, &stopped);
    *out = val_int(hit ? hit - args[0].u.s->data : -1);
    return stopped ? -1 : 0;
}

/* Converts into a new string in one pass, a safe point per chunk. */
static int bi_case(struct interp_state *s, struct value *args, const struct ast *call, bool up,
                   struct value *out)
{
    if (bi_want(s, call, args, 0, V_STR) < 0)
        return -1;
    const struct heap_str *in = args[0].u.s;
    struct heap_str *r = heap_str_alloc(&s->heap, in->len);
    if (r == NULL)
        return interp_oom(s, call);
    char lo = up ? 'a' : 'A', hi = up ? 'z' : 'Z';
    for (uint32_t i = 0; i < in->len; i++) {
        if ((i & (SAFEPOINT_CHUNK - 1)) == SAFEPOINT_CHUNK - 1 && interp_safe_point(s) < 0) {
            val_release(s, val_str(r));
            return -1;
        }
        char c = in->data[i];
        r->data[i] = c >= lo && c <= hi ? (char)(up ? c - 32 : c + 32) : c;
    }
    *out = val_str(r);
    return 0;
}

int bi_upper(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    return bi_case(s, args, call, true, out);
}

int bi_lower(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    return bi_case(s, args, call, false, out);
}

int bi_repeat(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_STR) < 0 || bi_want(s, call, args, 1, V_INT) < 0)
        return -1;
    int64_t times = args[1].u.i, len = args[0].u.s->len;
    if (times < 0 || (len > 0 && times > (int64_t)(UINT32_MAX / 2) / len))
        return interp_raise(s, call, "repeat: count %lld is negative or too large",
                            (long long)times);
    struct heap_str *r = heap_str_alloc(&s->heap, (size_t)(len * times));
    if (r == NULL)
        return interp_oom(s, call);
    *out = val_str(r);
    /* The first copy, then doubling copies of what is already there (a
     * whole number of copies each, at most a chunk), a safe point after
     * each. */
    size_t total = (size_t)(len * times), filled = total ? (size_t)len : 0;
    if (safepoint_copy(s->sp, r->data, args[0].u.s->data, filled) < 0)
        goto stop;
    while (filled < total) {
        size_t step = filled < total - filled ? filled : total - filled;
        if (step > SAFEPOINT_CHUNK)
            step = SAFEPOINT_CHUNK < (size_t)len ? (size_t)len : SAFEPOINT_CHUNK / len * len;
        if (safepoint_copy(s->sp, r->data + filled, r->data, step) < 0 || interp_safe_point(s) < 0)
            goto stop;
        filled += step;
    }
    return 0;
stop:
    val_release(s, *out);
    return -1;
}
