/* memwire: the memory event path's setup and its rare ways (memwire.h). */
#include <string.h>

#include "agent/memwire.h"

void memwire_init(struct memwire *w, struct collector *c, bool fold)
{
    memset(w, 0, sizeof *w);
    w->c = c;
    w->ring = collector_ring(c);
    w->buf = w->ring->buf;
    w->mask = w->ring->cap - 1;
    w->wbytes = w->pbytes = w->limit = evring_pos_bytes(w->ring->written);
    w->wcount = w->ring->written & EVRING_COUNT_MASK;
    w->fold = fold;
    wire_compact_enc_init(&w->enc);
}

void memwire_set_exec(struct memwire *w, struct wire_exec exec)
{
    const struct wire_exec *x = &w->enc.s.exec;
    w->exec = exec;
    w->exec_new = x->task != exec.task || x->actor != exec.actor || x->thread != exec.thread;
}

/* The ring's position of the counts. */
static uint64_t position(const struct memwire *w)
{
    return (w->wbytes & EVRING_BYTES_MASK) << EVRING_COUNT_BITS | (w->wcount & EVRING_COUNT_MASK);
}

void memwire_sync(struct memwire *w)
{
    w->ring->written = position(w);
}

/* The counts from the ring's `written` after collector_put moved it. */
static void resync(struct memwire *w)
{
    const struct evring *r = w->ring;
    uint64_t was = position(w);
    w->wbytes += evring_bytes_between(was, r->written);
    w->wcount += evring_entries_between(was, r->written);
    w->pbytes = w->wbytes; /* it published everything */
}

/* The limit: the ring's end or the consumer's tail, whichever is nearer,
 * and the hold. */
static void set_limit(struct memwire *w)
{
    struct evring *r = w->ring;
    size_t ahead = (size_t)w->mask + 1 - (size_t)(w->wbytes & w->mask);
    size_t room = evring_room(r, r->written, ahead);
    uint64_t ring = w->wbytes + (room < ahead ? room : ahead);
    uint64_t hold = w->pbytes + MEMWIRE_HOLD + WIRE_COMPACT_MAX;
    w->limit = ring < hold ? ring : hold;
}

void memwire_publish(struct memwire *w)
{
    memwire_sync(w);
    evring_publish(w->ring);
    w->pbytes = w->wbytes;
    set_limit(w);
}

bool memwire_refill(struct memwire *w)
{
    if (w->wbytes - w->pbytes >= MEMWIRE_HOLD) {
        memwire_publish(w);
    } else {
        memwire_sync(w);
        set_limit(w);
    }
    return w->limit - w->wbytes >= WIRE_COMPACT_MAX;
}

void memwire_put_entry(struct memwire *w, const uint8_t *e, size_t n)
{
    memwire_sync(w);
    collector_put(w->c, e, n, true);
    resync(w);
    set_limit(w);
}

void memwire_put_slow(struct memwire *w, uint64_t seq, uint64_t id, uint64_t old, uint64_t neu,
                      uint32_t stack, struct wire_span span)
{
    uint8_t op = old == WIRE_NONE64   ? WIRE_OP_ALLOCATE
                 : neu == WIRE_NONE64 ? WIRE_OP_FREE
                                      : WIRE_OP_RESIZE;
    struct wire_alloc a = {seq, op, id, old, neu, w->exec, stack, span};
    uint8_t e[WIRE_COMPACT_MAX];
    memwire_put_entry(w, e, wire_compact_put(&w->enc, e, &a));
    w->exec_new = false; /* wire_compact_put wrote it if it was new */
}

void memwire_stack_slow(struct memwire *w, const struct wire_stack *st)
{
    uint8_t e[WIRE_STACK_SIZE];
    memwire_put_entry(w, e, wire_put_stack(e, st));
}
