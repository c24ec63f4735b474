/* callgrind_body: position specifications, calls= and cost lines. */
#include <string.h>

#include "proto/callgrind/callgrind-append.h"
#include "proto/callgrind/callgrind-parse.h"

enum directive { D_OB, D_FL, D_FI, D_FE, D_FN, D_COB, D_CFI, D_CFL, D_CFN, D_CALLS, D_COUNT };

static const char *const directive_names[D_COUNT] = {"ob",  "fl",  "fi",  "fe",  "fn",
                                                     "cob", "cfi", "cfl", "cfn", "calls"};

static const enum cg_ns directive_ns[D_CALLS] = {
    CG_NS_OBJECT, CG_NS_FILE, CG_NS_FILE, CG_NS_FILE,     CG_NS_FUNCTION,
    CG_NS_OBJECT, CG_NS_FILE, CG_NS_FILE, CG_NS_FUNCTION,
};

void cg_body_reset(struct cg_parser *ps)
{
    memset(ps->base, 0, sizeof ps->base);
    ps->ctx[0] = ps->ctx[1] = ps->ctx[2] = ps->ctx[3] = CG_NONE;
    ps->ov_ob = ps->ov_fl = CG_NONE;
    ps->has_callee = false;
    ps->pending = false;
}

/* Defines compressed ID `id` as name (already interned). */
static int define_id(struct cg_parser *ps, enum cg_ns ns, uint64_t id, uint32_t name)
{
    int rc = cg_idmap_put(&ps->ids[ns], id, name);
    if (rc == -2)
        return cg_parser_fail(ps, CG_RESOURCE, "more than %u IDs in one namespace", CG_MAX_IDS);
    if (rc < 0)
        return cg_parser_fail(ps, CG_RESOURCE, "out of memory");
    return 0;
}

/* name -> "(" number ")" (Space* text)? | text; "(" + digit starts an ID */
static int resolve_name(struct cg_parser *ps, enum cg_ns ns, const char *v, size_t len,
                        uint32_t *name)
{
    while (len && cg_is_space(*v))
        v++, len--;
    if (len < 2 || v[0] != '(' || v[1] < '0' || v[1] > '9')
        return cg_model_name(ps->m, ns, v, len, name, ps->err) < 0 ? cg_parser_here(ps) : 0;
    const char *close = memchr(v, ')', len);
    if (close == NULL)
        return cg_parser_fail(ps, CG_SYNTAX, "compressed name without ')'");
    uint64_t id;
    if (cg_u64(v + 1, (size_t)(close - v - 1), &id, ps->err) < 0)
        return cg_parser_here(ps);
    const char *rest = close + 1, *end = v + len;
    while (rest < end && cg_is_outer_space(*rest))
        rest++;
    if (rest == end) {
        if (cg_idmap_get(&ps->ids[ns], id, name) < 0)
            return cg_parser_fail(ps, CG_SYNTAX, "%s ID (%llu) used before its definition",
                                  ns == CG_NS_OBJECT ? "object"
                                  : ns == CG_NS_FILE ? "file"
                                                     : "function",
                                  (unsigned long long)id);
        return 0;
    }
    if (cg_model_name(ps->m, ns, rest, (size_t)(end - rest), name, ps->err) < 0)
        return cg_parser_here(ps);
    return define_id(ps, ns, id, *name);
}

