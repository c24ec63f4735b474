/* callgrind_records: appending resolved records under the budgets. */
#include <string.h>

#include "proto/callgrind/callgrind-append.h"

/* UTF-16 length of a name reference, or SIZE_MAX if it is not valid. */
static size_t name_units(const struct cg_model *m, enum cg_ns ns, uint32_t id, bool optional)
{
    if (id == CG_NONE)
        return optional ? 0 : SIZE_MAX;
    return id < m->nnames[ns] ? m->names[ns][id].units : SIZE_MAX;
}

/* Units of the names of an (object, file, function) triple, or SIZE_MAX.
 * The function's own file is checked but not charged (DESIGN 11 counts the
 * object, file and function of a record). */
static size_t triple_units(const struct cg_model *m, const uint32_t t[3])
{
    size_t a = name_units(m, CG_NS_OBJECT, t[0], true);
    size_t b = name_units(m, CG_NS_FILE, t[1], true);
    size_t c = name_units(m, CG_NS_FUNCTION, t[2], false);
    if (a == SIZE_MAX || b == SIZE_MAX || c == SIZE_MAX)
        return SIZE_MAX;
    return a + b + c;
}

/* Units of a caller context (its triple; the function's own file checked),
 * or SIZE_MAX.  Remembered for the last context seen: it changes at fn=,
 * fl= or ob= lines, not per record, and a valid name never changes. */
static size_t context_units(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT])
{
    struct cg_model_index *x = m->index;
    if (x->ctx_units != SIZE_MAX && memcmp(x->ctx_key, ctx, sizeof x->ctx_key) == 0)
        return x->ctx_units;
    size_t units = triple_units(m, ctx);
    if (name_units(m, CG_NS_FILE, ctx[CG_CTX_FN_FL], true) == SIZE_MAX)
        units = SIZE_MAX;
    memcpy(x->ctx_key, ctx, sizeof x->ctx_key);
    x->ctx_units = units;
    return units;
}

/* Checks the common conditions, charges the expansion budget and makes
 * room for a record of `width` values: where they go, or NULL. */
static uint64_t *record_admit(struct cg_model *m, const struct cg_part *p, size_t units,
                              size_t columns, size_t width, size_t ncosts, struct cg_error *err)
{
    if (p == NULL || p->nevents == 0)
        return cg_fail(err, CG_SYNTAX, 0, "record before the part's 'events:' line"), NULL;
    if (ncosts > p->nevents)
        return cg_fail(err, CG_SYNTAX, 0, "%zu costs for %u events", ncosts, p->nevents), NULL;
    if (units == SIZE_MAX)
        return cg_fail(err, CG_SYNTAX, 0, "record names an undefined name"), NULL;
    if (m->nvalues + columns > UINT32_MAX)
        return cg_fail(err, CG_RESOURCE, 0, "too many values"), NULL;
    if (m->index->dropped + m->nrecords >= CG_MAX_RECORDS)
        return cg_fail(err, CG_RESOURCE, 0, "more than %u records", CG_MAX_RECORDS), NULL;
    size_t cost = CG_RECORD_OVERHEAD + units + CG_COLUMN_COST * columns;
    if (cost > CG_EXPANSION_BUDGET - m->expansion)
        return cg_fail(err, CG_RESOURCE, 0, "resolved records exceed the expansion budget of %zu",
                       CG_EXPANSION_BUDGET),
               NULL;
    if (cg_grow((void **)&m->records, &m->records_cap, m->nrecords + 1, sizeof *m->records) < 0 ||
        cg_grow((void **)&m->values, &m->values_cap, m->nvalues + width, sizeof *m->values) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory"), NULL;
    m->expansion += cost;
    struct cg_model_index *x = m->index;
    cg_prefault_ahead(&x->prefaulted[0], m->records, (m->nrecords + 1) * sizeof *m->records,
                      m->records_cap * sizeof *m->records);
    cg_prefault_ahead(&x->prefaulted[1], m->values, (m->nvalues + width) * sizeof *m->values,
                      m->values_cap * sizeof *m->values);
    /* Below these, cg_cost_slot needs no room, no mapping and no count
     * checks; they are recomputed each time this path runs. */
    size_t r = x->prefaulted[0] / sizeof *m->records, v = x->prefaulted[1] / sizeof *m->values;
    r = r < m->records_cap ? r : m->records_cap;
    v = v < m->values_cap ? v : m->values_cap;
    x->fast_records = r < CG_MAX_RECORDS - x->dropped ? r : CG_MAX_RECORDS - x->dropped;
    x->fast_values = v < UINT32_MAX ? v : UINT32_MAX;
    return m->values + m->nvalues;
}

/* Writes a record's positions and costs (padded with zeros to the event
 * count) with plain loops: the counts are small, a library call costs more. */
static inline void store_values(uint64_t *v, const uint64_t *pos, size_t npos,
                                const uint64_t *costs, size_t ncosts, size_t nevents)
{
    for (size_t i = 0; i < npos; i++)
        v[i] = pos[i];
    for (size_t j = 0; j < nevents; j++)
        v[npos + j] = j < ncosts ? costs[j] : 0;
}

/* The callee side of a call record being added. */
struct callee_in {
    const uint32_t *names; /* object, file, function */
    uint64_t count;
    const uint64_t *target;
};

/* Appends a record, a call when c is not NULL, with every check (the
 * general path; cg_cost_slot is the short one for cost records). */
static int add_record(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                      const struct callee_in *c, const uint64_t *pos, const uint64_t *costs,
                      size_t ncosts, struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    size_t npos = p ? p->npos : 0, nevents = p ? p->nevents : 0;
    size_t width = (c ? 2 : 1) * npos + nevents, units = context_units(m, ctx);
    if (c) {
        size_t b = triple_units(m, c->names);
        units = units == SIZE_MAX || b == SIZE_MAX ? SIZE_MAX : units + b;
    }
    uint64_t *v = record_admit(m, p, units, width + (c != NULL), width, ncosts, err);
    if (v == NULL)
        return -1;
    uint32_t call = CG_NONE;
    if (c) {
        if (cg_grow((void **)&m->calls, &m->calls_cap, m->ncalls + 1, sizeof *m->calls) < 0)
            return cg_fail(err, CG_RESOURCE, 0, "out of memory");
        const uint32_t *k = c->names;
        m->calls[m->ncalls] = (struct cg_call){k[0], k[1], k[2], c->count};
        call = (uint32_t)m->ncalls++;
        for (size_t i = 0; i < npos; i++)
            *v++ = c->target[i];
    }
    store_values(v, pos, npos, costs, ncosts, nevents);
    cg_store_record(m, p, ctx, call, width);
    return 0;
}

int cg_model_add_cost(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT], const uint64_t *pos,
                      const uint64_t *costs, size_t ncosts, struct cg_error *err)
{
    struct cg_slot s;
    if (!cg_cost_slot(m, ctx, &s) || ncosts > s.part->nevents)
        return add_record(m, ctx, NULL, pos, costs, ncosts, err);
    store_values(s.values, pos, s.part->npos, costs, ncosts, ncosts);
    cg_cost_commit(m, ctx, &s, ncosts);
    return 0;
}

int cg_model_add_call(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                      const uint32_t callee[3], uint64_t count, const uint64_t *target,
                      const uint64_t *pos, const uint64_t *costs, size_t ncosts,
                      struct cg_error *err)
{
    const struct callee_in c = {callee, count, target};
    return add_record(m, ctx, &c, pos, costs, ncosts, err);
}
