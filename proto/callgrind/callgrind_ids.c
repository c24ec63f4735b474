/* callgrind_ids: ID dictionaries (compressed names), one per namespace. */
#include <stdlib.h>

#include "proto/callgrind/callgrind-parse.h"

static size_t id_slot(const struct cg_idmap *d, uint64_t id)
{
    uint64_t h = id * 0x9e3779b97f4a7c15ull;
    size_t mask = d->cap - 1, i = (size_t)(h >> 20) & mask;
    while (d->vals[i] && d->keys[i] != id)
        i = (i + 1) & mask;
    return i;
}

int cg_idmap_get(const struct cg_idmap *d, uint64_t id, uint32_t *name)
{
    if (d->cap == 0)
        return -1;
    size_t i = id_slot(d, id);
    if (d->vals[i] == 0)
        return -1;
    *name = d->vals[i] - 1;
    return 0;
}

/* Doubles the table, keeping it at most half full. */
static int id_rehash(struct cg_idmap *d)
{
    struct cg_idmap n = {.cap = d->cap ? d->cap * 2 : 256, .count = d->count};
    n.keys = malloc(n.cap * sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (n.keys == NULL || n.vals == NULL) {
        free(n.keys), free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < d->cap; i++)
        if (d->vals[i]) {
            size_t j = id_slot(&n, d->keys[i]);
            n.keys[j] = d->keys[i], n.vals[j] = d->vals[i];
        }
    cg_idmap_free(d);
    *d = n;
    return 0;
}

/* Defines or redefines an ID; -2 when a new ID would pass CG_MAX_IDS. */
int cg_idmap_put(struct cg_idmap *d, uint64_t id, uint32_t name)
{
    if ((d->count + 1) * 2 > d->cap && id_rehash(d) < 0)
        return -1;
    size_t i = id_slot(d, id);
    if (d->vals[i] == 0) {
        if (d->count >= CG_MAX_IDS)
            return -2;
        d->count++;
        d->keys[i] = id;
    }
    d->vals[i] = name + 1;
    return 0;
}

void cg_idmap_free(struct cg_idmap *d)
{
    free(d->keys);
    free(d->vals);
    *d = (struct cg_idmap){0};
}
