/* rank: thresholds, ordering, limit and the per-entry detail of a report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/rank-internal.h"
#include "daemon/rank.h"
#include "daemon/redact.h"
#include "daemon/suggest.h"

typedef unsigned __int128 u128;

uint64_t rank_percent_hundredths(uint64_t n, uint64_t d)
{
    return (uint64_t)(((u128)n * 20000u + d) / ((u128)d * 2u));
}

bool rank_waits_first(const struct rank_report *r)
{
    return r->mode == WIRE_MODE_CPU && r->n_waits > 0 && r->cpu.waiting_samples != RANK_NA &&
           r->cpu.waiting_samples >= r->cpu.attributed_samples;
}

bool rank_meets(uint64_t n, uint64_t d, uint32_t threshold_bp)
{
    return (u128)n * 10000u >= (u128)threshold_bp * d;
}

/* Compares byte strings: bytewise, a prefix first. */
static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c != 0)
        return c;
    return an < bn ? -1 : an > bn;
}

static int u32_cmp(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b; /* ATTRIB_NONE / WIRE_NONE32 is the largest: unavailable last */
}

/* Sources by origin (project < dependency < stdlib), then path;
 * unavailable last. */
static int source_cmp(const struct agg *a, uint32_t x, uint32_t y)
{
    if (x == y)
        return 0;
    if (x == ATTRIB_NONE || y == ATTRIB_NONE)
        return x == ATTRIB_NONE ? 1 : -1;
    struct attrib_source s, t;
    attrib_source(a, x, &s);
    attrib_source(a, y, &t);
    if (s.origin != t.origin)
        return s.origin < t.origin ? -1 : 1;
    return bytes_cmp(s.path, s.path_len, t.path, t.path_len);
}

/* The total order of function identities: namespace, name, source,
 * declaration start, declaration end; unavailable after every value. */
static int ident_cmp(const struct agg *a, uint32_t x, uint32_t y)
{
    struct attrib_ident p, q;
    attrib_ident(a, x, &p);
    attrib_ident(a, y, &q);
    int c = bytes_cmp(p.ns, p.ns_len, q.ns, q.ns_len);
    if (c == 0)
        c = bytes_cmp(p.name, p.name_len, q.name, q.name_len);
    if (c == 0)
        c = source_cmp(a, p.source, q.source);
    if (c == 0)
        c = u32_cmp(p.decl.start, q.decl.start);
    return c != 0 ? c : u32_cmp(p.decl.end, q.decl.end);
}

/* An entry's primary and secondary impact: inclusive and self samples
 * (CPU) or allocated bytes and allocation count (memory). */
struct impact {
    uint64_t primary, secondary;
};

static struct impact impact_of(const struct agg *a, uint32_t ident)
{
    struct attrib_fn f;
    struct attrib_site s;
    if (agg_mode(a) == WIRE_MODE_CPU)
        return attrib_fn(a, ident, &f) ? (struct impact){f.inclusive, f.self}
                                       : (struct impact){0, 0};
    return attrib_site(a, ident, &s) ? (struct impact){s.allocated_bytes, s.allocation_count}
                                     : (struct impact){0, 0};
}

/* Bottleneck order: primary desc, secondary desc, then identity. */
static int entry_cmp(const void *x, const void *y, void *ctx)
{
    const struct agg *a = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    struct impact p = impact_of(a, i), q = impact_of(a, j);
    if (p.primary != q.primary)
        return p.primary > q.primary ? -1 : 1;
    if (p.secondary != q.secondary)
        return p.secondary > q.secondary ? -1 : 1;
    return ident_cmp(a, i, j);
}

/* The percentages' denominator: jett samples or attributed bytes. */
static uint64_t denominator(const struct agg *a)
{
    struct attrib_cpu_totals c;
    struct attrib_mem_totals m;
    if (agg_mode(a) == WIRE_MODE_CPU)
        return attrib_cpu_totals(a, &c), c.attributed;
    return attrib_mem_totals(a, &m), m.attributed;
}

/* Identities with quantities that meet the threshold, sorted. */
static uint32_t *eligible(const struct agg *a, uint32_t threshold_bp, uint64_t *n)
{
    uint64_t den = denominator(a);
    uint32_t count = attrib_ident_count(a);
    uint32_t *ids = malloc(((size_t)count + 1) * sizeof *ids);
    if (ids == NULL)
        return NULL;
    *n = 0;
    for (uint32_t i = 0; den > 0 && i < count; i++)
        if (attrib_has_quantities(a, i) && rank_meets(impact_of(a, i).primary, den, threshold_bp))
            ids[(*n)++] = i;
    qsort_r(ids, *n, sizeof *ids, entry_cmp, (void *)a);
    return ids;
}

static struct redact_source redact_view(const struct attrib_source *s)
{
    return (struct redact_source){s->text, s->text_len, s->spans, s->n_spans, s->lines, s->n_lines};
}

