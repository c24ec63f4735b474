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
struct toon_value *toon_int(int64_t v);
struct toon_value *toon_uint(uint64_t v);
struct toon_value *toon_double(double v);
/* Copies `len` bytes; the bytes must be UTF-8 (checked by toon_encode). */
struct toon_value *toon_string(const char *s, size_t len);
struct toon_value *toon_cstr(const char *s);

/* Appends key -> value to an object (keys keep insertion order; a repeated
 * key is an error reported by toon_encode).  Returns 0, or -1 when the
 * object is failed or memory runs out. */
int toon_set(struct toon_value *obj, const char *key, struct toon_value *v);
int toon_setn(struct toon_value *obj, const char *key, size_t key_len, struct toon_value *v);
/* Appends to an array. */
int toon_push(struct toon_value *arr, struct toon_value *v);

void toon_free(struct toon_value *v);

struct toon_options {
    char delimiter; /* ',' (default when 0), '\t' or '|' */
    int indent;     /* spaces per level; 2 when 0 */
};

/* Encodes `v` as a TOON document (no trailing newline).  On success *out is
 * a NUL-terminated malloc'd buffer of *out_len bytes and 0 is returned; on
 * failure -1 with a message in err (invalid UTF-8, duplicate key, a failed
 * node, out of memory). */
int toon_encode(const struct toon_value *v, const struct toon_options *opt, char **out,
                size_t *out_len, char *err, size_t errlen);

#endif
