/* callgrind internals shared by the proto/callgrind_*.c files. */
#ifndef JETT_PROTO_CALLGRIND_INTERNAL_H
#define JETT_PROTO_CALLGRIND_INTERNAL_H

#include <stdarg.h>

#include "proto/callgrind/callgrind.h"

/* Name interning table of one namespace: open addressing on name index+1. */
struct cg_intern {
    uint32_t *slots;
    size_t cap;
};

struct cg_arena_chunk;

/* What a model holds besides its public arrays. */
struct cg_model_index {
    struct cg_arena_chunk *arena;
    struct cg_intern intern[CG_NS_COUNT];
    bool part_open;
    /* The last caller context a record named and its units (SIZE_MAX: none). */
    uint32_t ctx_key[CG_CTX_COUNT];
    size_t ctx_units;
    /* Bytes of records and values mapped ahead (cg_prefault_ahead). */
    size_t prefaulted[2];
    /* Record and value counts a cost record may reach without the checks
     * of the general path (cg_cost_slot). */
    size_t fast_records, fast_values;
    /* Records dropped once printed (cg_model_drop_records), counted
     * against CG_MAX_RECORDS with the rest. */
    size_t dropped;
};

/* Maps the whole pages of [p, p + n) for writing in one call; a hint. */
void cg_prefault(void *p, size_t n);

/* Keeps an array's pages mapped a step ahead of its first `need` bytes, so
 * that filling it does not trap once per page.  *done: bytes mapped so far
 * (only a hint once the array has moved). */
#define CG_PREFAULT_STEP ((size_t)64 << 10)
static inline void cg_prefault_ahead(size_t *done, void *base, size_t need, size_t cap)
{
    if (need <= *done)
        return;
    size_t to = need + CG_PREFAULT_STEP < cap ? need + CG_PREFAULT_STEP : cap;
    cg_prefault((char *)base + *done, to - *done);
    *done = to;
}

/* Sets *e (unless NULL) and returns -1. */
int cg_fail(struct cg_error *e, enum cg_status kind, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Makes room for `need` elements of `elem` bytes; -1 when out of memory. */
int cg_grow_slow(void **p, size_t *cap, size_t need, size_t elem);
static inline int cg_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : cg_grow_slow(p, cap, need, elem);
}

/* cg_utf8_feed and cg_utf8_finish for a caller that holds the text from
 * its start (the bytes fed are text[at, at + n)): lines are not counted
 * while decoding, only to report an error. */
int cg_utf8_feed_text(struct cg_utf8 *u, const char *text, size_t at, size_t n,
                      struct cg_error *err);
int cg_utf8_finish_text(const struct cg_utf8 *u, const char *text, size_t len,
                        struct cg_error *err);

/* UTF-16 length of valid UTF-8. */
size_t cg_utf16_len(const char *s, size_t len);

/* Checks text given to the builder: valid UTF-8, no NUL or newline. */
int cg_check_text(const char *s, size_t len, struct cg_error *err);

/* Parses an integer token: decimal or lowercase-0x hexadecimal, at most
 * CG_MAX_DIGITS digits (Resource beyond, or on overflow; Syntax if malformed). */
int cg_u64(const char *s, size_t len, uint64_t *v, struct cg_error *err);

/* Copies bytes into the model's arena (NUL added); NULL when out of memory. */
char *cg_arena_dup(struct cg_model *m, const char *s, size_t len);

/* The part being filled, or NULL. */
static inline struct cg_part *cg_model_part(struct cg_model *m)
{
    return m->index->part_open ? &m->parts[m->nparts - 1] : NULL;
}

/* Appends n values; returns their index or SIZE_MAX when out of memory. */
size_t cg_model_push_values(struct cg_model *m, const uint64_t *v, size_t n);

/* Reads a short plain number token (at most 19 decimal or 16 hex digits)
 * straight from *cur, skipping blanks before it: 1 with *cur after it, 0 at
 * the end, -1 (with *cur at the token) when the token needs cg_u64. */
int cg_u64_scan(const char **cur, const char *end, uint64_t *v);

/* Reads a line of such short plain number tokens separated by blanks into
 * out, up to `end` or a newline (where *cur is left): their count, or
 * SIZE_MAX when there are more than max or a token needs cg_u64 or is not
 * a number (the caller then takes the token by token path). */
size_t cg_u64_scan_line(const char **cur, const char *end, uint64_t *out, size_t max);

/*
 * Normalizing while parsing (cg_parse_normalize): the parser hands over
 * each part's records once their function runs are complete, then drops
 * them (cg_model_drop_records), so that the records of a large profile
 * never fill memory.  Parts are printed in order; a part's headers come
 * with its first records, its totals with cg_norm_part_end.  After a
 * failure every call fails and cg_norm_error says why.
 */
struct cg_norm;
/* Starts the text (its first line) with room for `guess` bytes; NULL when
 * out of memory. */
struct cg_norm *cg_norm_begin(const struct cg_model *m, size_t guess);
/* Prints the first `to` records of part i (the part's headers first, the
 * first time). */
int cg_norm_records(struct cg_norm *s, size_t i, size_t to);
/* Prints the rest of part i: its remaining records and its totals. */
int cg_norm_part_end(struct cg_norm *s, size_t i);
/* The first failure, or NULL. */
const struct cg_error *cg_norm_error(const struct cg_norm *s);
/* Hands over the text (NUL-terminated, *out_len bytes; the caller frees
 * it), or fails with the first failure. */
int cg_norm_finish(struct cg_norm *s, char **out, size_t *out_len, struct cg_error *err);
void cg_norm_free(struct cg_norm *s);

/* cg_parse_normalize with its window of records (at least 1) chosen:
 * tests and fuzzing flush after every few records. */
int cg_parse_normalize_every(const char *text, size_t len, bool valid, const struct cg_options *opt,
                             size_t window, char **out, size_t *out_len, struct cg_error *err);

/* Drops the first `n` records of the part being filled, which have been
 * printed, with their values and calls; the rest move to the front.  A
 * part with totals can only drop all its records (with the totals'
 * values, which lie after theirs). */
void cg_model_drop_records(struct cg_model *m, size_t n);

/* Checks a model's indices and ranges before it is printed (Syntax). */
int cg_model_check(const struct cg_model *m, struct cg_error *err);

static inline int cg_is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Outer ASCII whitespace: space, tab, CR, VT, FF. */
static inline int cg_is_outer_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

#endif
