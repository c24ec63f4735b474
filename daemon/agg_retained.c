/* agg_retained: the walk's RETAINED records (jett-profile(7), "Retained
 * holders"), kept in the retention arena, and how attrib.h reads them. */
#include <string.h>

#include "daemon/agg-internal.h"
#include "daemon/attrib.h"

/* A record as the arena keeps it: this header, its rows, then the
 * holder's namespace and name; its size rounded up to 8. */
struct agg_retained_block {
    uint32_t next; /* the next record's offset, AGG_NONE */
    uint32_t n_rows;
    uint32_t ns_len, name_len;
    uint32_t source;       /* a stored source, AGG_NONE: unavailable */
    struct wire_span decl; /* WIRE_SPAN_NONE without a source */
    uint32_t holder;       /* 1: a binding; 0: the closing record */
};

struct agg_retained_row {
    uint32_t ident; /* the creation-site function's identity, AGG_NONE */
    uint32_t pad;
    uint64_t bytes, objects;
};

_Static_assert(sizeof(struct agg_retained_block) == AGG_COST_RETAINED,
               "the documented record cost");
_Static_assert(sizeof(struct agg_retained_row) == AGG_COST_RETAINED_ROW, "the documented row cost");

static size_t block_size(const struct wire_retained *r)
{
    size_t n = sizeof(struct agg_retained_block) + (size_t)r->n_rows * AGG_COST_RETAINED_ROW +
               r->ns.len + r->name.len;
    return (n + 7) & ~(size_t)7;
}

static struct agg_retained_block *block_at(const struct agg *a, uint32_t off)
{
    return agg_bucket_at(a, off);
}

static struct agg_retained_row *rows_of(const struct agg_retained_block *b)
{
    return (struct agg_retained_row *)(b + 1);
}

static const char *names_of(const struct agg_retained_block *b)
{
    return (const char *)(rows_of(b) + b->n_rows);
}

/* What the decoder checks, for records fed without one: the references. */
static bool retained_refs_ok(struct agg *a, const struct wire_retained *r)
{
    if (r->source_id != WIRE_NONE32 && r->source_id >= a->n_sources) {
        agg_errorf(a, "RETAINED: a holder's source is not defined");
        return false;
    }
    for (uint32_t i = 0; i < r->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(r, i);
        if (row.func_id != WIRE_NONE32 && row.func_id >= a->n_funcs) {
            agg_errorf(a, "RETAINED: row %u names a function that is not defined", i + 1);
            return false;
        }
    }
    if (r->ns.ptr != NULL && (a->retained.closed || a->retained.cut)) {
        agg_errorf(a, "RETAINED: a holder after %s",
                   a->retained.closed ? "the closing record" : "an incomplete record");
        return false;
    }
    return true;
}

/* Adds the record's sums; false (a collector error) past 2^64 - 1. */
static bool add_sums(struct agg *a, const struct wire_retained *r)
{
    struct agg_retained *t = &a->retained;
    for (uint32_t i = 0; i < r->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(r, i);
        if (__builtin_add_overflow(t->bytes, row.bytes, &t->bytes) ||
            __builtin_add_overflow(t->objects, row.objects, &t->objects)) {
            agg_errorf(a, "RETAINED: the rows add up past 2^64 - 1");
            return false;
        }
    }
    return true;
}

