/* callgrind_normalize: a model printed as canonical Callgrind text. */
#include <stddef.h>
#include <stdlib.h>

#include "proto/callgrind/callgrind-out.h"

/* Normalizer state: fresh IDs per namespace (0 = not printed yet) and the
 * context the printed text has established in the current part. */
struct norm {
    const struct cg_model *m;
    struct cg_out o;
    struct cg_error *err;
    uint32_t *fresh[CG_NS_COUNT];
    size_t fresh_cap[CG_NS_COUNT];
    uint32_t next[CG_NS_COUNT];
    uint32_t ctx[CG_CTX_COUNT];
    uint32_t callee[3];
    bool has_callee;
};

/* Room for a line with `names` bytes of names and `nums` numbers. */
static inline int reserve(struct norm *n, size_t names, size_t nums)
{
    if (cg_out_reserve(&n->o, 64 + names + 22 * nums) < 0)
        return cg_fail(n->err, CG_RESOURCE, 0, "out of memory");
    return 0;
}

/* Whether record r names the context ctx (object, file, function and the
 * function's file, adjacent in both): one wide compare. */
static inline bool same_context(const struct cg_record *r, const uint32_t ctx[CG_CTX_COUNT])
{
    _Static_assert(offsetof(struct cg_record, fn_fl) == 3 * sizeof(uint32_t),
                   "record names are ob, fl, fn, fn_fl in CG_CTX_* order");
    return memcmp(&r->ob, ctx, CG_CTX_COUNT * sizeof *ctx) == 0;
}

/* spec=(id) name on first use, spec=(id) afterwards. */
static int put_name(struct norm *n, const char *spec, enum cg_ns ns, uint32_t name)
{
    const struct cg_str *s = &n->m->names[ns][name];
    if (reserve(n, s->len, 1) < 0)
        return -1;
    cg_out_bytes(&n->o, spec, strlen(spec));
    cg_out_bytes(&n->o, "=(", 2);
    bool first = n->fresh[ns][name] == 0;
    if (first)
        n->fresh[ns][name] = ++n->next[ns];
    cg_out_u64(&n->o, n->fresh[ns][name]);
    cg_out_bytes(&n->o, ")", 1);
    if (first) {
        cg_out_bytes(&n->o, " ", 1);
        cg_out_str(&n->o, s);
    }
    return cg_out_eol(&n->o, n->err);
}

/* key: value */
static int put_header(struct norm *n, enum cg_header_key key, const struct cg_str *v)
{
    const char *k = cg_header_name(key);
    if (reserve(n, strlen(k) + v->len, 0) < 0)
        return -1;
    cg_out_bytes(&n->o, k, strlen(k));
    cg_out_bytes(&n->o, v->len ? ": " : ":", v->len ? 2 : 1);
    cg_out_str(&n->o, v);
    return cg_out_eol(&n->o, n->err);
}

/* A synthesized `part: N`. */
static int put_part_number(struct norm *n, size_t number)
{
    char d[24];
    size_t len = decimal_u64(d, number);
    struct cg_str s = {d, (uint32_t)len, (uint32_t)len};
    return put_header(n, CG_H_PART, &s);
}

/* Headers of part i: totals held back; `part:` first in later parts (so
 * that an empty part before it stays a part), added when absent. */
static int put_headers(struct norm *n, size_t i)
{
    const struct cg_part *p = &n->m->parts[i];
    /* (a part without headers may come from a model without any) */
    const struct cg_header *h = p->nheaders ? n->m->headers + p->first_header : NULL;
    size_t lead = 0, k;
    if (!p->has_number && p->nheaders >= CG_MAX_HEADERS)
        return cg_fail(n->err, CG_RESOURCE, 0, "part %zu would exceed %u headers with 'part:'",
                       i + 1, CG_MAX_HEADERS);
    if (i == 0)
        while (lead < p->nheaders && (h[lead].key == CG_H_VERSION || h[lead].key == CG_H_CREATOR))
            lead++;
    for (k = 0; k < lead; k++)
        if (put_header(n, h[k].key, &h[k].value) < 0)
            return -1;
    for (k = 0; i > 0 && k < p->nheaders; k++)
        if (h[k].key == CG_H_PART && put_header(n, h[k].key, &h[k].value) < 0)
            return -1;
    if (!p->has_number && put_part_number(n, i + 1) < 0)
        return -1;
    for (k = lead; k < p->nheaders; k++) {
        if (h[k].key == CG_H_TOTALS || (i > 0 && h[k].key == CG_H_PART))
            continue;
        if (put_header(n, h[k].key, &h[k].value) < 0)
            return -1;
    }
    return 0;
}

