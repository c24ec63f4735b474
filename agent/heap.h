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
 *
 * Several tasks (agent/task.h): each task has a heap of its own, and
 * only its task touches it or its objects.  A value that crosses to
 * another task is copied (agent/copy.h) into a chain of objects that
 * belongs to no heap until the receiving heap adopts it; tasks and
 * channels are shared runtime objects whose reference counts are atomic.
 * A heap that shares its run with others may have its allocation ids set
 * by its observer (through the event's object), which numbers them
 * across the run.
 */
#ifndef JETT_AGENT_HEAP_H
#define JETT_AGENT_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "agent/safepoint.h"
#include "agent/value.h"

enum heap_type { HEAP_STR = 0, HEAP_BYTES, HEAP_LIST, HEAP_MAP };
/* heap_obj.konst: an ordinary object, a program constant (never counted,
 * never freed by a release) or a shared runtime object (counted
 * atomically; its last release calls the heap's shared_drop). */
enum heap_konst { HEAP_OWNED = 0, HEAP_CONST = 1, HEAP_SHARED_OBJ = 2 };
enum heap_op { HEAP_OP_ALLOCATE = 0, HEAP_OP_RESIZE = 1, HEAP_OP_FREE = 2 };

#define HEAP_STR_HEADER 24
#define HEAP_LIST_HEADER 32
#define HEAP_LIST_SLOT 16
#define HEAP_MAP_HEADER 48
#define HEAP_MAP_SLOT 40

/* An observer as one function of the operation: ctx is what was given to
 * heap_set_observer.  The object gives the id and type (an allocate's
 * observer may set its site and, when it numbers a run's allocations, its
 * id); old_size is 0 for an allocate, new_size 0 for a free.  The fields
 * come in registers: an event built in memory for each call and copied by
 * the observer stalled the copy (a wide load of two narrow stores just
 * made cannot be forwarded). */
typedef void (*heap_observer_fn)(void *ctx, enum heap_op op, struct heap_obj *obj,
                                 uint64_t old_size, uint64_t new_size);

/* What the heap calls: a function per operation, as each call site knows
 * its operation, so that an event reaches its own path by one indirect
 * call (a function that tested the operation first cost a tenth of the
 * profiler's instructions per event). */
struct heap_observer {
    void (*allocate)(void *ctx, struct heap_obj *obj, uint64_t size);
    void (*resize)(void *ctx, struct heap_obj *obj, uint64_t old_size, uint64_t new_size);
    void (*free)(void *ctx, struct heap_obj *obj, uint64_t old_size);
};

/* Defines `static const struct heap_observer name` of a heap_observer_fn. */
#define HEAP_OBSERVER_OF(name, fn)                                                                 \
    static void name##_allocate(void *ctx, struct heap_obj *o, uint64_t size)                      \
    {                                                                                              \
        fn(ctx, HEAP_OP_ALLOCATE, o, 0, size);                                                     \
    }                                                                                              \
    static void name##_resize(void *ctx, struct heap_obj *o, uint64_t old, uint64_t neu)           \
    {                                                                                              \
        fn(ctx, HEAP_OP_RESIZE, o, old, neu);                                                      \
    }                                                                                              \
    static void name##_free(void *ctx, struct heap_obj *o, uint64_t old)                           \
    {                                                                                              \
        fn(ctx, HEAP_OP_FREE, o, old, 0);                                                          \
    }                                                                                              \
    static const struct heap_observer name = {name##_allocate, name##_resize, name##_free}

/* An object's creation site: the profiler's stack node of its allocate
 * event (memory mode), HEAP_SITE_NONE otherwise.  Node ids stay below
 * 2^24 - 1: the agent's stack table charges 40 bytes a node against at
 * most 16 MiB (stacktab.h). */
#define HEAP_SITE_NONE 0xffffffu

struct heap_obj {
    uint32_t rc;
    uint32_t type : 2;  /* enum heap_type (a shared object has none) */
    uint32_t konst : 2; /* enum heap_konst; a constant has no id and no events */
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

struct heap;

/* The last reference to a shared object went: the runtime frees it and
 * hands what it held (values in transit) to heap_drop_value with
 * `pending`, so that freeing nested structures never recurses. */
typedef void (*heap_shared_fn)(void *ctx, struct heap *h, struct heap_obj *o,
                               struct heap_obj **pending);

struct heap {
    uint64_t next_id;
    uint64_t attempts;
    uint64_t fail_at;
    /* With several tasks, the run's one count of attempts (for fail_at);
     * NULL: `attempts` */
    _Atomic uint64_t *shared_attempts;
    const struct heap_observer *observer;
    void *observer_ctx;
    heap_shared_fn shared_drop;
    void *shared_ctx;
    struct heap_obj live; /* sentinel of the live list */
    uint64_t n_live;      /* objects on it */
    uint8_t unmarked;     /* the mark of an object the retained walk did not reach */
    /* Polled by long operations (freeing a large structure, rehashing,
     * copying a long string); &safepoint_idle unless a run set it. */
    struct safepoint *sp;
};

/* Objects that belong to no heap: a copy in transit between tasks, linked
 * first to last through next (first->prev and last->next are NULL);
 * both NULL when the value holds no object. */
struct heap_chain {
    struct heap_obj *first, *last;
    uint64_t n; /* objects */
};

void heap_init(struct heap *h, uint64_t fail_at);
/* Frees every live object without events; the heap can be reused. */
void heap_destroy(struct heap *h);
void heap_set_observer(struct heap *h, const struct heap_observer *o, void *ctx);

struct heap_str *heap_str_new(struct heap *h, const char *data, size_t len);
/* A string of `len` bytes whose data the caller fills. */
struct heap_str *heap_str_alloc(struct heap *h, size_t len);
struct heap_str *heap_bytes_new(struct heap *h, const char *data, size_t len);
struct heap_str *heap_str_const(const char *data, size_t len);
void heap_str_const_free(struct heap_str *s);
/* Appends to *sp in place when it has one reference, else makes a new
 * string and releases the old one; -1 (nothing changed) on failure. */
int heap_str_append(struct heap *h, struct heap_str **sp, const char *data, size_t len);
/* A string's hash, computed once (a poll per SAFEPOINT_CHUNK bytes: it
 * always finishes). */
uint32_t heap_str_hash(struct safepoint *sp, struct heap_str *s);

struct heap_list *heap_list_new(struct heap *h, uint32_t cap);
/* Takes ownership of v; -1 (v released) on failure. */
int heap_list_push(struct heap *h, struct heap_list *l, struct value v);
int heap_list_insert(struct heap *h, struct heap_list *l, uint32_t at, struct value v);

struct heap_map *heap_map_new(struct heap *h, uint32_t n);
/* The value under key; hashing and comparing a long key poll `sp`. */
struct value *heap_map_get(struct safepoint *sp, struct heap_map *m, struct heap_str *key);
/* Stores v (owned) under key (retained); -1 (v released) on failure. */
int heap_map_set(struct heap *h, struct heap_map *m, struct heap_str *key, struct value v);
/* Removes key; its value moves to *out.  0 found, -1 missing. */
int heap_map_remove(struct heap *h, struct heap_map *m, struct heap_str *key, struct value *out);

void heap_free_obj(struct heap *h, struct heap_obj *o);

/* Counts one allocation attempt; false when the test switch fails it. */
int heap_attempt(struct heap *h);

/* Where the objects created from now on begin: the next ones are linked
 * before it, so heap_detach can take exactly them. */
struct heap_obj *heap_mark(const struct heap *h);
/* Unlinks every object created since `mark` (none of which may have been
 * freed since) into a chain that belongs to no heap (counting them, a
 * poll per object). */
struct heap_chain heap_detach(struct heap *h, struct heap_obj *mark);
/* Links a chain's objects into h, which owns them from now on. */
void heap_adopt(struct heap *h, struct heap_chain *c);
/* Frees a chain's objects without events and without touching what they
 * point at (a teardown, as heap_destroy). */
void heap_chain_destroy(struct heap_chain *c);
/* Drops one reference that a dying object (or a shared object's
 * shared_drop) held: an object that dies too goes on `pending`, which
 * the caller, heap_free_obj, frees in turn. */
void heap_drop_value(struct heap_obj **pending, struct value v);
/* The last release of a shared object (heap_release's slow path). */
void heap_release_shared(struct heap *h, struct heap_obj *o);
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

/* A constant's count never changes: tasks on other threads read the same
 * constants.  A shared object's count is atomic. */
static inline void heap_retain(struct value v)
{
    if (v.tag >= V_FIRST_HEAP) {
        struct heap_obj *o = v.u.o;
        if (__builtin_expect(o->konst == HEAP_OWNED, 1))
            o->rc++;
        else if (o->konst == HEAP_SHARED_OBJ)
            __atomic_fetch_add(&o->rc, 1, __ATOMIC_RELAXED);
    }
}

static inline void heap_release(struct heap *h, struct value v)
{
    if (v.tag >= V_FIRST_HEAP) {
        struct heap_obj *o = v.u.o;
        if (__builtin_expect(o->konst == HEAP_OWNED, 1)) {
            if (--o->rc == 0)
                heap_free_obj(h, o);
        } else if (o->konst == HEAP_SHARED_OBJ) {
            heap_release_shared(h, o);
        }
    }
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
