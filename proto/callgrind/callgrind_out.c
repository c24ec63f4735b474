/* callgrind_out: the normalizer's output buffer and its size limits. */
#include <stdlib.h>

#include "proto/callgrind/callgrind-out.h"

int cg_out_grow(struct cg_out *o, size_t n)
{
    size_t cap = o->cap ? o->cap : 1 << 16;
    while (cap - o->len < n)
        cap *= 2;
    char *b = realloc(o->buf, cap);
    if (b == NULL)
        return o->oom = 1, -1;
    o->buf = b, o->cap = cap;
    return 0;
}

int cg_out_limit(const struct cg_out *o, struct cg_error *err)
{
    size_t line = (o->len - o->line_start) - (o->extra - o->line_extra);
    if (line > CG_MAX_LINE_UNITS)
        return cg_fail(err, CG_RESOURCE, 0, "a normalized line would exceed %zu UTF-16 code units",
                       CG_MAX_LINE_UNITS);
    return cg_fail(err, CG_RESOURCE, 0, "normalized output would exceed %zu UTF-16 code units",
                   CG_NORMALIZE_BUDGET);
}
