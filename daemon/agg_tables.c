/* agg_tables: the SOURCE, FUNC and STACK tables under the stack budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agg-internal.h"
#include "proto/wire_rules.h"

/* Bytes the index keeps after one more insert (charged)... */
static size_t index_growth(const struct agg_index *ix)
{
    return agg_index_bytes_after_insert(ix) - agg_index_bytes(ix);
}

/* ...and the most it adds while inserting (checked against the budget). */
static size_t index_peak(const struct agg_index *ix)
{
    return agg_index_peak_after_insert(ix) - agg_index_bytes(ix);
}

static bool stack_fits(const struct agg *a, size_t more)
{
    return more != SIZE_MAX && a->stack_bytes + more <= a->cfg.stack_budget;
}

struct source_key {
    uint8_t origin;
    const char *path;
    uint32_t len;
};

static bool source_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct agg *a = ctx;
    const struct source_key *k = key;
    const struct agg_source *s = agg_vec_at(&a->sources, entry);
    return s->origin == k->origin && s->path_len == k->len && memcmp(s->path, k->path, k->len) == 0;
}

/* Copies the spans in canonical order and keeps the outermost ones (an
 * outer span replaces what it contains); false with *why when a rule of
 * wire_rules refuses them. */
static bool source_copy_spans(struct agg_source *d, const struct wire_source *s, uint32_t *at,
                              const char **why)
{
    if (s->n_spans == 0)
        return true;
    d->spans = malloc((size_t)s->n_spans * sizeof *d->spans);
    if (d->spans == NULL)
        return *why = "out of memory", *at = 0, false;
    memcpy(d->spans, s->spans, (size_t)s->n_spans * sizeof *d->spans);
    if (wire_rule_spans(d->spans, s->n_spans, d->text_len, at, why) != 0)
        return false;
    d->n_spans = wire_spans_outermost(d->spans, s->n_spans);
    return true;
}

static uint32_t count_lines(const char *t, uint32_t n, uint32_t *out)
{
    uint32_t k = 0;
    if (out)
        out[0] = 0;
    k = 1;
    for (uint32_t i = 0; i < n; i++)
        if (t[i] == '\n') {
            if (out)
                out[k] = i + 1;
            k++;
        }
    return k;
}

static size_t source_cost(const struct agg *a, const struct wire_source *s, uint32_t lines)
{
    return agg_vec_growth(&a->sources, 1) + index_peak(&a->source_index) + s->path.len + 1 +
           s->text.len + (size_t)s->n_spans * sizeof(struct wire_source_span) +
           (size_t)lines * sizeof(uint32_t);
}

/* Fills a stored source from the record; false when memory runs out. */
static bool source_fill(struct agg *a, struct agg_source *d, const struct wire_source *s)
{
    memset(d, 0, sizeof *d);
    d->origin = s->origin;
    d->path = malloc(s->path.len + 1);
    d->text = malloc(s->text.len ? s->text.len : 1);
    d->n_lines = count_lines(s->text.ptr, s->text.len, NULL);
    d->lines = malloc((size_t)d->n_lines * sizeof *d->lines);
    if (!d->path || !d->text || !d->lines)
        return false;
    memcpy(d->path, s->path.ptr, s->path.len);
    d->path[s->path.len] = '\0';
    d->path_len = s->path.len;
    if (s->text.len)
        memcpy(d->text, s->text.ptr, s->text.len);
    d->text_len = s->text.len;
    count_lines(d->text, d->text_len, d->lines);
    const char *why;
    uint32_t at;
    d->spans_ok = source_copy_spans(d, s, &at, &why);
    if (!d->spans_ok)
        agg_errorf(a, "SOURCE.spans: span %u %s", at, why);
    d->path_ok = wire_rule_path(d->origin, d->path, d->path_len, &why) == 0;
    if (!d->path_ok)
        agg_errorf(a, "SOURCE.path: %s", why);
    return true;
}

