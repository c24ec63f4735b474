/* agg_live: the live-allocation table (see agg_live.h). */
#include "daemon/agg_live.h"
#include "proto/pages.h"

struct agg_live *agg_live_find(const struct agg_live_table *t, uint64_t id)
{
    if (t->cap == 0)
        return NULL;
    uint64_t mask = t->cap - 1;
    for (uint64_t i = agg_live_home(t, id);; i = (i + 1) & mask) {
        struct agg_live *s = &t->slots[i];
        if (s->id == id)
            return s;
        if (s->id == AGG_LIVE_EMPTY)
            return NULL;
    }
}

/* Puts an entry in the first free slot from its home. */
static void place(struct agg_live_table *t, uint64_t id, uint64_t size_site)
{
    uint64_t mask = t->cap - 1, i = agg_live_home(t, id);
    while (t->slots[i].id != AGG_LIVE_EMPTY)
        i = (i + 1) & mask;
    t->slots[i] = (struct agg_live){id, size_site};
}

void agg_live_insert(struct agg_live_table *t, uint64_t id, uint64_t size_site)
{
    place(t, id, size_site);
    t->n++;
}

void agg_live_remove(struct agg_live_table *t, struct agg_live *slot)
{
    uint64_t mask = t->cap - 1, i = (uint64_t)(slot - t->slots), j = i;
    t->slots[i].id = AGG_LIVE_EMPTY;
    for (;;) {
        j = (j + 1) & mask;
        if (t->slots[j].id == AGG_LIVE_EMPTY)
            break;
        /* the member at j may move back to the hole at i unless its home
         * lies cyclically in (i, j] */
        uint64_t home = agg_live_home(t, t->slots[j].id);
        if (((j - home) & mask) < ((j - i) & mask))
            continue;
        t->slots[i] = t->slots[j];
        t->slots[j].id = AGG_LIVE_EMPTY;
        i = j;
    }
    t->n--;
}

int agg_live_resize(struct agg_live_table *t, uint64_t cap)
{
    struct agg_live_table nt = {pages_alloc(agg_live_bytes(cap)), cap, t->n,
                                (unsigned)__builtin_clzll(cap) + 1};
    if (nt.slots == NULL)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        nt.slots[i].id = AGG_LIVE_EMPTY;
    for (uint64_t i = 0; i < t->cap; i++)
        if (t->slots[i].id != AGG_LIVE_EMPTY)
            place(&nt, t->slots[i].id, t->slots[i].size_site);
    pages_free(t->slots, agg_live_bytes(t->cap));
    *t = nt;
    return 0;
}

void agg_live_free(struct agg_live_table *t)
{
    pages_free(t->slots, agg_live_bytes(t->cap));
    *t = (struct agg_live_table){0};
}
