/* callgrind output buffer: bytes plus UTF-16 accounting for the budgets. */
#ifndef JETT_PROTO_CALLGRIND_OUT_H
#define JETT_PROTO_CALLGRIND_OUT_H

#include <string.h>

#include "proto/util/decimal.h"
#include "proto/callgrind/callgrind-internal.h"

/* Output being built.  extra = bytes - UTF-16 units so far, so that unit
 * counts never need a second pass over the text. */
struct cg_out {
    char *buf;
    size_t len, cap;
    size_t extra;
    size_t line_start, line_extra;
    int oom;
};

/* Grows the buffer so that n more bytes fit; 0 or -1. */
int cg_out_grow(struct cg_out *o, size_t n);

/* Ensures n more bytes fit; 0 or -1. */
static inline int cg_out_reserve(struct cg_out *o, size_t n)
{
    return o->cap - o->len >= n ? 0 : cg_out_grow(o, n);
}

static inline void cg_out_bytes(struct cg_out *o, const char *s, size_t n)
{
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static inline void cg_out_str(struct cg_out *o, const struct cg_str *s)
{
    cg_out_bytes(o, s->ptr, s->len);
    o->extra += s->len - s->units;
}

static inline void cg_out_u64(struct cg_out *o, uint64_t v)
{
    o->len += decimal_u64(o->buf + o->len, v);
}

/* n numbers separated by single spaces. */
static inline void cg_out_u64s(struct cg_out *o, const uint64_t *v, size_t n)
{
    o->len += decimal_u64s(o->buf + o->len, v, n);
}

/* Fails (Resource) for the line being ended, which passes a limit. */
int cg_out_limit(const struct cg_out *o, struct cg_error *err);

/* Ends a line; -1 (Resource) when it or the whole output passes a limit. */
static inline int cg_out_eol(struct cg_out *o, struct cg_error *err)
{
    size_t line = (o->len - o->line_start) - (o->extra - o->line_extra);
    if (line > CG_MAX_LINE_UNITS || o->len + 1 - o->extra > CG_NORMALIZE_BUDGET)
        return cg_out_limit(o, err);
    o->buf[o->len++] = '\n';
    o->line_start = o->len, o->line_extra = o->extra;
    return 0;
}

#endif