/* Applies a resolved position specification to the state. */
static int apply_spec(struct cg_parser *ps, enum directive d, uint32_t name)
{
    switch (d) {
    case D_OB:
        ps->ctx[CG_CTX_OB] = name;
        break;
    case D_FL:
        ps->ctx[CG_CTX_FL] = name;
        break;
    case D_FI:
    case D_FE:
        if (ps->ctx[CG_CTX_FN] == CG_NONE)
            return cg_parser_fail(ps, CG_SYNTAX, "'%s=' before any 'fn=' in the part",
                                  directive_names[d]);
        ps->ctx[CG_CTX_FL] = name;
        break;
    case D_FN:
        ps->ctx[CG_CTX_FN] = name;
        ps->ctx[CG_CTX_FN_FL] = ps->ctx[CG_CTX_FL];
        ps->has_callee = false;
        break;
    case D_COB:
        ps->ov_ob = name;
        break;
    case D_CFI:
    case D_CFL:
        ps->ov_fl = name;
        break;
    default: /* D_CFN: overrides are resolved now */
        ps->callee[0] = ps->ov_ob != CG_NONE ? ps->ov_ob : ps->ctx[CG_CTX_OB];
        ps->callee[1] = ps->ov_fl != CG_NONE ? ps->ov_fl : ps->ctx[CG_CTX_FL];
        ps->callee[2] = name;
        ps->has_callee = true;
        break;
    }
    return 0;
}

/* A token cursor over a body line. */
struct cursor {
    const char *p, *end;
};

static bool next_tok(struct cursor *c, const char **t, size_t *n)
{
    while (c->p < c->end && cg_is_space(*c->p))
        c->p++;
    if (c->p == c->end)
        return false;
    *t = c->p;
    while (c->p < c->end && !cg_is_space(*c->p))
        c->p++;
    *n = (size_t)(c->p - *t);
    return true;
}

/* subposition -> number | "+" number | "-" number | "*", against base */
static int subposition(struct cg_parser *ps, const char *t, size_t n, uint64_t base, uint64_t *out)
{
    uint64_t d;
    if (n == 1 && t[0] == '*')
        return *out = base, 0;
    if (t[0] != '+' && t[0] != '-')
        return cg_u64(t, n, out, ps->err) < 0 ? cg_parser_here(ps) : 0;
    if (cg_u64(t + 1, n - 1, &d, ps->err) < 0)
        return cg_parser_here(ps);
    if (t[0] == '-') {
        if (d > base)
            return cg_parser_fail(ps, CG_SYNTAX, "relative position goes below zero");
        return *out = base - d, 0;
    }
    if (d > UINT64_MAX - base)
        return cg_parser_fail(ps, CG_RESOURCE, "relative position exceeds 64 bits");
    return *out = base + d, 0;
}

/* positions -> subposition{npos}; bases are not changed here */
static int positions(struct cg_parser *ps, struct cursor *c, uint64_t *out)
{
    const struct cg_part *p = cg_model_part(ps->m);
    const char *t;
    size_t n;
    for (uint32_t k = 0; k < p->npos; k++) {
        int quick = cg_u64_scan(&c->p, c->end, &out[k]);
        if (quick > 0)
            continue;
        if (!next_tok(c, &t, &n))
            return cg_parser_fail(ps, CG_SYNTAX, "expected %u position columns, found %u", p->npos,
                                  k);
        if (subposition(ps, t, n, ps->base[k], &out[k]) < 0)
            return -1;
    }
    return 0;
}

/* calls -> "calls=" Space* count Space+ positions */
static int parse_calls(struct cg_parser *ps, const char *v, size_t len)
{
    struct cursor c = {v, v + len};
    const char *t;
    size_t n;
    if (ps->ctx[CG_CTX_FN] == CG_NONE)
        return cg_parser_fail(ps, CG_SYNTAX, "'calls=' before any 'fn=' in the part");
    if (!ps->has_callee)
        return cg_parser_fail(ps, CG_SYNTAX, "'calls=' without a 'cfn=' for this function");
    if (!next_tok(&c, &t, &n))
        return cg_parser_fail(ps, CG_SYNTAX, "'calls=' without a count");
    if (cg_u64(t, n, &ps->count, ps->err) < 0)
        return cg_parser_here(ps);
    if (positions(ps, &c, ps->target) < 0)
        return -1;
    if (next_tok(&c, &t, &n))
        return cg_parser_fail(ps, CG_SYNTAX, "extra column after the call's target position");
    ps->pending = true;
    ps->pending_line = ps->line;
    return 0;
}

