/* costrun: per-function varint buffers, compacted in place (see costrun.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/costrun.h"
#include "proto/util/radix.h"

/* A function's tail is compacted once it is as long as its sorted part,
 * and not before it holds this many bytes: each entry is then rewritten
 * about twice, and the buffers stay within about twice the distinct
 * pairs they hold. */
#define COMPACT_MIN 4096u

/* The longest entry: a line and two values of at most 5 and 10 bytes. */
#define ENTRY_MAX 25u

/* One function's lines: `sorted` bytes of distinct lines ascending (the
 * first absolute, then deltas) with their values, then a tail of entries
 * as added (absolute lines, any order, repeats). */
struct fbuf {
    uint8_t *p;
    size_t len, cap, sorted;
};

/* A dense costrun's additions: a log of records (func << 32 | line,
 * values...), and `store`, the sorted lines of functions 0..n_store-1
 * one after the other, function f's from off[f] to off[f + 1]. */
struct dense {
    uint64_t *log;
    size_t n_log, cap_log;
    uint8_t *store;
    size_t *off;
    uint32_t n_store;
    size_t n_pairs; /* lines in the store */
};

struct costrun {
    unsigned n_values, stride; /* stride: words of a record being compacted */
    bool is_dense;
    struct dense d;
    struct fbuf *fb;
    uint32_t n_fb;
    uint32_t n_funcs;        /* after finish; 0 before */
    uint64_t *rec, *scratch; /* records of the function being compacted */
    size_t cap_rec;
    uint8_t *out; /* its new bytes */
    size_t cap_out;
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

struct costrun *costrun_new_dense(unsigned n_values)
{
    struct costrun *c = costrun_new(n_values);
    if (c)
        c->is_dense = true;
    return c;
}

void costrun_free(struct costrun *c)
{
    if (!c)
        return;
    free(c->d.log), free(c->d.store), free(c->d.off);
    for (uint32_t i = 0; i < c->n_fb; i++)
        free(c->fb[i].p);
    free(c->fb), free(c->rec), free(c->scratch), free(c->out);
    free(c);
}

size_t costrun_bytes(const struct costrun *c)
{
    size_t n = sizeof *c + (size_t)c->n_fb * sizeof *c->fb + c->cap_out +
               2 * c->cap_rec * c->stride * sizeof *c->rec;
    for (uint32_t i = 0; i < c->n_fb; i++)
        n += c->fb[i].cap;
    const struct dense *d = &c->d;
    n += d->cap_log * c->stride * sizeof *d->log;
    if (d->off)
        n += d->off[d->n_store] + ((size_t)d->n_store + 1) * sizeof *d->off;
    return n;
}

static inline size_t put_varint(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        d[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    d[n++] = (uint8_t)v;
    return n;
}

/* The buffers are written by this module only, so never malformed. */
static inline uint64_t get_varint(const uint8_t **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80)
            return v;
    }
}

/* Room for n records (and as many for the sort); 0 or -1. */
static int reserve_records(struct costrun *c, size_t n)
{
    if (n <= c->cap_rec)
        return 0;
    size_t cap = c->cap_rec ? c->cap_rec : 1024;
    while (cap < n)
        cap *= 2;
    size_t bytes = cap * c->stride * sizeof *c->rec;
    uint64_t *r = realloc(c->rec, bytes);
    if (!r)
        return -1;
    c->rec = r;
    uint64_t *s = realloc(c->scratch, bytes);
    if (!s)
        return -1;
    c->scratch = s;
    c->cap_rec = cap;
    return 0;
}

/* Decodes a buffer's entries as records (line, values...): the sorted
 * part's lines are deltas, the tail's absolute.  Returns the count. */
