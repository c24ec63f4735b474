/* stacktab: open addressing with linear probing; grows by doubling. */
#include <stdlib.h>

#include "agent/stacktab.h"

void stacktab_init(struct stacktab *t, size_t budget)
{
    t->slots = NULL;
    t->cap = t->count = 0;
    t->budget = budget;
}

void stacktab_destroy(struct stacktab *t)
{
    free(t->slots);
    t->slots = NULL;
}

static uint32_t hash_key(uint32_t parent, uint32_t func, struct wire_span site)
{
    uint64_t h = ((uint64_t)parent << 32 | func) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)site.start << 32 | site.end) * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(h >> 32);
}

static struct stacktab_node *probe(const struct stacktab *t, uint32_t parent, uint32_t func,
                                   struct wire_span site)
{
    uint32_t mask = t->cap - 1, i = hash_key(parent, func, site) & mask;
    for (;; i = (i + 1) & mask) {
        struct stacktab_node *n = &t->slots[i];
        if (n->id == WIRE_NONE32 || (n->parent == parent && n->func == func &&
                                     n->site_start == site.start && n->site_end == site.end))
            return n;
    }
}

uint32_t stacktab_find(const struct stacktab *t, uint32_t parent, uint32_t func,
                       struct wire_span site)
{
    if (t->cap == 0)
        return WIRE_NONE32;
    return probe(t, parent, func, site)->id;
}

/* Doubles the table if the budget allows; -1 otherwise. */
static int grow(struct stacktab *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    /* The old and the new table are both held while rehashing. */
    if (((size_t)cap + t->cap) * sizeof *t->slots > t->budget)
        return -1;
    struct stacktab_node *old = t->slots, *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < cap; i++)
        slots[i].id = WIRE_NONE32;
    uint32_t old_cap = t->cap;
    t->slots = slots, t->cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].id != WIRE_NONE32)
            *probe(t, old[i].parent, old[i].func,
                   (struct wire_span){old[i].site_start, old[i].site_end}) = old[i];
    free(old);
    return 0;
}

uint32_t stacktab_add(struct stacktab *t, uint32_t parent, uint32_t func, struct wire_span site)
{
    if ((t->count + 1) * 2 > t->cap && grow(t) != 0)
        return WIRE_NONE32;
    struct stacktab_node *n = probe(t, parent, func, site);
    *n = (struct stacktab_node){parent, func, site.start, site.end, t->count++};
    return n->id;
}

uint32_t stacktab_intern(struct stacktab *t, uint32_t parent, uint32_t func, struct wire_span site,
                         bool *created)
{
    *created = false;
    if (t->cap > 0) {
        struct stacktab_node *n = probe(t, parent, func, site);
        if (n->id != WIRE_NONE32)
            return n->id;
        if ((t->count + 1) * 2 <= t->cap) { /* room without growing: the slot found is it */
            *n = (struct stacktab_node){parent, func, site.start, site.end, t->count++};
            *created = true;
            return n->id;
        }
    }
    uint32_t id = stacktab_add(t, parent, func, site);
    *created = id != WIRE_NONE32;
    return id;
}
