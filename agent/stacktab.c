/* stacktab: nodes by id, an index of ids with linear probing that grows
 * by doubling, and each node's recent children. */
#include <stdlib.h>

#include "agent/stacktab.h"

void stacktab_init(struct stacktab *t, size_t budget)
{
    t->nodes = NULL;
    t->slots = NULL;
    t->cap = t->count = 0;
    t->root_kid[0] = t->root_kid[1] = WIRE_NONE32;
    t->budget = budget;
}

void stacktab_destroy(struct stacktab *t)
{
    free(t->nodes);
    free(t->slots);
    t->nodes = NULL;
    t->slots = NULL;
}

static uint32_t hash_key(uint32_t parent, uint32_t func, struct wire_span site)
{
    uint64_t h = ((uint64_t)parent << 32 | func) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)site.start << 32 | site.end) * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(h >> 32);
}

/* The index slot holding the node, or the empty slot where it goes. */
static uint32_t *probe(const struct stacktab *t, uint32_t parent, uint32_t func,
                       struct wire_span site)
{
    uint32_t mask = t->cap - 1, i = hash_key(parent, func, site) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t *slot = &t->slots[i];
        if (*slot == WIRE_NONE32)
            return slot;
        const struct stacktab_node *n = &t->nodes[*slot];
        if (n->parent == parent && n->func == func && n->site_start == site.start &&
            n->site_end == site.end)
            return slot;
    }
}

uint32_t stacktab_find(const struct stacktab *t, uint32_t parent, uint32_t func,
                       struct wire_span site)
{
    if (t->cap == 0)
        return WIRE_NONE32;
    return *probe(t, parent, func, site);
}

/* Doubles the index (and the room for nodes) if the budget allows; -1
 * (nothing changed) otherwise.  The charge is the one stated in
 * stacktab.h. */
static int grow(struct stacktab *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    if (((size_t)cap + t->cap) * STACKTAB_SLOT_CHARGE > t->budget)
        return -1;
    uint32_t *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return -1;
    struct stacktab_node *nodes = realloc(t->nodes, (size_t)cap / 2 * sizeof *nodes);
    if (!nodes) {
        free(slots);
        return -1;
    }
    free(t->slots);
    for (uint32_t i = 0; i < cap; i++)
        slots[i] = WIRE_NONE32;
    t->nodes = nodes, t->slots = slots, t->cap = cap;
    for (uint32_t id = 0; id < t->count; id++) {
        const struct stacktab_node *n = &nodes[id];
        *probe(t, n->parent, n->func, (struct wire_span){n->site_start, n->site_end}) = id;
    }
    return 0;
}

/* Makes node t->count in `slot` (found empty by probe, room checked). */
static uint32_t make_node(struct stacktab *t, uint32_t *slot, uint32_t parent, uint32_t func,
                          struct wire_span site)
{
    uint32_t id = t->count++;
    t->nodes[id] =
        (struct stacktab_node){parent, func, site.start, site.end, {WIRE_NONE32, WIRE_NONE32}};
    *slot = id;
    return id;
}

/* The parent's newest child is now id: a second child goes after the
 * first, any later one first (see stacktab_intern). */
static void note_kid(struct stacktab *t, uint32_t parent, uint32_t id)
{
    uint32_t *kid = stacktab_kids(t, parent);
    if (kid[0] != WIRE_NONE32 && kid[1] == WIRE_NONE32)
        kid[1] = id;
    else
        kid[1] = kid[0], kid[0] = id;
}

uint32_t stacktab_add(struct stacktab *t, uint32_t parent, uint32_t func, struct wire_span site)
{
    if ((t->count + 1) * 2 > t->cap && grow(t) != 0)
        return WIRE_NONE32;
    uint32_t id = make_node(t, probe(t, parent, func, site), parent, func, site);
    note_kid(t, parent, id);
    return id;
}

uint32_t stacktab_intern_probe(struct stacktab *t, uint32_t parent, uint32_t func,
                               struct wire_span site, bool *created)
{
    *created = false;
    if (t->cap > 0) {
        uint32_t *slot = probe(t, parent, func, site);
        if (*slot != WIRE_NONE32) {
            note_kid(t, parent, *slot);
            return *slot;
        }
        if ((t->count + 1) * 2 <= t->cap) { /* room without growing: the slot found is it */
            uint32_t id = make_node(t, slot, parent, func, site);
            note_kid(t, parent, id);
            *created = true;
            return id;
        }
    }
    uint32_t id = stacktab_add(t, parent, func, site);
    *created = id != WIRE_NONE32;
    return id;
}