static size_t decode_records(const struct costrun *c, const struct fbuf *b)
{
    const uint8_t *p = b->p, *sorted_end = b->p + b->sorted, *end = b->p + b->len;
    uint64_t *r = c->rec, line = 0;
    size_t n = 0;
    for (bool first = true; p < end; n++, r += c->stride, first = false) {
        bool delta = p < sorted_end && !first;
        uint64_t v = get_varint(&p);
        line = delta ? line + v : v;
        r[0] = line;
        for (unsigned i = 0; i < c->n_values; i++)
            r[1 + i] = get_varint(&p);
    }
    return n;
}

/* Sorts a function's entries by line, sums equal lines and rewrites the
 * buffer as one sorted part; 0 or -1 when out of memory. */
static int compact(struct costrun *c, struct fbuf *b)
{
    /* every entry takes at least 1 + n_values bytes */
    if (reserve_records(c, b->len / (1 + c->n_values) + 1) != 0)
        return -1;
    size_t n = decode_records(c, b);
    void *base = c->rec, *tmp = c->scratch;
    radix_sort(&base, &tmp, n, c->stride * sizeof *c->rec, 0);
    c->rec = base, c->scratch = tmp;
    size_t need = n * ENTRY_MAX;
    if (need > c->cap_out) {
        uint8_t *o = realloc(c->out, need);
        if (!o)
            return -1;
        c->out = o, c->cap_out = need;
    }
    uint8_t *o = c->out;
    uint64_t prev = 0;
    for (size_t i = 0; i < n;) {
        const uint64_t *r = c->rec + i * c->stride;
        uint64_t w[2] = {r[1], c->n_values > 1 ? r[2] : 0};
        for (i++; i < n && c->rec[i * c->stride] == r[0]; i++) {
            w[0] += c->rec[i * c->stride + 1];
            if (c->n_values > 1)
                w[1] += c->rec[i * c->stride + 2];
        }
        o += put_varint(o, o == c->out ? r[0] : r[0] - prev);
        for (unsigned v = 0; v < c->n_values; v++)
            o += put_varint(o, w[v]);
        prev = r[0];
    }
    size_t len = (size_t)(o - c->out);
    /* a shrunk buffer gives memory back; a fuller one is left for the
     * tail to grow into */
    if (len > b->cap || b->cap > 2 * len + COMPACT_MIN) {
        uint8_t *p = realloc(b->p, len + ENTRY_MAX);
        if (!p)
            return -1;
        b->p = p, b->cap = len + ENTRY_MAX;
    }
    memcpy(b->p, c->out, len);
    b->len = b->sorted = len;
    return 0;
}

/* The buffer of func, the table grown to hold it; NULL when out of memory. */
static struct fbuf *func_buf(struct costrun *c, uint32_t func)
{
    if (func < c->n_fb)
        return &c->fb[func];
    uint32_t n = c->n_fb ? c->n_fb : 64;
    while (n <= func)
        n = n * 2 > n ? n * 2 : UINT32_MAX;
    struct fbuf *fb = realloc(c->fb, (size_t)n * sizeof *fb);
    if (!fb)
        return NULL;
    memset(fb + c->n_fb, 0, (size_t)(n - c->n_fb) * sizeof *fb);
    c->fb = fb, c->n_fb = n;
    return &c->fb[func];
}

/* ---- dense ---- */

/* The log's records sorted and equal keys summed in place; the count. */
static size_t dense_sort_log(struct costrun *c)
{
    struct dense *d = &c->d;
    size_t rec = c->stride * sizeof *d->log;
    void *base = d->log, *tmp = malloc(d->n_log * rec);
    if (!tmp)
        return SIZE_MAX;
    radix_sort(&base, &tmp, d->n_log, rec, 0);
    free(tmp);
    if (base != d->log) /* the sorted records are in the scratch: it is the log now */
        d->log = base, d->cap_log = d->n_log;
    size_t m = 0;
    for (size_t i = 0; i < d->n_log; i++) {
        const uint64_t *r = d->log + i * c->stride;
        uint64_t *o = m > 0 ? d->log + (m - 1) * c->stride : NULL; /* the last record kept */
        if (o && o[0] == r[0]) {
            for (unsigned v = 1; v < c->stride; v++)
                o[v] += r[v];
        } else {
            memmove(d->log + m * c->stride, r, rec);
            m++;
        }
    }
    return m;
}

