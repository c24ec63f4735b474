/*
 * stacktab: the agent's stack trie, interned as a hash table of nodes
 * (parent node, function, call site) -> node id, ids dense from 0 in the
 * order nodes are created (the order their STACK entries are sent).
 *
 * The table charges its real bytes against a budget; a node that would
 * not fit is not created and the caller reports the stack unavailable.
 */
#ifndef JETT_AGENT_STACKTAB_H
#define JETT_AGENT_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

struct stacktab_node {
    uint32_t parent, func, site_start, site_end;
    uint32_t id; /* WIRE_NONE32: empty slot */
};

struct stacktab {
    struct stacktab_node *slots;
    uint32_t cap, count; /* cap: power of two, at most half full */
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

/* The node's id, created when it did not exist (*created then says so):
 * stacktab_find, then stacktab_add when that found nothing, in one probe. */
uint32_t stacktab_intern(struct stacktab *t, uint32_t parent, uint32_t func, struct wire_span site,
                         bool *created);

#endif
