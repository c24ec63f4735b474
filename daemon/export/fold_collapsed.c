/* fold_collapsed: folded stack lines written by walking the tree.
 *
 * Lines must come out sorted bytewise by their stack text.  A depth-first
 * walk gives that order if each node's children are visited in the right
 * order, with one twist: a child's own line ("P;f1") and the lines below
 * it ("P;f1;...") are two separate runs, because a sibling whose name
 * extends the child's name with a byte below ';' sorts between them
 * ("P;f1" < "P;f10" < "P;f10;x" < "P;f1;x").  So every child is two items,
 * keyed by its name and by its name followed by ';', sorted together.
 * Names hold no ';' in the collapsed form, so no key extends another past
 * a ';' and each run stays contiguous. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proto/util/decimal.h"
#include "daemon/export/fold.h"

#define ITEM_BELOW 1u /* low bit of an item: the lines below the child */
#define OUT_CHUNK (1u << 20)

struct walk {
    const struct fold *f;
    FILE *out;
    char *path; /* the text of the current node's stack */
    size_t path_len, path_cap;
    uint32_t *items; /* per-level item lists, stacked */
    char *buf;       /* output, written out in chunks */
    size_t buf_len;
    int rc;
};

static const char *name_of(const struct fold *f, uint32_t node, size_t *len)
{
    return fold_node_name(f, fold_node(f, node), len);
}

/* Orders items by key: the name, then ';' for the lines below. */
static int item_cmp(const void *a, const void *b, void *ctx)
{
    const struct fold *f = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t xl, yl;
    const char *xs = name_of(f, x >> 1, &xl), *ys = name_of(f, y >> 1, &yl);
    int c = memcmp(xs, ys, xl < yl ? xl : yl);
    if (c != 0 || xl == yl)
        return c ? c : (int)(x & ITEM_BELOW) - (int)(y & ITEM_BELOW);
    /* one name is a prefix of the other: compare the shorter key's end
     * (nothing for its own line, ';' below it) with the longer's byte */
    if (xl < yl)
        return (x & ITEM_BELOW) && (unsigned char)ys[xl] < ';' ? 1 : -1;
    return (y & ITEM_BELOW) && (unsigned char)xs[yl] < ';' ? -1 : 1;
}

static void flush_out(struct walk *w)
{
    if (w->buf_len && fwrite(w->buf, 1, w->buf_len, w->out) != w->buf_len)
        w->rc = -1;
    w->buf_len = 0;
}

/* Appends n bytes of output; a run longer than the buffer (a very deep
 * stack of long names) goes straight out. */
static void out_put(struct walk *w, const char *s, size_t n)
{
    if (w->buf_len + n > OUT_CHUNK)
        flush_out(w);
    if (n > OUT_CHUNK) {
        if (fwrite(s, 1, n, w->out) != n)
            w->rc = -1;
        return;
    }
    memcpy(w->buf + w->buf_len, s, n);
    w->buf_len += n;
}

static void put_line(struct walk *w, uint64_t value)
{
    char tail[24]; /* " ", a number (decimal_u64 stores up to 20 bytes), "\n" */
    size_t n = 0;
    tail[n++] = ' ';
    n += decimal_u64(tail + n, value);
    tail[n++] = '\n';
    out_put(w, w->path, w->path_len);
    out_put(w, tail, n);
}

/* Appends ";name" (or "name" at the top) to the path; false if no memory. */
static bool path_push(struct walk *w, uint32_t node)
{
    size_t len;
    const char *name = name_of(w->f, node, &len);
    size_t need = w->path_len + len + 1;
    if (need > w->path_cap) {
        size_t cap = w->path_cap ? w->path_cap : 256;
        while (cap < need)
            cap *= 2;
        char *p = realloc(w->path, cap);
        if (!p)
            return w->rc = -1, false;
        w->path = p, w->path_cap = cap;
    }
    if (w->path_len)
        w->path[w->path_len++] = ';';
    memcpy(w->path + w->path_len, name, len);
    w->path_len += len;
    return true;
}

/* Writes the lines below `node`, whose items go at w->items + base.  The
 * recursion is as deep as the deepest stack (bounded by the wire). */
static void walk_below(struct walk *w, uint32_t node, size_t base)
{
    const struct fold_node *n = fold_node(w->f, node);
    uint32_t *items = w->items + base, k = 0;
    for (uint32_t i = 0; i < n->n_children; i++) {
        uint32_t c = fold_child(w->f, n, i);
        const struct fold_node *cn = fold_node(w->f, c);
        if (cn->self)
            items[k++] = c << 1;
        if (cn->total > cn->self)
            items[k++] = c << 1 | ITEM_BELOW;
    }
    qsort_r(items, k, sizeof *items, item_cmp, (void *)w->f);
    size_t saved = w->path_len;
    for (uint32_t i = 0; i < k && w->rc == 0; i++) {
        uint32_t c = items[i] >> 1;
        if (!path_push(w, c))
            return;
        if (items[i] & ITEM_BELOW)
            walk_below(w, c, base + k);
        else
            put_line(w, fold_node(w->f, c)->self);
        w->path_len = saved;
    }
}

int fold_write_collapsed(const struct fold *f, FILE *out)
{
    if (fold_name_form(f) != FOLD_NAMES_COLLAPSED)
        return -1;
    /* a node is at most two items, each in its parent's list */
    struct walk w = {f,
                     out,
                     NULL,
                     0,
                     0,
                     malloc(2 * (size_t)fold_node_count(f) * sizeof *w.items),
                     malloc(OUT_CHUNK),
                     0,
                     0};
    if (!w.items || !w.buf)
        w.rc = -1;
    if (w.rc == 0)
        walk_below(&w, FOLD_ROOT, 0);
    if (w.rc == 0)
        flush_out(&w);
    free(w.path), free(w.items), free(w.buf);
    return w.rc;
}
