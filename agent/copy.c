/* copy: deep copies across tasks (see copy.h). */
#include "agent/copy.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing, at most half full: original -> copy. */
struct copy_seen {
    struct copy_pair {
        const struct heap_obj *from;
        struct heap_obj *to;
    } * slots;
    size_t cap, n;
};

/* A container being filled: the next item of `from` goes into `to`. */
struct copy_work {
    struct value from, to;
    uint32_t next;
};

static size_t seen_home(const struct copy_seen *m, const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9e3779b97f4a7c15u;
    return (size_t)(x >> 7) & (m->cap - 1);
}

static struct heap_obj *seen_get(const struct copy_seen *m, const struct heap_obj *from)
{
    for (size_t i = seen_home(m, from);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].from == from)
            return m->slots[i].to;
        if (m->slots[i].from == NULL)
            return NULL;
    }
}

/* Adds a pair; the table doubles when half full, polling `sp` per pair
 * moved (a copy of many objects moves them all at its last doubling). */
static int seen_put(struct safepoint *sp, struct copy_seen *m, const struct heap_obj *from,
                    struct heap_obj *to)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct copy_seen bigger = {calloc(m->cap * 2, sizeof *m->slots), m->cap * 2, 0};
        if (bigger.slots == NULL)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].from) {
                safepoint_poll(sp);
                seen_put(sp, &bigger, m->slots[i].from, m->slots[i].to);
            }
        free(m->slots);
        *m = bigger;
    }
    size_t i = seen_home(m, from);
    while (m->slots[i].from != NULL)
        i = (i + 1) & (m->cap - 1);
    m->slots[i] = (struct copy_pair){from, to};
    m->n++;
    return 0;
}

void copy_begin(struct copy_ctx *c, struct heap *h, struct safepoint *sp)
{
    memset(c, 0, sizeof *c);
    c->heap = h;
    c->sp = sp;
}

void copy_end(struct copy_ctx *c)
{
    if (c->seen) {
        free(c->seen->slots);
        free(c->seen);
    }
    c->seen = NULL;
}

/* Whether a value is passed as it is: no object, a constant, or a
 * shared object (counted here). */
static bool copy_as_is(struct value v, struct value *out)
{
    if (v.tag < V_FIRST_HEAP || v.u.o->konst != HEAP_OWNED) {
        heap_retain(v);
        *out = v;
        return true;
    }
    return false;
}

/* The copy of an object seen before (counted), or nothing. */
static bool copy_seen_before(struct copy_ctx *c, struct value v, struct value *out)
{
    struct heap_obj *to = c->seen ? seen_get(c->seen, v.u.o) : NULL;
    if (to == NULL)
        return false;
    *out = v;
    out->u.o = to;
    heap_retain(*out);
    return true;
}

/* A new object for v: a string's whole copy, or an empty container of
 * v's size (filled by the work loop).  -1 when memory runs out. */
static int copy_shell(struct copy_ctx *c, struct value v, struct value *out)
{
    struct heap *h = c->heap;
    *out = v;
    if (v.tag == V_STR || v.tag == V_BYTES) {
        struct heap_str *s = v.tag == V_STR ? heap_str_new(h, v.u.s->data, v.u.s->len)
                                            : heap_bytes_new(h, v.u.s->data, v.u.s->len);
        if (s == NULL)
            return -1;
        s->hash = v.u.s->hash; /* the same bytes: a long key is not hashed again */
        out->u.s = s;
    } else if (v.tag == V_LIST) {
        struct heap_list *l = heap_list_new(h, v.u.l->len);
        if (l == NULL)
            return -1;
        out->u.l = l;
    } else {
        struct heap_map *m = heap_map_new(h, v.u.m->len);
        if (m == NULL)
            return -1;
        out->u.m = m;
    }
    if (c->seen && seen_put(c->sp, c->seen, v.u.o, out->u.o) < 0) {
        heap_release(h, *out);
        return -1;
    }
    return 0;
}

