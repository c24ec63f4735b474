/*
 * stacktab: the agent's stack trie, interned as a hash table of nodes
 * (parent node, function, call site) -> node id, ids dense from 0 in the
 * order nodes are created (the order their STACK entries are sent).
 *
 * Nodes are kept by id, each with two of its children (its first two,
 * then the most recently created or probed), so that a child is found by
 * its parent's node in the common case (a frame entered again from where
 * it was entered before) without hashing; the hash index of ids settles
 * the rest.  Kept by id, nodes lie in creation order, which is mostly the
 * order later events look them up again (recursion revisits its tree in
 * the same order).  So the first child, created right after its parent,
 * is checked first, and finding it starts the load of the second, which
 * lies past the first one's subtree: recursion with two calls visits the
 * second next, once the first returns (a load that waited there was most
 * of an allocation's cost in binary trees).
 *
 * The budget bounds the table's bytes: a node that would not fit is not
 * created and the caller reports the stack unavailable.  It is charged as
 * STACKTAB_SLOT_CHARGE bytes per index slot, two slots per node at most,
 * the old and the new index both while growing; what is really held
 * (STACKTAB_NODE_BYTES per node and 4 per slot, the node array
 * reallocated while the old index is already freed) is always less.
 */
#ifndef JETT_AGENT_STACKTAB_H
#define JETT_AGENT_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

#define STACKTAB_SLOT_CHARGE 20

struct stacktab_node {
    uint32_t parent, func, site_start, site_end;
    uint32_t kid[2]; /* recent children, newest first; WIRE_NONE32: none */
};

#define STACKTAB_NODE_BYTES sizeof(struct stacktab_node)

struct stacktab {
    struct stacktab_node *nodes; /* by id; room for cap / 2 */
    uint32_t *slots;             /* ids; WIRE_NONE32: empty */
    uint32_t cap, count;         /* cap: power of two, at most half full */
    uint32_t root_kid[2];        /* recent root nodes, as stacktab_node.kid */
    size_t budget;
};

void stacktab_init(struct stacktab *t, size_t budget);
void stacktab_destroy(struct stacktab *t);

/* The node's id, or WIRE_NONE32 when it does not exist yet. */
uint32_t stacktab_find(const struct stacktab *t, uint32_t parent, uint32_t func,
                       struct wire_span site);

/* Creates the node (which must not exist); its id, or WIRE_NONE32 when
 * the budget is spent. */
uint32_t stacktab_add(struct stacktab *t, uint32_t parent, uint32_t func, struct wire_span site);

/* stacktab_intern past the recent-children check. */
uint32_t stacktab_intern_probe(struct stacktab *t, uint32_t parent, uint32_t func,
                               struct wire_span site, bool *created);

static inline uint32_t *stacktab_kids(struct stacktab *t, uint32_t parent)
{
    return parent == WIRE_NONE32 ? t->root_kid : t->nodes[parent].kid;
}

/* Whether node id (a child of the parent asked about) is (func, site). */
static inline bool stacktab_is(const struct stacktab *t, uint32_t id, uint32_t func,
                               struct wire_span site)
{
    const struct stacktab_node *n = &t->nodes[id];
    return n->func == func && n->site_start == site.start && n->site_end == site.end;
}

/* The node's id, created when it did not exist (*created then says so):
 * stacktab_find, then stacktab_add when that found nothing. */
static inline uint32_t stacktab_intern(struct stacktab *t, uint32_t parent, uint32_t func,
                                       struct wire_span site, bool *created)
{
    if (t->count > 0) {
        const uint32_t *kid = stacktab_kids(t, parent);
        if (kid[0] != WIRE_NONE32 && stacktab_is(t, kid[0], func, site)) {
            *created = false;
            if (kid[1] != WIRE_NONE32)
                __builtin_prefetch(&t->nodes[kid[1]]);
            return kid[0];
        }
        if (kid[1] != WIRE_NONE32 && stacktab_is(t, kid[1], func, site)) {
            *created = false;
            return kid[1];
        }
    }
    return stacktab_intern_probe(t, parent, func, site, created);
}

#endif