static bool source_header_ok(struct agg *a, const struct wire_source *s)
{
    if (!agg_in_stream(a, "SOURCE"))
        return false;
    if (s->source_id != a->n_sources) {
        agg_errorf(a, "SOURCE record %u: source_id does not number the records from 0",
                   a->n_sources + 1);
        return false;
    }
    a->n_sources++;
    if (s->origin > WIRE_ORIGIN_STDLIB || s->text.len > WIRE_MAX_SOURCE) {
        agg_errorf(a, "SOURCE record %u: origin or text size out of range", a->n_sources);
        return false;
    }
    return true;
}

int agg_source(struct agg *a, const struct wire_source *s)
{
    uint64_t before = a->errors;
    if (!source_header_ok(a, s) || a->sources.len + 1 < a->n_sources)
        return a->errors > before ? -1 : 0;
    uint32_t lines = count_lines(s->text.ptr, s->text.len, NULL);
    if (!stack_fits(a, source_cost(a, s, lines))) {
        a->stack_limited = true;
        return 0;
    }
    struct agg_source *d = agg_vec_push(&a->sources, &a->stack_bytes);
    if (d == NULL || !source_fill(a, d, s)) {
        agg_errorf(a, "SOURCE record %u: out of memory", a->n_sources);
        return -1;
    }
    a->stack_bytes += s->path.len + 1 + s->text.len +
                      (size_t)s->n_spans * sizeof(struct wire_source_span) +
                      (size_t)d->n_lines * sizeof(uint32_t);
    struct source_key k = {d->origin, d->path, d->path_len};
    uint32_t h = agg_hash_bytes(agg_hash_u32(2166136261u, d->origin), d->path, d->path_len);
    if (d->path_ok && agg_index_find(&a->source_index, h, source_eq, a, &k) != AGG_NONE) {
        agg_errorf(a, "SOURCE.path: %s", WIRE_RULE_DUPLICATE_PATH);
        d->path_ok = false;
    } else if (d->path_ok) {
        a->stack_bytes += index_growth(&a->source_index);
        if (agg_index_insert(&a->source_index, h, a->sources.len - 1) < 0)
            agg_errorf(a, "SOURCE %s: out of memory", d->path);
    }
    return a->errors > before ? -1 : 0;
}

struct ident_key {
    struct wire_str ns, name;
    uint32_t source;
    struct wire_span decl;
};

static bool ident_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct agg *a = ctx;
    const struct ident_key *k = key;
    const struct agg_ident *d = agg_ident_at(a, entry);
    return d->source == k->source && d->decl.start == k->decl.start && d->decl.end == k->decl.end &&
           d->ns_len == k->ns.len && d->name_len == k->name.len &&
           memcmp(agg_str(a, d->ns), k->ns.ptr, k->ns.len) == 0 &&
           memcmp(agg_str(a, d->name), k->name.ptr, k->name.len) == 0;
}

static uint32_t ident_hash(const struct ident_key *k)
{
    uint32_t h = agg_hash_bytes(2166136261u, k->ns.ptr, k->ns.len);
    h = agg_hash_bytes(agg_hash_u32(h, k->ns.len), k->name.ptr, k->name.len);
    h = agg_hash_u32(h, k->source);
    return agg_hash_u32(agg_hash_u32(h, k->decl.start), k->decl.end);
}

static bool is_name(const struct wire_str *s, const char *lit)
{
    return s->len == strlen(lit) && memcmp(s->ptr, lit, s->len) == 0;
}

/* Appends a NUL-terminated copy to the string pool (already reserved). */
static uint32_t strings_put(struct agg *a, struct wire_str s)
{
    uint32_t off = a->strings.len;
    char *p = agg_vec_at(&a->strings, off);
    if (s.len)
        memcpy(p, s.ptr, s.len);
    p[s.len] = '\0';
    a->strings.len += s.len + 1;
    return off;
}