/* positions costs (adjacent in v), trailing zero costs omitted */
static int put_cost_line(struct norm *n, const struct cg_part *p, const uint64_t *v)
{
    size_t nc = p->nevents;
    while (nc && v[p->npos + nc - 1] == 0)
        nc--;
    if (reserve(n, 0, p->npos + nc) < 0)
        return -1;
    cg_out_u64s(&n->o, v, p->npos + nc);
    return cg_out_eol(&n->o, n->err);
}

/* Longest run of cost lines written between checks: its room is reserved
 * at once, so that a run never makes the buffer much larger than the
 * line-by-line reserve would. */
#define RUN_MAX 256

/* Cost lines of the records from k on (below `to`) that are cost records
 * in the context the text has, up to RUN_MAX, with the room and the limits
 * checked once for them all: the line limit cannot be reached (at most
 * 3 + CG_MAX_EVENTS numbers of 20 digits) and the whole output stays
 * within the budget even if every number took 21 bytes.  The number of
 * records written: 0 when the budget is too close (the record then
 * takes put_cost_line and its checks), -1 when out of memory (err set). */
static long put_cost_run(struct norm *n, const struct cg_part *p, size_t k, size_t to)
{
    const struct cg_record *r = &n->m->records[p->first_record + k];
    size_t most = to - k < RUN_MAX ? to - k : RUN_MAX;
    size_t width = p->npos + p->nevents, line = 21 * width + 1;
    if (n->o.len - n->o.extra + most * line > CG_NORMALIZE_BUDGET)
        return 0;
    if (reserve(n, most * line + 8, 0) < 0) /* 8: a number's last word store */
        return -1;
    char *out = n->o.buf + n->o.len;
    size_t i = 0;
    do {
        const uint64_t *v = n->m->values + r[i].values;
        size_t nc = width;
        while (nc > p->npos && v[nc - 1] == 0)
            nc--; /* trailing zero costs are omitted */
        out += decimal_u64s(out, v, nc);
        *out++ = '\n';
        i++;
    } while (i < most && r[i].call == CG_NONE && same_context(&r[i], n->ctx));
    n->o.len = (size_t)(out - n->o.buf);
    n->o.line_start = n->o.len, n->o.line_extra = n->o.extra;
    return (long)i;
}

/* Makes the text's current object or file `want` with spec=. */
static int set_ctx(struct norm *n, int k, const char *spec, uint32_t want)
{
    if (want == n->ctx[k])
        return 0;
    if (want == CG_NONE)
        return cg_fail(n->err, CG_SYNTAX, 0, "record unsets the %s of earlier records",
                       k == CG_CTX_OB ? "object" : "file");
    n->ctx[k] = want;
    return put_name(n, spec, k == CG_CTX_OB ? CG_NS_OBJECT : CG_NS_FILE, want);
}

/* The first call record of the function run that starts at record k, or
 * NULL (a run ends where the function or its file changes, i.e. at fn=). */
static const struct cg_record *next_call(const struct norm *n, const struct cg_part *p, size_t k)
{
    const struct cg_record *r0 = &n->m->records[p->first_record + k];
    for (size_t j = k; j < p->nrecords; j++) {
        const struct cg_record *r = &n->m->records[p->first_record + j];
        if (r->fn != r0->fn || r->fn_fl != r0->fn_fl)
            return NULL;
        if (r->call != CG_NONE)
            return r;
    }
    return NULL;
}

