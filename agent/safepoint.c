/* safepoint: chunked byte work with a poll between chunks. */
#include "agent/safepoint.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int safepoint_never(struct safepoint *sp)
{
    (void)sp;
    return 0;
}

struct safepoint safepoint_idle = {0, safepoint_never};

/* Copies in chunks; with `stop`, returns -1 at the first poll that
 * reports an interrupt, else always finishes and returns 0. */
static int copy_chunks(struct safepoint *sp, char *d, const char *s, size_t n, bool stop)
{
    while (n > SAFEPOINT_CHUNK) {
        memcpy(d, s, SAFEPOINT_CHUNK);
        d += SAFEPOINT_CHUNK, s += SAFEPOINT_CHUNK, n -= SAFEPOINT_CHUNK;
        if (safepoint_poll(sp) < 0 && stop)
            return -1;
    }
    memcpy(d, s, n);
    return 0;
}

int safepoint_copy(struct safepoint *sp, void *dst, const void *src, size_t n)
{
    return copy_chunks(sp, dst, src, n, true);
}

void safepoint_copy_all(struct safepoint *sp, void *dst, const void *src, size_t n)
{
    copy_chunks(sp, dst, src, n, false);
}

void safepoint_move_all(struct safepoint *sp, void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (d <= s) { /* front to back: each piece's source is read before it is overwritten */
        while (n > SAFEPOINT_CHUNK) {
            memmove(d, s, SAFEPOINT_CHUNK);
            d += SAFEPOINT_CHUNK, s += SAFEPOINT_CHUNK, n -= SAFEPOINT_CHUNK;
            safepoint_poll(sp);
        }
        memmove(d, s, n);
        return;
    }
    while (n > SAFEPOINT_CHUNK) { /* back to front */
        n -= SAFEPOINT_CHUNK;
        memmove(d + n, s + n, SAFEPOINT_CHUNK);
        safepoint_poll(sp);
    }
    memmove(d, s, n);
}

int safepoint_compare_long(struct safepoint *sp, const void *a, const void *b, size_t n)
{
    const char *x = a, *y = b;
    while (n > SAFEPOINT_CHUNK) {
        int c = memcmp(x, y, SAFEPOINT_CHUNK);
        if (c != 0)
            return c;
        x += SAFEPOINT_CHUNK, y += SAFEPOINT_CHUNK, n -= SAFEPOINT_CHUNK;
        safepoint_poll(sp);
    }
    return n ? memcmp(x, y, n) : 0;
}

void safepoint_fill(struct safepoint *sp, void *dst, int c, size_t n)
{
    char *d = dst;
    while (n > SAFEPOINT_CHUNK) {
        memset(d, c, SAFEPOINT_CHUNK);
        d += SAFEPOINT_CHUNK, n -= SAFEPOINT_CHUNK;
        safepoint_poll(sp);
    }
    memset(d, c, n);
}

void *safepoint_realloc_long(struct safepoint *sp, void *p, size_t used, size_t size)
{
    void *q = malloc(size);
    if (q == NULL)
        return NULL;
    safepoint_copy_all(sp, q, p, used < size ? used : size);
    free(p);
    return q;
}

/* One step of the work of a byte loop: a poll per SAFEPOINT_CHUNK steps;
 * false when it reports an interrupt. */
static inline bool step(struct safepoint *sp, size_t *work)
{
    return (++*work & (SAFEPOINT_CHUNK - 1)) != 0 || safepoint_poll(sp) == 0;
}

/* Knuth-Morris-Pratt: the needle's table, then the haystack a byte at a
 * time, each step and each fall back along the table counted as work, so
 * that polls are as far apart in either as in a copy.  *stopped is set
 * on an interrupt; -1 when the table finds no memory. */
static int search_kmp(struct safepoint *sp, const char *hay, size_t n, const char *needle, size_t m,
                      const char **hit, int *stopped)
{
    uint32_t *fail = malloc(m * sizeof *fail);
    if (fail == NULL)
        return -1;
    size_t work = 0, k = 0;
    *hit = NULL;
    fail[0] = 0;
    for (size_t i = 1; i < m && !*stopped; i++) {
        while (k > 0 && needle[i] != needle[k] && (*stopped = !step(sp, &work)) == 0)
            k = fail[k - 1];
        k += needle[i] == needle[k];
        fail[i] = (uint32_t)k;
        *stopped = *stopped || !step(sp, &work);
    }
    k = 0;
    for (size_t i = 0; i < n && !*stopped; i++) {
        while (k > 0 && hay[i] != needle[k] && (*stopped = !step(sp, &work)) == 0)
            k = fail[k - 1];
        k += hay[i] == needle[k];
        if (k == m) {
            *hit = hay + i + 1 - m;
            break;
        }
        *stopped = *stopped || !step(sp, &work);
    }
    free(fail);
    if (*stopped)
        *hit = NULL;
    return 0;
}

const char *safepoint_search(struct safepoint *sp, const char *hay, size_t n, const char *needle,
                             size_t m, int *stopped)
{
    *stopped = 0;
    if (m > n)
        return NULL;
    const char *found;
    if (m > SAFEPOINT_LONG_NEEDLE && search_kmp(sp, hay, n, needle, m, &found, stopped) == 0)
        return found;
    /* Windows overlap by m - 1 bytes so that no hit straddles two (with
     * a long needle, only when the table found no memory). */
    size_t at = 0;
    while (n - at > SAFEPOINT_CHUNK + m) {
        const char *hit = memmem(hay + at, SAFEPOINT_CHUNK + m - 1, needle, m);
        if (hit != NULL)
            return hit;
        at += SAFEPOINT_CHUNK;
        if (safepoint_poll(sp) < 0) {
            *stopped = 1;
            return NULL;
        }
    }
    return memmem(hay + at, n - at, needle, m);
}
