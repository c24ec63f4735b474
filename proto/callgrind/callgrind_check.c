/* callgrind_check: a supplied model's consistency, before it is printed. */
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

static bool name_ok(const struct cg_model *m, enum cg_ns ns, uint32_t id, bool optional)
{
    return id == CG_NONE ? optional : id < m->nnames[ns] && m->names[ns][id].ptr != NULL;
}

static bool range_ok(size_t first, size_t count, size_t total)
{
    return first <= total && count <= total - first;
}

/* A part's own fields and the ranges it owns. */
static int part_check(const struct cg_model *m, const struct cg_part *p, struct cg_error *err)
{
    unsigned npos = (unsigned)__builtin_popcount(p->positions);
    if (p->positions == 0 || p->positions > 7 || npos != p->npos)
        return cg_fail(err, CG_SYNTAX, 0, "model: bad positions in a part");
    if (p->nevents == 0 || p->nevents > CG_MAX_EVENTS ||
        !range_ok(p->first_event, p->nevents, m->nevents))
        return cg_fail(err, CG_SYNTAX, 0, "model: a part's events are missing or out of range");
    if (!range_ok(p->first_header, p->nheaders, m->nheaders) || p->nheaders > CG_MAX_HEADERS ||
        !range_ok(p->first_record, p->nrecords, m->nrecords))
        return cg_fail(err, CG_SYNTAX, 0, "model: a part's headers or records are out of range");
    for (size_t k = 0; k < p->nheaders; k++) {
        const struct cg_header *h = &m->headers[p->first_header + k];
        if ((unsigned)h->key >= CG_H_COUNT || h->value.ptr == NULL)
            return cg_fail(err, CG_SYNTAX, 0, "model: bad header");
    }
    return 0;
}

/* A record's names and values; `prev` is a record whose names were checked
 * (or NULL): runs of records share their names, which are checked once. */
static int record_check(const struct cg_model *m, const struct cg_part *p,
                        const struct cg_record *r, const struct cg_record *prev,
                        struct cg_error *err)
{
    bool call = r->call != CG_NONE;
    size_t width = (call ? 2 * p->npos : p->npos) + p->nevents;
    if ((call && r->call >= m->ncalls) || !range_ok(r->values, width, m->nvalues))
        return cg_fail(err, CG_SYNTAX, 0, "model: bad record call or values");
    /* ob, fl, fn, fn_fl are adjacent: one wide compare */
    bool same = prev && memcmp(&r->ob, &prev->ob, 4 * sizeof r->ob) == 0;
    if (!same &&
        (!name_ok(m, CG_NS_OBJECT, r->ob, true) || !name_ok(m, CG_NS_FILE, r->fl, true) ||
         !name_ok(m, CG_NS_FUNCTION, r->fn, false) || !name_ok(m, CG_NS_FILE, r->fn_fl, true)))
        return cg_fail(err, CG_SYNTAX, 0, "model: record names an undefined name");
    const struct cg_call *c = call ? &m->calls[r->call] : NULL;
    if (c && (!name_ok(m, CG_NS_OBJECT, c->cob, true) || !name_ok(m, CG_NS_FILE, c->cfl, true) ||
              !name_ok(m, CG_NS_FUNCTION, c->cfn, false)))
        return cg_fail(err, CG_SYNTAX, 0, "model: call names an undefined callee");
    return 0;
}

int cg_model_check(const struct cg_model *m, struct cg_error *err)
{
    if (m->nparts > CG_MAX_PARTS || m->nrecords > CG_MAX_RECORDS)
        return cg_fail(err, CG_RESOURCE, 0, "model: too many parts or records");
    if (m->index && m->index->part_open)
        return cg_fail(err, CG_SYNTAX, 0, "model: a part is still open");
    for (size_t i = 0; i < m->nparts; i++) {
        const struct cg_part *p = &m->parts[i];
        if (part_check(m, p, err) < 0)
            return -1;
        /* Indexed per record: a model without records has no array. */
        for (size_t k = 0; k < p->nrecords; k++) {
            const struct cg_record *r = &m->records[p->first_record + k];
            if (record_check(m, p, r, k ? r - 1 : NULL, err) < 0)
                return -1;
        }
    }
    return 0;
}