/* Hot lines: self desc, then position (line and column follow the start
 * offset within the function's one source); unknown spans last. */
static bool hot_before(const struct attrib_hot *x, const struct attrib_hot *y)
{
    if (x->self != y->self)
        return x->self > y->self;
    return x->start < y->start;
}

/* Inserts `item` into a best-first top list of RANK_TOP using `before`. */
#define TOP_INSERT(arr, n, item, before)                                                           \
    do {                                                                                           \
        unsigned _k = (n) < RANK_TOP ? (n)++ : RANK_TOP;                                           \
        while (_k > 0 && before((item), (arr)[_k - 1])) {                                          \
            if (_k < RANK_TOP)                                                                     \
                (arr)[_k] = (arr)[_k - 1];                                                         \
            _k--;                                                                                  \
        }                                                                                          \
        if (_k < RANK_TOP)                                                                         \
            (arr)[_k] = (item);                                                                    \
    } while (0)

/* A row's position: path, and line and column of `start` (unavailable
 * without a source or a span); the 0-based line, or UINT32_MAX. */
static uint32_t hot_where(const struct agg *a, const struct attrib_ident *d, uint32_t start,
                          struct rank_hot *o, struct attrib_source *s)
{
    o->line = o->column = RANK_NA;
    if (d->source == ATTRIB_NONE)
        return UINT32_MAX;
    attrib_source(a, d->source, s);
    o->path = (struct rank_str){s->path, s->path_len};
    if (start == ATTRIB_NONE)
        return UINT32_MAX;
    struct redact_source v = redact_view(s);
    uint32_t line = redact_line_of(&v, start);
    o->line = (uint64_t)line + 1;
    o->column = (uint64_t)(start - s->lines[line]) + 1;
    return line;
}

/* Fills one hot-line row, redacting its excerpt. */
static int hot_fill(const struct agg *a, const struct attrib_ident *d, const struct attrib_hot *h,
                    struct rank_hot *o)
{
    o->self_samples = h->self;
    struct attrib_source s;
    uint32_t line = hot_where(a, d, h->start, o, &s);
    if (line == UINT32_MAX || !s.spans_ok || !(agg_capabilities(a) & WIRE_CAP_SOURCE_SPANS))
        return 0;
    struct redact_source v = redact_view(&s);
    char buf[REDACT_MAX + 1];
    size_t len;
    if (redact_excerpt(&v, line, buf, &len, &o->source_redacted) < 0)
        return 0;
    o->code = malloc(len + 1);
    if (o->code == NULL)
        return -1;
    memcpy(o->code, buf, len + 1);
    o->code_len = len;
    return 0;
}

#define hot_before_v(x, y) hot_before(&(x), &(y))

static int entry_hot_lines(const struct agg *a, uint32_t ident, struct rank_entry *e)
{
    struct attrib_ident d;
    attrib_ident(a, ident, &d);
    struct attrib_hot top[RANK_TOP], h;
    unsigned n = 0;
    struct attrib_hot_iter it;
    attrib_hot_begin(a, ident, &it);
    while (attrib_hot_next(a, &it, &h))
        TOP_INSERT(top, n, h, hot_before_v);
    for (e->n_hot = 0; e->n_hot < n; e->n_hot++)
        if (hot_fill(a, &d, &top[e->n_hot], &e->hot[e->n_hot]) < 0)
            return -1;
    return 0;
}

/* The identities of a chain from the root; returns how many. */
static unsigned chain_seq(const struct agg *a, uint32_t chain, uint32_t out[WIRE_MAX_STACK_DEPTH])
{
    unsigned n = 0;
    for (uint32_t c = chain; c != ATTRIB_NONE && n < WIRE_MAX_STACK_DEPTH; n++) {
        out[n] = attrib_chain_ident(a, c);
        c = attrib_chain_parent(a, c);
    }
    for (unsigned i = 0; i < n / 2; i++) {
        uint32_t t = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = t;
    }
    return n;
}

/* A chain's weight; only chains that have one are compared. */
static uint64_t chain_weight(const struct agg *a, uint32_t chain)
{
    uint64_t w = 0;
    attrib_chain_weight(a, chain, &w);
    return w;
}

/* Whether chain x's identity sequence comes before y's, lexically (a
 * prefix first). */
static bool chain_seq_before(const struct agg *a, uint32_t x, uint32_t y)
{
    uint32_t p[WIRE_MAX_STACK_DEPTH], q[WIRE_MAX_STACK_DEPTH];
    unsigned np = chain_seq(a, x, p), nq = chain_seq(a, y, q);
    for (unsigned i = 0; i < np && i < nq; i++) {
        int c = p[i] == q[i] ? 0 : ident_cmp(a, p[i], q[i]);
        if (c != 0)
            return c < 0;
    }
    return np < nq;
}

/* Chains: weight desc, then the identity sequences lexically. */
static bool chain_before(const struct agg *a, uint32_t x, uint32_t y)
{
    uint64_t sx = chain_weight(a, x), sy = chain_weight(a, y);
    if (sx != sy)
        return sx > sy;
    return chain_seq_before(a, x, y);
}

