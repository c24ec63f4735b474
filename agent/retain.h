/*
 * retain: the walk of retained holders (jett-profile(7), "Retained
 * holders").
 *
 * Once a run has ended, what is still live on its heap is credited to
 * the namespace-level binding that first reaches it: bindings in the
 * program's global order (namespaces in load order, each one's bindings
 * in declaration order), each object once, cycles included (a mark bit
 * in the object's header says it was reached, against the heap's value
 * for "not reached", which a walk that reaches everything flips instead
 * of clearing every mark).  Objects no binding
 * reaches are credited to no holder.  Each object's creation site is the
 * stack node its allocate event had (heap_obj.site), whose function the
 * stack table gives.
 *
 * The walk reads one runtime state and nothing else: no Jett object is
 * allocated, no heap event emitted, no reference count changed, and
 * every object reads as not reached again when it returns.  Its own memory is charged
 * against `budget` as the man page says; past it the walk stops and the
 * records say so.
 */
#ifndef JETT_AGENT_RETAIN_H
#define JETT_AGENT_RETAIN_H

#include <stddef.h>

#include "agent/interp.h"
#include "agent/stacktab.h"
#include "proto/wire.h"

/* Bytes the walk charges: per function slot (every function of the
 * program, <truncated-stack>, unknown) the holder's bytes and objects
 * (16), its place in the list of slots the holder reached (4) and its row
 * in the record (20); per level of the path from a binding's value down
 * to the object visited, 16. */
#define RETAIN_SLOT_CHARGE 40u
#define RETAIN_LEVEL_CHARGE 16u
#define RETAIN_FIRST_LEVELS 64u

/* Receives each RETAINED record as the walk makes it (its rows are valid
 * during the call only): 0, or -1 to stop the walk (a send that failed). */
typedef int (*retain_emit_fn)(void *ctx, const struct wire_retained *rec);

/* Walks the state's heap from its bindings, `tab` naming the creation
 * sites, and emits one record per binding that holds something, then the
 * closing record (no holder: the objects no binding reaches).  Returns 0
 * (the walk complete), 1 (the budget stopped it; the records say so) or
 * -1 (emit stopped it). */
int retain_walk(struct interp_state *s, const struct stacktab *tab, size_t budget,
                retain_emit_fn emit, void *ctx);

#endif