static bool blank(const char *s, size_t len)
{
    while (len && cg_is_outer_space(*s))
        s++, len--;
    return len == 0;
}

/* Whether key[0, len) spells the NUL-terminated name (no library calls:
 * this runs for every directive line). */
static bool is_name(const char *name, const char *key, size_t len)
{
    size_t i = 0;
    while (i < len && name[i] == key[i])
        i++;
    return i == len && name[i] == '\0';
}

int cg_body_directive(struct cg_parser *ps, const char *key, size_t klen, const char *val,
                      size_t vlen)
{
    int d = 0;
    while (d < D_COUNT && !is_name(directive_names[d], key, klen))
        d++;
    if (d == D_COUNT)
        return cg_parser_fail(ps, CG_UNSUPPORTED, "unsupported directive '%.*s='",
                              (int)(klen < 40 ? klen : 40), key);
    if (ps->pending)
        return cg_parser_fail(ps, CG_SYNTAX,
                              "'%s=' after 'calls=' at line %llu; expected its "
                              "cost line",
                              directive_names[d], (unsigned long long)ps->pending_line);
    if (d == D_CALLS)
        return parse_calls(ps, val, vlen);
    if ((d == D_COB || d == D_CFI || d == D_CFL) && blank(val, vlen)) {
        /* An empty override cancels it (the callee keeps the caller's). */
        *(d == D_COB ? &ps->ov_ob : &ps->ov_fl) = CG_NONE;
        return 0;
    }
    uint32_t name;
    if (resolve_name(ps, directive_ns[d], val, vlen, &name) < 0)
        return -1;
    return apply_spec(ps, (enum directive)d, name);
}

/* The columns of a cost line into ps->cols, token by token (relative
 * positions, long numbers, every error); the count of costs or -1. */
static int cost_columns(struct cg_parser *ps, const struct cg_part *p, const char *s, size_t len)
{
    struct cursor c = {s, s + len};
    uint32_t ncosts = 0;
    if (positions(ps, &c, ps->cols) < 0)
        return -1;
    for (;;) {
        uint64_t v;
        int quick = cg_u64_scan(&c.p, c.end, &v);
        if (quick == 0)
            break;
        if (ncosts == p->nevents)
            return cg_parser_fail(ps, CG_SYNTAX, "more cost columns than the %u events",
                                  p->nevents);
        if (quick < 0) {
            /* The quick scan stopped on a token it could not read: the
             * full reader takes it and names the error. */
            const char *t;
            size_t n;
            if (!next_tok(&c, &t, &n) || cg_u64(t, n, &v, ps->err) < 0)
                return cg_parser_here(ps);
        }
        ps->cols[p->npos + ncosts++] = v;
    }
    return (int)ncosts;
}

/* Adds the record of a cost line whose columns are in ps->cols; after
 * calls= it is the call's (source position, inclusive costs). */
static int cost_record(struct cg_parser *ps, const struct cg_part *p, size_t ncosts)
{
    const uint64_t *pos = ps->cols, *costs = ps->cols + p->npos;
    int rc = ps->pending ? cg_model_add_call(ps->m, ps->ctx, ps->callee, ps->count, ps->target, pos,
                                             costs, ncosts, ps->err)
                         : cg_model_add_cost(ps->m, ps->ctx, pos, costs, ncosts, ps->err);
    if (rc < 0)
        return cg_parser_here(ps);
    /* Only self-cost lines move the bases: valgrind writes a call's source
     * position, like its target, relative to the last self-cost line. */
    if (ps->pending)
        ps->pending = false, ps->ov_ob = ps->ov_fl = CG_NONE;
    else
        memcpy(ps->base, pos, sizeof ps->base); /* fixed size: no call; bases past npos unused */
    return 0;
}