/* Copies the record into the arena, linked after the last one. */
static void keep_block(struct agg *a, const struct wire_retained *r, uint32_t off)
{
    struct agg_retained *t = &a->retained;
    struct agg_retained_block *b = block_at(a, off);
    bool stored = r->source_id != WIRE_NONE32 && r->source_id < a->sources.len;
    *b = (struct agg_retained_block){AGG_NONE,
                                     r->n_rows,
                                     r->ns.len,
                                     r->name.len,
                                     stored ? r->source_id : AGG_NONE,
                                     stored ? r->decl : WIRE_SPAN_NONE,
                                     r->ns.ptr != NULL};
    struct agg_retained_row *rows = rows_of(b);
    for (uint32_t i = 0; i < r->n_rows; i++) {
        struct wire_retained_row row = wire_retained_row_at(r, i);
        uint32_t ident = row.func_id < a->funcs.len
                             ? *(const uint32_t *)agg_vec_at(&a->funcs, row.func_id)
                             : AGG_NONE;
        rows[i] = (struct agg_retained_row){ident, 0, row.bytes, row.objects};
    }
    char *names = (char *)(rows + r->n_rows);
    if (r->ns.len)
        memcpy(names, r->ns.ptr, r->ns.len);
    if (r->name.len)
        memcpy(names + r->ns.len, r->name.ptr, r->name.len);
    if (t->tail == AGG_NONE)
        t->head = off;
    else
        block_at(a, t->tail)->next = off;
    t->tail = off;
}

int agg_retained(struct agg *a, const struct wire_retained *r)
{
    struct agg_retained *t = &a->retained;
    if (!agg_in_stream(a, "RETAINED"))
        return -1;
    if (a->mode != WIRE_MODE_MEMORY) {
        agg_errorf(a, "RETAINED in a cpu profile");
        return -1;
    }
    if (!retained_refs_ok(a, r) || !add_sums(a, r))
        return -1;
    t->seen = true;
    t->closed = t->closed || r->ns.ptr == NULL;
    t->cut = t->cut || !r->complete;
    size_t n = block_size(r);
    if (t->refused || agg_mem_bytes(a) + n > a->cfg.retention_budget) {
        t->refused = true; /* this one and every later one */
        return 0;
    }
    uint32_t off = agg_arena_take(a, a->cfg.retention_budget, n, "RETAINED");
    if (off == AGG_NONE)
        return -1;
    keep_block(a, r, off);
    return 0;
}

void agg_retained_finish(struct agg *a)
{
    const struct agg_retained *t = &a->retained;
    const struct agg_mem *m = &a->mem;
    if (!t->seen || t->cut || m->limited)
        return;
    uint64_t live_objects = m->allocation_count - m->free_count;
    if (t->bytes != m->live || t->objects != live_objects)
        agg_errorf(a,
                   "RETAINED: the walk found %llu bytes in %llu object%s, the live allocations "
                   "hold %llu bytes in %llu",
                   (unsigned long long)t->bytes, (unsigned long long)t->objects,
                   t->objects == 1 ? "" : "s", (unsigned long long)m->live,
                   (unsigned long long)live_objects);
}

/* ---- attrib.h ---- */

enum attrib_walk attrib_retained_walk(const struct agg *a)
{
    const struct agg_retained *t = &a->retained;
    if (a->mode != WIRE_MODE_MEMORY || !t->closed || !a->have_finish)
        return ATTRIB_WALK_NONE;
    return t->cut || t->refused ? ATTRIB_WALK_PARTIAL : ATTRIB_WALK_COMPLETE;
}

void attrib_retained_begin(const struct agg *a, struct attrib_retained_iter *it)
{
    it->block = a->retained.head;
    it->row = 0;
}

bool attrib_retained_next(const struct agg *a, struct attrib_retained_iter *it,
                          struct attrib_retained_row *out)
{
    while (it->block != AGG_NONE) {
        const struct agg_retained_block *b = block_at(a, it->block);
        if (it->row == b->n_rows) {
            it->block = b->next, it->row = 0;
            continue;
        }
        const struct agg_retained_row *row = &rows_of(b)[it->row++];
        const char *names = names_of(b);
        out->holder = (struct attrib_holder){b->holder ? names : NULL,
                                             b->holder ? names + b->ns_len : NULL,
                                             b->ns_len,
                                             b->name_len,
                                             b->source,
                                             b->decl};
        out->ident = row->ident;
        out->bytes = row->bytes, out->objects = row->objects;
        return true;
    }
    return false;
}