#define FOLD_MARK " \u00d7" /* " ×" before a run's length */

/* "ns.fn > ns.fn > ..." for a chain; with `fold`, each run of one
 * identity written once as "ns.fn ×N" (N > 1).  NULL when memory runs
 * out. */
static char *chain_text(const struct agg *a, uint32_t chain, bool fold, size_t *len)
{
    uint32_t seq[WIRE_MAX_STACK_DEPTH];
    unsigned n = chain_seq(a, chain, seq);
    struct attrib_ident d;
    size_t total = 1;
    for (unsigned i = 0; i < n; i++) {
        attrib_ident(a, seq[i], &d);
        total += d.ns_len + d.name_len + 4 + (fold ? sizeof FOLD_MARK + 10 : 0);
    }
    char *s = malloc(total), *p = s;
    if (s == NULL)
        return NULL;
    for (unsigned i = 0; i < n;) {
        unsigned run = 1;
        while (fold && i + run < n && seq[i + run] == seq[i])
            run++;
        attrib_ident(a, seq[i], &d);
        if (i > 0)
            memcpy(p, " > ", 3), p += 3;
        memcpy(p, d.ns, d.ns_len), p += d.ns_len;
        *p++ = '.';
        memcpy(p, d.name, d.name_len), p += d.name_len;
        if (run > 1)
            p += sprintf(p, "%s%u", FOLD_MARK, run);
        i += run;
    }
    *p = '\0';
    *len = (size_t)(p - s);
    return s;
}

#define NO_SLOT UINT32_MAX

/* Allocation lines: bytes desc, then allocations desc, then position. */
static bool line_before(const struct attrib_line *x, const struct attrib_line *y)
{
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes;
    if (x->count != y->count)
        return x->count > y->count;
    return x->start < y->start;
}

#define line_before_v(x, y) line_before(&(x), &(y))

/* Picks every emitted memory entry's top allocation lines in one pass
 * over the lines, then fills them as hot lines are filled. */
static int entries_lines(const struct agg *a, const uint32_t *slot, struct rank_report *r)
{
    struct attrib_line(*top)[RANK_TOP] = calloc(r->n_entries + 1, sizeof *top);
    if (top == NULL)
        return -1;
    struct attrib_line_iter it;
    struct attrib_line l;
    attrib_line_begin(a, &it);
    while (attrib_line_next(a, &it, &l))
        if (slot[l.ident] != NO_SLOT)
            TOP_INSERT(top[slot[l.ident]], r->entries[slot[l.ident]].n_hot, l, line_before_v);
    int rc = 0;
    for (size_t i = 0; i < r->n_entries; i++) {
        struct rank_entry *e = &r->entries[i];
        for (unsigned k = 0; k < e->n_hot; k++) {
            const struct attrib_line *t = &top[i][k];
            struct attrib_ident d;
            attrib_ident(a, t->ident, &d);
            struct attrib_hot h = {0, t->start, t->end};
            if (hot_fill(a, &d, &h, &e->hot[k]) < 0)
                rc = -1;
            e->hot[k].allocated_bytes = t->bytes;
            e->hot[k].allocation_count = t->count;
        }
    }
    free(top);
    return rc;
}

/* For each emitted entry, the callee whose chain continues the entry's
 * dominant chain with the most samples (ties: identity order): one pass
 * over the chains, knowing which chain is whose dominant one. */
static int dominant_callees(const struct agg *a, uint32_t (*top)[RANK_TOP], struct rank_report *r)
{
    uint32_t n_chains = attrib_chain_count(a);
    uint32_t *owner = malloc(((size_t)n_chains + 1) * sizeof *owner);
    uint32_t *best = malloc((r->n_entries + 1) * sizeof *best);
    if (owner == NULL || best == NULL) {
        free(owner), free(best);
        return -1;
    }
    for (uint32_t c = 0; c < n_chains; c++)
        owner[c] = NO_SLOT;
    for (size_t i = 0; i < r->n_entries; i++) {
        best[i] = ATTRIB_NONE;
        if (r->entries[i].n_chains > 0)
            owner[top[i][0]] = (uint32_t)i;
    }
    for (uint32_t c = 0; c < n_chains; c++) {
        uint32_t p = attrib_chain_parent(a, c), i;
        uint64_t w;
        if (p == ATTRIB_NONE || (i = owner[p]) == NO_SLOT || !attrib_chain_weight(a, c, &w))
            continue;
        uint64_t bw = best[i] == ATTRIB_NONE ? 0 : chain_weight(a, best[i]);
        if (best[i] == ATTRIB_NONE || w > bw ||
            (w == bw && ident_cmp(a, attrib_chain_ident(a, c), attrib_chain_ident(a, best[i])) < 0))
            best[i] = c;
    }
    for (size_t i = 0; i < r->n_entries; i++) {
        if (best[i] == ATTRIB_NONE || chain_weight(a, best[i]) == 0)
            continue;
        struct attrib_ident d;
        attrib_ident(a, attrib_chain_ident(a, best[i]), &d);
        r->entries[i].callee_ns = (struct rank_str){d.ns, d.ns_len};
        r->entries[i].callee_fn = (struct rank_str){d.name, d.name_len};
        r->entries[i].callee_samples = chain_weight(a, best[i]);
    }
    free(owner), free(best);
    return 0;
}

