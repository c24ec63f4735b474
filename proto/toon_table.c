/* toon: tables, rows of one shape with their cells packed (toon.h). */
#include <stdlib.h>
#include <string.h>

#include "proto/toon-internal.h"

struct toon_value *toon_table(void)
{
    struct toon_value *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->kind = TOON_TABLE;
    if ((t->as.tab = calloc(1, sizeof *t->as.tab)) == NULL) {
        free(t);
        return NULL;
    }
    return t;
}

/* Room for n more bytes of cells; false when out of memory. */
static bool reserve(struct toon_value *t, size_t n)
{
    size_t len = t->as.tab->len, cap = t->as.tab->cap;
    if (cap - len >= n)
        return true;
    size_t ncap = cap ? cap : 4096;
    while (ncap - len < n)
        ncap *= 2;
    unsigned char *c = realloc(t->as.tab->cells, ncap);
    if (c == NULL)
        return false;
    t->as.tab->cells = c, t->as.tab->cap = ncap;
    return true;
}

/* Appends a cell: a tag (the value's kind), then its bytes (none for
 * null; one for a bool; eight for a number; a size_t length and the
 * bytes for a string). */
static bool pack_cell(struct toon_value *t, const struct toon_value *v)
{
    size_t n = v->kind == TOON_STRING ? sizeof(size_t) + v->as.str.len
               : v->kind == TOON_NULL ? 0
               : v->kind == TOON_BOOL ? 1
                                      : 8;
    if (!reserve(t, 1 + n))
        return false;
    unsigned char *p = t->as.tab->cells + t->as.tab->len;
    *p++ = (unsigned char)v->kind;
    switch (v->kind) {
    case TOON_BOOL:
        *p = v->as.b;
        break;
    case TOON_INT:
        memcpy(p, &v->as.i, 8);
        break;
    case TOON_UINT:
        memcpy(p, &v->as.u, 8);
        break;
    case TOON_DOUBLE:
        memcpy(p, &v->as.d, 8);
        break;
    case TOON_STRING:
        memcpy(p, &v->as.str.len, sizeof(size_t));
        if (v->as.str.len > 0)
            memcpy(p + sizeof(size_t), v->as.str.ptr, v->as.str.len);
        break;
    default:
        break;
    }
    t->as.tab->len += 1 + n;
    return true;
}

const unsigned char *toon_table_cell(const unsigned char *p, struct toon_value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = (enum toon_kind) * p++;
    switch (out->kind) {
    case TOON_BOOL:
        out->as.b = *p;
        return p + 1;
    case TOON_INT:
        memcpy(&out->as.i, p, 8);
        return p + 8;
    case TOON_UINT:
        memcpy(&out->as.u, p, 8);
        return p + 8;
    case TOON_DOUBLE:
        memcpy(&out->as.d, p, 8);
        return p + 8;
    case TOON_STRING:
        memcpy(&out->as.str.len, p, sizeof(size_t));
        out->as.str.ptr = (char *)(p + sizeof(size_t));
        return p + sizeof(size_t) + out->as.str.len;
    default:
        return p;
    }
}

/* The first row's keys become the fields, copied. */
static bool take_fields(struct toon_value *t, const struct toon_value *row)
{
    size_t n = row->as.obj.len;
    struct toon_member *f = calloc(n, sizeof *f);
    if (f == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct toon_member *m = &row->as.obj.members[i];
        char *k = malloc(m->key_len + 1);
        if (k == NULL) {
            for (size_t j = 0; j < i; j++)
                free(f[j].key);
            free(f);
            return false;
        }
        memcpy(k, m->key, m->key_len + 1);
        f[i] = (struct toon_member){k, m->key_len, m->index, true, NULL};
    }
    t->as.tab->fields = f, t->as.tab->nfields = n;
    return true;
}

/* Whether the row fits the table: an object whose keys are the fields
 * (a valid one: no duplicate keys, UTF-8 throughout) and whose values
 * are all primitives. */
static bool row_fits(const struct toon_value *t, const struct toon_value *row)
{
    if (row->kind != TOON_OBJECT || row->as.obj.len == 0 || toon_validate_tree(row, NULL, 0) < 0)
        return false;
    if (t->as.tab->nrows > 0 && row->as.obj.len != t->as.tab->nfields)
        return false;
    for (size_t i = 0; i < row->as.obj.len; i++)
        if (!toon_is_primitive(row->as.obj.members[i].value))
            return false;
    return true;
}

int toon_table_push(struct toon_value *t, struct toon_value *row)
{
    if (t == NULL || t->kind != TOON_TABLE || row == NULL || t->failed) {
        if (t != NULL)
            t->failed = true;
        toon_free(row);
        return -1;
    }
    bool ok = row_fits(t, row) && (t->as.tab->nrows > 0 || take_fields(t, row));
    size_t mark = t->as.tab->len;
    for (size_t i = 0; ok && i < t->as.tab->nfields; i++) {
        const struct toon_value *v = toon_get(row, &t->as.tab->fields[i], i);
        ok = v != NULL && pack_cell(t, v);
    }
    toon_free(row);
    if (!ok) {
        t->as.tab->len = mark;
        t->failed = true;
        return -1;
    }
    t->as.tab->nrows++;
    return 0;
}
