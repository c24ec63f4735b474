/* costrun: sorted, varint-coded (function, line) costs (see costrun.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/costrun.h"
#include "proto/radix.h"

/* 256 Ki pending entries (4 or 6 MiB, and as much for the sort) keep the
 * number of merges small without a large buffer. */
#define PENDING_MAX (1u << 18)

/* A pending entry is 1 + n_values words: the key (func << 32 | line),
 * then the values; a CPU profile's entries are 16 bytes, not 24. */

/* Sorted runs wait to be merged until there are MAX_RUNS (and at the end):
 * each entry is rewritten once or twice, not once per buffer. */
#define MAX_RUNS 32

struct run {
    uint8_t *data;
    size_t len, entries;
};

struct costrun {
    unsigned n_values;
    uint64_t *pend, *scratch;
    size_t n_pend, cap_pend; /* the buffer grows to PENDING_MAX */
    unsigned stride;         /* words per pending entry */
    struct run runs[MAX_RUNS];
    unsigned n_runs;
    const uint8_t *run; /* after finish: the one run */
    size_t run_len;
    size_t *func_off; /* after finish: offset of each function's first line */
    uint32_t n_funcs;
};

struct costrun *costrun_new(unsigned n_values)
{
    struct costrun *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n_values = n_values;
    c->stride = 1 + n_values;
    return c;
}

void costrun_free(struct costrun *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->n_runs; i++)
        free(c->runs[i].data);
    free(c->pend), free(c->scratch), free(c->func_off);
    free(c);
}

static size_t put_varint(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        d[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    d[n++] = (uint8_t)v;
    return n;
}

/* The run is written by this module only, so it is never malformed. */
static uint64_t get_varint(const uint8_t **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80)
            return v;
    }
}

/* Combines equal keys of the sorted pending entries in place. */
static void combine_pending(struct costrun *c)
{
    size_t n = 0;
    unsigned k = c->stride;
    for (size_t i = 0; i < c->n_pend; i++) {
        const uint64_t *e = c->pend + i * k;
        uint64_t *last = c->pend + (n ? n - 1 : 0) * k;
        if (n > 0 && last[0] == e[0]) {
            for (unsigned v = 1; v < k; v++)
                last[v] += e[v];
        } else {
            memmove(c->pend + n++ * k, e, k * sizeof *e);
        }
    }
    c->n_pend = n;
}

/* A writer of the varint form, remembering the previous key. */
struct encoder {
    uint8_t *p;
    uint64_t prev; /* previous key, or UINT64_MAX before the first */
};

static void encode(struct encoder *e, unsigned n_values, uint64_t key, const uint64_t *w)
{
    uint32_t func = (uint32_t)(key >> 32), line = (uint32_t)key;
    uint32_t pfunc = e->prev == UINT64_MAX ? 0 : (uint32_t)(e->prev >> 32);
    bool same = e->prev != UINT64_MAX && func == pfunc;
    e->p += put_varint(e->p, func - pfunc);
    e->p += put_varint(e->p, same ? line - (uint32_t)e->prev : line);
    for (unsigned i = 0; i < n_values; i++)
        e->p += put_varint(e->p, w[i]);
    e->prev = key;
}

/* A reader of the varint form from its start. */
struct decoder {
    const uint8_t *p, *end;
    uint64_t key;
    uint64_t w[2];
    bool started;
};

static bool decode(struct decoder *d, unsigned n_values)
{
    if (d->p == d->end)
        return false;
    uint32_t func = (uint32_t)(d->key >> 32) + (uint32_t)get_varint(&d->p);
    uint32_t line = (uint32_t)get_varint(&d->p);
    if (d->started && func == (uint32_t)(d->key >> 32))
        line += (uint32_t)d->key;
    d->key = (uint64_t)func << 32 | line;
    d->w[1] = 0;
    for (unsigned i = 0; i < n_values; i++)
        d->w[i] = get_varint(&d->p);
    d->started = true;
    return true;
}