/* Picks every emitted entry's top chains in one pass over the chains.
 * `slot` maps an identity to its entry index (NO_SLOT: not emitted). */
static int entries_chains(const struct agg *a, const uint32_t *slot, struct rank_report *r)
{
    uint32_t(*top)[RANK_TOP] = calloc(r->n_entries + 1, sizeof *top);
    if (top == NULL)
        return -1;
    uint32_t n_chains = attrib_chain_count(a);
    for (uint32_t c = 0; c < n_chains; c++) {
        uint64_t w;
        uint32_t ident = attrib_chain_ident(a, c);
        if (!attrib_chain_weight(a, c, &w) || slot[ident] == NO_SLOT)
            continue;
        struct rank_entry *e = &r->entries[slot[ident]];
        uint32_t *t = top[slot[ident]];
        unsigned k = e->n_chains < RANK_TOP ? e->n_chains++ : RANK_TOP;
        for (; k > 0 && chain_before(a, c, t[k - 1]); k--)
            if (k < RANK_TOP)
                t[k] = t[k - 1];
        if (k < RANK_TOP)
            t[k] = c;
    }
    int rc = dominant_callees(a, top, r);
    for (size_t i = 0; i < r->n_entries; i++)
        for (unsigned k = 0; k < r->entries[i].n_chains; k++) {
            struct rank_chain *o = &r->entries[i].chains[k];
            o->weight = chain_weight(a, top[i][k]);
            o->chain = chain_text(a, top[i][k], false, &o->len);
            o->folded = chain_text(a, top[i][k], true, &o->folded_len);
            if (o->chain == NULL || o->folded == NULL)
                rc = -1;
        }
    free(top);
    return rc;
}

/* Call lines: inclusive samples desc, then position. */
static bool call_before(const struct attrib_call *x, const struct attrib_call *y)
{
    if (x->samples != y->samples)
        return x->samples > y->samples;
    return x->start < y->start;
}

#define call_before_v(x, y) call_before(&(x), &(y))

/* The callee in most of a call line's samples (ties: identity order). */
static uint32_t dominant_callee(const struct agg *a, uint32_t key)
{
    struct attrib_hot_iter it;
    struct attrib_callee c;
    uint32_t best = ATTRIB_NONE;
    uint64_t most = 0;
    attrib_callee_begin(a, key, &it);
    while (attrib_callee_next(a, &it, &c))
        if (c.samples > 0 && (best == ATTRIB_NONE || c.samples > most ||
                              (c.samples == most && ident_cmp(a, c.ident, best) < 0)))
            best = c.ident, most = c.samples;
    return best;
}

/* Picks every emitted CPU entry's top call lines in one pass over the
 * call lines, then fills them as hot lines are filled, with the calls,
 * the share and the dominant callee. */
static int entries_call_lines(const struct agg *a, const uint32_t *slot, struct rank_report *r)
{
    struct attrib_call(*top)[RANK_TOP] = calloc(r->n_entries + 1, sizeof *top);
    if (top == NULL)
        return -1;
    struct attrib_hot_iter it;
    struct attrib_call c;
    attrib_call_begin(a, &it);
    while (attrib_call_next(a, &it, &c))
        if (c.samples > 0 && slot[c.ident] != NO_SLOT)
            TOP_INSERT(top[slot[c.ident]], r->entries[slot[c.ident]].n_calls, c, call_before_v);
    int rc = 0;
    bool known = attrib_calls_known(a);
    for (size_t i = 0; i < r->n_entries; i++) {
        struct rank_entry *e = &r->entries[i];
        for (unsigned k = 0; k < e->n_calls; k++) {
            const struct attrib_call *t = &top[i][k];
            struct rank_call *o = &e->call_lines[k];
            struct attrib_ident d;
            attrib_ident(a, t->ident, &d);
            struct attrib_hot h = {t->samples, t->start, ATTRIB_NONE};
            if (hot_fill(a, &d, &h, &o->where) < 0)
                rc = -1;
            o->calls = known ? t->calls : RANK_NA;
            o->percent_hundredths = rank_percent_hundredths(t->samples, denominator(a));
            uint32_t callee = dominant_callee(a, t->key);
            if (callee != ATTRIB_NONE) {
                attrib_ident(a, callee, &d);
                o->callee_ns = (struct rank_str){d.ns, d.ns_len};
                o->callee_fn = (struct rank_str){d.name, d.name_len};
            }
        }
    }
    free(top);
    return rc;
}

