/* toon: validation of a tree, everything its input can get wrong. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/toon-internal.h"
#include "proto/util/utf8.h"

/* ------------------------------------------------------------------ */
/* Validation: everything the input can get wrong, before any output.  */

struct toon_check {
    char *err;
    size_t errlen;
};

static int toon_fail(struct toon_check *c, const char *fmt, ...)
{
    if (c->err != NULL && c->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int toon_check_utf8(struct toon_check *c, const char *s, size_t len, const char *what)
{
    size_t at;
    if (!utf8_valid(s, len, &at))
        return toon_fail(c, "toon: invalid UTF-8 in %s at byte %zu", what, at);
    return 0;
}

static int toon_member_cmp(const void *a, const void *b)
{
    const struct toon_member *x = *(const struct toon_member *const *)a;
    const struct toon_member *y = *(const struct toon_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int r = memcmp(x->key, y->key, n);
    if (r != 0)
        return r;
    return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* Reports a key that appears twice in `obj` (sorting a pointer copy when
 * the object is large, so the check stays O(n log n)). */
static int toon_check_duplicates(struct toon_check *c, const struct toon_value *obj)
{
    size_t n = obj->as.obj.len;
    if (n < 2)
        return 0;
    const struct toon_member **p = malloc(n * sizeof *p);
    if (p == NULL)
        return toon_fail(c, "toon: out of memory");
    for (size_t i = 0; i < n; i++)
        p[i] = &obj->as.obj.members[i];
    qsort(p, n, sizeof *p, toon_member_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (toon_member_cmp(&p[i - 1], &p[i]) == 0)
            rc = toon_fail(c, "toon: duplicate key \"%.64s\"", p[i]->key);
    free(p);
    return rc;
}

static int toon_validate(struct toon_check *c, const struct toon_value *v, int depth);

static int toon_validate_object(struct toon_check *c, const struct toon_value *v, int depth)
{
    for (size_t i = 0; i < v->as.obj.len; i++) {
        const struct toon_member *m = &v->as.obj.members[i];
        if (toon_check_utf8(c, m->key, m->key_len, "a key") < 0 ||
            toon_validate(c, m->value, depth + 1) < 0)
            return -1;
    }
    return toon_check_duplicates(c, v);
}

/* Checks a whole tree: node failures, UTF-8, duplicate keys, depth. */
static int toon_validate(struct toon_check *c, const struct toon_value *v, int depth)
{
    if (v == NULL)
        return toon_fail(c, "toon: no value");
    if (v->failed)
        return toon_fail(c, "toon: a node failed while the tree was built (out of memory, "
                            "a NULL child or a misuse)");
    if (depth > TOON_MAX_DEPTH)
        return toon_fail(c, "toon: nesting deeper than %d levels", TOON_MAX_DEPTH);
    switch (v->kind) {
    case TOON_STRING:
        return toon_check_utf8(c, v->as.str.ptr, v->as.str.len, "a string");
    case TOON_ARRAY:
        for (size_t i = 0; i < v->as.arr.len; i++) {
            /* a list item would write its rows as objects, one by one */
            if (v->as.arr.items[i] != NULL && v->as.arr.items[i]->kind == TOON_TABLE)
                return toon_fail(c, "toon: a table cannot be an item of an array");
            if (toon_validate(c, v->as.arr.items[i], depth + 1) < 0)
                return -1;
        }
        return 0;
    case TOON_OBJECT:
        return toon_validate_object(c, v, depth);
    default:
        return 0;
    }
}

int toon_validate_tree(const struct toon_value *v, char *err, size_t errlen)
{
    struct toon_check c = {err, errlen};
    return toon_validate(&c, v, 0);
}
