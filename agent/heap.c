/* heap: creation, growth and release of Jett heap objects (see heap.h). */
#include "agent/heap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void heap_init(struct heap *h, uint64_t fail_at)
{
    memset(h, 0, sizeof *h);
    h->next_id = 1;
    h->fail_at = fail_at;
    h->live.prev = h->live.next = &h->live;
    h->sp = &safepoint_idle;
}

void heap_set_observer(struct heap *h, const struct heap_observer *o, void *ctx)
{
    h->observer = o;
    h->observer_ctx = ctx;
}

int heap_attempt(struct heap *h)
{
    if (h->fail_at == 0)
        return 1;
    uint64_t n = h->shared_attempts ? atomic_fetch_add(h->shared_attempts, 1) + 1 : ++h->attempts;
    return n != h->fail_at;
}

/* Whether an object's events reach the observer: a constant's never do. */
static inline bool heap_observed(const struct heap *h, const struct heap_obj *o)
{
    return h->observer != NULL && !o->konst;
}

static void heap_link(struct heap *h, struct heap_obj *o, enum heap_type type)
{
    o->rc = 1;
    o->type = (uint8_t)type;
    o->konst = 0;
    o->mark = h->unmarked;
    o->site = HEAP_SITE_NONE;
    o->id = h->next_id++;
    h->n_live++;
    o->next = h->live.next;
    o->prev = &h->live;
    h->live.next->prev = o;
    h->live.next = o;
}

static void heap_unlink(struct heap_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
}

/* After realloc moved an object, its neighbours must point at the copy. */
static void heap_relink(struct heap_obj *o)
{
    o->prev->next = o;
    o->next->prev = o;
}

static struct heap_str *heap_bytes_make(struct heap *h, const char *data, size_t len,
                                        enum heap_type type)
{
    if (len > UINT32_MAX - 64 || !heap_attempt(h))
        return NULL;
    struct heap_str *s = malloc(sizeof *s + len + 1);
    if (s == NULL)
        return NULL;
    heap_link(h, &s->h, type);
    s->len = s->cap = (uint32_t)len;
    s->hash = 0;
    if (data != NULL)
        safepoint_copy_all(h->sp, s->data, data, len);
    s->data[len] = '\0';
    if (heap_observed(h, &s->h))
        h->observer->allocate(h->observer_ctx, &s->h, heap_str_size(s));
    return s;
}

struct heap_str *heap_str_new(struct heap *h, const char *data, size_t len)
{
    return heap_bytes_make(h, data, len, HEAP_STR);
}

struct heap_str *heap_str_alloc(struct heap *h, size_t len)
{
    return heap_bytes_make(h, NULL, len, HEAP_STR);
}

struct heap_str *heap_bytes_new(struct heap *h, const char *data, size_t len)
{
    return heap_bytes_make(h, data, len, HEAP_BYTES);
}

struct heap_str *heap_str_const(const char *data, size_t len)
{
    struct heap_str *s = malloc(sizeof *s + len + 1);
    if (s == NULL)
        return NULL;
    memset(&s->h, 0, sizeof s->h);
    s->h.rc = 1;
    s->h.konst = 1;
    s->len = s->cap = (uint32_t)len;
    s->hash = 0;
    if (len > 0)
        memcpy(s->data, data, len);
    s->data[len] = '\0';
    heap_str_hash(&safepoint_idle, s); /* now, not when a task on another thread needs it */
    return s;
}

void heap_str_const_free(struct heap_str *s)
{
    free(s);
}

/* Grows a uniquely referenced string in place (amortized doubling). */
static int heap_str_grow(struct heap *h, struct heap_str **sp, const char *data, size_t len)
{
    struct heap_str *s = *sp;
    uint64_t old = heap_str_size(s);
    size_t need = (size_t)s->len + len;
    if (need > s->cap) {
        size_t cap = s->cap < 16 ? 32 : (size_t)s->cap * 2;
        if (cap < need)
            cap = need;
        if (cap > UINT32_MAX - 64)
            return -1;
        struct heap_str *n = safepoint_realloc(h->sp, s, sizeof *s + s->len, sizeof *n + cap + 1);
        if (n == NULL)
            return -1;
        heap_relink(&n->h);
        n->cap = (uint32_t)cap;
        *sp = s = n;
    }
    safepoint_copy_all(h->sp, s->data + s->len, data, len);
    s->len = (uint32_t)need;
    s->data[need] = '\0';
    s->hash = 0;
    if (heap_observed(h, &s->h))
        h->observer->resize(h->observer_ctx, &s->h, old, heap_str_size(s));
    return 0;
}

int heap_str_append(struct heap *h, struct heap_str **sp, const char *data, size_t len)
{
    struct heap_str *s = *sp;
    if ((size_t)s->len + len > UINT32_MAX - 64)
        return -1;
    if (s->h.rc == 1 && !s->h.konst && s->h.type == HEAP_STR) {
        if (!heap_attempt(h))
            return -1;
        return heap_str_grow(h, sp, data, len);
    }
    struct heap_str *n = heap_bytes_make(h, NULL, (size_t)s->len + len, (enum heap_type)s->h.type);
    if (n == NULL)
        return -1;
    safepoint_copy_all(h->sp, n->data, s->data, s->len);
    safepoint_copy_all(h->sp, n->data + s->len, data, len);
    *sp = n;
    struct value old = {.tag = V_STR};
    old.u.s = s;
    heap_release(h, old);
    return 0;
}

/* FNV-1a, never 0 so that 0 can mean "not computed". */
static inline uint32_t fnv_add(uint32_t x, const char *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        x = (x ^ (uint8_t)p[i]) * 16777619u;
    return x;
}