/* Identity fields of an entry: names, source, declaration line. */
void rank_identity(const struct agg *a, uint32_t ident, struct rank_entry *e)
{
    struct attrib_ident d;
    attrib_ident(a, ident, &d);
    e->ns = (struct rank_str){d.ns, d.ns_len};
    e->fn = (struct rank_str){d.name, d.name_len};
    e->origin = -1;
    e->line = RANK_NA;
    if (d.source == ATTRIB_NONE)
        return;
    struct attrib_source s;
    attrib_source(a, d.source, &s);
    e->path = (struct rank_str){s.path, s.path_len};
    e->origin = s.origin;
    if (wire_span_present(d.decl)) {
        struct redact_source v = redact_view(&s);
        e->line = (uint64_t)redact_line_of(&v, d.decl.start) + 1;
    }
}

/* The CPU numbers of an entry: counts, percents, calls, hot lines. */
static int cpu_entry(const struct agg *a, uint32_t ident, struct rank_entry *e, bool numbers_only)
{
    struct attrib_fn f = {0, 0, 0};
    attrib_fn(a, ident, &f);
    e->primary = f.inclusive;
    e->secondary = f.self;
    e->percent_hundredths = rank_percent_hundredths(f.inclusive, denominator(a));
    e->self_percent_hundredths = rank_percent_hundredths(f.self, denominator(a));
    /* a frame without a source is a runtime bucket, which nothing calls */
    e->calls = attrib_calls_known(a) && e->path.ptr ? f.calls : RANK_NA;
    e->freed_bytes = e->retained_bytes = e->live_at_peak_bytes = e->resize_count = RANK_NA;
    e->live_unavailable = e->retained_unavailable = true;
    if (numbers_only)
        return 0;
    if (entry_hot_lines(a, ident, e) < 0)
        return -1;
    e->suggestions_unavailable = e->path.ptr == NULL; /* suggested after the chains */
    return 0;
}

/* The memory numbers of an entry; live values only while exact, and
 * retained bytes only once the run's exit is known too. */
static int mem_entry(const struct agg *a, uint32_t ident, struct rank_entry *e,
                     const struct rank_report *r, bool numbers_only)
{
    struct attrib_site s = {0, 0, 0, 0, 0, 0};
    attrib_site(a, ident, &s);
    bool exact = attrib_mem_exact(a), kept = attrib_retained_exact(a);
    uint64_t den = denominator(a);
    e->primary = s.allocated_bytes;
    e->secondary = s.allocation_count;
    e->percent_hundredths = rank_percent_hundredths(s.allocated_bytes, den);
    e->self_percent_hundredths = RANK_NA;
    e->calls = RANK_NA;
    e->resize_count = s.resize_count;
    e->freed_bytes = exact ? s.freed_bytes : RANK_NA;
    e->retained_bytes = kept ? s.live : RANK_NA;
    e->live_at_peak_bytes = exact ? s.live_at_peak : RANK_NA;
    e->live_unavailable = !exact;
    e->retained_unavailable = !kept;
    if (numbers_only)
        return 0;
    if (e->path.ptr == NULL)
        return e->suggestions_unavailable = true, 0;
    if (r->status != AGG_COMPLETE)
        return 0;
    return suggest_mem(e, r->threshold_bp, den);
}

/* Fills the emitted entries from the sorted eligible identities. */
static int fill_entries(const struct agg *a, const uint32_t *ids, struct rank_report *r,
                        bool numbers_only)
{
    uint32_t count = attrib_ident_count(a);
    uint32_t *slot = malloc(((size_t)count + 1) * sizeof *slot);
    if (slot == NULL)
        return -1;
    for (uint32_t i = 0; i < count; i++)
        slot[i] = NO_SLOT;
    int rc = 0;
    for (size_t i = 0; i < r->n_entries; i++) {
        struct rank_entry *e = &r->entries[i];
        slot[ids[i]] = (uint32_t)i;
        e->rank = i + 1;
        rank_identity(a, ids[i], e);
        if ((agg_mode(a) == WIRE_MODE_CPU ? cpu_entry(a, ids[i], e, numbers_only)
                                          : mem_entry(a, ids[i], e, r, numbers_only)) < 0)
            rc = -1;
    }
    if (rc == 0 && !numbers_only)
        rc = entries_chains(a, slot, r);
    if (rc == 0 && !numbers_only && agg_mode(a) == WIRE_MODE_MEMORY)
        rc = entries_lines(a, slot, r);
    if (rc == 0 && !numbers_only && agg_mode(a) == WIRE_MODE_CPU)
        rc = entries_call_lines(a, slot, r);
    for (size_t i = 0; rc == 0 && !numbers_only && agg_mode(a) == WIRE_MODE_CPU &&
                       r->status == AGG_COMPLETE && i < r->n_entries;
         i++)
        if (!r->entries[i].suggestions_unavailable)
            rc = suggest_cpu(&r->entries[i]);
    free(slot);
    return rc;
}

