/* callgrind: the short path for appending a cost record, inline in both
 * the builder (callgrind_records.c) and the parser (callgrind_body.c). */
#ifndef JETT_PROTO_CALLGRIND_APPEND_H
#define JETT_PROTO_CALLGRIND_APPEND_H

#include <stdbool.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

/* Appends the record of the current part whose `width` values were just
 * stored at m->values + m->nvalues. */
static inline void cg_store_record(struct cg_model *m, struct cg_part *p,
                                   const uint32_t ctx[CG_CTX_COUNT], uint32_t call, size_t width)
{
    m->records[m->nrecords++] = (struct cg_record){.ob = ctx[CG_CTX_OB],
                                                   .fl = ctx[CG_CTX_FL],
                                                   .fn = ctx[CG_CTX_FN],
                                                   .fn_fl = ctx[CG_CTX_FN_FL],
                                                   .values = (uint32_t)m->nvalues,
                                                   .call = call};
    m->nvalues += width;
    p->nrecords++;
}

/* Where a cost record's values go (cg_cost_slot), and what committing
 * them takes, so that it is not worked out twice. */
struct cg_slot {
    uint64_t *values;
    struct cg_part *part;
    size_t width, cost;
};

/*
 * A slot for the values of a cost record in context ctx, when every check
 * of the general path passes without work: the context is the last
 * record's (its names known valid), the arrays have room and are mapped
 * below the counts the general path left, and the budget has room.  False
 * otherwise.  The caller writes npos positions and up to nevents costs
 * there, then calls cg_cost_commit, or abandons the slot (nothing is
 * appended).
 */
static inline bool cg_cost_slot(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                                struct cg_slot *s)
{
    const struct cg_model_index *x = m->index;
    struct cg_part *p = cg_model_part(m);
    if (p == NULL || p->nevents == 0 || x->ctx_units == SIZE_MAX ||
        memcmp(x->ctx_key, ctx, sizeof x->ctx_key) != 0)
        return false;
    size_t width = p->npos + p->nevents;
    size_t cost = CG_RECORD_OVERHEAD + x->ctx_units + CG_COLUMN_COST * width;
    /* nvalues may have passed fast_values since (header values): no
     * unsigned difference here */
    if (m->nrecords >= x->fast_records || m->nvalues + width > x->fast_values ||
        cost > CG_EXPANSION_BUDGET - m->expansion)
        return false;
    *s = (struct cg_slot){m->values + m->nvalues, p, width, cost};
    return true;
}

/* How many cost records of the slot's shape (the slot's own included) may
 * be appended in a row without the general path's checks: below the
 * mapped counts cg_cost_slot allows and within the budget.  At least 1. */
static inline size_t cg_cost_run(const struct cg_model *m, const struct cg_slot *s)
{
    const struct cg_model_index *x = m->index;
    size_t n = x->fast_records - m->nrecords;
    size_t v = (x->fast_values - m->nvalues) / s->width;
    size_t b = (CG_EXPANSION_BUDGET - m->expansion) / s->cost;
    n = v < n ? v : n;
    return b < n ? b : n;
}

/* Appends the cost record written into the slot: ncosts (<= nevents)
 * costs, the rest zero. */
static inline void cg_cost_commit(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                                  const struct cg_slot *s, size_t ncosts)
{
    uint64_t *costs = s->values + s->part->npos;
    for (size_t j = ncosts; j < s->part->nevents; j++)
        costs[j] = 0;
    m->expansion += s->cost;
    cg_store_record(m, s->part, ctx, CG_NONE, s->width);
}

#endif
