/* callgrind_model: the record model, its arena and its builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

#define ARENA_CHUNK ((size_t)256 << 10)

/* Arena chunk: a linked list, freed with the model. */
struct cg_arena_chunk {
    struct cg_arena_chunk *next;
    size_t used, cap;
    char data[];
};

int cg_fail(struct cg_error *e, enum cg_status kind, uint64_t line, const char *fmt, ...)
{
    if (e == NULL)
        return -1;
    va_list ap;
    e->kind = kind;
    e->line = line;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

const char *cg_status_name(enum cg_status kind)
{
    static const char *const names[] = {"OK", "Syntax", "Unsupported", "Resource"};
    return (unsigned)kind < 4 ? names[kind] : "?";
}

int cg_grow_slow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

struct cg_model *cg_model_new(void)
{
    struct cg_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->index = calloc(1, sizeof *m->index);
    if (m->index == NULL) {
        free(m);
        return NULL;
    }
    m->index->ctx_units = SIZE_MAX;
    return m;
}

void cg_model_free(struct cg_model *m)
{
    if (m == NULL)
        return;
    for (struct cg_arena_chunk *c = m->index->arena, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    for (int k = 0; k < CG_NS_COUNT; k++) {
        free(m->index->intern[k].slots);
        free(m->names[k]);
    }
    free(m->index);
    free(m->parts);
    free(m->headers);
    free(m->events);
    free(m->records);
    free(m->calls);
    free(m->values);
    free(m);
}

char *cg_arena_dup(struct cg_model *m, const char *s, size_t len)
{
    struct cg_arena_chunk *c = m->index->arena;
    if (c == NULL || c->cap - c->used < len + 1) {
        size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
        struct cg_arena_chunk *n = malloc(sizeof *n + cap);
        if (n == NULL)
            return NULL;
        n->next = c, n->used = 0, n->cap = cap;
        m->index->arena = c = n;
    }
    char *d = c->data + c->used;
    memcpy(d, s, len);
    d[len] = '\0';
    c->used += len + 1;
    return d;
}

size_t cg_model_push_values(struct cg_model *m, const uint64_t *v, size_t n)
{
    if (cg_grow((void **)&m->values, &m->values_cap, m->nvalues + n, sizeof *v) < 0)
        return SIZE_MAX;
    size_t at = m->nvalues;
    if (n)
        memcpy(m->values + at, v, n * sizeof *v);
    m->nvalues += n;
    return at;
}

int cg_model_begin_part(struct cg_model *m, struct cg_error *err)
{
    if (m->index->part_open)
        return cg_fail(err, CG_SYNTAX, 0, "part begun before the previous one ended");
    if (m->nparts >= CG_MAX_PARTS)
        return cg_fail(err, CG_RESOURCE, 0, "more than %u parts", CG_MAX_PARTS);
    if (cg_grow((void **)&m->parts, &m->parts_cap, m->nparts + 1, sizeof *m->parts) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    m->parts[m->nparts++] = (struct cg_part){
        .first_header = m->nheaders,
        .first_event = m->nevents,
        .first_record = m->nrecords,
        .positions = CG_POS_LINE,
        .npos = 1,
    };
    m->index->part_open = true;
    return 0;
}

int cg_model_end_part(struct cg_model *m, struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    if (p == NULL)
        return cg_fail(err, CG_SYNTAX, 0, "no part to end");
    if (p->nevents == 0)
        return cg_fail(err, CG_SYNTAX, 0, "part %zu has no 'events:' line", m->nparts);
    if (p->has_summary && p->nsummary > p->nevents)
        return cg_fail(err, CG_SYNTAX, 0, "'summary:' has %u values for %u events", p->nsummary,
                       p->nevents);
    if (p->has_totals && p->ntotals > p->nevents)
        return cg_fail(err, CG_SYNTAX, 0, "'totals:' has %u values for %u events", p->ntotals,
                       p->nevents);
    m->index->part_open = false;
    return 0;
}

const struct cg_str *cg_part_event(const struct cg_model *m, const struct cg_part *p, size_t j)
{
    return &m->events[p->first_event + j];
}

const uint64_t *cg_record_values(const struct cg_model *m, const struct cg_record *r)
{
    return m->values + r->values;
}

const struct cg_call *cg_record_call(const struct cg_model *m, const struct cg_record *r)
{
    return r->call == CG_NONE ? NULL : &m->calls[r->call];
}

void cg_model_drop_records(struct cg_model *m, size_t n)
{
    struct cg_part *p = cg_model_part(m);
    if (p == NULL || n == 0 || n > p->nrecords || (p->has_totals && n < p->nrecords))
        return;
    struct cg_record *r = m->records + p->first_record;
    size_t keep = p->nrecords - n;
    /* values and calls are appended in record order: the kept records'
     * lie at the end of each array */
    size_t v0 = r[0].values, v1 = keep ? r[n].values : m->nvalues;
    /* the dropped records' calls are [c0, c1): c1 is the first kept
     * record's call (or the end), c0 the first dropped record's (or c1) */
    size_t c1 = m->ncalls;
    for (size_t k = n; k < p->nrecords && c1 == m->ncalls; k++)
        if (r[k].call != CG_NONE)
            c1 = r[k].call;
    size_t c0 = c1;
    for (size_t k = 0; k < n && c0 == c1; k++)
        if (r[k].call != CG_NONE)
            c0 = r[k].call;
    memmove(r, r + n, keep * sizeof *r);
    /* values and calls are NULL in a model that has none */
    if (v1 < m->nvalues)
        memmove(m->values + v0, m->values + v1, (m->nvalues - v1) * sizeof *m->values);
    if (c1 < m->ncalls)
        memmove(m->calls + c0, m->calls + c1, (m->ncalls - c1) * sizeof *m->calls);
    for (size_t k = 0; k < keep; k++) {
        r[k].values -= (uint32_t)(v1 - v0);
        if (r[k].call != CG_NONE)
            r[k].call -= (uint32_t)(c1 - c0);
    }
    m->nvalues -= v1 - v0;
    m->ncalls -= c1 - c0;
    m->nrecords -= n, p->nrecords = keep;
    struct cg_model_index *x = m->index;
    x->dropped += n;
    if (x->fast_records > CG_MAX_RECORDS - x->dropped)
        x->fast_records = CG_MAX_RECORDS - x->dropped;
}