static uint64_t div_round(u128 n, u128 d)
{
    return (uint64_t)((n * 2 + d) / (d * 2));
}

/* CPU totals; what only FINISH knows is unavailable without it. */
static void cpu_totals(const struct agg *a, struct rank_cpu_totals *t)
{
    const struct wire_finish *f = agg_finish_record(a);
    struct attrib_cpu_totals c;
    attrib_cpu_totals(a, &c);
    t->recorded_samples = c.recorded;
    t->attributed_samples = c.attributed;
    t->runtime_samples = c.runtime;
    t->waiting_samples = c.waiting;
    t->unavailable_samples = c.unavailable;
    t->truncated_stacks = c.truncated;
    t->requested_ticks = f ? f->requested_ticks : RANK_NA;
    t->coalesced_ticks = f ? f->coalesced_ticks : RANK_NA;
    t->dropped_ticks = f ? f->dropped_ticks : RANK_NA;
    t->wall_ms = f ? div_round(f->wall_ns, 1000000) : RANK_NA;
    t->process_cpu_ms = f && f->cpu_ns != WIRE_NONE64 ? div_round(f->cpu_ns, 1000000) : RANK_NA;
    t->observed_rate_hundredths =
        f && f->wall_ns > 0 ? div_round((u128)c.recorded * 100000000000u, f->wall_ns) : RANK_NA;
}

/* Memory totals; live values are unavailable once tracking stopped,
 * and retained bytes without the run's exit too. */
static void mem_totals(const struct agg *a, struct rank_mem_totals *t)
{
    struct attrib_mem_totals m;
    attrib_mem_totals(a, &m);
    bool exact = attrib_mem_exact(a), kept = attrib_retained_exact(a);
    t->allocation_count = m.allocation_count;
    t->resize_count = m.resize_count;
    t->allocated_bytes = m.allocated_bytes;
    t->freed_bytes = exact ? m.freed_bytes : RANK_NA;
    t->peak_live_bytes = exact ? m.peak : RANK_NA;
    t->retained_bytes = kept ? m.live : RANK_NA;
    t->live_unavailable = !exact;
    t->retained_unavailable = !kept;
    t->attributed_allocated_bytes = m.attributed;
}

static const char *termination_name(const struct agg *a)
{
    static const char *const names[] = {"returned", "runtime_error", "interrupted"};
    const struct wire_finish *f = agg_finish_record(a);
    if (f == NULL || f->termination > WIRE_TERM_INTERRUPTED)
        return "unavailable";
    return names[f->termination];
}

/* Everything above the bottleneck list. */
static void report_header(const struct agg *a, const struct rank_options *opt,
                          struct rank_report *r)
{
    const struct wire_config *cfg = agg_config(a);
    memset(r, 0, sizeof *r);
    r->mode = agg_mode(a);
    r->status = agg_status(a, &r->reason);
    r->termination = termination_name(a);
    r->backend = agg_backend(a) ? agg_backend(a) : "unavailable";
    r->coverage = r->mode == WIRE_MODE_CPU ? "jett_runtime_threads" : "jett_heap";
    r->colour = agg_colour(a);
    r->capabilities = agg_capabilities(a);
    r->rate_hz = cfg->rate_hz;
    r->threshold_bp = opt && opt->set_threshold ? opt->threshold_bp : cfg->threshold_bp;
    r->limit = opt && opt->set_limit ? opt->limit : cfg->limit;
    r->cpu_budget = cfg->cpu_budget;
    r->retention_budget = cfg->retention_budget;
    r->collector_errors = agg_error_count(a);
    r->collector_error = agg_error(a);
    cpu_totals(a, &r->cpu);
    mem_totals(a, &r->mem);
}

/* Waiting call sites: samples desc, then function identity, then
 * position (unknown last). */
static bool wait_before(const struct agg *a, const struct attrib_wait *x,
                        const struct attrib_wait *y)
{
    if (x->hot.self != y->hot.self)
        return x->hot.self > y->hot.self;
    if (x->ident != y->ident)
        return ident_cmp(a, x->ident, y->ident) < 0;
    return x->hot.start < y->hot.start;
}

#define wait_before_v(x, y) wait_before(a, &(x), &(y))

/* A waiting call site's function and position, and its samples. */
static void wait_where(const struct agg *a, const struct attrib_wait *w, struct rank_wait *o)
{
    struct attrib_ident d;
    struct attrib_source s;
    attrib_ident(a, w->ident, &d);
    o->ns = (struct rank_str){d.ns, d.ns_len};
    o->fn = (struct rank_str){d.name, d.name_len};
    hot_where(a, &d, w->hot.start, &o->where, &s);
    o->origin = d.source == ATTRIB_NONE ? -1 : s.origin;
    o->where.self_samples = w->hot.self;
}

/* The dominant chain of each top waiting call site: one pass over the
 * sites' chains, the most samples first, then the identities in order. */