/* [cob=] [cfi=] cfn= resolving the callee of r, unless the text already
 * has it resolved (a callee lasts until the next fn=). */
static int put_callee(struct norm *n, const struct cg_record *r)
{
    const struct cg_call *c = &n->m->calls[r->call];
    const uint32_t want[3] = {c->cob, c->cfl, c->cfn};
    static const char *const spec[2] = {"cob", "cfi"};
    if (n->has_callee && memcmp(want, n->callee, sizeof want) == 0)
        return 0;
    for (int k = 0; k < 2; k++) {
        if (want[k] == n->ctx[k])
            continue;
        if (want[k] == CG_NONE)
            return cg_fail(n->err, CG_SYNTAX, 0, "callee without an %s where the caller has one",
                           k == 0 ? "object" : "file");
        if (put_name(n, spec[k], (enum cg_ns)k, want[k]) < 0)
            return -1;
    }
    if (put_name(n, "cfn", CG_NS_FUNCTION, c->cfn) < 0)
        return -1;
    memcpy(n->callee, want, sizeof want);
    n->has_callee = true;
    return 0;
}

/* Whether the callee of call record c lacks an object or file that the
 * text is about to set for r: it must then be resolved before that. */
static bool callee_first(const struct norm *n, const struct cg_record *c, const struct cg_record *r)
{
    const struct cg_call *k = &n->m->calls[c->call];
    return (k->cob == CG_NONE && n->ctx[CG_CTX_OB] == CG_NONE && r->ob != CG_NONE) ||
           (k->cfl == CG_NONE && n->ctx[CG_CTX_FL] == CG_NONE && r->fl != CG_NONE);
}

/* Lines that make the text's context that of record k: for a new function
 * ob=, fl= (its own file) and fn=, as valgrind writes them; then fi= when
 * the costs lie in another file, so that callgrind_annotate keys and groups
 * every record as it does for the original.  A callee resolved while the
 * object or file was still unset is written before they are set. */
static int put_context(struct norm *n, const struct cg_part *p, size_t k)
{
    const struct cg_record *r = &n->m->records[p->first_record + k];
    if (same_context(r, n->ctx))
        return 0; /* the common case: the same context as the record before */
    /* The object or file goes from unset to set at most once per part, so
     * looking ahead only then keeps the normalizer linear. */
    bool first_set = (n->ctx[CG_CTX_OB] == CG_NONE && r->ob != CG_NONE) ||
                     (n->ctx[CG_CTX_FL] == CG_NONE && r->fl != CG_NONE);
    const struct cg_record *c = first_set ? next_call(n, p, k) : NULL;
    if (r->fn != n->ctx[CG_CTX_FN] || r->fn_fl != n->ctx[CG_CTX_FN_FL]) {
        bool ob_later = c && n->m->calls[c->call].cob == CG_NONE && n->ctx[CG_CTX_OB] == CG_NONE &&
                        r->ob != CG_NONE;
        if ((!ob_later && set_ctx(n, CG_CTX_OB, "ob", r->ob) < 0) ||
            set_ctx(n, CG_CTX_FL, "fl", r->fn_fl) < 0 ||
            put_name(n, "fn", CG_NS_FUNCTION, r->fn) < 0)
            return -1;
        n->ctx[CG_CTX_FN] = r->fn, n->ctx[CG_CTX_FN_FL] = r->fn_fl;
        n->has_callee = false;
    }
    if (c && callee_first(n, c, r) && put_callee(n, c) < 0)
        return -1;
    if (set_ctx(n, CG_CTX_OB, "ob", r->ob) < 0)
        return -1;
    return set_ctx(n, CG_CTX_FL, "fi", r->fl);
}

/* The callee, calls= and the call's cost line. */
static int put_call(struct norm *n, const struct cg_part *p, const struct cg_record *r,
                    const uint64_t *v)
{
    if (put_callee(n, r) < 0 || reserve(n, 0, 1 + p->npos) < 0)
        return -1;
    cg_out_bytes(&n->o, "calls=", 6);
    cg_out_u64(&n->o, n->m->calls[r->call].count);
    cg_out_bytes(&n->o, " ", 1);
    cg_out_u64s(&n->o, v, p->npos);
    if (cg_out_eol(&n->o, n->err) < 0)
        return -1;
    return put_cost_line(n, p, v + p->npos);
}

