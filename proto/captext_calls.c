/* captext_calls: the CALLS record's text form, both ways:
 *   CALLS functions=FUNC:CALLS,... sites=FUNC:START-END:CALLS,...
 * with '-' for an empty list. */
#include <inttypes.h>
#include <stdlib.h>

#include "proto/captext-internal.h"
#include "proto/captext.h"

void captext_dump_calls(FILE *out, const struct wire_calls *c)
{
    fputs("CALLS functions=", out);
    if (c->n_functions == 0)
        fputc('-', out);
    for (uint32_t i = 0; i < c->n_functions; i++) {
        struct wire_fn_calls e = wire_calls_function(c, i);
        fprintf(out, "%s%" PRIu32 ":%" PRIu64, i ? "," : "", e.func_id, e.calls);
    }
    fputs(" sites=", out);
    if (c->n_sites == 0)
        fputc('-', out);
    for (uint32_t i = 0; i < c->n_sites; i++) {
        struct wire_site_calls e = wire_calls_site(c, i);
        fprintf(out, "%s%" PRIu32 ":%" PRIu32 "-%" PRIu32 ":%" PRIu64, i ? "," : "", e.func_id,
                e.site.start, e.site.end, e.calls);
    }
    fputc('\n', out);
}

/* Room for one more element of a scratch array of the packer. */
static void *room(struct packer *p, void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return arr;
    size_t ncap = *cap ? *cap * 2 : 256;
    void *q = realloc(arr, ncap * elem);
    if (!q) {
        pack_err(p, "out of memory");
        return NULL;
    }
    *cap = ncap;
    return q;
}

/* The next comma-separated item of a list field: [*s, *stop). */
static bool next_item(const char **s, const char *end, const char **stop)
{
    if (*s >= end)
        return false;
    const char *comma = memchr(*s, ',', (size_t)(end - *s));
    *stop = comma ? comma : end;
    return true;
}

/* "FUNC:CALLS" */
static int fn_item(struct packer *p, const char *s, const char *stop, struct wire_fn_calls *e)
{
    const char *colon = memchr(s, ':', (size_t)(stop - s));
    uint64_t id;
    if (!colon || !pack_parse_u64(s, (size_t)(colon - s), &id) || id >= WIRE_NONE32 ||
        !pack_parse_u64(colon + 1, (size_t)(stop - colon - 1), &e->calls))
        return pack_err(p, "functions: expected FUNC:CALLS, found '%.*s'", (int)(stop - s), s);
    e->func_id = (uint32_t)id;
    return 0;
}

/* "FUNC:START-END:CALLS" */
static int site_item(struct packer *p, const char *s, const char *stop, struct wire_site_calls *e)
{
    const char *c1 = memchr(s, ':', (size_t)(stop - s));
    const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(stop - c1 - 1)) : NULL;
    uint64_t id;
    if (!c2 || !pack_parse_u64(s, (size_t)(c1 - s), &id) || id >= WIRE_NONE32 ||
        !pack_parse_u64(c2 + 1, (size_t)(stop - c2 - 1), &e->calls))
        return pack_err(p, "sites: expected FUNC:START-END:CALLS, found '%.*s'", (int)(stop - s),
                        s);
    e->func_id = (uint32_t)id;
    if (pack_span_text(p, "sites", c1 + 1, (size_t)(c2 - c1 - 1), &e->site) != 0)
        return -1;
    if (!wire_span_present(e->site))
        return pack_err(p, "sites: a call site needs a span, found '%.*s'", (int)(stop - s), s);
    return 0;
}

/* The list field i: its items parsed into the packer's scratch arrays. */
static int list_of(struct packer *p, int i, const char *key, bool sites, uint32_t *n)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    *n = 0;
    if (f->quoted)
        return pack_err(p, "%s: expected a list, not a string", key);
    if (f->val_len == 1 && f->val[0] == '-')
        return 0;
    const char *s = f->val, *end = f->val + f->val_len, *stop;
    while (next_item(&s, end, &stop)) {
        int rc;
        if (sites) {
            struct wire_site_calls *a =
                room(p, p->site_calls, &p->site_calls_cap, *n, sizeof *p->site_calls);
            if (!a)
                return -1;
            p->site_calls = a;
            rc = site_item(p, s, stop, &a[*n]);
        } else {
            struct wire_fn_calls *a =
                room(p, p->fn_calls, &p->fn_calls_cap, *n, sizeof *p->fn_calls);
            if (!a)
                return -1;
            p->fn_calls = a;
            rc = fn_item(p, s, stop, &a[*n]);
        }
        if (rc != 0)
            return -1;
        ++*n;
        s = stop + 1;
        if (stop == end)
            break;
    }
    if (s == end && end[-1] == ',')
        return pack_err(p, "%s: the list ends with a comma", key);
    return 0;
}

int captext_calls_of(struct packer *p, uint32_t *n, uint32_t *m)
{
    if (list_of(p, 0, "functions", false, n) != 0 || list_of(p, 1, "sites", true, m) != 0 ||
        pack_no_more(p, 2))
        return -1;
    if ((uint64_t)*n + *m > WIRE_CALLS_MAX_ENTRIES)
        return pack_err(p, "CALLS: more than %u entries: split them over several CALLS lines",
                        WIRE_CALLS_MAX_ENTRIES);
    return 0;
}
