/* agg_util: error recording, the bucket arena, hashing, charged vectors and
 * the hash index. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg-internal.h"
#include "proto/util/pages.h"

/* Counts a collector error and keeps the first message. */
void agg_errorf(struct agg *a, const char *fmt, ...)
{
    if (a->errors++ > 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->first_error, sizeof a->first_error, fmt, ap);
    va_end(ap);
}

uint32_t agg_arena_take(struct agg *a, size_t size, size_t n, const char *what)
{
    if (a->arena == NULL && (a->arena = pages_alloc(size)) != NULL)
        a->arena_size = size;
    if (a->arena == NULL) {
        agg_errorf(a, "%s: out of memory", what);
        return AGG_NONE;
    }
    uint32_t off = (uint32_t)a->arena_used;
    a->arena_used += n;
    pages_in_use(a->arena, a->arena_size, off, a->arena_used);
    memset(a->arena + off, 0, n);
    return off;
}

void agg_arena_free(struct agg *a)
{
    pages_free(a->arena, a->arena_size);
    a->arena = NULL;
}

/* FNV-1a, good enough to spread names over a power-of-two table. */
uint32_t agg_hash_bytes(uint32_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

uint32_t agg_hash_u32(uint32_t h, uint32_t v)
{
    uint64_t x = ((uint64_t)h << 32 | v) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

static uint32_t vec_cap_for(const struct agg_vec *v, uint32_t more)
{
    uint64_t need = (uint64_t)v->len + more, cap = v->cap ? v->cap : 16;
    while (cap < need)
        cap *= 2;
    return cap > UINT32_MAX ? 0 : (uint32_t)cap;
}

/* Bytes that reserving room for `more` elements would add (capacity
 * doubles from 16); SIZE_MAX when impossible. */
size_t agg_vec_growth(const struct agg_vec *v, uint32_t more)
{
    uint32_t cap = vec_cap_for(v, more);
    if (cap == 0)
        return SIZE_MAX;
    return (size_t)(cap - v->cap) * v->elem;
}

int agg_vec_reserve(struct agg_vec *v, uint32_t more, size_t *charged)
{
    uint32_t cap = vec_cap_for(v, more);
    if (cap == 0)
        return -1;
    if (cap == v->cap)
        return 0;
    void *np = realloc(v->p, (size_t)cap * v->elem);
    if (np == NULL)
        return -1;
    *charged += (size_t)(cap - v->cap) * v->elem;
    v->p = np;
    v->cap = cap;
    return 0;
}

void *agg_vec_push(struct agg_vec *v, size_t *charged)
{
    if (agg_vec_reserve(v, 1, charged) < 0)
        return NULL;
    return agg_vec_at(v, v->len++);
}

void agg_vec_free(struct agg_vec *v)
{
    free(v->p);
    v->p = NULL;
    v->len = v->cap = 0;
}

uint32_t agg_index_find(const struct agg_index *ix, uint32_t hash, agg_eq_fn eq, const void *ctx,
                        const void *key)
{
    if (ix->cap == 0)
        return AGG_NONE;
    uint32_t mask = ix->cap - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        const struct agg_slot *s = &ix->slots[i];
        if (s->entry == AGG_NONE)
            return AGG_NONE;
        if (s->hash == hash && eq(ctx, s->entry, key))
            return s->entry;
    }
}

size_t agg_index_bytes(const struct agg_index *ix)
{
    return (size_t)ix->cap * sizeof(struct agg_slot);
}

size_t agg_index_bytes_after_insert(const struct agg_index *ix)
{
    uint32_t cap = ix->cap;
    if (cap == 0)
        cap = AGG_HOT_INDEX_MIN;
    else if ((ix->n + 1) * 2 > cap)
        cap *= 2;
    return (size_t)cap * sizeof(struct agg_slot);
}

size_t agg_index_peak_after_insert(const struct agg_index *ix)
{
    size_t after = agg_index_bytes_after_insert(ix), now = agg_index_bytes(ix);
    return after == now ? now : after + now; /* a resize holds both tables */
}

static void index_place(struct agg_slot *slots, uint32_t cap, uint32_t hash, uint32_t entry)
{
    uint32_t mask = cap - 1, i = hash & mask;
    while (slots[i].entry != AGG_NONE)
        i = (i + 1) & mask;
    slots[i] = (struct agg_slot){entry, hash};
}

/* Rehashes into a table of `cap` slots. */
static int index_resize(struct agg_index *ix, uint32_t cap)
{
    struct agg_slot *ns = malloc((size_t)cap * sizeof *ns);
    if (ns == NULL)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        ns[i].entry = AGG_NONE;
    for (uint32_t i = 0; i < ix->cap; i++)
        if (ix->slots[i].entry != AGG_NONE)
            index_place(ns, cap, ix->slots[i].hash, ix->slots[i].entry);
    free(ix->slots);
    ix->slots = ns;
    ix->cap = cap;
    return 0;
}

int agg_index_insert(struct agg_index *ix, uint32_t hash, uint32_t entry)
{
    size_t want = agg_index_bytes_after_insert(ix) / sizeof(struct agg_slot);
    if (want != ix->cap && index_resize(ix, (uint32_t)want) < 0)
        return -1;
    index_place(ix->slots, ix->cap, hash, entry);
    ix->n++;
    return 0;
}

void agg_index_free(struct agg_index *ix)
{
    free(ix->slots);
    ix->slots = NULL;
    ix->cap = ix->n = 0;
}