struct copy_stack {
    struct copy_work *items;
    size_t n, cap;
};

/* A container to fill (a deep structure makes a long stack, which grows
 * a chunk at a time with polls of `sp`). */
static int stack_push(struct safepoint *sp, struct copy_stack *st, struct value from,
                      struct value to)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        struct copy_work *p = safepoint_realloc(sp, st->items, st->n * sizeof *p, cap * sizeof *p);
        if (p == NULL)
            return -1;
        st->items = p, st->cap = cap;
    }
    st->items[st->n++] = (struct copy_work){from, to, 0};
    return 0;
}

/* The copy of one item (owned), queueing a new container's filling. */
static int copy_item(struct copy_ctx *c, struct copy_stack *st, struct value v, struct value *out)
{
    if (copy_as_is(v, out) || copy_seen_before(c, v, out))
        return 0;
    if (copy_shell(c, v, out) < 0)
        return -1;
    if ((v.tag == V_LIST || v.tag == V_MAP) && stack_push(c->sp, st, v, *out) < 0) {
        heap_release(c->heap, *out);
        return -1;
    }
    return 0;
}

/* Copies the next item of the container on top of the stack into its
 * copy: 1 when there was one, 0 when the container is full, -1 on
 * failure. */
static int copy_step(struct copy_ctx *c, struct copy_stack *st)
{
    struct copy_work *w = &st->items[st->n - 1];
    struct value item, key;
    if (w->from.tag == V_LIST) {
        const struct heap_list *from = w->from.u.l;
        if (w->next >= from->len)
            return 0;
        struct heap_list *to = w->to.u.l;
        size_t at = st->n - 1; /* copy_item may move the stack */
        if (copy_item(c, st, from->items[w->next], &item) < 0)
            return -1;
        to->items[to->len++] = item;
        st->items[at].next++;
        return 1;
    }
    const struct heap_map *from = w->from.u.m;
    while (w->next < from->used && from->entries[w->next].key == NULL)
        w->next++;
    if (w->next >= from->used)
        return 0;
    const struct heap_map_entry *e = &from->entries[w->next];
    struct heap_map *to = w->to.u.m;
    size_t at = st->n - 1;
    if (copy_item(c, st, val_str(e->key), &key) < 0)
        return -1;
    if (copy_item(c, st, e->val, &item) < 0) {
        heap_release(c->heap, key);
        return -1;
    }
    st->items[at].next++;
    int rc = heap_map_set(c->heap, to, key.u.s, item);
    heap_release(c->heap, key);
    return rc < 0 ? -1 : 1;
}

int copy_value(struct copy_ctx *c, struct value v, struct value *out)
{
    c->oom = false;
    if (copy_as_is(v, out))
        return 0;
    if (v.tag == V_STR || v.tag == V_BYTES) {
        if (!copy_seen_before(c, v, out) && copy_shell(c, v, out) < 0)
            return c->oom = true, -1;
        return 0;
    }
    if (c->seen == NULL) {
        c->seen = calloc(1, sizeof *c->seen);
        if (c->seen == NULL || (c->seen->slots = calloc(64, sizeof *c->seen->slots)) == NULL)
            return free(c->seen), c->seen = NULL, c->oom = true, -1;
        c->seen->cap = 64;
    }
    if (copy_seen_before(c, v, out))
        return 0;
    struct copy_stack st = {0};
    if (copy_shell(c, v, out) < 0)
        return c->oom = true, -1;
    if (stack_push(c->sp, &st, v, *out) < 0) {
        heap_release(c->heap, *out);
        return c->oom = true, -1;
    }
    int rc = 0;
    while (st.n > 0 && rc == 0) {
        int r = copy_step(c, &st);
        if (r < 0)
            rc = -1, c->oom = true;
        else if (r == 0)
            st.n--;
        else if (safepoint_poll(c->sp) < 0)
            rc = -1;
    }
    free(st.items);
    if (rc < 0)
        heap_release(c->heap, *out);
    return rc;
}
