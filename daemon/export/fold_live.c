/* fold_live: the memory exports' live allocations (see fold_live.h). */
#include "daemon/export/fold_live.h"
#include "proto/util/mix64.h"
#include "proto/util/pages.h"

/* A packed record: the size in the low 40 bits, site + 1 above (0: no
 * site); the largest site is left out so that no record is LIVE_EMPTY. */
#define SIZE_BITS 40
#define SIZE_MASK ((UINT64_C(1) << SIZE_BITS) - 1)
#define SITE_LIMIT ((UINT32_C(1) << (64 - SIZE_BITS)) - 2)

/* Address space the window may grow in (never touched beyond its size):
 * 32 Mi recent ids. */
#define WINDOW_RESERVE ((size_t)256 << 20)

struct fold_wide {
    uint64_t id, size;
    uint32_t site;
    bool used;
};

static bool packs(uint64_t size, uint32_t site)
{
    return size <= SIZE_MASK && (site == FOLD_NO_SITE || site < SITE_LIMIT);
}

static uint64_t pack(uint64_t size, uint32_t site)
{
    return size | (uint64_t)(site == FOLD_NO_SITE ? 0 : site + 1) << SIZE_BITS;
}

/* ---- full entries ---- */

static size_t wide_home(const struct fold_lives *l, uint64_t id)
{
    return (size_t)mix64(id) & (l->wide_cap - 1);
}

/* The entry of `id` when it is there, else the empty slot where it would
 * go (the table is at most three quarters full). */
static struct fold_wide *wide_probe(const struct fold_lives *l, uint64_t id)
{
    for (size_t i = wide_home(l, id);; i = (i + 1) & (l->wide_cap - 1))
        if (!l->wide[i].used || l->wide[i].id == id)
            return &l->wide[i];
}

static int wide_add(struct fold_lives *l, uint64_t id, uint64_t size, uint32_t site)
{
    if (4 * (l->n_wide + 1) > 3 * l->wide_cap) {
        size_t old_cap = l->wide_cap, cap = old_cap ? old_cap * 2 : 64;
        struct fold_wide *old = l->wide, *t = pages_alloc(cap * sizeof *t);
        if (!t)
            return -1;
        l->wide = t, l->wide_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].used)
                *wide_probe(l, old[i].id) = old[i];
        pages_free(old, old_cap * sizeof *old);
    }
    *wide_probe(l, id) = (struct fold_wide){id, size, site, true};
    l->n_wide++;
    return 0;
}

/* Removes an entry, shifting later members of its probe run back. */
static void wide_remove(struct fold_lives *l, struct fold_wide *e)
{
    size_t mask = l->wide_cap - 1, hole = (size_t)(e - l->wide);
    for (size_t i = (hole + 1) & mask; l->wide[i].used; i = (i + 1) & mask) {
        size_t home = wide_home(l, l->wide[i].id);
        /* the entry may move to the hole unless its home lies after the
         * hole on the cyclic path hole -> i */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            l->wide[hole] = l->wide[i];
            hole = i;
        }
    }
    l->wide[hole].used = false;
    l->n_wide--;
}

/* ---- both ---- */

bool fold_lives_find(struct fold_lives *l, uint64_t id, struct fold_live_ref *ref)
{
    *ref = (struct fold_live_ref){id, NULL, NULL};
    if (l->any && (ref->rec = live_track_find(&l->track, id)) != NULL)
        return true;
    if (l->n_wide == 0)
        return false;
    struct fold_wide *e = wide_probe(l, id);
    ref->wide = e->used ? e : NULL;
    return ref->wide != NULL;
}

int fold_lives_add(struct fold_lives *l, uint64_t id, uint64_t size, uint32_t site)
{
    if (packs(size, site) && (!l->any || id > l->top)) {
        static const struct live_limit unlimited = {NULL, NULL, WINDOW_RESERVE};
        if (!live_track_add(&l->track, id, pack(size, site), &unlimited))
            return -1;
        l->top = id, l->any = true;
        return 0;
    }
    return wide_add(l, id, size, site);
}

uint64_t fold_live_size(const struct fold_live_ref *ref)
{
    return ref->rec ? *ref->rec & SIZE_MASK : ref->wide->size;
}

uint32_t fold_live_site(const struct fold_live_ref *ref)
{
    if (!ref->rec)
        return ref->wide->site;
    uint32_t s = (uint32_t)(*ref->rec >> SIZE_BITS);
    return s == 0 ? FOLD_NO_SITE : s - 1;
}

int fold_lives_resize(struct fold_lives *l, struct fold_live_ref *ref, uint64_t size)
{
    if (ref->wide) {
        ref->wide->size = size;
        return 0;
    }
    if (size <= SIZE_MASK) {
        *ref->rec = (*ref->rec & ~SIZE_MASK) | size;
        return 0;
    }
    /* too large to pack: it becomes a full entry */
    uint32_t site = fold_live_site(ref);
    if (wide_add(l, ref->id, size, site) != 0)
        return -1;
    live_track_remove(&l->track, ref->id, ref->rec);
    ref->rec = NULL, ref->wide = wide_probe(l, ref->id);
    return 0;
}

void fold_lives_remove(struct fold_lives *l, const struct fold_live_ref *ref)
{
    if (ref->rec)
        live_track_remove(&l->track, ref->id, ref->rec);
    else
        wide_remove(l, ref->wide);
}

void fold_lives_prefetch(const struct fold_lives *l, uint64_t id)
{
    if (l->any)
        live_track_prefetch(&l->track, id, false);
    if (l->n_wide)
        __builtin_prefetch(&l->wide[wide_home(l, id)]);
}

void fold_lives_free(struct fold_lives *l)
{
    live_track_free(&l->track);
    pages_free(l->wide, l->wide_cap * sizeof *l->wide);
    *l = (struct fold_lives){0};
}