/* A part's start: its headers, and no context printed yet. */
static int put_part_begin(struct norm *n, size_t i)
{
    n->ctx[0] = n->ctx[1] = n->ctx[2] = n->ctx[3] = CG_NONE;
    n->has_callee = false;
    return put_headers(n, i);
}

/* Records [from, to) of part p. */
static int put_records(struct norm *n, const struct cg_part *p, size_t from, size_t to)
{
    const struct cg_model *m = n->m;
    for (size_t k = from; k < to;) {
        const struct cg_record *r = &m->records[p->first_record + k];
        const uint64_t *v = m->values + r->values;
        if (put_context(n, p, k) < 0)
            return -1;
        long run = r->call == CG_NONE ? put_cost_run(n, p, k, to) : 0;
        if (run < 0)
            return -1;
        if (run > 0) {
            k += (size_t)run;
            continue;
        }
        if (r->call != CG_NONE ? put_call(n, p, r, v) < 0 : put_cost_line(n, p, v) < 0)
            return -1;
        k++;
    }
    return 0;
}

/* A part's end: its totals. */
static int put_part_end(struct norm *n, const struct cg_part *p)
{
    for (size_t k = 0; p->has_totals && k < p->nheaders; k++) {
        const struct cg_header *h = &n->m->headers[p->first_header + k];
        if (h->key == CG_H_TOTALS && put_header(n, h->key, &h->value) < 0)
            return -1;
    }
    return 0;
}

/* One part: headers, records, then totals. */
static int put_part(struct norm *n, size_t i)
{
    const struct cg_part *p = &n->m->parts[i];
    if (put_part_begin(n, i) < 0 || put_records(n, p, 0, p->nrecords) < 0)
        return -1;
    return put_part_end(n, p);
}

/* A first size for the output, so that it is rarely moved while growing:
 * numbers of up to 7 digits, every name and header once, a line per
 * record.  Pages that stay unused are never touched. */
static size_t output_guess(const struct cg_model *m)
{
    size_t bytes = 8 * m->nvalues + 8 * m->nrecords;
    for (int k = 0; k < CG_NS_COUNT; k++)
        for (size_t i = 0; i < m->nnames[k]; i++)
            bytes += m->names[k][i].len + 16;
    for (size_t i = 0; i < m->nheaders; i++)
        bytes += m->headers[i].value.len + 16;
    return bytes;
}

/* Fresh-ID tables that cover every name the model has (while parsing,
 * names keep coming). */
static int fresh_room(struct norm *n)
{
    for (int k = 0; k < CG_NS_COUNT; k++) {
        size_t need = n->m->nnames[k] + 1;
        if (need <= n->fresh_cap[k])
            continue;
        size_t cap = n->fresh_cap[k] * 2 > need ? n->fresh_cap[k] * 2 : need;
        uint32_t *f = realloc(n->fresh[k], cap * sizeof *f);
        if (f == NULL)
            return cg_fail(n->err, CG_RESOURCE, 0, "out of memory");
        memset(f + n->fresh_cap[k], 0, (cap - n->fresh_cap[k]) * sizeof *f);
        n->fresh[k] = f, n->fresh_cap[k] = cap;
    }
    return 0;
}

/* Room for `guess` bytes, then the first line. */
static int put_start(struct norm *n, size_t guess)
{
    if (fresh_room(n) < 0 || reserve(n, guess, 0) < 0)
        return -1;
    cg_out_bytes(&n->o, "# callgrind format", 18);
    return cg_out_eol(&n->o, n->err);
}

/* Ends the text with a NUL, not counted in its length. */
static int put_nul(struct norm *n)
{
    if (cg_out_reserve(&n->o, 1) < 0)
        return cg_fail(n->err, CG_RESOURCE, 0, "out of memory");
    n->o.buf[n->o.len] = '\0';
    return 0;
}