/* Interns an identity; AGG_NONE when the stack budget refuses it. */
static uint32_t ident_intern(struct agg *a, const struct ident_key *k)
{
    uint32_t h = ident_hash(k);
    uint32_t found = agg_index_find(&a->ident_index, h, ident_eq, a, k);
    if (found != AGG_NONE)
        return found;
    size_t cost = agg_vec_growth(&a->idents, 1) +
                  agg_vec_growth(&a->strings, k->ns.len + k->name.len + 2) +
                  index_peak(&a->ident_index) + agg_vec_growth(&a->funcs, 1);
    if (!stack_fits(a, cost) ||
        agg_vec_reserve(&a->strings, k->ns.len + k->name.len + 2, &a->stack_bytes) < 0)
        return AGG_NONE;
    struct agg_ident *d = agg_vec_push(&a->idents, &a->stack_bytes);
    if (d == NULL)
        return AGG_NONE;
    memset(d, 0, sizeof *d);
    d->ns = strings_put(a, k->ns);
    d->ns_len = k->ns.len;
    d->name = strings_put(a, k->name);
    d->name_len = k->name.len;
    d->source = k->source;
    d->decl = k->decl;
    d->bucket = AGG_NONE;
    d->hash = h;
    d->flags = is_name(&k->ns, "<runtime>") && is_name(&k->name, "<truncated-stack>")
                   ? AGG_IDENT_TRUNCATED
                   : 0;
    a->stack_bytes += index_growth(&a->ident_index);
    if (agg_index_insert(&a->ident_index, h, a->idents.len - 1) < 0)
        return AGG_NONE;
    return a->idents.len - 1;
}

/* How a message names a FUNC whose names passed: "ns.fn" (never its id),
 * in a buffer of the aggregator's that lives until the next call. */
static const char *func_label(struct agg *a, const struct wire_func *f)
{
    snprintf(a->label, sizeof a->label, "%.*s.%.*s", (int)(f->ns.len < 200 ? f->ns.len : 200),
             f->ns.ptr, (int)(f->name.len < 200 ? f->name.len : 200), f->name.ptr);
    return a->label;
}

/* Checks a FUNC's references; false (with a collector error) when bad. */
static bool func_refs_ok(struct agg *a, const struct wire_func *f, struct ident_key *k)
{
    k->ns = f->ns;
    k->name = f->name;
    k->source = AGG_NONE;
    k->decl = WIRE_SPAN_NONE;
    if (f->name.len == 0 || f->ns.len == 0 || f->ns.len > WIRE_MAX_NAME ||
        f->name.len > WIRE_MAX_NAME || memchr(f->ns.ptr, '\0', f->ns.len) ||
        memchr(f->name.ptr, '\0', f->name.len)) {
        agg_errorf(a, "FUNC record %u: empty, oversize or NUL-bearing name", a->n_funcs);
        return false;
    }
    if (f->source_id == WIRE_NONE32)
        return !wire_span_present(f->decl) ||
               (agg_errorf(a, "FUNC %s: declaration span without a source", func_label(a, f)),
                false);
    if (f->source_id >= a->n_sources) {
        agg_errorf(a, "FUNC %s: undefined source", func_label(a, f));
        return false;
    }
    if (f->source_id >= a->sources.len)
        return false; /* refused by the stack budget: already reported */
    const struct agg_source *s = agg_vec_at(&a->sources, f->source_id);
    if (wire_span_present(f->decl) && (f->decl.start > f->decl.end || f->decl.end > s->text_len)) {
        agg_errorf(a, "FUNC %s: declaration span outside its source", func_label(a, f));
        return false;
    }
    if (s->path_ok) {
        k->source = f->source_id;
        k->decl = f->decl;
    }
    return true;
}

int agg_func(struct agg *a, const struct wire_func *f)
{
    uint64_t before = a->errors;
    if (!agg_in_stream(a, "FUNC"))
        return -1;
    if (f->func_id != a->n_funcs) {
        agg_errorf(a, "FUNC record %u: func_id does not number the records from 0", a->n_funcs + 1);
        return -1;
    }
    a->n_funcs++;
    if (a->funcs.len + 1 < a->n_funcs)
        return 0;
    struct ident_key k;
    uint32_t ident = AGG_NONE;
    if (func_refs_ok(a, f, &k)) {
        ident = ident_intern(a, &k);
        if (ident == AGG_NONE) {
            a->stack_limited = true;
            return 0;
        }
    }
    if (!stack_fits(a, agg_vec_growth(&a->funcs, 1))) {
        a->stack_limited = true;
        return 0;
    }
    uint32_t *slot = agg_vec_push(&a->funcs, &a->stack_bytes);
    if (slot == NULL) {
        agg_errorf(a, "FUNC record %u: out of memory", a->n_funcs);
        return -1;
    }
    *slot = ident;
    return a->errors > before ? -1 : 0;
}

