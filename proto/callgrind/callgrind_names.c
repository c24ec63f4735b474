/* callgrind_names: per-namespace name tables, interned by content. */
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Slot of a name (or of the empty slot where it belongs). */
static size_t intern_find(const struct cg_intern *t, const struct cg_str *names, const char *s,
                          size_t len, uint64_t h)
{
    size_t mask = t->cap - 1, i = (size_t)h & mask;
    while (t->slots[i]) {
        const struct cg_str *n = &names[t->slots[i] - 1];
        if (n->len == len && memcmp(n->ptr, s, len) == 0)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Doubles the table (kept at most half full). */
static int intern_rehash(struct cg_intern *t, const struct cg_str *names, size_t nnames)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct cg_intern n = {calloc(cap, sizeof *n.slots), cap};
    if (n.slots == NULL)
        return -1;
    for (size_t k = 0; k < nnames; k++) {
        size_t i = intern_find(&n, names, names[k].ptr, names[k].len,
                               name_hash(names[k].ptr, names[k].len));
        n.slots[i] = (uint32_t)k + 1;
    }
    free(t->slots);
    *t = n;
    return 0;
}

/* Appends a new name to namespace ns and its table slot i. */
static int name_add(struct cg_model *m, enum cg_ns ns, const char *s, size_t len, uint32_t *id,
                    struct cg_error *err)
{
    struct cg_intern *t = &m->index->intern[ns];
    if (m->nnames[ns] >= UINT32_MAX - 1)
        return cg_fail(err, CG_RESOURCE, 0, "too many names");
    if (cg_grow((void **)&m->names[ns], &m->names_cap[ns], m->nnames[ns] + 1, sizeof **m->names) <
        0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    char *d = cg_arena_dup(m, s, len);
    if (d == NULL)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    uint32_t k = (uint32_t)m->nnames[ns]++;
    m->names[ns][k] = (struct cg_str){d, (uint32_t)len, (uint32_t)cg_utf16_len(s, len)};
    size_t i = intern_find(t, m->names[ns], s, len, name_hash(s, len));
    t->slots[i] = k + 1;
    *id = k;
    return 0;
}

int cg_model_name(struct cg_model *m, enum cg_ns ns, const char *s, size_t len, uint32_t *id,
                  struct cg_error *err)
{
    while (len && cg_is_outer_space(*s))
        s++, len--;
    while (len && cg_is_outer_space(s[len - 1]))
        len--;
    if ((unsigned)ns >= CG_NS_COUNT)
        return cg_fail(err, CG_SYNTAX, 0, "bad name namespace");
    if (len > CG_MAX_INPUT_UNITS * 3)
        return cg_fail(err, CG_RESOURCE, 0, "name too long");
    if (len == 0)
        return cg_fail(err, CG_SYNTAX, 0, "empty name");
    if (cg_check_text(s, len, err) < 0)
        return -1;
    struct cg_intern *t = &m->index->intern[ns];
    if ((m->nnames[ns] + 1) * 2 > t->cap && intern_rehash(t, m->names[ns], m->nnames[ns]) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    size_t i = intern_find(t, m->names[ns], s, len, name_hash(s, len));
    if (t->slots[i]) {
        *id = t->slots[i] - 1;
        return 0;
    }
    return name_add(m, ns, s, len, id, err);
}
