/* live_table: live allocations by id (see live_table.h). */
#include "daemon/live_table.h"
#include "proto/util/pages.h"

struct live_slot *live_table_find(const struct live_table *t, uint64_t id)
{
    if (t->cap == 0)
        return NULL;
    uint64_t mask = t->cap - 1;
    for (uint64_t i = live_table_home(t, id);; i = (i + 1) & mask) {
        struct live_slot *s = &t->slots[i];
        if (s->id == id)
            return s;
        if (s->id == LIVE_EMPTY)
            return NULL;
    }
}

/* Puts an entry in the first free slot from its home. */
static void place(struct live_table *t, uint64_t id, uint64_t size_site, uint64_t cre)
{
    uint64_t mask = t->cap - 1, i = live_table_home(t, id);
    while (t->slots[i].id != LIVE_EMPTY)
        i = (i + 1) & mask;
    t->slots[i] = (struct live_slot){id, size_site};
    if (t->cre)
        t->cre[i] = cre;
}

void live_table_insert(struct live_table *t, uint64_t id, uint64_t size_site, uint64_t cre)
{
    place(t, id, size_site, cre);
    t->n++;
}

void live_table_remove(struct live_table *t, struct live_slot *slot)
{
    uint64_t mask = t->cap - 1, i = (uint64_t)(slot - t->slots), j = i;
    t->slots[i].id = LIVE_EMPTY;
    for (;;) {
        j = (j + 1) & mask;
        if (t->slots[j].id == LIVE_EMPTY)
            break;
        /* the member at j may move back to the hole at i unless its home
         * lies cyclically in (i, j] */
        uint64_t home = live_table_home(t, t->slots[j].id);
        if (((j - home) & mask) < ((j - i) & mask))
            continue;
        t->slots[i] = t->slots[j];
        t->slots[j].id = LIVE_EMPTY;
        if (t->cre)
            t->cre[i] = t->cre[j];
        i = j;
    }
    t->n--;
}

int live_table_resize(struct live_table *t, uint64_t cap)
{
    size_t words = cap * sizeof(uint64_t);
    struct live_table nt = {pages_alloc(live_table_bytes(cap)), NULL,       cap, t->n,
                            (unsigned)__builtin_clzll(cap) + 1, t->creators};
    if (nt.slots == NULL)
        return -1;
    if (t->creators && (nt.cre = pages_alloc(words)) == NULL) {
        pages_free(nt.slots, live_table_bytes(cap));
        return -1;
    }
    pages_in_use(nt.slots, live_table_bytes(cap), 0, live_table_bytes(cap));
    if (nt.cre)
        pages_in_use(nt.cre, words, 0, words);
    for (uint64_t i = 0; i < cap; i++)
        nt.slots[i].id = LIVE_EMPTY;
    for (uint64_t i = 0; i < t->cap; i++)
        if (t->slots[i].id != LIVE_EMPTY)
            place(&nt, t->slots[i].id, t->slots[i].size_site, t->cre ? t->cre[i] : 0);
    live_table_free(t);
    *t = nt;
    return 0;
}

void live_table_free(struct live_table *t)
{
    pages_free(t->slots, live_table_bytes(t->cap));
    pages_free(t->cre, t->cap * sizeof(uint64_t));
    *t = (struct live_table){.creators = t->creators};
}
