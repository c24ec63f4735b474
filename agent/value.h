/*
 * value: the tagged, unboxed representation of a Jett value.
 *
 * int, float, bool, nil and function values live inside the 16-byte struct
 * and never allocate.  Strings, bytes, lists and maps point at reference
 * counted objects owned by agent/heap.  A secret is the same value with the
 * `secret` flag set, so wrapping costs nothing and the flag travels with the
 * value through lists, maps and calls.
 *
 * Ownership: a `struct value` held in a slot, list or map owns one reference
 * to its heap object; val_retain/val_release adjust it.  Task and channel
 * values point at runtime objects that several tasks share: their
 * reference counts are atomic (heap.h), everything else of a task's
 * values belongs to that task alone.
 */
#ifndef JETT_AGENT_VALUE_H
#define JETT_AGENT_VALUE_H

#include <stdbool.h>
#include <stdint.h>

enum val_tag {
    V_NIL = 0,
    V_BOOL,
    V_INT,
    V_FLOAT,
    V_FUNC,    /* a user function: u.fn is its function id */
    V_BUILTIN, /* a builtin used as a value: u.fn is its builtin id */
    V_STR,     /* first heap tag */
    V_BYTES,
    V_LIST,
    V_MAP,
    V_TASK,    /* a task handle: u.o is a shared runtime object (agent/task.h) */
    V_CHANNEL, /* a channel: u.o is a shared runtime object (agent/channel.h) */
};
#define V_FIRST_HEAP V_STR

struct heap_obj;
struct heap_str;
struct heap_list;
struct heap_map;

struct value {
    uint8_t tag;    /* enum val_tag */
    uint8_t secret; /* 1: a secret<T>; prints as <secret> */
    union {
        int64_t i;
        double f;
        bool b;
        uint32_t fn;
        struct heap_obj *o;
        struct heap_str *s;
        struct heap_list *l;
        struct heap_map *m;
    } u;
};

#define VAL_NIL ((struct value){.tag = V_NIL})
static inline struct value val_int(int64_t i)
{
    struct value v = {.tag = V_INT};
    v.u.i = i;
    return v;
}
static inline struct value val_float(double f)
{
    struct value v = {.tag = V_FLOAT};
    v.u.f = f;
    return v;
}
static inline struct value val_bool(bool b)
{
    struct value v = {.tag = V_BOOL};
    v.u.b = b;
    return v;
}
static inline bool val_is_heap(struct value v)
{
    return v.tag >= V_FIRST_HEAP;
}

/* The name of a value's type as the language spells it ("int", "list"). */
const char *val_type_name(struct value v);

#endif
