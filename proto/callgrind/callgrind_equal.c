/* callgrind_equal: two models hold the same parts, headers and records. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

struct eq {
    const struct cg_model *a, *b;
    char *why;
    size_t why_len;
};

static bool differ(struct eq *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records the first difference; returns false. */
static bool differ(struct eq *e, const char *fmt, ...)
{
    if (e->why && e->why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->why, e->why_len, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool str_eq(const struct cg_str *x, const struct cg_str *y)
{
    return x->len == y->len && memcmp(x->ptr, y->ptr, x->len) == 0;
}

static bool name_eq(struct eq *e, enum cg_ns ns, uint32_t x, uint32_t y)
{
    if (x == CG_NONE || y == CG_NONE)
        return x == y;
    return str_eq(&e->a->names[ns][x], &e->b->names[ns][y]);
}

/* The i-th header of p that is neither `part:` nor `totals:`, or NULL. */
static const struct cg_header *plain_header(const struct cg_model *m, const struct cg_part *p,
                                            size_t *k)
{
    for (; *k < p->nheaders; (*k)++) {
        const struct cg_header *h = &m->headers[p->first_header + *k];
        if (h->key != CG_H_PART && h->key != CG_H_TOTALS)
            return (*k)++, h;
    }
    return NULL;
}

/* Headers in order (part numbers only when both have one; totals anywhere). */
static bool headers_eq(struct eq *e, size_t i, const struct cg_part *p, const struct cg_part *q)
{
    size_t ka = 0, kb = 0;
    for (;;) {
        const struct cg_header *x = plain_header(e->a, p, &ka), *y = plain_header(e->b, q, &kb);
        if (x == NULL || y == NULL) {
            if (x != y)
                return differ(e, "part %zu: header counts differ", i + 1);
            break;
        }
        if (x->key != y->key || !str_eq(&x->value, &y->value))
            return differ(e, "part %zu: header '%s: %s' vs '%s: %s'", i + 1, cg_header_name(x->key),
                          x->value.ptr, cg_header_name(y->key), y->value.ptr);
    }
    if (p->has_number && q->has_number && p->number != q->number)
        return differ(e, "part %zu: part numbers differ", i + 1);
    if (p->has_totals != q->has_totals || p->ntotals != q->ntotals ||
        (p->ntotals && memcmp(e->a->values + p->totals, e->b->values + q->totals,
                              p->ntotals * sizeof(uint64_t)) != 0))
        return differ(e, "part %zu: totals differ", i + 1);
    return true;
}

/* Two resolved records. */
static bool record_eq(struct eq *e, const struct cg_part *p, const struct cg_record *x,
                      const struct cg_record *y)
{
    const struct cg_call *cx = cg_record_call(e->a, x), *cy = cg_record_call(e->b, y);
    size_t width = (cx ? 2 * p->npos : p->npos) + p->nevents;
    if ((cx == NULL) != (cy == NULL))
        return false;
    if (!name_eq(e, CG_NS_OBJECT, x->ob, y->ob) || !name_eq(e, CG_NS_FILE, x->fl, y->fl) ||
        !name_eq(e, CG_NS_FUNCTION, x->fn, y->fn) || !name_eq(e, CG_NS_FILE, x->fn_fl, y->fn_fl))
        return false;
    if (cx && (cx->count != cy->count || !name_eq(e, CG_NS_OBJECT, cx->cob, cy->cob) ||
               !name_eq(e, CG_NS_FILE, cx->cfl, cy->cfl) ||
               !name_eq(e, CG_NS_FUNCTION, cx->cfn, cy->cfn)))
        return false;
    return memcmp(e->a->values + x->values, e->b->values + y->values, width * sizeof(uint64_t)) ==
           0;
}

/* One part: positions, events, headers, then every record. */
static bool part_eq(struct eq *e, size_t i)
{
    const struct cg_part *p = &e->a->parts[i], *q = &e->b->parts[i];
    if (p->positions != q->positions || p->nevents != q->nevents || p->nrecords != q->nrecords)
        return differ(e, "part %zu: positions, events or record counts differ", i + 1);
    for (uint32_t j = 0; j < p->nevents; j++)
        if (!str_eq(cg_part_event(e->a, p, j), cg_part_event(e->b, q, j)))
            return differ(e, "part %zu: event %u differs", i + 1, j + 1);
    if (!headers_eq(e, i, p, q))
        return false;
    for (size_t k = 0; k < p->nrecords; k++)
        if (!record_eq(e, p, &e->a->records[p->first_record + k],
                       &e->b->records[q->first_record + k]))
            return differ(e, "part %zu: record %zu differs", i + 1, k + 1);
    return true;
}

bool cg_model_equal(const struct cg_model *a, const struct cg_model *b, char *why, size_t why_len)
{
    struct eq e = {a, b, why, why_len};
    if (a->nparts != b->nparts)
        return differ(&e, "%zu parts vs %zu", a->nparts, b->nparts);
    for (size_t i = 0; i < a->nparts; i++)
        if (!part_eq(&e, i))
            return false;
    return true;
}
