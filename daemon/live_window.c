/* live_window: the live records of recent ids (see live_window.h). */
#include "daemon/live_window.h"
#include "proto/util/pages.h"

int live_window_resize(struct live_window *w, uint64_t cap, uint64_t base, size_t reserve)
{
    if (w->slots == NULL) {
        if (live_window_bytes(cap) > reserve || (w->slots = pages_alloc(reserve)) == NULL)
            return -1;
        if (w->creators && (w->cre = pages_alloc(reserve)) == NULL) {
            pages_free(w->slots, reserve);
            w->slots = NULL;
            return -1;
        }
        w->reserved = reserve;
        w->base = base;
    }
    if (live_window_bytes(cap) > w->reserved)
        return -1;
    uint64_t old = w->cap;
    pages_in_use(w->slots, w->reserved, live_window_bytes(old), live_window_bytes(cap));
    if (w->cre)
        pages_in_use(w->cre, w->reserved, live_window_bytes(old), live_window_bytes(cap));
    for (uint64_t i = old; i < cap; i++)
        w->slots[i] = LIVE_EMPTY;
    /* doubling: the ids whose `old` bit is set move up by `old` */
    for (uint64_t i = 0; old && i < old; i++) {
        uint64_t id = w->base + ((i - w->base) & (old - 1));
        if (id & old && w->slots[i] != LIVE_EMPTY) {
            w->slots[i + old] = w->slots[i];
            w->slots[i] = LIVE_EMPTY;
            if (w->cre)
                w->cre[i + old] = w->cre[i];
        }
    }
    w->cap = cap;
    return 0;
}

void live_window_free(struct live_window *w)
{
    pages_free(w->slots, w->reserved);
    pages_free(w->cre, w->reserved);
    *w = (struct live_window){.creators = w->creators};
}