/* Writes one line of a function's sorted run at o; its end. */
static uint8_t *dense_put(const struct costrun *c, uint8_t *o, bool first, uint64_t prev,
                          uint64_t line, const uint64_t *w)
{
    o += put_varint(o, first ? line : line - prev);
    for (unsigned v = 0; v < c->n_values; v++)
        o += put_varint(o, w[v]);
    return o;
}

/* Function f's stored lines merged with the m sorted log records at r
 * (all of f), written at o; its end. */
static uint8_t *dense_merge_func(struct costrun *c, uint32_t f, const uint64_t *r, size_t m,
                                 uint8_t *o)
{
    struct dense *d = &c->d;
    const uint8_t *start = f < d->n_store ? d->store + d->off[f] : NULL;
    const uint8_t *p = start, *end = f < d->n_store ? d->store + d->off[f + 1] : NULL;
    uint64_t old_line = 0, prev = 0, w[2];
    bool have_old = false, first = true;
    size_t i = 0;
    for (;;) {
        if (!have_old && p < end) {
            bool absolute = p == start;
            uint64_t delta = get_varint(&p);
            old_line = absolute ? delta : old_line + delta;
            for (unsigned v = 0; v < c->n_values; v++)
                w[v] = get_varint(&p);
            have_old = true;
        }
        uint64_t nl = i < m ? (uint32_t)r[i * c->stride] : 0;
        if (!have_old && i == m)
            return o;
        if (have_old && (i == m || old_line <= nl)) {
            if (i < m && old_line == nl) {
                for (unsigned v = 0; v < c->n_values; v++)
                    w[v] += r[i * c->stride + 1 + v];
                i++;
            }
            o = dense_put(c, o, first, prev, old_line, w);
            prev = old_line, have_old = false;
        } else {
            o = dense_put(c, o, first, prev, nl, r + i * c->stride + 1);
            prev = nl, i++;
            d->n_pairs++;
        }
        first = false;
    }
}

/* Merges the log into the store; 0, or -1 when out of memory. */
static int dense_merge(struct costrun *c)
{
    struct dense *d = &c->d;
    size_t m = dense_sort_log(c);
    if (m == SIZE_MAX)
        return -1;
    uint32_t last = m ? (uint32_t)(d->log[(m - 1) * c->stride] >> 32) : 0;
    uint32_t n = m && last >= d->n_store ? last + 1 : d->n_store;
    size_t old_len = d->off ? d->off[d->n_store] : 0;
    uint8_t *out = malloc(old_len + m * ENTRY_MAX + 1);
    size_t *off = malloc(((size_t)n + 1) * sizeof *off);
    if (!out || !off) {
        free(out), free(off);
        return -1;
    }
    uint8_t *o = out;
    size_t i = 0;
    for (uint32_t f = 0; f < n;) {
        uint32_t next = i < m ? (uint32_t)(d->log[i * c->stride] >> 32) : n;
        /* functions without log records keep their bytes, in one copy */
        uint32_t stored_to = next < d->n_store ? next : d->n_store;
        if (f < stored_to) {
            size_t from = d->off[f], len = d->off[stored_to] - from;
            memcpy(o, d->store + from, len);
            for (uint32_t g = f; g < stored_to; g++)
                off[g] = (size_t)(o - out) + (d->off[g] - from);
            o += len;
            f = stored_to;
        }
        for (; f < next; f++) /* beyond the old store: no lines */
            off[f] = (size_t)(o - out);
        if (f == n)
            break;
        size_t j = i;
        while (j < m && (uint32_t)(d->log[j * c->stride] >> 32) == f)
            j++;
        off[f] = (size_t)(o - out);
        o = dense_merge_func(c, f, d->log + i * c->stride, j - i, o);
        i = j, f++;
    }
    off[n] = (size_t)(o - out);
    free(d->store), free(d->off);
    uint8_t *shrunk = realloc(out, off[n] + 1);
    d->store = shrunk ? shrunk : out;
    d->off = off, d->n_store = n;
    d->n_log = 0;
    return 0;
}