/* The hash of a string longer than a chunk, with a poll between chunks. */
static __attribute__((noinline)) uint32_t hash_long(struct safepoint *sp, const struct heap_str *s)
{
    uint32_t x = 2166136261u, at = 0;
    while (s->len - at > SAFEPOINT_CHUNK) {
        x = fnv_add(x, s->data + at, (uint32_t)SAFEPOINT_CHUNK);
        at += (uint32_t)SAFEPOINT_CHUNK;
        safepoint_poll(sp);
    }
    return fnv_add(x, s->data + at, s->len - at);
}

uint32_t heap_str_hash(struct safepoint *sp, struct heap_str *s)
{
    if (s->hash != 0)
        return s->hash;
    uint32_t x = __builtin_expect(s->len > SAFEPOINT_CHUNK, 0)
                     ? hash_long(sp, s)
                     : fnv_add(2166136261u, s->data, s->len);
    s->hash = x ? x : 1;
    return s->hash;
}

/* Drops one reference held by a dying object.  A child that dies too is
 * unlinked and pushed on `pending` (through its free `next` link) rather
 * than freed recursively, so a deeply nested structure cannot exhaust the
 * C stack.  A shared object is on no live list: its `next` is free for
 * `pending` once its last reference is gone. */
void heap_drop_value(struct heap_obj **pending, struct value v)
{
    if (v.tag < V_FIRST_HEAP)
        return;
    struct heap_obj *c = v.u.o;
    if (c->konst == HEAP_CONST)
        return;
    if (c->konst == HEAP_SHARED_OBJ) {
        if (__atomic_sub_fetch(&c->rc, 1, __ATOMIC_ACQ_REL) != 0)
            return;
    } else {
        if (--c->rc != 0)
            return;
        heap_unlink(c);
    }
    c->next = *pending;
    *pending = c;
}

/* Releases what an object holds (no event for the object itself). */
static void heap_drop_children(struct safepoint *sp, struct heap_obj **pending, struct heap_obj *o)
{
    if (o->type == HEAP_LIST) {
        struct heap_list *l = (struct heap_list *)o;
        for (uint32_t i = 0; i < l->len; i++) {
            safepoint_poll(sp);
            heap_drop_value(pending, l->items[i]);
        }
        free(l->items);
    } else if (o->type == HEAP_MAP) {
        struct heap_map *m = (struct heap_map *)o;
        for (uint32_t i = 0; i < m->used; i++) {
            safepoint_poll(sp);
            if (m->entries[i].key == NULL)
                continue;
            heap_drop_value(pending, val_str(m->entries[i].key));
            heap_drop_value(pending, m->entries[i].val);
        }
        free(m->entries);
        free(m->index);
    }
}

/* Frees o and everything only it held: each object's free event comes
 * before those of what it held.  Polls once per item dropped and once
 * per object freed (a list of 8 million strings frees them all here; a
 * sample only: the free always finishes). */
static void heap_free_pending(struct heap *h, struct heap_obj *pending)
{
    while (pending != NULL) {
        struct heap_obj *x = pending;
        pending = x->next;
        safepoint_poll(h->sp);
        if (x->konst == HEAP_SHARED_OBJ) {
            h->shared_drop(h->shared_ctx, h, x, &pending);
            continue;
        }
        if (heap_observed(h, x))
            h->observer->free(h->observer_ctx, x, heap_size(x));
        heap_drop_children(h->sp, &pending, x);
        free(x);
        h->n_live--;
    }
}

void heap_free_obj(struct heap *h, struct heap_obj *o)
{
    if (o->konst)
        return;
    heap_unlink(o);
    o->next = NULL;
    heap_free_pending(h, o);
}

void heap_release_shared(struct heap *h, struct heap_obj *o)
{
    if (__atomic_sub_fetch(&o->rc, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    o->next = NULL;
    heap_free_pending(h, o);
}

struct heap_obj *heap_mark(const struct heap *h)
{
    return h->live.next;
}

struct heap_chain heap_detach(struct heap *h, struct heap_obj *mark)
{
    struct heap_chain c = {NULL, NULL, 0};
    if (h->live.next == mark)
        return c;
    c.first = h->live.next;
    c.last = mark->prev;
    h->live.next = mark;
    mark->prev = &h->live;
    c.first->prev = NULL;
    c.last->next = NULL;
    for (const struct heap_obj *o = c.first; o != NULL; o = o->next) {
        safepoint_poll(h->sp);
        c.n++;
    }
    h->n_live -= c.n;
    return c;
}

void heap_adopt(struct heap *h, struct heap_chain *c)
{
    if (c->first == NULL)
        return;
    c->first->prev = &h->live;
    c->last->next = h->live.next;
    h->live.next->prev = c->last;
    h->live.next = c->first;
    h->n_live += c->n;
    c->first = c->last = NULL;
    c->n = 0;
}

/* Frees the raw memory of an object without touching what it points at. */
static void heap_free_raw(struct heap_obj *o)
{
    if (o->type == HEAP_LIST) {
        free(((struct heap_list *)o)->items);
    } else if (o->type == HEAP_MAP) {
        free(((struct heap_map *)o)->entries);
        free(((struct heap_map *)o)->index);
    }
    free(o);
}

void heap_chain_destroy(struct heap_chain *c)
{
    for (struct heap_obj *o = c->first; o != NULL;) {
        struct heap_obj *next = o->next;
        heap_free_raw(o);
        o = next;
    }
    c->first = c->last = NULL;
    c->n = 0;
}

void heap_destroy(struct heap *h)
{
    struct heap_obj *o = h->live.next;
    while (o != &h->live) {
        struct heap_obj *next = o->next;
        heap_free_raw(o);
        o = next;
    }
    h->live.prev = h->live.next = &h->live;
    h->n_live = 0;
}