static int waiting_chains(const struct agg *a, const struct attrib_wait *top, struct rank_report *r)
{
    uint32_t best[RANK_TOP];
    uint64_t most[RANK_TOP] = {0};
    for (unsigned k = 0; k < r->n_waits; k++)
        best[k] = ATTRIB_NONE;
    struct attrib_hot_iter it;
    struct attrib_wait_chain c;
    attrib_wait_chain_begin(a, &it);
    while (attrib_wait_chain_next(a, &it, &c))
        for (unsigned k = 0; k < r->n_waits; k++)
            if (c.key == top[k].key && c.samples > 0 &&
                (best[k] == ATTRIB_NONE || c.samples > most[k] ||
                 (c.samples == most[k] && chain_seq_before(a, c.chain, best[k]))))
                best[k] = c.chain, most[k] = c.samples;
    for (unsigned k = 0; k < r->n_waits; k++) {
        struct rank_wait *o = &r->waits[k];
        if (best[k] == ATTRIB_NONE)
            continue;
        o->chain = chain_text(a, best[k], false, &o->chain_len);
        o->folded = chain_text(a, best[k], true, &o->folded_len);
        if (o->chain == NULL || o->folded == NULL)
            return -1;
    }
    return 0;
}

/* The top waiting call sites, with their share of waiting samples and
 * their chains. */
static int waiting_sites(const struct agg *a, struct rank_report *r)
{
    struct attrib_wait top[RANK_TOP], w;
    unsigned n = 0;
    struct attrib_hot_iter it;
    attrib_wait_begin(a, &it);
    while (attrib_wait_next(a, &it, &w))
        TOP_INSERT(top, n, w, wait_before_v);
    for (r->n_waits = 0; r->n_waits < n; r->n_waits++) {
        struct rank_wait *o = &r->waits[r->n_waits];
        struct attrib_ident d;
        attrib_ident(a, top[r->n_waits].ident, &d);
        wait_where(a, &top[r->n_waits], o);
        if (hot_fill(a, &d, &top[r->n_waits].hot, &o->where) < 0)
            return -1;
        o->percent_hundredths =
            rank_percent_hundredths(o->where.self_samples, r->cpu.waiting_samples);
    }
    return waiting_chains(a, top, r);
}

/* Every waiting call site, positions and samples only (a diff's). */
static int all_waiting_sites(const struct agg *a, struct rank_report *r)
{
    struct attrib_hot_iter it;
    struct attrib_wait w;
    size_t n = 0;
    attrib_wait_begin(a, &it);
    while (attrib_wait_next(a, &it, &w))
        n++;
    r->all_waits = calloc(n + 1, sizeof *r->all_waits);
    if (r->all_waits == NULL)
        return -1;
    attrib_wait_begin(a, &it);
    while (attrib_wait_next(a, &it, &w))
        wait_where(a, &w, &r->all_waits[r->n_all_waits++]);
    return 0;
}

/* Tasks in report order: by samples (cpu) or allocated bytes (memory),
 * descending, then by number. */
static bool task_before(bool cpu, const struct attrib_task *x, const struct attrib_task *y)
{
    uint64_t a = cpu ? x->samples : x->allocated_bytes, b = cpu ? y->samples : y->allocated_bytes;
    if (a != b)
        return a > b;
    return x->task < y->task;
}

static void task_where(const struct agg *a, uint32_t ident, uint32_t at, struct rank_str *path,
                       uint64_t *line)
{
    *path = (struct rank_str){NULL, 0};
    *line = RANK_NA;
    struct attrib_ident d;
    if (ident == ATTRIB_NONE)
        return;
    attrib_ident(a, ident, &d);
    if (d.source == ATTRIB_NONE)
        return;
    struct attrib_source s;
    attrib_source(a, d.source, &s);
    *path = (struct rank_str){s.path, s.path_len};
    if (at != ATTRIB_NONE && at <= s.text_len) {
        struct redact_source v = redact_view(&s);
        *line = (uint64_t)redact_line_of(&v, at) + 1;
    }
}

/* The top `limit` tasks (a selection by insertion: limit is at most 100)
 * and the sums over all of them. */
