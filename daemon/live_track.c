/* live_track: live allocations by id, window and table (see live_track.h). */
#include <stddef.h>

#include "daemon/live_track.h"

size_t live_track_bytes(const struct live_track *t)
{
    return live_window_cost(&t->window, t->window.cap) + live_table_cost(&t->table, t->table.cap) +
           live_table_bytes(t->wide.cap);
}

void live_track_use_creators(struct live_track *t)
{
    t->window.creators = t->table.creators = true;
}

uint64_t *live_track_find_old(const struct live_track *t, uint64_t id)
{
    struct live_slot *r = live_table_find(&t->table, id);
    return r ? &r->size_site : NULL;
}

void live_track_remove_old(struct live_track *t, uint64_t *rec)
{
    live_table_remove(&t->table,
                      (struct live_slot *)((char *)rec - offsetof(struct live_slot, size_site)));
}

/* Whether the limit lets the records hold `more` bytes besides theirs. */
static bool fits(const struct live_limit *lim, size_t more)
{
    return lim->fits == NULL || lim->fits(lim->ctx, more);
}

/* Room for one more entry in a table, doubling it (old and new are both
 * held while rehashing) if needed. */
static bool table_room(struct live_table *tb, const struct live_limit *lim)
{
    if ((tb->n + 1) * 4 <= tb->cap * 3)
        return true;
    uint64_t cap = tb->cap ? tb->cap * 2 : LIVE_TABLE_MIN_CAP;
    return fits(lim, live_table_cost(tb, cap)) && live_table_resize(tb, cap) == 0;
}

/* Slides the window to start at `target`, moving the live records it
 * passes to the table in id order; false (the window stopped at the
 * first record that did not fit) when the limit refuses.  The scan
 * starts at the first live id, so a jump over a gap does not walk the
 * empty slots below it. */
static bool window_slide(struct live_track *t, uint64_t target, const struct live_limit *lim)
{
    struct live_window *w = &t->window;
    if (w->n > 0 && w->base < w->first)
        w->base = w->first < target ? w->first : target;
    for (; w->base < target && w->n > 0; w->base++) {
        uint64_t *s = &w->slots[w->base & (w->cap - 1)];
        if (*s == LIVE_EMPTY)
            continue;
        if (!table_room(&t->table, lim))
            return false;
        live_table_insert(&t->table, w->base, *s, w->cre ? w->cre[w->base & (w->cap - 1)] : 0);
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
static bool window_room(struct live_track *t, uint64_t id, const struct live_limit *lim)
{
    struct live_window *w = &t->window;
    if (w->cap == 0)
        return fits(lim, live_window_cost(w, LIVE_WINDOW_MIN_CAP)) &&
               live_window_resize(w, LIVE_WINDOW_MIN_CAP, id, lim->reserve) == 0;
    if ((w->n + 1) * 3 > w->cap && fits(lim, live_window_cost(w, w->cap * 2)))
        live_window_resize(w, w->cap * 2, id, lim->reserve);
    return true;
}

bool live_track_add_slow(struct live_track *t, uint64_t id, uint64_t rec,
                         const struct live_limit *lim)
{
    struct live_window *w = &t->window;
    if (!window_room(t, id, lim))
        return false;
    if (id - w->base >= w->cap && !window_slide(t, id - w->cap + 1, lim))
        return false;
    live_window_put(w, id, rec);
    return true;
}

bool live_track_set_wide(struct live_track *t, uint64_t id, uint64_t size,
                         const struct live_limit *lim)
{
    struct live_slot *s = live_table_find(&t->wide, id);
    if (s) {
        s->size_site = size;
        return true;
    }
    if (!table_room(&t->wide, lim))
        return false;
    live_table_insert(&t->wide, id, size, 0);
    return true;
}

uint64_t live_track_wide(const struct live_track *t, uint64_t id)
{
    return live_table_find(&t->wide, id)->size_site;
}

void live_track_drop_wide(struct live_track *t, uint64_t id)
{
    struct live_slot *s = live_table_find(&t->wide, id);
    if (s)
        live_table_remove(&t->wide, s);
}

void live_track_free(struct live_track *t)
{
    live_window_free(&t->window);
    live_table_free(&t->table);
    live_table_free(&t->wide);
}