struct chain_key {
    uint32_t parent, ident;
};

static bool chain_eq(const void *ctx, uint32_t entry, const void *key)
{
    const struct agg *a = ctx;
    const struct chain_key *k = key;
    const struct agg_chain *c = agg_vec_at(&a->chains, entry);
    return c->parent == k->parent && c->ident == k->ident;
}

/* Interns the chain (caller chain, identity); AGG_NONE past the budget. */
static uint32_t chain_intern(struct agg *a, uint32_t parent, uint32_t ident, size_t node_cost)
{
    struct chain_key k = {parent, ident};
    uint32_t h = agg_hash_u32(agg_hash_u32(0x811c9dc5u, parent), ident);
    uint32_t found = agg_index_find(&a->chain_index, h, chain_eq, a, &k);
    if (found != AGG_NONE)
        return stack_fits(a, node_cost) ? found : AGG_NONE;
    size_t cost = node_cost + agg_vec_growth(&a->chains, 1) + index_peak(&a->chain_index);
    if (!stack_fits(a, cost))
        return AGG_NONE;
    struct agg_chain *c = agg_vec_push(&a->chains, &a->stack_bytes);
    if (c == NULL)
        return AGG_NONE;
    *c = (struct agg_chain){parent, ident, AGG_NONE, h};
    a->stack_bytes += index_growth(&a->chain_index);
    if (agg_index_insert(&a->chain_index, h, a->chains.len - 1) < 0)
        return AGG_NONE;
    return a->chains.len - 1;
}

/* Resolves parent and function of a STACK record into `n`; false leaves
 * the node invalid (with a collector error when the record was bad). */
static bool stack_refs_ok(struct agg *a, const struct wire_stack *s, struct agg_node *n)
{
    const struct agg_node *p = NULL;
    if (s->parent != WIRE_NONE32) {
        if (s->parent >= s->stack_id)
            return agg_errorf(a, "STACK record %u: undefined parent", s->stack_id + 1), false;
        p = agg_vec_at(&a->nodes, s->parent);
        if (p->flags & AGG_NODE_INVALID)
            return false;
    }
    if (s->func_id >= a->n_funcs)
        return agg_errorf(a, "STACK record %u: undefined function", s->stack_id + 1), false;
    if (s->func_id >= a->funcs.len)
        return false;
    n->ident = *(uint32_t *)agg_vec_at(&a->funcs, s->func_id);
    n->depth = p ? p->depth + 1 : 1;
    n->parent = p ? s->parent : AGG_NONE;
    if (n->ident == AGG_NONE)
        return false;
    if (n->depth > WIRE_MAX_STACK_DEPTH)
        return agg_errorf(a, "STACK record %u: deeper than %d frames", s->stack_id + 1,
                          WIRE_MAX_STACK_DEPTH),
               false;
    return true;
}

/* True when no ancestor of the node has its identity. */
static bool node_outermost(const struct agg *a, const struct agg_node *n)
{
    for (uint32_t p = n->parent; p != AGG_NONE;) {
        const struct agg_node *q = agg_vec_at(&a->nodes, p);
        if (q->ident == n->ident)
            return false;
        p = q->parent;
    }
    return true;
}

/* Whether the call that made node n (whose parent and site are set)
 * counts for a call line of its caller: the site lies in the caller's
 * source, and no frame further out is the caller's identity at the same
 * call, so that a sample counts once for a call line however deep the
 * caller recurses through it. */
static bool call_outermost(const struct agg *a, const struct agg_node *n, struct wire_span site)
{
    if (n->parent == AGG_NONE || !wire_span_present(site))
        return false;
    const struct agg_node *p = agg_node_at(a, n->parent);
    const struct agg_ident *d = agg_ident_at(a, p->ident);
    if (d->source == AGG_NONE)
        return false;
    const struct agg_source *src = agg_vec_at(&a->sources, d->source);
    if (site.start > site.end || site.end > src->text_len)
        return false;
    for (const struct agg_node *q = p; q->parent != AGG_NONE; q = agg_node_at(a, q->parent))
        if (q->site == site.start && agg_node_at(a, q->parent)->ident == p->ident)
            return false;
    return true;
}

