/*
 * safepoint: the word the timer and the signal handler set, and the poll
 * that every piece of runtime work lasting longer than a few microseconds
 * passes at bounded intervals.
 *
 * With nothing pending a poll is one relaxed load and a predictable
 * branch.  When a request is pending, `slow` takes the sample (with the
 * Jett stack as it stands: time inside a builtin is its caller's self
 * time at the call's line) and reports an interrupt.
 *
 * Bounded work: loops poll once per item (a comparison, a copy of one
 * element, an entry moved), byte-wise work polls once per
 * SAFEPOINT_CHUNK bytes (about 5 to 20 microseconds of memcpy, memcmp
 * or memmem), so two safe points are never further apart than one chunk
 * plus one item.
 */
#ifndef JETT_AGENT_SAFEPOINT_H
#define JETT_AGENT_SAFEPOINT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SAFEPOINT_CHUNK ((size_t)64 << 10)

enum safepoint_bits { PENDING_INTERRUPT = 1u, PENDING_SAMPLE = 2u };

struct safepoint {
    _Atomic uint32_t pending; /* enum safepoint_bits */
    /* Acknowledges what is pending; -1 when the run must stop. */
    int (*slow)(struct safepoint *sp);
};

/* A safepoint nothing ever raises (a heap outside a run). */
extern struct safepoint safepoint_idle;

/* 0, or -1 when an interrupt is pending (the caller stops, frees what it
 * holds and returns its error; work that cannot stop may go on). */
static inline int safepoint_poll(struct safepoint *sp)
{
    if (__builtin_expect(atomic_load_explicit(&sp->pending, memory_order_relaxed) != 0, 0))
        return sp->slow(sp);
    return 0;
}

/* A needle longer than this is searched for a byte at a time (Knuth,
 * Morris and Pratt, with a table of 4 bytes a needle byte): memmem over
 * windows of a chunk would go over the whole needle again in each. */
#define SAFEPOINT_LONG_NEEDLE ((size_t)4096)

/* memcpy / memcmp / memmem in SAFEPOINT_CHUNK pieces with a poll between
 * them.  copy: 0, or -1 when interrupted (dst partly written: the caller
 * discards it); copy_all always finishes (for in-place work).  compare:
 * memcmp's sign (it finishes even when interrupted: the caller's next
 * poll reports it).  search: the first hit or NULL; *stopped is set when
 * an interrupt cut the search short. */
int safepoint_copy(struct safepoint *sp, void *dst, const void *src, size_t n);
void safepoint_copy_all(struct safepoint *sp, void *dst, const void *src, size_t n);
/* memmove, a chunk at a time (always finishes). */
void safepoint_move_all(struct safepoint *sp, void *dst, const void *src, size_t n);
/* memset, a chunk at a time (always finishes). */
void safepoint_fill(struct safepoint *sp, void *dst, int c, size_t n);

/* A block grown past this many bytes is copied by safepoint_realloc a
 * chunk at a time: realloc may copy it in one call (when it cannot grow
 * the block where it is, or move its pages). */
#define SAFEPOINT_REALLOC_COPY (4 * SAFEPOINT_CHUNK)

/* realloc of p (NULL: a new block) to `size` bytes of which the first
 * `used` matter; past SAFEPOINT_REALLOC_COPY, a new block, the used
 * bytes copied a chunk at a time, and p freed.  NULL, p untouched, when
 * memory runs out. */
void *safepoint_realloc_long(struct safepoint *sp, void *p, size_t used, size_t size);
int safepoint_compare_long(struct safepoint *sp, const void *a, const void *b, size_t n);

/* The two above in line for the short blocks of nearly every call (map
 * keys, small strings and lists), which need no poll: a call each was
 * two percent of a word count's instructions. */
static inline void *safepoint_realloc(struct safepoint *sp, void *p, size_t used, size_t size)
{
    if (p == NULL || size <= SAFEPOINT_REALLOC_COPY)
        return realloc(p, size);
    return safepoint_realloc_long(sp, p, used, size);
}

static inline int safepoint_compare(struct safepoint *sp, const void *a, const void *b, size_t n)
{
    if (n <= SAFEPOINT_CHUNK)
        return memcmp(a, b, n);
    return safepoint_compare_long(sp, a, b, n);
}

const char *safepoint_search(struct safepoint *sp, const char *hay, size_t n, const char *needle,
                             size_t m, int *stopped);

#endif
