/*
 * copy: the deep copy by which values cross tasks (spawn's arguments and
 * the namespace bindings as of the spawn, send, join's result).
 *
 * Strings, bytes, lists and maps are copied; a string constant of the
 * program, a number, bool, nil, function, task or channel is passed as
 * it is (task and channel references are counted).  The copy has the
 * same shape as the original: an object reachable twice is copied once,
 * and a cycle stays a cycle.  A list is copied with a capacity of its
 * length and a map as a literal of its entries is built (heap.h), each
 * an allocation of the heap the copy is made in, at the statement that
 * copies.  The work is iterative (any depth) and polls once per item.
 */
#ifndef JETT_AGENT_COPY_H
#define JETT_AGENT_COPY_H

#include "agent/interp-internal.h"

struct copy_seen; /* original object -> its copy */

struct copy_ctx {
    struct heap *heap;      /* where the copies are made */
    struct safepoint *sp;   /* polled per item */
    struct copy_seen *seen; /* NULL until a container is copied */
    bool oom;               /* the failure was memory, not an interrupt */
};

void copy_begin(struct copy_ctx *c, struct heap *h, struct safepoint *sp);
/* Copies v into *out (owned).  0, or -1 (nothing left over) when memory
 * ran out (c->oom) or the run was interrupted. */
int copy_value(struct copy_ctx *c, struct value v, struct value *out);
void copy_end(struct copy_ctx *c);

#endif
