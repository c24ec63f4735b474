/*
 * heap: the one allocation boundary for Jett heap objects.
 *
 * Strings, bytes, lists and maps are reference counted and are created,
 * resized and freed only here.  Each object created during a run gets a
 * run-local 64-bit allocation id (1, 2, 3, ...; never reused) and the
 * observer, when set, receives one event per successful allocate, resize
 * and free.  A failed allocation returns NULL and emits no event; the
 * evaluator turns it into the runtime error `out of memory`.
 *
 * Semantic sizes (what the memory profiler sees; not malloc sizes):
 *
 *   string  = 24 + length in bytes
 *   bytes   = 24 + length in bytes
 *   list    = 32 + 16 * capacity
 *             capacity is exactly the element count for a literal or a
 *             list built by a builtin; push/insert on a full list grows it
 *             to max(4, 2 * capacity): each growth is one resize event
 *   map     = 48 + 40 * capacity
 *             capacity is the number of entry slots: 0 for `{}`, the next
 *             power of two >= max(8, n) for a literal of n entries; an
 *             insert into a full map with no removed entries to reclaim
 *             doubles it (one resize event); reclaiming removed entries
 *             keeps the capacity and emits nothing
 *
 * Appending to a string that has exactly one reference (`s += t` on a
 * local) resizes it in place: one resize event from 24 + old length to
 * 24 + new length, same allocation id.
 *
 * Freeing an object emits its free event first, then releases what it
 * holds (a list's items, a map's keys and values), which may emit more.
 *
 * Constants (string literals of the loaded program) are created before
 * any run with heap_str_const: they have allocation id 0, never emit
 * events and are freed with the program.
 *
 * Test-only switch: heap_init's `fail_at` = N > 0 makes the Nth allocation
 * attempt (create or grow, counted from 1 in the run) fail.  The launcher
 * reads it once from the environment variable JETT_TEST_FAIL_ALLOC.
 *
 * Every live object is also on an intrusive list so that heap_destroy
 * frees what reference cycles or a teardown left behind, without events.
 */
#ifndef JETT_AGENT_HEAP_H
#define JETT_AGENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/safepoint.h"
#include "agent/value.h"

enum heap_type { HEAP_STR = 0, HEAP_BYTES, HEAP_LIST, HEAP_MAP };
enum heap_op { HEAP_OP_ALLOCATE = 0, HEAP_OP_RESIZE = 1, HEAP_OP_FREE = 2 };

#define HEAP_STR_HEADER 24
#define HEAP_LIST_HEADER 32
#define HEAP_LIST_SLOT 16
#define HEAP_MAP_HEADER 48
#define HEAP_MAP_SLOT 40

struct heap_event {
    enum heap_op op;
    enum heap_type type;
    uint64_t id;
    uint64_t old_size;    /* 0 for allocate */
    uint64_t new_size;    /* 0 for free */
    struct heap_obj *obj; /* the object; an allocate's observer may set its site */
};

/* Receives every event; ctx is what was given to heap_set_observer. */
typedef void (*heap_observer_fn)(void *ctx, const struct heap_event *ev);

/* An object's creation site: the profiler's stack node of its allocate
 * event (memory mode), HEAP_SITE_NONE otherwise.  Node ids stay below
 * 2^24 - 1: the agent's stack table charges 40 bytes a node against at
 * most 16 MiB (stacktab.h). */
#define HEAP_SITE_NONE 0xffffffu

struct heap_obj {
    uint32_t rc;
    uint32_t type : 2;  /* enum heap_type */
    uint32_t konst : 1; /* 1: a program constant (no id, no events) */
    uint32_t mark : 1;  /* heap.unmarked unless the retained walk reached it */
    uint32_t site : 24; /* creation site, HEAP_SITE_NONE: unknown */
    uint64_t id;
    struct heap_obj *prev, *next; /* live list; unused for constants */
};

_Static_assert(sizeof(struct heap_obj) == 32, "the creation site and the mark take no room");

struct heap_str {
    struct heap_obj h;
    uint32_t len, cap; /* cap: bytes reserved for data (internal) */
    uint32_t hash;     /* 0: not computed yet */
    char data[];       /* NUL-terminated for convenience */
};

struct heap_list {
    struct heap_obj h;
    uint32_t len, cap;
    struct value *items;
};

struct heap_map_entry {
    struct heap_str *key; /* NULL: a removed entry */
    uint32_t hash;
    struct value val;
};

