/*
 * toon internals: the value tree that toon.h builds, shared by its
 * construction (toon_value.c), validation (toon_validate.c), number
 * printing (toon_number.c) and the encoder (toon_encode.c).
 */
#ifndef JETT_PROTO_TOON_INTERNAL_H
#define JETT_PROTO_TOON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/toon.h"

enum toon_kind {
    TOON_NULL,
    TOON_BOOL,
    TOON_INT,
    TOON_UINT,
    TOON_DOUBLE,
    TOON_STRING,
    TOON_ARRAY,
    TOON_OBJECT,
    TOON_TABLE, /* toon_table: rows of one shape, their cells packed */
};

struct toon_member {
    char *key; /* NUL-terminated; key_len bytes may include NULs */
    size_t key_len;
    /* the key's value when it is an array index, else -1; and whether
     * key is the object's copy (not a caller's literal), in one word:
     * tables repeat members by the hundred thousand */
    int64_t index : 63;
    bool owned : 1;
    struct toon_value *value;
};
_Static_assert(sizeof(struct toon_member) == 32, "a member is four words");

struct toon_tab;

/* A node of the tree.  Arrays and objects own their children; `failed`
 * records a construction error (a NULL child, no memory, a misuse) that
 * toon_encode reports. */
struct toon_value {
    enum toon_kind kind;
    bool failed;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            char *ptr;
            size_t len;
        } str;
        struct {
            struct toon_value **items;
            size_t len, cap;
        } arr;
        struct {
            struct toon_member *members;
            size_t len, cap;
            size_t nindex; /* members[0..nindex) have array-index keys */
        } obj;
        struct toon_tab *tab; /* behind a pointer: every node is as large as the union */
    } as;
};

_Static_assert(sizeof(struct toon_value) == 40, "a node is five words");

/* A table's rows (toon_table). */
struct toon_tab {
    struct toon_member *fields; /* the first row's keys (owned), no values */
    size_t nfields, nrows;
    unsigned char *cells; /* row after row, each cell a tag and its bytes */
    size_t len, cap;
};

static inline bool toon_is_primitive(const struct toon_value *v)
{
    return v->kind != TOON_ARRAY && v->kind != TOON_OBJECT && v->kind != TOON_TABLE;
}

/* Looks key up in obj, trying position `hint` first: rows of one shape
 * usually list their keys in the same order.  NULL when obj lacks it. */
const struct toon_value *toon_get(const struct toon_value *obj, const struct toon_member *key,
                                  size_t hint);

/* Reads the packed cell at p into *out (a string points into the
 * table); the next cell. */
const unsigned char *toon_table_cell(const unsigned char *p, struct toon_value *out);

/* Deeper trees are rejected instead of risking the stack. */
#define TOON_MAX_DEPTH 512

/* Checks a whole tree before a byte is written: node failures, UTF-8,
 * duplicate keys, depth.  0, or -1 with a message in err. */
int toon_validate_tree(const struct toon_value *v, char *err, size_t errlen);

/* Writes x as ECMAScript's Number::toString does (plain decimals for
 * 1e-7 <= |x| < 1e21, exponent form outside; -0 as 0, NaN and infinities
 * as null) into out; its length.  out holds at least TOON_NUMBER_MAX. */
#define TOON_NUMBER_MAX 48
size_t toon_format_double(double x, char *out);

#endif