/* cost line -> positions (Space+ number)*; costs at most one per event. */
int cg_body_cost(struct cg_parser *ps, const char *s, size_t len)
{
    const struct cg_part *p = cg_model_part(ps->m);
    if (ps->ctx[CG_CTX_FN] == CG_NONE)
        return cg_parser_fail(ps, CG_SYNTAX, "cost line before any 'fn=' in the part");
    const char *at = s;
    size_t ncols = cg_u64_scan_line(&at, s + len, ps->cols, p->npos + p->nevents);
    if (ncols == SIZE_MAX || ncols < p->npos) {
        int k = cost_columns(ps, p, s, len);
        if (k < 0)
            return -1;
        ncols = p->npos + (size_t)k;
    }
    return cost_record(ps, p, ncols - p->npos);
}

/* A run of self-cost lines of plain numbers in the last record's context,
 * each written straight into the model: the checks of cg_cost_slot hold
 * for `room` records, so they are made once per run, not per line, and
 * the counts stay in registers.  Stops before the first line that is not
 * plain (the general path takes it); the count of lines taken. */
static size_t plain_run(struct cg_parser *ps, const struct cg_slot *s, size_t room,
                        const char **cur, const char *end)
{
    struct cg_model *m = ps->m;
    const uint32_t npos = s->part->npos, width = (uint32_t)s->width;
    const struct cg_record proto = {.ob = ps->ctx[CG_CTX_OB],
                                    .fl = ps->ctx[CG_CTX_FL],
                                    .fn = ps->ctx[CG_CTX_FN],
                                    .fn_fl = ps->ctx[CG_CTX_FN_FL],
                                    .values = (uint32_t)m->nvalues,
                                    .call = CG_NONE};
    struct cg_record *rec = m->records + m->nrecords;
    uint64_t *v = s->values;
    const char *at = *cur;
    size_t n = 0;
    uint64_t lines = 0;
    while (n < room) {
        const char *line = at;
        size_t ncols = cg_u64_scan_line(&at, end, v, width);
        if (ncols == SIZE_MAX || ncols < npos || (size_t)(at - line) > CG_MAX_LINE_UNITS) {
            at = line;
            break;
        }
        for (size_t j = ncols; j < width; j++)
            v[j] = 0; /* omitted trailing costs */
        rec[n] = proto;
        rec[n].values += (uint32_t)(n * width);
        v += width, n++;
        if (at == end)
            break;
        at++, lines++;
        if (at == end || *at < '0' || *at > '9')
            break;
    }
    if (n == 0)
        return 0;
    const uint64_t *last = v - width;
    for (uint32_t k = 0; k < 3; k++)
        ps->base[k] = k < npos ? last[k] : 0; /* bases past npos unused */
    m->nrecords += n, s->part->nrecords += n;
    m->nvalues += n * width, m->expansion += n * s->cost;
    ps->line += lines, ps->in_body = true;
    *cur = at;
    return n;
}

int cg_body_plain(struct cg_parser *ps, const char **cur, const char *end)
{
    const struct cg_part *p = cg_model_part(ps->m);
    if (p->nevents == 0 || ps->ctx[CG_CTX_FN] == CG_NONE)
        return 0;
    /* Self-cost lines go straight into the model when they can. */
    struct cg_slot slot;
    if (!ps->pending && cg_cost_slot(ps->m, ps->ctx, &slot))
        return plain_run(ps, &slot, cg_cost_run(ps->m, &slot), cur, end) > 0;
    const char *at = *cur;
    size_t ncols = cg_u64_scan_line(&at, end, ps->cols, p->npos + p->nevents);
    if (ncols == SIZE_MAX || ncols < p->npos || (size_t)(at - *cur) > CG_MAX_LINE_UNITS)
        return 0;
    ps->in_body = true;
    if (cost_record(ps, p, ncols - p->npos) < 0)
        return -1;
    if (at < end)
        at++, ps->line++;
    *cur = at;
    return 1;
}