struct heap_map {
    struct heap_obj h;
    uint32_t len;   /* live entries */
    uint32_t used;  /* entries in `entries`, removed ones included */
    uint32_t cap;   /* entry slots */
    uint32_t imask; /* index size - 1 (index size = 2 * cap), 0 if none */
    struct heap_map_entry *entries;
    int32_t *index; /* -1 empty, else entry number */
};

struct heap {
    uint64_t next_id;
    uint64_t attempts;
    uint64_t fail_at;
    heap_observer_fn observer;
    void *observer_ctx;
    struct heap_obj live; /* sentinel of the live list */
    uint64_t n_live;      /* objects on it */
    uint8_t unmarked;     /* the mark of an object the retained walk did not reach */
    /* Polled by long operations (freeing a large structure, rehashing,
     * copying a long string); &safepoint_idle unless a run set it. */
    struct safepoint *sp;
};

void heap_init(struct heap *h, uint64_t fail_at);
/* Frees every live object without events; the heap can be reused. */
void heap_destroy(struct heap *h);
void heap_set_observer(struct heap *h, heap_observer_fn fn, void *ctx);

struct heap_str *heap_str_new(struct heap *h, const char *data, size_t len);
/* A string of `len` bytes whose data the caller fills. */
struct heap_str *heap_str_alloc(struct heap *h, size_t len);
struct heap_str *heap_bytes_new(struct heap *h, const char *data, size_t len);
struct heap_str *heap_str_const(const char *data, size_t len);
void heap_str_const_free(struct heap_str *s);
/* Appends to *sp in place when it has one reference, else makes a new
 * string and releases the old one; -1 (nothing changed) on failure. */
int heap_str_append(struct heap *h, struct heap_str **sp, const char *data, size_t len);
uint32_t heap_str_hash(struct heap_str *s);

struct heap_list *heap_list_new(struct heap *h, uint32_t cap);
/* Takes ownership of v; -1 (v released) on failure. */
int heap_list_push(struct heap *h, struct heap_list *l, struct value v);
int heap_list_insert(struct heap *h, struct heap_list *l, uint32_t at, struct value v);

struct heap_map *heap_map_new(struct heap *h, uint32_t n);
struct value *heap_map_get(struct heap_map *m, struct heap_str *key);
/* Stores v (owned) under key (retained); -1 (v released) on failure. */
int heap_map_set(struct heap *h, struct heap_map *m, struct heap_str *key, struct value v);
/* Removes key; its value moves to *out.  0 found, -1 missing. */
int heap_map_remove(struct heap *h, struct heap_map *m, struct heap_str *key, struct value *out);

void heap_free_obj(struct heap *h, struct heap_obj *o);

/* Semantic sizes, per the formulas above (inline: every heap event
 * computes one, mostly of a type known where it happens). */
static inline uint64_t heap_str_size(const struct heap_str *s)
{
    return HEAP_STR_HEADER + (uint64_t)s->len;
}

static inline uint64_t heap_list_size(const struct heap_list *l)
{
    return HEAP_LIST_HEADER + HEAP_LIST_SLOT * (uint64_t)l->cap;
}

static inline uint64_t heap_map_size(const struct heap_map *m)
{
    return HEAP_MAP_HEADER + HEAP_MAP_SLOT * (uint64_t)m->cap;
}

static inline uint64_t heap_size(const struct heap_obj *o)
{
    switch (o->type) {
    case HEAP_STR:
    case HEAP_BYTES:
        return heap_str_size((const struct heap_str *)o);
    case HEAP_LIST:
        return heap_list_size((const struct heap_list *)o);
    default:
        return heap_map_size((const struct heap_map *)o);
    }
}

static inline void heap_retain(struct value v)
{
    if (v.tag >= V_FIRST_HEAP)
        v.u.o->rc++;
}

static inline void heap_release(struct heap *h, struct value v)
{
    if (v.tag >= V_FIRST_HEAP && --v.u.o->rc == 0)
        heap_free_obj(h, v.u.o);
}

static inline struct value val_str(struct heap_str *s)
{
    struct value v = {.tag = V_STR};
    v.u.s = s;
    return v;
}
static inline struct value val_list(struct heap_list *l)
{
    struct value v = {.tag = V_LIST};
    v.u.l = l;
    return v;
}
static inline struct value val_map(struct heap_map *m)
{
    struct value v = {.tag = V_MAP};
    v.u.m = m;
    return v;
}

#endif