/* Sorts the pending entries and combines equal keys. */
static void sort_pending(struct costrun *c)
{
    void *base = c->pend, *scratch = c->scratch;
    radix_sort(&base, &scratch, c->n_pend, c->stride * sizeof *c->pend, 0);
    c->pend = base, c->scratch = scratch;
    combine_pending(c);
}

/* Encodes n sorted entries of distinct keys (from `next`) as a new
 * buffer: it and its length, or NULL when out of memory. */
static uint8_t *encode_all(unsigned n_values, size_t n,
                           bool (*next)(void *, uint64_t *, uint64_t *), void *src, size_t *len)
{
    /* each entry takes at most 2 * 5 + n_values * 10 bytes */
    uint8_t *out = malloc(n * (10 + 10 * (size_t)n_values) + 1);
    if (!out)
        return NULL;
    struct encoder e = {out, UINT64_MAX};
    uint64_t key, w[2];
    while (next(src, &key, w))
        encode(&e, n_values, key, w);
    *len = (size_t)(e.p - out);
    /* the bound is generous: give the rest back */
    uint8_t *fit = realloc(out, *len + 1);
    return fit ? fit : out;
}

/* The sorted pending entries as a source for encode_all. */
struct pending_src {
    const uint64_t *p, *end;
    unsigned stride;
};

static bool next_pending(void *v, uint64_t *key, uint64_t *w)
{
    struct pending_src *s = v;
    if (s->p == s->end)
        return false;
    *key = s->p[0], w[0] = s->p[1], w[1] = s->stride > 2 ? s->p[2] : 0;
    s->p += s->stride;
    return true;
}

/* The runs merged, equal keys summed, as a source for encode_all: a
 * binary heap of the runs that still have entries, by their current key. */
struct merge_src {
    struct decoder d[MAX_RUNS];
    unsigned heap[MAX_RUNS], n, n_values;
};

static void sift_down(struct merge_src *m, unsigned at)
{
    for (;;) {
        unsigned l = 2 * at + 1, r = l + 1, min = at;
        if (l < m->n && m->d[m->heap[l]].key < m->d[m->heap[min]].key)
            min = l;
        if (r < m->n && m->d[m->heap[r]].key < m->d[m->heap[min]].key)
            min = r;
        if (min == at)
            return;
        unsigned t = m->heap[at];
        m->heap[at] = m->heap[min], m->heap[min] = t;
        at = min;
    }
}

static bool next_merged(void *v, uint64_t *key, uint64_t *w)
{
    struct merge_src *m = v;
    if (m->n == 0)
        return false;
    *key = m->d[m->heap[0]].key;
    w[0] = w[1] = 0;
    while (m->n > 0 && m->d[m->heap[0]].key == *key) {
        struct decoder *d = &m->d[m->heap[0]];
        w[0] += d->w[0], w[1] += d->w[1];
        if (!decode(d, m->n_values))
            m->heap[0] = m->heap[--m->n];
        sift_down(m, 0);
    }
    return true;
}

/* Turns the pending entries into a run of their own. */
static int flush_pending(struct costrun *c)
{
    struct run *r = &c->runs[c->n_runs];
    struct pending_src src = {c->pend, c->pend + c->n_pend * c->stride, c->stride};
    r->data = encode_all(c->n_values, c->n_pend, next_pending, &src, &r->len);
    if (!r->data)
        return -1;
    r->entries = c->n_pend;
    c->n_runs++;
    c->n_pend = 0;
    return 0;
}