/* Room for one more node in a per-node table of the exports (*p holding
 * *cap entries of `elem` bytes), charged to no budget; 0, or -1 when
 * memory runs out.  The room is zeroed as nodes take it, so that the
 * pages of a doubled table that no node reaches stay untouched. */
static int node_reserve(const struct agg *a, void **p, uint32_t *cap, size_t elem)
{
    if (a->nodes.len < *cap)
        return 0;
    uint32_t n = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, (size_t)n * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Room for one more node's export detail or self cost. */
static int detail_reserve(struct agg *a)
{
    if (a->detail &&
        node_reserve(a, (void **)&a->node_detail, &a->node_detail_cap, sizeof *a->node_detail))
        return -1;
    if (a->keep_node_self &&
        node_reserve(a, (void **)&a->node_self, &a->node_self_cap, sizeof *a->node_self))
        return -1;
    return 0;
}

int agg_stack(struct agg *a, const struct wire_stack *s)
{
    uint64_t before = a->errors;
    if (!agg_in_stream(a, "STACK"))
        return -1;
    if (s->stack_id != a->n_stacks) {
        agg_errorf(a, "STACK record %u: stack_id does not number the records from 0",
                   a->n_stacks + 1);
        return -1;
    }
    a->n_stacks++;
    if (a->nodes.len + 1 < a->n_stacks)
        return 0;
    struct agg_node n = {.parent = AGG_NONE,
                         .ident = AGG_NONE,
                         .chain = AGG_NONE,
                         .chain_bucket = AGG_NONE,
                         .leaf_bucket = AGG_NONE,
                         .site = wire_span_present(s->site) ? s->site.start : AGG_NONE,
                         .flags = AGG_NODE_INVALID};
    size_t node_cost = agg_vec_growth(&a->nodes, 1);
    if (stack_refs_ok(a, s, &n)) {
        uint32_t pc = n.parent == AGG_NONE
                          ? AGG_NONE
                          : ((struct agg_node *)agg_vec_at(&a->nodes, n.parent))->chain;
        n.chain = chain_intern(a, pc, n.ident, node_cost);
        if (n.chain == AGG_NONE) {
            a->stack_limited = true;
            return 0;
        }
        n.flags = (node_outermost(a, &n) ? AGG_NODE_OUTERMOST : 0) |
                  (agg_ident_at(a, n.ident)->source != AGG_NONE ? AGG_NODE_SOURCED : 0) |
                  (call_outermost(a, &n, s->site) ? AGG_NODE_CALL_OUTERMOST : 0);
    }
    if (!stack_fits(a, node_cost)) {
        a->stack_limited = true;
        return 0;
    }
    if (detail_reserve(a) != 0)
        return agg_errorf(a, "STACK %u: out of memory", s->stack_id), -1;
    struct agg_node *d = agg_vec_push(&a->nodes, &a->stack_bytes);
    if (d == NULL)
        return agg_errorf(a, "STACK record %u: out of memory", s->stack_id + 1), -1;
    *d = n;
    if (a->detail)
        *agg_detail_at(a, d) = (struct agg_node_detail){0};
    if (a->keep_node_self)
        a->node_self[a->nodes.len - 1] = 0;
    return a->errors > before ? -1 : 0;
}

bool agg_node_usable(const struct agg *a, uint32_t id)
{
    return id < a->nodes.len &&
           !(((const struct agg_node *)agg_vec_at(&a->nodes, id))->flags & AGG_NODE_INVALID);
}

void agg_tables_free(struct agg *a)
{
    for (uint32_t i = 0; i < a->sources.len; i++) {
        struct agg_source *s = agg_vec_at(&a->sources, i);
        free(s->path);
        free(s->text);
        free(s->spans);
        free(s->lines);
    }
    agg_vec_free(&a->sources);
    agg_index_free(&a->source_index);
    agg_vec_free(&a->strings);
    agg_vec_free(&a->idents);
    agg_index_free(&a->ident_index);
    agg_vec_free(&a->funcs);
    agg_vec_free(&a->nodes);
    free(a->node_detail);
    free(a->node_self);
    agg_vec_free(&a->chains);
    agg_index_free(&a->chain_index);
}
