/* suggest: fixed-template suggestions from reported numbers only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/suggest.h"

/* Appends a suggestion whose text is built from a format. */
static int add(struct rank_entry *e, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int add(struct rank_entry *e, const char *rule, const char *fmt, ...)
{
    if (e->n_suggestions >= RANK_MAX_SUGGESTIONS)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    e->suggestions[e->n_suggestions].rule = rule;
    e->suggestions[e->n_suggestions++].text = text;
    return 0;
}

/* Formats hundredths with two decimals, as the templates ask: 34.10. */
static void pct_text(uint64_t h, char *buf, size_t n)
{
    snprintf(buf, n, "%llu.%02llu", (unsigned long long)(h / 100), (unsigned long long)(h % 100));
}

int suggest_cpu(struct rank_entry *e)
{
    int nl = (int)e->ns.len, fl = (int)e->fn.len;
    if ((unsigned __int128)e->secondary * 2 >= e->primary) {
        const struct rank_hot *h = e->n_hot > 0 ? &e->hot[0] : NULL;
        if (h == NULL || h->line == RANK_NA)
            return add(e, "CPU_HIGH_SELF",
                       "Inspect the reported hot lines in %.*s.%.*s; self work accounts for at "
                       "least half of its samples.",
                       nl, e->ns.ptr, fl, e->fn.ptr);
        return add(e, "CPU_HIGH_SELF",
                   "Inspect the reported hot lines in %.*s.%.*s; self work accounts for at "
                   "least half of its samples, the most at %.*s:%llu (%llu of %llu self sample%s).",
                   nl, e->ns.ptr, fl, e->fn.ptr, (int)h->path.len, h->path.ptr,
                   (unsigned long long)h->line, (unsigned long long)h->self_samples,
                   (unsigned long long)e->secondary, e->secondary == 1 ? "" : "s");
    }
    if (e->callee_fn.ptr == NULL || e->n_chains == 0)
        return add(e, "CPU_CALLEE_DOMINATED",
                   "Inspect the dominant call chain through %.*s.%.*s; its callees account for "
                   "more than half of its samples.",
                   nl, e->ns.ptr, fl, e->fn.ptr);
    char pct[32];
    pct_text(rank_percent_hundredths(e->callee_samples, e->chains[0].weight), pct, sizeof pct);
    return add(e, "CPU_CALLEE_DOMINATED",
               "Inspect the dominant call chain through %.*s.%.*s; its callees account for more "
               "than half of its samples; %.*s.%.*s takes %s%% of the samples on that chain.",
               nl, e->ns.ptr, fl, e->fn.ptr, (int)e->callee_ns.len, e->callee_ns.ptr,
               (int)e->callee_fn.len, e->callee_fn.ptr, pct);
}

int suggest_mem(struct rank_entry *e, uint32_t threshold_bp, uint64_t attributed_bytes)
{
    char pct[32];
    int nl = (int)e->ns.len, fl = (int)e->fn.len;
    if (e->rank == 1) {
        pct_text(e->percent_hundredths, pct, sizeof pct);
        if (add(e, "MEM_ALLOCATION_PRESSURE",
                "Reduce, reuse, or batch allocations in %.*s.%.*s; it allocated %s%% of "
                "attributed bytes.",
                nl, e->ns.ptr, fl, e->fn.ptr, pct) < 0)
            return -1;
    }
    if (e->retained_unavailable || attributed_bytes == 0 ||
        !rank_meets(e->retained_bytes, attributed_bytes, threshold_bp))
        return 0;
    pct_text(rank_percent_hundredths(e->retained_bytes, attributed_bytes), pct, sizeof pct);
    return add(e, "MEM_RETAINED",
               "Review the lifetime of allocations created in %.*s.%.*s; %llu bytes (%s%%) were "
               "still live at exit.",
               nl, e->ns.ptr, fl, e->fn.ptr, (unsigned long long)e->retained_bytes, pct);
}

void suggest_clear(struct rank_entry *e)
{
    for (unsigned i = 0; i < e->n_suggestions; i++)
        free(e->suggestions[i].text);
    e->n_suggestions = 0;
}