/* Merges every run into one. */
static int compact(struct costrun *c)
{
    if (c->n_runs < 2)
        return 0;
    struct merge_src m = {.n = 0, .n_values = c->n_values};
    size_t entries = 0;
    for (unsigned i = 0; i < c->n_runs; i++) {
        m.d[i] =
            (struct decoder){c->runs[i].data, c->runs[i].data + c->runs[i].len, 0, {0, 0}, false};
        if (decode(&m.d[i], c->n_values))
            m.heap[m.n++] = i;
        entries += c->runs[i].entries;
    }
    for (unsigned i = m.n / 2; i-- > 0;)
        sift_down(&m, i);
    struct run merged;
    merged.data = encode_all(c->n_values, entries, next_merged, &m, &merged.len);
    if (!merged.data)
        return -1;
    /* at most the sum: the merged count is not worth counting */
    merged.entries = entries;
    for (unsigned i = 0; i < c->n_runs; i++)
        free(c->runs[i].data);
    c->runs[0] = merged;
    c->n_runs = 1;
    return 0;
}

/* Doubles the pending buffer and the sort's scratch (small profiles
 * stay small); 0 or -1. */
static int grow_pending(struct costrun *c)
{
    size_t cap = c->cap_pend ? c->cap_pend * 2 : 1024;
    uint64_t *p = realloc(c->pend, cap * c->stride * sizeof *p);
    if (!p)
        return -1;
    c->pend = p;
    uint64_t *t = realloc(c->scratch, cap * c->stride * sizeof *t);
    if (!t)
        return -1;
    c->scratch = t;
    c->cap_pend = cap;
    return 0;
}

int costrun_add(struct costrun *c, uint32_t func, uint32_t line, const uint64_t *w)
{
    if (c->n_pend == c->cap_pend && c->cap_pend < PENDING_MAX && grow_pending(c) != 0)
        return -1;
    if (c->n_pend == c->cap_pend) {
        sort_pending(c);
        if (flush_pending(c) != 0 || (c->n_runs == MAX_RUNS && compact(c) != 0))
            return -1;
    }
    uint64_t *p = c->pend + c->n_pend++ * c->stride;
    p[0] = (uint64_t)func << 32 | line;
    p[1] = w[0];
    if (c->n_values > 1)
        p[2] = w[1];
    return 0;
}

int costrun_finish(struct costrun *c, uint32_t n_funcs)
{
    sort_pending(c);
    /* the last merge needs no scratch: its memory goes to the new run */
    free(c->scratch);
    c->scratch = NULL;
    if (c->n_pend > 0 && flush_pending(c) != 0)
        return -1;
    free(c->pend);
    c->pend = NULL;
    if (compact(c) != 0)
        return -1;
    if (c->n_runs == 0) {
        c->runs[0] = (struct run){NULL, 0, 0};
        c->n_runs = 1;
    }
    /* an empty run still points somewhere */
    c->run = c->runs[0].data ? c->runs[0].data : (const uint8_t *)"";
    c->run_len = c->runs[0].len;
    c->func_off = malloc(((size_t)n_funcs + 1) * sizeof *c->func_off);
    if (!c->func_off)
        return -1;
    c->n_funcs = n_funcs;
    struct decoder d = {c->run, c->run + c->run_len, 0, {0, 0}, false};
    uint32_t next = 0; /* the first function without an offset yet */
    for (const uint8_t *at = d.p; decode(&d, c->n_values); at = d.p)
        while (next <= (uint32_t)(d.key >> 32) && next < n_funcs)
            c->func_off[next++] = (size_t)(at - c->run);
    while (next <= n_funcs)
        c->func_off[next++] = c->run_len;
    return 0;
}

bool costrun_func(const struct costrun *c, uint32_t func, struct costrun_iter *it)
{
    if (func >= c->n_funcs)
        return false;
    it->p = c->run + c->func_off[func];
    it->end = c->run + c->func_off[func + 1];
    it->line = 0;
    it->first = true;
    return it->p < it->end;
}

bool costrun_next(const struct costrun *c, struct costrun_iter *it, uint32_t *line, uint64_t *w)
{
    if (it->p >= it->end)
        return false;
    get_varint(&it->p); /* the function delta: known */
    uint32_t v = (uint32_t)get_varint(&it->p);
    it->line = it->first ? v : it->line + v;
    it->first = false;
    *line = it->line;
    for (unsigned i = 0; i < c->n_values; i++)
        w[i] = get_varint(&it->p);
    return true;
}
