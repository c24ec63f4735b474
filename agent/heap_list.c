/* heap_list: creation and growth of Jett lists (see heap.h for sizes). */
#include "agent/heap.h"

#include <stdlib.h>
#include <string.h>

struct heap_list *heap_list_new(struct heap *h, uint32_t cap)
{
    if (!heap_attempt(h))
        return NULL;
    struct heap_list *l = malloc(sizeof *l);
    struct value *items = cap ? malloc(sizeof *items * cap) : NULL;
    if (l == NULL || (cap && items == NULL)) {
        free(l);
        free(items);
        return NULL;
    }
    l->h.rc = 1;
    l->h.type = HEAP_LIST;
    l->h.konst = 0;
    l->h.mark = h->unmarked;
    l->h.site = HEAP_SITE_NONE;
    l->h.id = h->next_id++;
    h->n_live++;
    l->h.next = h->live.next;
    l->h.prev = &h->live;
    h->live.next->prev = &l->h;
    h->live.next = &l->h;
    l->len = 0;
    l->cap = cap;
    l->items = items;
    if (h->observer)
        h->observer->allocate(h->observer_ctx, &l->h, heap_list_size(l));
    return l;
}

/* Doubles a full list's capacity (at least 4): one resize event. */
static int heap_list_grow(struct heap *h, struct heap_list *l)
{
    if (!heap_attempt(h))
        return -1;
    uint64_t old = heap_list_size(l);
    uint32_t cap = l->cap < 2 ? 4 : l->cap * 2;
    if (l->cap >= (1u << 30))
        return -1;
    struct value *items =
        safepoint_realloc(h->sp, l->items, sizeof *items * l->len, sizeof *items * cap);
    if (items == NULL)
        return -1;
    l->items = items;
    l->cap = cap;
    if (h->observer)
        h->observer->resize(h->observer_ctx, &l->h, old, heap_list_size(l));
    return 0;
}

int heap_list_push(struct heap *h, struct heap_list *l, struct value v)
{
    if (l->len == l->cap && heap_list_grow(h, l) < 0) {
        heap_release(h, v);
        return -1;
    }
    l->items[l->len++] = v;
    return 0;
}

int heap_list_insert(struct heap *h, struct heap_list *l, uint32_t at, struct value v)
{
    if (l->len == l->cap && heap_list_grow(h, l) < 0) {
        heap_release(h, v);
        return -1;
    }
    safepoint_move_all(h->sp, l->items + at + 1, l->items + at, sizeof *l->items * (l->len - at));
    l->items[at] = v;
    l->len++;
    return 0;
}
