/* heap_map: insertion-ordered string-keyed maps with an open-addressing
 * index (see heap.h for sizes).  Entries are kept in insertion order in
 * `entries`; `index` maps a hash to an entry number by linear probing. */
#include "agent/heap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t heap_map_round(uint32_t n)
{
    uint32_t c = 8;
    while (c < n)
        c *= 2;
    return c;
}

/* Fills a fresh index of 2 * cap slots for the current entries and
 * installs it (the old one is freed). */
static void heap_map_install_index(struct safepoint *sp, struct heap_map *m, int32_t *index)
{
    uint32_t size = m->cap * 2;
    safepoint_fill(sp, index, 0xff, sizeof *index * size);
    free(m->index);
    m->index = index;
    m->imask = size - 1;
    for (uint32_t e = 0; e < m->used; e++) {
        safepoint_poll(sp);
        uint32_t i = m->entries[e].hash & m->imask;
        while (index[i] >= 0)
            i = (i + 1) & m->imask;
        index[i] = (int32_t)e;
    }
}

/* A new map's empty index (large for a copy of a large map). */
static int heap_map_reindex(struct safepoint *sp, struct heap_map *m)
{
    int32_t *index = malloc(sizeof *index * m->cap * 2);
    if (index == NULL)
        return -1;
    heap_map_install_index(sp, m, index);
    return 0;
}

struct heap_map *heap_map_new(struct heap *h, uint32_t n)
{
    if (!heap_attempt(h))
        return NULL;
    struct heap_map *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    if (n > 0) {
        m->cap = heap_map_round(n);
        m->entries = malloc(sizeof *m->entries * m->cap);
        if (m->entries == NULL || heap_map_reindex(h->sp, m) < 0) {
            free(m->entries);
            free(m);
            return NULL;
        }
    }
    m->h.rc = 1;
    m->h.type = HEAP_MAP;
    m->h.mark = h->unmarked;
    m->h.site = HEAP_SITE_NONE;
    m->h.id = h->next_id++;
    h->n_live++;
    m->h.next = h->live.next;
    m->h.prev = &h->live;
    h->live.next->prev = &m->h;
    h->live.next = &m->h;
    if (h->observer)
        h->observer->allocate(h->observer_ctx, &m->h, heap_map_size(m));
    return m;
}

/* A key of the same hash and length is compared a chunk at a time (it
 * is most often the same bytes, all of them compared). */
static int heap_map_find(struct safepoint *sp, const struct heap_map *m, const char *key,
                         uint32_t len, uint32_t hash)
{
    if (m->imask == 0)
        return -1;
    uint32_t i = hash & m->imask;
    for (;;) {
        int32_t e = m->index[i];
        if (e < 0)
            return -1;
        const struct heap_map_entry *en = &m->entries[e];
        if (en->hash == hash && en->key != NULL && en->key->len == len &&
            (en->key->data == key || safepoint_compare(sp, en->key->data, key, len) == 0))
            return e;
        i = (i + 1) & m->imask;
    }
}

struct value *heap_map_get(struct safepoint *sp, struct heap_map *m, struct heap_str *key)
{
    int e = heap_map_find(sp, m, key->data, key->len, heap_str_hash(sp, key));
    return e < 0 ? NULL : &m->entries[e].val;
}

/* Drops removed entries, keeping order; the capacity does not change. */
static void heap_map_compact(struct safepoint *sp, struct heap_map *m)
{
    uint32_t w = 0;
    for (uint32_t r = 0; r < m->used; r++) {
        safepoint_poll(sp);
        if (m->entries[r].key != NULL)
            m->entries[w++] = m->entries[r];
    }
    m->used = w;
}

/* Makes room for one more entry: compact, or double (one resize event).
 * Everything that can fail is allocated before the map is changed. */
static int heap_map_make_room(struct heap *h, struct heap_map *m)
{
    if (m->used < m->cap)
        return 0;
    bool grow = !(m->len < m->used && m->len <= m->cap / 2);
    if (grow) {
        if (!heap_attempt(h) || m->cap >= (1u << 28))
            return -1;
    }
    uint32_t cap = !grow ? m->cap : m->cap ? m->cap * 2 : 8;
    int32_t *index = malloc(sizeof *index * cap * 2);
    struct heap_map_entry *entries =
        grow
            ? safepoint_realloc(h->sp, m->entries, sizeof *entries * m->used, sizeof *entries * cap)
            : m->entries;
    if (index == NULL || entries == NULL) {
        free(index);
        return -1;
    }
    uint64_t old = heap_map_size(m);
    m->entries = entries;
    m->cap = cap;
    heap_map_compact(h->sp, m);
    heap_map_install_index(h->sp, m, index);
    if (grow && h->observer)
        h->observer->resize(h->observer_ctx, &m->h, old, heap_map_size(m));
    return 0;
}

int heap_map_set(struct heap *h, struct heap_map *m, struct heap_str *key, struct value v)
{
    uint32_t hash = heap_str_hash(h->sp, key);
    int e = heap_map_find(h->sp, m, key->data, key->len, hash);
    if (e >= 0) {
        struct value old = m->entries[e].val;
        m->entries[e].val = v;
        heap_release(h, old);
        return 0;
    }
    if (heap_map_make_room(h, m) < 0) {
        heap_release(h, v);
        return -1;
    }
    uint32_t n = m->used++;
    m->entries[n] = (struct heap_map_entry){key, hash, v};
    heap_retain(val_str(key));
    m->len++;
    uint32_t i = hash & m->imask;
    while (m->index[i] >= 0)
        i = (i + 1) & m->imask;
    m->index[i] = (int32_t)n;
    return 0;
}

int heap_map_remove(struct heap *h, struct heap_map *m, struct heap_str *key, struct value *out)
{
    int e = heap_map_find(h->sp, m, key->data, key->len, heap_str_hash(h->sp, key));
    if (e < 0)
        return -1;
    struct heap_map_entry *en = &m->entries[e];
    *out = en->val;
    heap_release(h, val_str(en->key));
    en->key = NULL;
    en->val = VAL_NIL;
    m->len--;
    return 0;
}
