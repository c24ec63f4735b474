/*
 * memblock: a worker's heap events, kept on its own thread until they go
 * into the run's one stream together (memory mode with several workers).
 *
 * Every heap event used to take the writers' lock: two allocating
 * workers then bounced the lock, the ring and the memory path's state
 * between their cores on each event (5-6x the run's CPU where one worker
 * costs 1.3-1.8x).  Now a worker keeps a block of its events, each with
 * its stack node and statement resolved as it happens, and appends the
 * whole block under the lock, where the events get their sequences and
 * allocation ids in the stream's order, are counted, folded and encoded
 * exactly as one thread's are.
 *
 * The stream stays one order the run could have taken: a block holds the
 * events of one task on one worker, and is appended before anything that
 * lets another thread see what those events made or freed: the task
 * gives its worker up, sends a message, spawns, ends; the worker drops
 * an ended task's leftovers; the block is full.  So an object's allocate
 * always comes before the events other threads have of it.
 *
 * An allocate's id is not known until its block is appended: the object
 * carries a provisional id (MEMBLOCK_PROVISIONAL | its index in the
 * block) meanwhile, which a resize or free in the same block refers to,
 * and gets its run-wide id when the block is appended (unless it was
 * freed by then).
 */
#ifndef JETT_AGENT_MEMBLOCK_H
#define JETT_AGENT_MEMBLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/heap.h"
#include "proto/wire.h"

/* Events a block holds: a lock taken once per block, not per event. */
#define MEMBLOCK_EVENTS 512u
#define MEMBLOCK_PROVISIONAL (UINT64_C(1) << 63)

struct memblock_event {
    struct heap_obj *obj; /* an allocate's object, while it lives and where it is */
    uint64_t id;          /* provisional for an object of this block */
    union {
        uint64_t old_size; /* a resize's or free's */
        uint64_t run_id;   /* an allocate's run-wide id, set as the block is appended */
    };
    uint64_t new_size;
    struct wire_span span;
    uint32_t leaf;
    uint8_t op; /* enum heap_op */
    bool freed; /* an allocate freed in the block: its object is gone */
};

_Static_assert(sizeof(struct memblock_event) == 48, "an event in three quarters of a line");

struct memblock {
    struct wire_exec exec; /* what the events carry of their task and thread */
    uint32_t n;
    struct memblock_event ev[MEMBLOCK_EVENTS];
};

/* The event's entry in the block (room was checked), the allocate's
 * object given its provisional id and a free's allocate marked gone. */
static inline void memblock_add(struct memblock *b, enum heap_op op, struct heap_obj *o,
                                uint64_t old, uint64_t neu, uint32_t leaf, struct wire_span span)
{
    uint32_t i = b->n++;
    uint64_t id = o->id;
    if (op == HEAP_OP_ALLOCATE) {
        id = o->id = MEMBLOCK_PROVISIONAL | i;
    } else if (id & MEMBLOCK_PROVISIONAL) {
        struct memblock_event *a = &b->ev[id & ~MEMBLOCK_PROVISIONAL];
        if (op == HEAP_OP_FREE)
            a->freed = true;
        else
            a->obj = o; /* a string's resize may move it */
    }
    b->ev[i] = (struct memblock_event){.obj = o,
                                       .id = id,
                                       .old_size = old,
                                       .new_size = neu,
                                       .span = span,
                                       .leaf = leaf,
                                       .op = (uint8_t)op,
                                       .freed = false};
}

/* The run-wide id of event e's object (its allocate's, when it is of
 * this block), once the events before e have theirs. */
static inline uint64_t memblock_run_id(const struct memblock *b, const struct memblock_event *e)
{
    return e->id & MEMBLOCK_PROVISIONAL ? b->ev[e->id & ~MEMBLOCK_PROVISIONAL].run_id : e->id;
}

/* An allocate's run-wide id, as its block is appended: its object's
 * too, when it still lives. */
static inline void memblock_set_run_id(struct memblock_event *e, uint64_t id)
{
    e->run_id = id;
    if (!e->freed)
        e->obj->id = id;
}

#endif