static int dense_add(struct costrun *c, uint32_t func, uint32_t line, const uint64_t *w)
{
    struct dense *d = &c->d;
    if (d->n_log == d->cap_log) {
        /* the log grows while small beside the store (each merge rewrites
         * the store), else is merged */
        enum { LOG_MIN = 16384 };
        if (d->cap_log >= LOG_MIN && d->cap_log * 4 >= d->n_pairs) {
            if (dense_merge(c) != 0)
                return -1;
        } else {
            size_t cap = d->cap_log ? d->cap_log * 2 : LOG_MIN;
            uint64_t *l = realloc(d->log, cap * c->stride * sizeof *l);
            if (!l)
                return -1;
            d->log = l, d->cap_log = cap;
        }
    }
    uint64_t *r = d->log + d->n_log++ * c->stride;
    r[0] = (uint64_t)func << 32 | line;
    for (unsigned v = 0; v < c->n_values; v++)
        r[1 + v] = w[v];
    return 0;
}

int costrun_add(struct costrun *c, uint32_t func, uint32_t line, const uint64_t *w)
{
    if (c->is_dense)
        return dense_add(c, func, line, w);
    struct fbuf *b = func_buf(c, func);
    if (!b)
        return -1;
    size_t tail = b->len - b->sorted;
    if (tail >= (b->sorted > COMPACT_MIN ? b->sorted : COMPACT_MIN) && compact(c, b) != 0)
        return -1;
    if (b->cap - b->len < ENTRY_MAX) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        uint8_t *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p, b->cap = cap;
    }
    uint8_t *d = b->p + b->len;
    d += put_varint(d, line);
    d += put_varint(d, w[0]);
    if (c->n_values > 1)
        d += put_varint(d, w[1]);
    b->len = (size_t)(d - b->p);
    return 0;
}

int costrun_finish(struct costrun *c, uint32_t n_funcs)
{
    if (c->is_dense && (c->d.n_log > 0 || !c->d.off) && dense_merge(c) != 0)
        return -1;
    free(c->d.log);
    c->d.log = NULL, c->d.n_log = c->d.cap_log = 0;
    for (uint32_t f = 0; f < c->n_fb; f++)
        if (c->fb[f].len > c->fb[f].sorted && compact(c, &c->fb[f]) != 0)
            return -1;
    free(c->rec), free(c->scratch), free(c->out);
    c->rec = c->scratch = NULL, c->out = NULL;
    c->cap_rec = c->cap_out = 0;
    c->n_funcs = n_funcs;
    return 0;
}

bool costrun_func(const struct costrun *c, uint32_t func, struct costrun_iter *it)
{
    if (c->is_dense) {
        if (func >= c->n_funcs || func >= c->d.n_store)
            return false;
        it->p = c->d.store + c->d.off[func];
        it->end = c->d.store + c->d.off[func + 1];
        it->line = 0;
        it->first = true;
        return it->p < it->end;
    }
    if (func >= c->n_funcs || func >= c->n_fb)
        return false;
    it->p = c->fb[func].p;
    /* a function without lines may have no buffer at all (NULL) */
    it->end = c->fb[func].len ? it->p + c->fb[func].len : it->p;
    it->line = 0;
    it->first = true;
    return it->p < it->end;
}

bool costrun_next(const struct costrun *c, struct costrun_iter *it, uint32_t *line, uint64_t *w)
{
    if (it->p >= it->end)
        return false;
    uint32_t v = (uint32_t)get_varint(&it->p);
    it->line = it->first ? v : it->line + v;
    it->first = false;
    *line = it->line;
    for (unsigned i = 0; i < c->n_values; i++)
        w[i] = get_varint(&it->p);
    return true;
}
