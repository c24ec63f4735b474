/* cgcalls: the calls= of the Callgrind export's call edges from the
 * run's exact call counts (cgexport-internal.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/export/cgexport-internal.h"
#include "proto/util/radix.h"

#define NONE UINT32_MAX

/* A call site of the nodes: the calls it made (while known), and the
 * edge its frames are at, caller and callee entries, while only one. */
struct cgcalls_site {
    uint64_t calls;
    bool known, shared;
    uint32_t caller_entry, callee_entry;
};

/* A record sorted by key: a node, or a call line's count. */
struct keyed {
    uint64_t key;
    uint64_t value;
};

static int sort_keyed(struct keyed **arr, size_t n)
{
    struct keyed *scratch = malloc((n + 1) * sizeof *scratch);
    if (!scratch)
        return -1;
    void *base = *arr, *tmp = scratch;
    radix_sort(&base, &tmp, n, sizeof **arr, offsetof(struct keyed, key));
    *arr = base;
    free(tmp);
    return 0;
}

/* The profile's call lines, (caller identity, start) -> calls, sorted:
 * the count of every call the site made, whatever it called.  NULL when
 * out of memory. */
static struct keyed *call_lines(const struct agg *a, size_t *n)
{
    size_t cap = 64;
    struct keyed *l = malloc(cap * sizeof *l);
    struct attrib_hot_iter it;
    struct attrib_call c;
    *n = 0;
    attrib_call_begin(a, &it);
    while (l && attrib_call_next(a, &it, &c)) {
        if (*n == cap) {
            struct keyed *m = realloc(l, 2 * cap * sizeof *l);
            if (!m)
                free(l);
            l = m, cap *= 2;
            if (!l)
                return NULL;
        }
        l[(*n)++] = (struct keyed){(uint64_t)c.ident << 32 | c.start, c.calls};
    }
    return l && sort_keyed(&l, *n) == 0 ? l : (free(l), NULL);
}

/* The count of the site `key` among the sorted call lines. */
static bool count_of(const struct keyed *l, size_t n, uint64_t key, uint64_t *calls)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || l[lo].key != key)
        return false;
    *calls = l[lo].value;
    return true;
}

/* Numbers the call sites of the sorted nodes (a site is the caller's
 * identity and the call's start), each with its count and whether its
 * frames are at more than one edge. */
static int number_sites(struct cgcalls *c, const struct cgexport_node *nodes,
                        const struct keyed *by_site, size_t n, const struct keyed *lines,
                        size_t n_lines)
{
    c->sites = malloc((n + 1) * sizeof *c->sites);
    if (!c->sites)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct cgexport_node *k = &nodes[by_site[i].value];
        uint32_t caller = nodes[k->parent].entry;
        if (i == 0 || by_site[i].key != by_site[i - 1].key) {
            struct cgcalls_site *s = &c->sites[c->n_sites++];
            *s = (struct cgcalls_site){0, false, false, caller, k->entry};
            s->known = k->site != NONE && count_of(lines, n_lines, by_site[i].key, &s->calls);
        }
        struct cgcalls_site *s = &c->sites[c->n_sites - 1];
        s->shared |= s->caller_entry != caller || s->callee_entry != k->entry;
        c->site_of[by_site[i].value] = c->n_sites - 1;
    }
    return 0;
}

int cgcalls_take(struct cgcalls *c, const struct agg *a, const struct cgexport_node *nodes,
                 uint32_t n)
{
    memset(c, 0, sizeof *c);
    c->agg = a;
    c->known = agg_mode(a) == WIRE_MODE_CPU && attrib_calls_known(a);
    if (!c->known)
        return 0;
    c->site_of = malloc(((size_t)n + 1) * sizeof *c->site_of);
    struct keyed *by_site = malloc(((size_t)n + 1) * sizeof *by_site);
    size_t m = 0, n_lines = 0;
    for (uint32_t i = 0; c->site_of && by_site && i < n; i++) {
        c->site_of[i] = NONE;
        if (nodes[i].func != NONE && nodes[i].parent != NONE)
            by_site[m++] =
                (struct keyed){(uint64_t)nodes[nodes[i].parent].func << 32 | nodes[i].site, i};
    }
    struct keyed *lines = c->site_of && by_site ? call_lines(a, &n_lines) : NULL;
    int rc = lines && sort_keyed(&by_site, m) == 0 &&
                     number_sites(c, nodes, by_site, m, lines, n_lines) == 0
                 ? 0
                 : -1;
    if (rc == 0 && !(c->mark = calloc((size_t)c->n_sites + 1, sizeof *c->mark)))
        rc = -1;
    free(by_site), free(lines);
    return rc;
}

uint64_t cgcalls_edge(struct cgcalls *c, const struct cgexport_node *nodes, const uint32_t *edges,
                      uint32_t n, uint64_t crossed)
{
    if (!c->known) {
        c->crossed++;
        return crossed;
    }
    uint32_t edge = ++c->n_edges;
    bool known = n > 0, shared = false;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t site = c->site_of[edges[i]];
        if (site == NONE) {
            known = false;
            continue;
        }
        if (c->mark[site] == edge)
            continue; /* another frame of a site already counted */
        c->mark[site] = edge;
        const struct cgcalls_site *s = &c->sites[site];
        known &= s->known;
        shared |= s->shared;
        sum = sum + s->calls < sum ? UINT64_MAX : sum + s->calls;
    }
    if (known && !shared) {
        c->exact++;
        return sum;
    }
    struct attrib_fn f;
    bool callee = attrib_fn(c->agg, nodes[edges[0]].func, &f);
    if (!known && !callee) {
        c->crossed++;
        return crossed;
    }
    c->at_most++;
    return !known ? f.calls : callee && f.calls < sum ? f.calls : sum;
}

void cgcalls_free(struct cgcalls *c)
{
    free(c->sites), free(c->site_of), free(c->mark);
    memset(c, 0, sizeof *c);
}
