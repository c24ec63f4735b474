/* callgrind_records: appending resolved records under the budgets. */
#include <string.h>

#include "proto/callgrind-internal.h"

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
    if (m->nrecords >= CG_MAX_RECORDS)
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
    return m->values + m->nvalues;
}

/* Copies n values and then the costs padded with zeros to the event count
 * (plain loops: the counts are small, a library call costs more). */
static void put_values(uint64_t *v, const uint64_t *a, size_t n, const uint64_t *costs,
                       size_t ncosts, size_t nevents)
{
    for (size_t k = 0; k < n; k++)
        v[k] = a[k];
    for (size_t j = 0; j < nevents; j++)
        v[n + j] = j < ncosts ? costs[j] : 0;
}

/* Appends the record whose values were just written. */
static void push_record(struct cg_model *m, struct cg_part *p, const uint32_t ctx[CG_CTX_COUNT],
                        uint32_t call, size_t width)
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

int cg_model_add_cost(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT], const uint64_t *pos,
                      const uint64_t *costs, size_t ncosts, struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    size_t width = p ? p->npos + p->nevents : 0;
    uint64_t *v = record_admit(m, p, context_units(m, ctx), width, width, ncosts, err);
    if (v == NULL)
        return -1;
    put_values(v, pos, p->npos, costs, ncosts, p->nevents);
    push_record(m, p, ctx, CG_NONE, width);
    return 0;
}

int cg_model_add_call(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                      const uint32_t callee[3], uint64_t count, const uint64_t *target,
                      const uint64_t *pos, const uint64_t *costs, size_t ncosts,
                      struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    size_t width = p ? 2 * p->npos + p->nevents : 0;
    size_t a = context_units(m, ctx), b = triple_units(m, callee);
    size_t units = a == SIZE_MAX || b == SIZE_MAX ? SIZE_MAX : a + b;
    uint64_t *v = record_admit(m, p, units, width + 1, width, ncosts, err);
    if (v == NULL)
        return -1;
    if (cg_grow((void **)&m->calls, &m->calls_cap, m->ncalls + 1, sizeof *m->calls) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    m->calls[m->ncalls] = (struct cg_call){callee[0], callee[1], callee[2], count};
    for (uint32_t k = 0; k < p->npos; k++)
        v[k] = target[k];
    put_values(v + p->npos, pos, p->npos, costs, ncosts, p->nevents);
    push_record(m, p, ctx, (uint32_t)m->ncalls++, width);
    return 0;
}