/* Model check, then every part. */
static int normalize(struct norm *n)
{
    if (cg_model_check(n->m, n->err) < 0)
        return -1;
    /* A caller's buffer only needs room for the first line: growing it to
     * the guess would move it, and it doubles anyway if the text passes
     * it. */
    if (put_start(n, n->o.cap ? 0 : output_guess(n->m)) < 0)
        return -1;
    for (size_t i = 0; i < n->m->nparts; i++)
        if (put_part(n, i) < 0)
            return -1;
    return put_nul(n);
}

int cg_normalize_into(const struct cg_model *m, char **buf, size_t *cap, size_t *out_len,
                      struct cg_error *err)
{
    struct cg_error scratch;
    struct norm n = {
        .m = m, .o = {.buf = *buf, .cap = *buf ? *cap : 0}, .err = err ? err : &scratch};
    *n.err = (struct cg_error){CG_OK, 0, ""};
    int rc = m ? normalize(&n) : cg_fail(n.err, CG_SYNTAX, 0, "no model");
    for (int k = 0; k < CG_NS_COUNT; k++)
        free(n.fresh[k]);
    if (rc == 0)
        *out_len = n.o.len;
    *buf = n.o.buf, *cap = n.o.cap;
    return rc;
}

/* ---- normalizing while parsing ---- */

struct cg_norm {
    struct norm n;
    struct cg_error err;
    size_t begun; /* parts whose headers are printed */
};

struct cg_norm *cg_norm_begin(const struct cg_model *m, size_t guess)
{
    struct cg_norm *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->n = (struct norm){.m = m, .err = &s->err};
    s->err = (struct cg_error){CG_OK, 0, ""};
    if (put_start(&s->n, guess) < 0)
        s->begun = SIZE_MAX; /* failed: cg_norm_error says why */
    return s;
}

/* Part i's headers, once. */
static int norm_part(struct cg_norm *s, size_t i)
{
    if (s->begun == SIZE_MAX)
        return -1;
    if (fresh_room(&s->n) < 0)
        return s->begun = SIZE_MAX, -1;
    if (s->begun > i)
        return 0;
    s->begun = i + 1;
    if (put_part_begin(&s->n, i) < 0)
        return s->begun = SIZE_MAX, -1;
    return 0;
}

int cg_norm_records(struct cg_norm *s, size_t i, size_t to)
{
    if (norm_part(s, i) < 0)
        return -1;
    if (put_records(&s->n, &s->n.m->parts[i], 0, to) < 0)
        return s->begun = SIZE_MAX, -1;
    return 0;
}

int cg_norm_part_end(struct cg_norm *s, size_t i)
{
    const struct cg_part *p = &s->n.m->parts[i];
    if (cg_norm_records(s, i, p->nrecords) < 0)
        return -1;
    if (put_part_end(&s->n, p) < 0)
        return s->begun = SIZE_MAX, -1;
    return 0;
}

const struct cg_error *cg_norm_error(const struct cg_norm *s)
{
    return s->begun == SIZE_MAX ? &s->err : NULL;
}

int cg_norm_finish(struct cg_norm *s, char **out, size_t *out_len, struct cg_error *err)
{
    if (s->begun == SIZE_MAX || put_nul(&s->n) < 0)
        return *err = s->err, -1;
    *out = s->n.o.buf, *out_len = s->n.o.len;
    s->n.o.buf = NULL;
    return 0;
}

void cg_norm_free(struct cg_norm *s)
{
    if (s == NULL)
        return;
    for (int k = 0; k < CG_NS_COUNT; k++)
        free(s->n.fresh[k]);
    free(s->n.o.buf);
    free(s);
}

int cg_normalize(const struct cg_model *m, char **out, size_t *out_len, struct cg_error *err)
{
    char *buf = NULL;
    size_t cap = 0;
    if (cg_normalize_into(m, &buf, &cap, out_len, err) < 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}
