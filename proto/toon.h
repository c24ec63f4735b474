/*
 * toon: a writer for canonical TOON (specification 4.x).
 *
 * Callers build a small value tree of the JSON data model and encode it;
 * the output is byte-identical to what the reference encoder
 * (@toon-format/toon) writes for the same data.  Profiles, run envelopes
 * and diffs are small, so a tree is cheap and lets the encoder decide
 * between inline, tabular and expanded array forms exactly as the spec
 * requires.
 *
 * Ownership: every toon_* constructor returns a node the caller owns until
 * it is attached with toon_set / toon_push, which take ownership (also on
 * failure, when they free it).  Constructors return NULL only when memory
 * runs out; toon_set / toon_push accept a NULL child and then mark the
 * parent failed, so a tree can be built without checking every call and
 * toon_encode reports the failure once.
 */
#ifndef JETT_PROTO_TOON_H
#define JETT_PROTO_TOON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct toon_value;

struct toon_value *toon_object(void);
struct toon_value *toon_array(void);
struct toon_value *toon_null(void);
struct toon_value *toon_bool(bool b);
/* Integers are written exactly as they are.  (The reference library keeps
 * numbers as doubles, so it can only vouch for |v| <= 2^53.) */
struct toon_value *toon_int(int64_t v);
struct toon_value *toon_uint(uint64_t v);
/* Doubles are written as ECMAScript's Number::toString writes them: the
 * shortest digits that read back exactly, plain decimals for 1e-7 <= |v| <
 * 1e21 and exponent form ("1e+21", "5e-324") outside, -0 as 0, NaN and
 * infinities as null, in the C locale whatever the process locale is. */
struct toon_value *toon_double(double v);
/* Copies `len` bytes; the bytes must be UTF-8 (checked by toon_encode). */
struct toon_value *toon_string(const char *s, size_t len);
struct toon_value *toon_cstr(const char *s);

/* Appends key -> value to an object.  Keys keep insertion order, except
 * that keys which are array indices in the JavaScript sense ("0", "7",
 * "42": no sign, no leading zero, below 2^32 - 1) move to the front in
 * ascending order, as a JavaScript object lists them: the reference
 * encoder can write no other order, so ours cannot either.  A repeated key
 * is an error reported by toon_encode.  Returns 0, or -1 when the
 * object is failed or memory runs out. */
int toon_set(struct toon_value *obj, const char *key, struct toon_value *v);
int toon_setn(struct toon_value *obj, const char *key, size_t key_len, struct toon_value *v);
/* toon_set without a copy of the key, which must outlive the tree (a
 * string literal): a table of many rows repeats the same few keys. */
int toon_set_literal(struct toon_value *obj, const char *key, struct toon_value *v);
/* Appends to an array. */
int toon_push(struct toon_value *arr, struct toon_value *v);

/* A table: an array of flat objects of one shape, kept without a node
 * per cell (a row of eighteen numbers costs about as many words, not two
 * kilobytes of nodes), for documents with tens of thousands of rows.  It
 * is written exactly as the array of those objects would be (tabular,
 * or `key: []` with no rows).  It may be an object's field or the root,
 * not an array's item (toon_encode refuses that).
 * toon_table_push takes a row (an object, owned as by toon_push) and
 * packs its values: the first row's keys are the table's fields, every
 * later row must have the same keys (in any order) and every value must
 * be a primitive; a row that breaks this, or holds invalid UTF-8, a
 * duplicate key or no keys at all, fails the table (toon_encode reports
 * it).  Returns 0, or -1 when the table is failed. */
struct toon_value *toon_table(void);
int toon_table_push(struct toon_value *table, struct toon_value *row);

void toon_free(struct toon_value *v);

struct toon_options {
    char delimiter; /* ',' (default when 0), '\t' or '|' */
    int indent;     /* spaces per level; 2 when 0 */
};

/* Encodes `v` as a TOON document (no trailing newline; an empty root
 * object is the empty document).  On success *out is a NUL-terminated
 * malloc'd buffer of *out_len bytes and 0 is returned; on failure -1 with
 * *out NULL and a message in err: invalid UTF-8 in a string or key, a
 * duplicate key, a failed node, nesting deeper than 512 levels, a bad
 * option (delimiter not ',', '\t' or '|'; indent not 0..64), out of
 * memory.  Nothing is written unless the whole tree is valid.
 * tests/toon-check proves output canonical against the reference. */
int toon_encode(const struct toon_value *v, const struct toon_options *opt, char **out,
                size_t *out_len, char *err, size_t errlen);

#endif
