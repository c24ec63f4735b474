/*
 * live_track: live allocations by id as packed 64-bit records (a size and
 * a creation site, never LIVE_EMPTY), for memory mode's aggregation and
 * the memory exports.  Recent ids live in a window (8 bytes a slot,
 * found by the id alone, filled in id order); a record the window slides
 * past moves to the table (16 bytes a slot, hashed).  When frees come in
 * random order, inserts stay sequential and most lookups end in one line
 * without probing.
 *
 * Ids added must increase.  Every growth (a window or table doubling: old
 * and new are counted together; the full-size table's too) is first offered to a limit, so that the
 * aggregation can charge it against its retention budget.
 */
#ifndef JETT_PROTO_LIVE_TRACK_H
#define JETT_PROTO_LIVE_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/live_table.h"
#include "daemon/live_window.h"

struct live_track {
    struct live_window window; /* records of recent ids */
    struct live_table table;   /* records of older ids, at most 3/4 full */
    struct live_table wide;    /* id -> full size, for the few records whose
                                * packed size field cannot hold theirs */
};

/* What growth may take: fits(ctx, more) says whether `more` bytes may be
 * added (NULL: always); reserve is the address space the window may grow
 * in. */
struct live_limit {
    bool (*fits)(void *ctx, size_t more);
    void *ctx;
    size_t reserve;
};

/* Bytes held by the records (full sizes included). */
size_t live_track_bytes(const struct live_track *t);

/* Keeps a creator's word beside each record (before the first add): 8
 * bytes more a slot of the window and of the table of older ids, charged
 * with them; the caller writes it after an add (live_track_creator) and
 * reads it while the record lives.  One lookup then finds both, where
 * the creators' records of their own had a window and table to add,
 * slide and search beside these. */
void live_track_use_creators(struct live_track *t);

/* Full sizes, beside the packed records, of ids whose size the packing
 * cannot hold: a 16-byte slot each, in a table that grows under the
 * limit like the others.  set keeps or replaces the size of id (false
 * when the limit refuses the room, leaving it as it was); get reads a
 * size that was set; drop forgets it, if there is one. */
bool live_track_set_wide(struct live_track *t, uint64_t id, uint64_t size,
                         const struct live_limit *lim);
uint64_t live_track_wide(const struct live_track *t, uint64_t id);
void live_track_drop_wide(struct live_track *t, uint64_t id);

/* The record of a live id below the window, or NULL. */
uint64_t *live_track_find_old(const struct live_track *t, uint64_t id);

/* The record of a live id, or NULL; inline for the window, where most
 * lookups end. */
static inline uint64_t *live_track_find(const struct live_track *t, uint64_t id)
{
    uint64_t *s = live_window_slot(&t->window, id);
    if (s)
        return *s != LIVE_EMPTY ? s : NULL;
    return id < t->window.base ? live_track_find_old(t, id) : NULL;
}

/* Starts loading the line a lookup of `id` reads and, when the record is
 * about to leave the table, the next one, into which a removal often
 * shifts the rest of its run.  The window's slot of the id is loaded
 * whether or not the window covers it: an allocate's id is often the
 * one just past the window, whose slot it takes, and a test of which
 * case it is would follow the events' operations, which no branch
 * predictor guesses.  Always inlined: a function whose only effect is a
 * prefetch looks pure to the compiler, which may then drop its calls. */
static inline __attribute__((always_inline)) void live_track_prefetch(const struct live_track *t,
                                                                      uint64_t id, bool removing)
{
    enum { LINE_SLOTS = 64 / sizeof(struct live_slot) };
    const struct live_window *w = &t->window;
    if (w->cap)
        __builtin_prefetch(&w->slots[id & (w->cap - 1)], 1);
    if (t->table.cap && id < w->base) {
        const struct live_slot *home = &t->table.slots[live_table_home(&t->table, id)];
        __builtin_prefetch(home, 1);
        if (removing && home + LINE_SLOTS < t->table.slots + t->table.cap)
            __builtin_prefetch(home + LINE_SLOTS, 1);
    }
}

/* The record of id, or LIVE_EMPTY, for prefetching what it names: as
 * live_track_find, but without a branch on whether the window covers the
 * id (see live_track_prefetch). */
static inline uint64_t live_track_peek(const struct live_track *t, uint64_t id)
{
    const struct live_window *w = &t->window;
    if (id < w->base) {
        const uint64_t *r = live_track_find_old(t, id);
        return r ? *r : LIVE_EMPTY;
    }
    if (w->cap == 0)
        return LIVE_EMPTY;
    uint64_t rec = w->slots[id & (w->cap - 1)], covered = -(uint64_t)(id - w->base < w->cap);
    return (rec & covered) | (LIVE_EMPTY & ~covered);
}

/* Retires the record live_track_find returned for id below the window. */
void live_track_remove_old(struct live_track *t, uint64_t *rec);

/* Retires the record live_track_find returned for id: inline for the
 * window, where most records end. */
static inline void live_track_remove(struct live_track *t, uint64_t id, uint64_t *rec)
{
    if (id >= t->window.base) {
        *rec = LIVE_EMPTY;
        t->window.n--;
    } else {
        live_track_remove_old(t, rec);
    }
}

/* The creator's word of the record live_track_find returned for id (the
 * track keeps creators). */
static inline uint64_t *live_track_creator(const struct live_track *t, uint64_t id,
                                           const uint64_t *rec)
{
    if (id >= t->window.base)
        return &t->window.cre[id & (t->window.cap - 1)];
    const struct live_slot *s =
        (const struct live_slot *)((const char *)rec - offsetof(struct live_slot, size_site));
    return &t->table.cre[s - t->table.slots];
}

/* Records a new id, above every earlier one; false when the limit refuses
 * the room it needs (or memory runs out). */
bool live_track_add_slow(struct live_track *t, uint64_t id, uint64_t rec,
                         const struct live_limit *lim);

/* How far live_track_add slides the window in line. */
#define LIVE_QUICK_SLIDE 8

/* The same, inline when the window does not grow and slides past at most
 * LIVE_QUICK_SLIDE ids, all free (as window_slide in live_track.c would:
 * in a steady state every new id is just past the window, one past it,
 * or a few when the ids between went to allocations folded away, which
 * have no record; the call of the slow way for those was a seventh of a
 * replay's instructions). */
static inline bool live_track_add(struct live_track *t, uint64_t id, uint64_t rec,
                                  const struct live_limit *lim)
{
    struct live_window *w = &t->window;
    uint64_t off = id - w->base;
    if ((w->n + 1) * 3 > w->cap || off >= w->cap + LIVE_QUICK_SLIDE)
        return live_track_add_slow(t, id, rec, lim);
    if (off >= w->cap) {
        uint64_t base = id - w->cap + 1; /* the ids below leave the window */
        for (uint64_t i = w->base; i < base; i++)
            if (w->slots[i & (w->cap - 1)] != LIVE_EMPTY)
                return live_track_add_slow(t, id, rec, lim);
        w->base = base;
    }
    live_window_put(w, id, rec);
    return true;
}

void live_track_free(struct live_track *t);

#endif
