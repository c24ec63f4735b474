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

/* Checks the common conditions and charges the expansion budget. */
static int record_admit(struct cg_model *m, size_t units, size_t columns, size_t ncosts,
                        struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    if (p == NULL || p->nevents == 0)
        return cg_fail(err, CG_SYNTAX, 0, "record before the part's 'events:' line");
    if (ncosts > p->nevents)
        return cg_fail(err, CG_SYNTAX, 0, "%zu costs for %u events", ncosts, p->nevents);
    if (units == SIZE_MAX)
        return cg_fail(err, CG_SYNTAX, 0, "record names an undefined name");
    if (m->nvalues + columns > UINT32_MAX)
        return cg_fail(err, CG_RESOURCE, 0, "too many values");
    if (m->nrecords >= CG_MAX_RECORDS)
        return cg_fail(err, CG_RESOURCE, 0, "more than %u records", CG_MAX_RECORDS);
    size_t cost = CG_RECORD_OVERHEAD + units + CG_COLUMN_COST * columns;
    if (cost > CG_EXPANSION_BUDGET - m->expansion)
        return cg_fail(err, CG_RESOURCE, 0, "resolved records exceed the expansion budget of %zu",
                       CG_EXPANSION_BUDGET);
    if (cg_grow((void **)&m->records, &m->records_cap, m->nrecords + 1, sizeof *m->records) < 0 ||
        cg_grow((void **)&m->values, &m->values_cap, m->nvalues + 2 * p->npos + p->nevents,
                sizeof *m->values) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    m->expansion += cost;
    return 0;
}

/* Appends values then pads the costs to the event count. */
static void push_costs(struct cg_model *m, const struct cg_part *p, const uint64_t *costs,
                       size_t ncosts)
{
    if (ncosts)
        memcpy(m->values + m->nvalues, costs, ncosts * sizeof *costs);
    memset(m->values + m->nvalues + ncosts, 0, (p->nevents - ncosts) * sizeof *costs);
    m->nvalues += p->nevents;
}

int cg_model_add_cost(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT], const uint64_t *pos,
                      const uint64_t *costs, size_t ncosts, struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    size_t columns = p ? p->npos + p->nevents : 0;
    size_t units = triple_units(m, ctx);
    if (name_units(m, CG_NS_FILE, ctx[CG_CTX_FN_FL], true) == SIZE_MAX)
        units = SIZE_MAX;
    if (record_admit(m, units, columns, ncosts, err) < 0)
        return -1;
    m->records[m->nrecords++] = (struct cg_record){.ob = ctx[CG_CTX_OB],
                                                   .fl = ctx[CG_CTX_FL],
                                                   .fn = ctx[CG_CTX_FN],
                                                   .fn_fl = ctx[CG_CTX_FN_FL],
                                                   .values = (uint32_t)m->nvalues,
                                                   .call = CG_NONE};
    memcpy(m->values + m->nvalues, pos, p->npos * sizeof *pos);
    m->nvalues += p->npos;
    push_costs(m, p, costs, ncosts);
    p->nrecords++;
    return 0;
}

int cg_model_add_call(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                      const uint32_t callee[3], uint64_t count, const uint64_t *target,
                      const uint64_t *pos, const uint64_t *costs, size_t ncosts,
                      struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    size_t columns = p ? 1 + 2 * p->npos + p->nevents : 0;
    size_t a = triple_units(m, ctx), b = triple_units(m, callee);
    if (name_units(m, CG_NS_FILE, ctx[CG_CTX_FN_FL], true) == SIZE_MAX)
        a = SIZE_MAX;
    size_t units = a == SIZE_MAX || b == SIZE_MAX ? SIZE_MAX : a + b;
    if (record_admit(m, units, columns, ncosts, err) < 0)
        return -1;
    if (cg_grow((void **)&m->calls, &m->calls_cap, m->ncalls + 1, sizeof *m->calls) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    m->calls[m->ncalls] = (struct cg_call){callee[0], callee[1], callee[2], count};
    m->records[m->nrecords++] = (struct cg_record){.ob = ctx[CG_CTX_OB],
                                                   .fl = ctx[CG_CTX_FL],
                                                   .fn = ctx[CG_CTX_FN],
                                                   .fn_fl = ctx[CG_CTX_FN_FL],
                                                   .values = (uint32_t)m->nvalues,
                                                   .call = (uint32_t)m->ncalls++};
    memcpy(m->values + m->nvalues, target, p->npos * sizeof *target);
    memcpy(m->values + m->nvalues + p->npos, pos, p->npos * sizeof *pos);
    m->nvalues += 2 * p->npos;
    push_costs(m, p, costs, ncosts);
    p->nrecords++;
    return 0;
}
