/* toon: building the value tree (see toon.h for ownership). */
#include <stdlib.h>
#include <string.h>

#include "proto/toon-internal.h"

/* ------------------------------------------------------------------ */
/* Construction                                                        */

static struct toon_value *toon_new(enum toon_kind kind)
{
    struct toon_value *v = calloc(1, sizeof *v);
    if (v != NULL)
        v->kind = kind;
    return v;
}

struct toon_value *toon_object(void)
{
    return toon_new(TOON_OBJECT);
}

struct toon_value *toon_array(void)
{
    return toon_new(TOON_ARRAY);
}

struct toon_value *toon_null(void)
{
    return toon_new(TOON_NULL);
}

struct toon_value *toon_bool(bool b)
{
    struct toon_value *v = toon_new(TOON_BOOL);
    if (v != NULL)
        v->as.b = b;
    return v;
}

struct toon_value *toon_int(int64_t i)
{
    struct toon_value *v = toon_new(TOON_INT);
    if (v != NULL)
        v->as.i = i;
    return v;
}

struct toon_value *toon_uint(uint64_t u)
{
    struct toon_value *v = toon_new(TOON_UINT);
    if (v != NULL)
        v->as.u = u;
    return v;
}

struct toon_value *toon_double(double d)
{
    struct toon_value *v = toon_new(TOON_DOUBLE);
    if (v != NULL)
        v->as.d = d;
    return v;
}

struct toon_value *toon_string(const char *s, size_t len)
{
    struct toon_value *v = toon_new(TOON_STRING);
    if (v == NULL)
        return NULL;
    v->as.str.ptr = malloc(len + 1);
    if (v->as.str.ptr == NULL) {
        free(v);
        return NULL;
    }
    if (len > 0)
        memcpy(v->as.str.ptr, s, len);
    v->as.str.ptr[len] = '\0';
    v->as.str.len = len;
    return v;
}

struct toon_value *toon_cstr(const char *s)
{
    return toon_string(s, strlen(s));
}

/* Grows *items (of `size`-byte elements) so that one more fits. */
static int toon_grow(void *items, size_t *cap, size_t len, size_t size)
{
    if (len < *cap)
        return 0;
    size_t ncap = *cap == 0 ? 4 : *cap * 2;
    void *p = realloc(*(void **)items, ncap * size);
    if (p == NULL)
        return -1;
    *(void **)items = p;
    *cap = ncap;
    return 0;
}

/* An "array index" key in the ECMAScript sense: "0" or a decimal without
 * leading zeros up to 2^32 - 2.  Its value, or -1. */
static int64_t toon_array_index(const char *k, size_t len)
{
    if (len == 0 || len > 10 || (len > 1 && k[0] == '0'))
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (k[i] < '0' || k[i] > '9')
            return -1;
        v = v * 10 + (k[i] - '0');
    }
    return v <= 4294967294 ? v : -1;
}

/* Where a member with array-index value `index` goes: objects keep their
 * index keys first, ascending, and every other key in insertion order --
 * the order in which a JavaScript object (so the reference encoder) lists
 * them.  Any other order could never be written by the reference. */
static size_t toon_member_slot(const struct toon_value *obj, int64_t index)
{
    size_t lo = 0, hi = obj->as.obj.nindex;
    if (index < 0)
        return obj->as.obj.len;
    while (lo < hi) { /* the first index key above `index` */
        size_t mid = lo + (hi - lo) / 2;
        if (obj->as.obj.members[mid].index <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Appends key -> value: a copy of the key, or (literal) the caller's
 * NUL-terminated key itself. */
static int toon_add(struct toon_value *obj, const char *key, size_t key_len, bool literal,
                    struct toon_value *v)
{
    if (obj == NULL || obj->kind != TOON_OBJECT || v == NULL || key == NULL) {
        if (obj != NULL)
            obj->failed = true;
        toon_free(v);
        return -1;
    }
    char *k = literal ? (char *)key : malloc(key_len + 1);
    if (k == NULL || toon_grow(&obj->as.obj.members, &obj->as.obj.cap, obj->as.obj.len,
                               sizeof(struct toon_member)) < 0) {
        if (!literal)
            free(k);
        obj->failed = true;
        toon_free(v);
        return -1;
    }
    if (!literal) {
        if (key_len > 0)
            memcpy(k, key, key_len);
        k[key_len] = '\0';
    }
    int64_t index = toon_array_index(k, key_len);
    size_t at = toon_member_slot(obj, index);
    struct toon_member *m = obj->as.obj.members;
    memmove(m + at + 1, m + at, (obj->as.obj.len - at) * sizeof *m);
    m[at] = (struct toon_member){k, key_len, index, !literal, v};
    obj->as.obj.len++;
    obj->as.obj.nindex += index >= 0;
    return obj->failed ? -1 : 0;
}

int toon_setn(struct toon_value *obj, const char *key, size_t key_len, struct toon_value *v)
{
    return toon_add(obj, key, key_len, false, v);
}

int toon_set_literal(struct toon_value *obj, const char *key, struct toon_value *v)
{
    return toon_add(obj, key, key == NULL ? 0 : strlen(key), true, v);
}

int toon_set(struct toon_value *obj, const char *key, struct toon_value *v)
{
    return toon_setn(obj, key, key == NULL ? 0 : strlen(key), v);
}

int toon_push(struct toon_value *arr, struct toon_value *v)
{
    if (arr == NULL || arr->kind != TOON_ARRAY || v == NULL) {
        if (arr != NULL)
            arr->failed = true;
        toon_free(v);
        return -1;
    }
    if (toon_grow(&arr->as.arr.items, &arr->as.arr.cap, arr->as.arr.len,
                  sizeof(struct toon_value *)) < 0) {
        arr->failed = true;
        toon_free(v);
        return -1;
    }
    arr->as.arr.items[arr->as.arr.len++] = v;
    return arr->failed ? -1 : 0;
}

/* Looks key up in obj, trying position `hint` first: rows of one shape
 * usually list their keys in the same order. */
const struct toon_value *toon_get(const struct toon_value *obj, const struct toon_member *key,
                                  size_t hint)
{
    const struct toon_member *m = obj->as.obj.members;
    size_t n = obj->as.obj.len;
    if (hint < n && m[hint].key_len == key->key_len &&
        memcmp(m[hint].key, key->key, key->key_len) == 0)
        return m[hint].value;
    for (size_t i = 0; i < n; i++)
        if (m[i].key_len == key->key_len && memcmp(m[i].key, key->key, key->key_len) == 0)
            return m[i].value;
    return NULL;
}

void toon_free(struct toon_value *v)
{
    if (v == NULL)
        return;
    switch (v->kind) {
    case TOON_STRING:
        free(v->as.str.ptr);
        break;
    case TOON_ARRAY:
        for (size_t i = 0; i < v->as.arr.len; i++)
            toon_free(v->as.arr.items[i]);
        free(v->as.arr.items);
        break;
    case TOON_OBJECT:
        for (size_t i = 0; i < v->as.obj.len; i++) {
            if (v->as.obj.members[i].owned)
                free(v->as.obj.members[i].key);
            toon_free(v->as.obj.members[i].value);
        }
        free(v->as.obj.members);
        break;
    case TOON_TABLE:
        for (size_t i = 0; i < v->as.tab->nfields; i++)
            free(v->as.tab->fields[i].key);
        free(v->as.tab->fields);
        free(v->as.tab->cells);
        free(v->as.tab);
        break;
    default:
        break;
    }
    free(v);
}
