/* agg_window: the live records of recent ids (see agg_window.h). */
#include "daemon/agg_window.h"
#include "daemon/agg_pages.h"

int agg_window_resize(struct agg_window *w, uint64_t cap, uint64_t base)
{
    uint64_t *slots = agg_pages_alloc(agg_window_bytes(cap));
    if (slots == NULL)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        slots[i] = AGG_LIVE_EMPTY;
    if (w->cap == 0)
        w->base = base;
    for (uint64_t i = 0; i < w->cap; i++) {
        uint64_t id = w->base + i;
        slots[id & (cap - 1)] = w->slots[id & (w->cap - 1)];
    }
    agg_pages_free(w->slots, agg_window_bytes(w->cap));
    w->slots = slots;
    w->cap = cap;
    return 0;
}

void agg_window_free(struct agg_window *w)
{
    agg_pages_free(w->slots, agg_window_bytes(w->cap));
    *w = (struct agg_window){0};
}
