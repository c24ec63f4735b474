/* agg_track: memory mode's live-allocation records under the retention
 * budget.  Recent ids live in the window (8 bytes a slot, found by the id
 * alone, filled in id order); a record the window slides past moves to
 * the live table (16 bytes a slot, hashed).  On the memory benchmark
 * (uniformly random frees) this keeps inserts sequential and most
 * lookups to one line without probing. */
#include <stddef.h>

#include "daemon/agg-internal.h"

_Static_assert(sizeof(uint64_t) == AGG_COST_WINDOW && sizeof(struct live_slot) == AGG_COST_LIVE,
               "the documented costs are the real slot sizes");

size_t agg_track_bytes(const struct agg_mem *m)
{
    return live_window_bytes(m->window.cap) + live_table_bytes(m->table.cap);
}

uint64_t *agg_track_find_old(const struct agg_mem *m, uint64_t id)
{
    struct live_slot *r = live_table_find(&m->table, id);
    return r ? &r->size_site : NULL;
}

void agg_track_remove(struct agg_mem *m, uint64_t id, uint64_t *rec)
{
    if (id >= m->window.base) {
        *rec = LIVE_EMPTY;
        m->window.n--;
    } else {
        live_table_remove(
            &m->table, (struct live_slot *)((char *)rec - offsetof(struct live_slot, size_site)));
    }
}

/* The retention bytes if `more` were held too. */
static bool fits(const struct agg *a, size_t more)
{
    return agg_mem_bytes(a) + more <= a->cfg.retention_budget;
}

/* Room for one more record in the table, doubling it (old and new are
 * both held while rehashing) if needed. */
static bool table_room(struct agg *a)
{
    struct live_table *t = &a->mem.table;
    if ((t->n + 1) * 4 <= t->cap * 3)
        return true;
    uint64_t cap = t->cap ? t->cap * 2 : LIVE_TABLE_MIN_CAP;
    return fits(a, live_table_bytes(cap)) && live_table_resize(t, cap) == 0;
}

/* Slides the window to start at `target`, moving the live records it
 * passes to the table in id order; false (the window stopped at the
 * first record that did not fit) when the budget refuses.  The scan
 * starts at the first live id, so a jump over a gap does not walk the
 * empty slots below it. */
static bool window_slide(struct agg *a, uint64_t target)
{
    struct live_window *w = &a->mem.window;
    if (w->n > 0 && w->base < w->first)
        w->base = w->first < target ? w->first : target;
    for (; w->base < target && w->n > 0; w->base++) {
        uint64_t *s = &w->slots[w->base & (w->cap - 1)];
        if (*s == LIVE_EMPTY)
            continue;
        if (!table_room(a))
            return false;
        live_table_insert(&a->mem.table, w->base, *s);
        *s = LIVE_EMPTY;
        w->n--;
    }
    if (w->base < target)
        w->base = target; /* the rest was empty */
    return true;
}

/* Doubles the window when a third of it is live, so that most live
 * records stay in it, if old and new sizes fit together (the rule of
 * every doubling here, though the window grows in place); a refusal only
 * means more records move to the table. */
static bool window_room(struct agg *a, uint64_t id)
{
    struct live_window *w = &a->mem.window;
    if (w->cap == 0)
        return fits(a, live_window_bytes(LIVE_WINDOW_MIN_CAP)) &&
               live_window_resize(w, LIVE_WINDOW_MIN_CAP, id, a->cfg.retention_budget) == 0;
    if ((w->n + 1) * 3 > w->cap && fits(a, live_window_bytes(w->cap * 2)))
        live_window_resize(w, w->cap * 2, id, a->cfg.retention_budget);
    return true;
}

bool agg_track_add_slow(struct agg *a, uint64_t id, uint64_t rec)
{
    struct live_window *w = &a->mem.window;
    if (!window_room(a, id))
        return false;
    if (id - w->base >= w->cap && !window_slide(a, id - w->cap + 1))
        return false;
    live_window_put(w, id, rec);
    return true;
}

void agg_track_free(struct agg_mem *m)
{
    live_window_free(&m->window);
    live_table_free(&m->table);
}