static int task_rows(const struct agg *a, struct rank_report *r)
{
    bool cpu = r->mode == WIRE_MODE_CPU;
    uint32_t n = attrib_task_count(a), keep = r->limit;
    struct attrib_task *top = calloc(keep + 1, sizeof *top);
    r->tasks = calloc(keep + 1, sizeof *r->tasks);
    if (top == NULL || r->tasks == NULL) {
        free(top);
        return -1;
    }
    uint32_t have = 0;
    r->task_count = n;
    for (uint32_t i = 1; i <= n; i++) {
        struct attrib_task t;
        attrib_task(a, i, &t);
        r->task_samples += t.samples;
        r->task_allocated += t.allocated_bytes;
        uint32_t at = have;
        while (at > 0 && task_before(cpu, &t, &top[at - 1]))
            at--;
        if (at >= keep)
            continue;
        memmove(&top[at + 1], &top[at], (size_t)(have - at) * sizeof *top);
        top[at] = t;
        if (have < keep)
            have++;
    }
    bool exact = attrib_tasks_live_exact(a);
    for (uint32_t i = 0; i < have; i++) {
        struct rank_task *o = &r->tasks[i];
        struct rank_entry e = {0};
        if (top[i].ident != ATTRIB_NONE)
            rank_identity(a, top[i].ident, &e);
        else
            e.line = RANK_NA;
        *o = (struct rank_task){top[i].task,
                                e.ns,
                                e.fn,
                                e.path,
                                e.line,
                                {NULL, 0},
                                RANK_NA,
                                top[i].samples,
                                top[i].waiting_samples,
                                top[i].allocated_bytes,
                                exact ? top[i].live_bytes : RANK_NA,
                                !exact};
        task_where(a, top[i].spawn_ident, top[i].spawn_at, &o->spawn_path, &o->spawn_line);
    }
    r->n_tasks = have;
    free(top);
    return 0;
}

int rank_build(const struct agg *a, const struct rank_options *opt, struct rank_report *out)
{
    report_header(a, opt, out);
    uint64_t n = 0;
    uint32_t *ids = eligible(a, out->threshold_bp, &n);
    if (ids == NULL)
        return -1;
    out->eligible = n;
    out->emitted = n < out->limit ? n : out->limit;
    out->truncated = n - out->emitted;
    out->n_entries = (size_t)out->emitted;
    out->entries = calloc(out->n_entries + 1, sizeof *out->entries);
    int rc = out->entries ? fill_entries(a, ids, out, opt && opt->numbers_only) : -1;
    if (rc == 0 && out->mode == WIRE_MODE_CPU && !(opt && opt->numbers_only))
        rc = waiting_sites(a, out);
    if (rc == 0 && out->mode == WIRE_MODE_CPU && opt && opt->all_waits)
        rc = all_waiting_sites(a, out);
    if (rc == 0 && out->mode == WIRE_MODE_MEMORY && !(opt && opt->numbers_only))
        rc = rank_retained(a, out);
    out->has_tasks = attrib_tasks_on(a);
    if (rc == 0 && out->has_tasks && !(opt && opt->numbers_only))
        rc = task_rows(a, out);
    if (rc == 0 && !(opt && opt->numbers_only))
        rank_leads(a, out);
    free(ids);
    return rc;
}

void rank_free(struct rank_report *r)
{
    rank_free_entries(r);
    free(r->all_waits);
    r->all_waits = NULL;
    r->n_all_waits = 0;
    free(r->arena);
    r->arena = NULL;
}

void rank_free_entries(struct rank_report *r)
{
    for (size_t i = 0; r->entries && i < r->n_entries; i++) {
        struct rank_entry *e = &r->entries[i];
        for (unsigned k = 0; k < e->n_hot; k++)
            free(e->hot[k].code);
        for (unsigned k = 0; k < e->n_calls; k++)
            free(e->call_lines[k].where.code);
        for (unsigned k = 0; k < e->n_chains; k++)
            free(e->chains[k].chain), free(e->chains[k].folded);
        suggest_clear(e);
    }
    free(r->entries);
    r->entries = NULL;
    r->n_entries = 0;
    for (unsigned k = 0; k < r->n_waits; k++)
        free(r->waits[k].where.code), free(r->waits[k].chain), free(r->waits[k].folded);
    r->n_waits = 0;
    free(r->tasks);
    r->tasks = NULL;
    r->n_tasks = 0;
}

int rank_parse_percent(const char *s, uint32_t *bp)
{
    uint64_t whole = 0, frac = 0;
    size_t i = 0, digits = 0, fd = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++, digits++)
        if (whole <= 100)
            whole = whole * 10 + (uint64_t)(s[i] - '0');
    if (digits == 0)
        return -1;
    if (s[i] == '.') {
        for (i++; s[i] >= '0' && s[i] <= '9' && fd < 3; i++, fd++)
            frac = frac * 10 + (uint64_t)(s[i] - '0');
        if (fd == 0 || fd > 2)
            return -1;
        if (fd == 1)
            frac *= 10;
    }
    if (s[i] != '\0' || whole > 100 || whole * 100 + frac > 10000)
        return -1;
    *bp = (uint32_t)(whole * 100 + frac);
    return 0;
}

int rank_parse_limit(const char *s, uint32_t *limit)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        if (v <= 100)
            v = v * 10 + (uint64_t)(s[i] - '0');
    if (i == 0 || s[i] != '\0' || v < 1 || v > 100)
        return -1;
    *limit = (uint32_t)v;
    return 0;
}

int rank_bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    return bytes_cmp(a, an, b, bn);
}

int rank_source_cmp(const struct agg *a, uint32_t x, uint32_t y)
{
    return source_cmp(a, x, y);
}

int rank_ident_cmp(const struct agg *a, uint32_t x, uint32_t y)
{
    return ident_cmp(a, x, y);
}
