/*
 * cgexport-internal: what the Callgrind export's files share (cgexport.c
 * writes the profile, cgcalls.c gives its call edges their calls=).
 */
#ifndef JETT_DAEMON_EXPORT_CGEXPORT_INTERNAL_H
#define JETT_DAEMON_EXPORT_CGEXPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/agg.h"

/* A stack node: its parent, function identity, entry (identity and
 * level), recursion level before the cap, the line of the call that
 * entered it (in the parent's source) and that call's start offset
 * there.  UINT32_MAX for what is not: a root's parent, an invalid
 * node's func (it has no edge), an unknown call site. */
struct cgexport_node {
    uint32_t parent, func, entry, level, site_line, site;
};

/* The calls= of the call edges: while the capture has a CALLS record,
 * each call site's exact count (its caller identity and start offset,
 * as the profile's call lines hold them) and whether the site's frames
 * are at one edge only (one caller entry and one callee entry), else
 * the observations that crossed each edge.  Owned by the export. */
struct cgcalls_site;
struct cgcalls {
    const struct agg *agg;
    bool known; /* a CALLS record was read */
    struct cgcalls_site *sites;
    uint32_t n_sites;
    uint32_t *site_of; /* per node: its call site, UINT32_MAX without one */
    uint32_t *mark;    /* per site: the last edge that counted it, + 1 */
    uint32_t n_edges;
    /* the edges written so far, by what their calls= says */
    uint64_t exact, at_most, crossed;
};

/* Finds the call sites of the nodes[0..n) and their counts: 0, or -1
 * when out of memory. */
int cgcalls_take(struct cgcalls *c, const struct agg *a, const struct cgexport_node *nodes,
                 uint32_t n);

/* The calls= of one edge, the nodes edges[0..n) (one caller entry, call
 * line and callee entry), whose observations that crossed it are
 * `crossed`: the sum of its call sites' counts when every frame of those
 * sites is at this edge; else the most it can have made, the smaller of
 * that sum and the callee's calls; else, a count unknown, `crossed`.
 * Call once per edge, in any order. */
uint64_t cgcalls_edge(struct cgcalls *c, const struct cgexport_node *nodes, const uint32_t *edges,
                      uint32_t n, uint64_t crossed);

void cgcalls_free(struct cgcalls *c);

#endif
