/* wire_rules: the rules of logical paths, names and source spans. */
#include <stdlib.h>
#include <string.h>

#include "proto/wire_rules.h"

#define STDLIB_PREFIX "stdlib/"

/* The first segment may not look like a drive ("c:"): a colon in it. */
static int segment_check(const char *s, uint32_t start, uint32_t n, const char **why)
{
    if (n == 0)
        return *why = "empty path segment", -1;
    if (n == 2 && s[start] == '.' && s[start + 1] == '.')
        return *why = "'..' segments are not allowed", -1;
    if (n == 1 && s[start] == '.')
        return *why = "'.' segments are not allowed", -1;
    if (start == 0 && memchr(s, ':', n))
        return *why = "a drive in the first segment is not allowed", -1;
    return 0;
}

int wire_rule_path(uint8_t origin, const char *s, uint32_t len, const char **why)
{
    if (len == 0)
        return *why = "empty path", -1;
    if (s[0] == '/')
        return *why = "absolute paths are not allowed", -1;
    if (origin == WIRE_ORIGIN_STDLIB &&
        (len < sizeof STDLIB_PREFIX - 1 || memcmp(s, STDLIB_PREFIX, sizeof STDLIB_PREFIX - 1) != 0))
        return *why = "a stdlib path starts with 'stdlib/'", -1;
    uint32_t seg = 0;
    for (uint32_t i = 0; i <= len; i++) {
        if (i < len && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))
            return *why = "control character in path", -1;
        if (i < len && s[i] == '\\')
            return *why = "backslash in path", -1;
        if (i < len && s[i] != '/')
            continue;
        if (segment_check(s, seg, i - seg, why) != 0)
            return -1;
        seg = i + 1;
    }
    return 0;
}

/* FNV-1a of the origin byte and the path. */
static uint32_t path_hash(uint8_t origin, const char *p, uint32_t len)
{
    uint32_t h = (2166136261u ^ origin) * 16777619u;
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* The slot of the pair, or the empty slot where it would go. */
static uint64_t *path_slot(const struct wire_path_set *s, uint32_t h, uint8_t origin, const char *p,
                           uint32_t len)
{
    for (uint32_t i = h & (s->n_slots - 1);; i = (i + 1) & (s->n_slots - 1)) {
        uint64_t v = s->slots[i];
        if (v == 0)
            return &s->slots[i];
        const char *e = s->bytes + (uint32_t)v - 1;
        uint32_t elen;
        memcpy(&elen, e + 1, 4);
        if ((uint32_t)(v >> 32) == h && (uint8_t)e[0] == origin && elen == len &&
            memcmp(e + 5, p, len) == 0)
            return &s->slots[i];
    }
}

/* Doubles the slots (rehashing every entry) when they are half full. */
static int path_grow(struct wire_path_set *s)
{
    if (2 * (s->n + 1) <= s->n_slots)
        return 0;
    uint32_t n = s->n_slots ? s->n_slots * 2 : 64;
    uint64_t *old = s->slots, *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    uint32_t old_n = s->n_slots;
    s->slots = slots, s->n_slots = n;
    for (uint32_t i = 0; i < old_n; i++) {
        uint32_t j = (uint32_t)(old[i] >> 32) & (n - 1);
        while (old[i] && slots[j])
            j = (j + 1) & (n - 1);
        if (old[i])
            slots[j] = old[i];
    }
    free(old);
    return 0;
}

int wire_path_set_add(struct wire_path_set *s, uint8_t origin, const char *p, uint32_t len)
{
    if (path_grow(s) != 0)
        return -1;
    uint32_t h = path_hash(origin, p, len);
    uint64_t *slot = path_slot(s, h, origin, p, len);
    if (*slot)
        return 0;
    if (s->used + 5 + len > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->used + 5 + len)
            cap *= 2;
        char *b = realloc(s->bytes, cap);
        if (!b)
            return -1;
        s->bytes = b, s->cap = cap;
    }
    char *e = s->bytes + s->used;
    e[0] = (char)origin;
    memcpy(e + 1, &len, 4);
    memcpy(e + 5, p, len);
    *slot = (uint64_t)h << 32 | (uint64_t)(s->used + 1);
    s->used += 5 + len;
    s->n++;
    return 1;
}

void wire_path_set_free(struct wire_path_set *s)
{
    free(s->bytes);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

int wire_rule_name(const char *s, uint32_t len, const char **why)
{
    if (len == 0 || len > WIRE_MAX_NAME)
        return *why = "a name is 1 to 4096 bytes", -1;
    if (memchr(s, '\0', len))
        return *why = "NUL byte in a name", -1;
    return 0;
}

/* Canonical order: start ascending, end descending, kind descending (a
 * secret before a literal of the same extent). */
static int span_order(const void *x, const void *y)
{
    const struct wire_source_span *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return (int)b->kind - (int)a->kind;
}

/* One span against the innermost open span `open` (NULL: none). */
static const char *span_against(const struct wire_source_span *open,
                                const struct wire_source_span *v, uint32_t text_len)
{
    if (v->kind > WIRE_SPAN_SECRET)
        return "has an unknown kind";
    if (v->start > v->end)
        return "starts after its end";
    if (v->end > text_len)
        return "ends past the text";
    if (open && v->end > open->end)
        return "overlaps another span without nesting in it";
    if (open && open->kind != WIRE_SPAN_SECRET)
        return "lies inside a span that is not a secret expression";
    return NULL;
}

/* The open-span stack: 32 levels in place, the heap beyond. */
struct span_stack {
    uint32_t local[32], *at, n, cap;
};

static int stack_push(struct span_stack *st, uint32_t i)
{
    if (st->n == st->cap) {
        uint32_t cap = st->cap * 2;
        uint32_t *p =
            st->at == st->local ? malloc(cap * sizeof *p) : realloc(st->at, cap * sizeof *p);
        if (!p)
            return -1;
        if (st->at == st->local)
            memcpy(p, st->local, sizeof st->local);
        st->at = p, st->cap = cap;
    }
    st->at[st->n++] = i;
    return 0;
}

int wire_rule_spans(struct wire_source_span *sp, uint32_t n, uint32_t text_len, uint32_t *at,
                    const char **why)
{
    if (n > 1)
        qsort(sp, n, sizeof *sp, span_order);
    struct span_stack st = {.n = 0, .cap = 32};
    st.at = st.local;
    *why = NULL;
    for (uint32_t i = 0; i < n && !*why; i++) {
        *at = i;
        while (st.n && sp[st.at[st.n - 1]].end <= sp[i].start)
            st.n--;
        *why = span_against(st.n ? &sp[st.at[st.n - 1]] : NULL, &sp[i], text_len);
        if (!*why && stack_push(&st, i) != 0)
            *why = "out of memory checking spans";
    }
    if (st.at != st.local)
        free(st.at);
    return *why ? -1 : 0;
}

void wire_spans_order_ties(struct wire_source_span *sp, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (sp[i].start < sp[i - 1].start)
            return;
    if (n > 1)
        qsort(sp, n, sizeof *sp, span_order);
}

uint32_t wire_spans_outermost(struct wire_source_span *sp, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || sp[i].start >= sp[k - 1].end)
            sp[k++] = sp[i];
    return k;
}
