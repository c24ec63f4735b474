/* callgrind_header: header values, parsed, checked and made canonical. */
#include <string.h>

#include "proto/util/decimal.h"
#include "proto/callgrind/callgrind-internal.h"

static const char *const header_names[CG_H_COUNT] = {
    "version", "creator", "pid",    "thread",    "part",    "cmd",
    "desc",    "event",   "events", "positions", "summary", "totals",
};

const char *cg_header_name(enum cg_header_key key)
{
    return (unsigned)key < CG_H_COUNT ? header_names[key] : "?";
}

/* A whitespace-separated token cursor over a header value. */
struct tokens {
    const char *p, *end;
};

/* Next token or 0 at the end. */
static int next_token(struct tokens *t, const char **tok, size_t *len)
{
    while (t->p < t->end && cg_is_space(*t->p))
        t->p++;
    if (t->p == t->end)
        return 0;
    *tok = t->p;
    while (t->p < t->end && !cg_is_space(*t->p))
        t->p++;
    *len = (size_t)(t->p - *tok);
    return 1;
}

/* Parses `number (Space+ number)*` into vals (at most max); returns the count or -1. */
static int number_list(const char *s, size_t len, uint64_t *vals, size_t max, const char *what,
                       struct cg_error *err)
{
    struct tokens t = {s, s + len};
    const char *tok;
    size_t tl, n = 0;
    while (next_token(&t, &tok, &tl)) {
        if (n == max)
            return cg_fail(err, CG_SYNTAX, 0, "'%s:' has more than %zu values", what, max);
        if (cg_u64(tok, tl, &vals[n++], err) < 0)
            return -1;
    }
    if (n == 0)
        return cg_fail(err, CG_SYNTAX, 0, "'%s:' has no value", what);
    return (int)n;
}

/* positions -> ("instr")? ("bb")? ("line")?, nonempty */
static int parse_positions(struct cg_part *p, const char *s, size_t len, struct cg_error *err)
{
    static const char *const kinds[] = {"instr", "bb", "line"};
    struct tokens t = {s, s + len};
    const char *tok;
    size_t tl;
    unsigned mask = 0, npos = 0, next = 0;
    while (next_token(&t, &tok, &tl)) {
        unsigned k = 0;
        while (k < 3 && !(strlen(kinds[k]) == tl && memcmp(kinds[k], tok, tl) == 0))
            k++;
        if (k == 3)
            return cg_fail(err, CG_UNSUPPORTED, 0, "unknown position field '%.*s'",
                           (int)(tl < 40 ? tl : 40), tok);
        if (k < next)
            return cg_fail(err, CG_SYNTAX, 0, "position '%s' repeated or out of order", kinds[k]);
        mask |= 1u << k, npos++, next = k + 1;
    }
    if (npos == 0)
        return cg_fail(err, CG_SYNTAX, 0, "'positions:' is empty");
    p->positions = mask, p->npos = npos, p->has_positions = true;
    return 0;
}

/* events -> name (Space+ name)*: unique, at most CG_MAX_EVENTS */
static int parse_events(struct cg_model *m, struct cg_part *p, const char *s, size_t len,
                        struct cg_error *err)
{
    struct tokens t = {s, s + len};
    const char *tok[CG_MAX_EVENTS];
    size_t tl[CG_MAX_EVENTS], n = 0, l;
    const char *x;
    while (next_token(&t, &x, &l)) {
        if (n == CG_MAX_EVENTS)
            return cg_fail(err, CG_RESOURCE, 0, "more than %u events", CG_MAX_EVENTS);
        for (size_t j = 0; j < n; j++)
            if (tl[j] == l && memcmp(tok[j], x, l) == 0)
                return cg_fail(err, CG_SYNTAX, 0, "event '%.*s' declared twice",
                               (int)(l < 40 ? l : 40), x);
        tok[n] = x, tl[n++] = l;
    }
    if (n == 0)
        return cg_fail(err, CG_SYNTAX, 0, "'events:' is empty");
    if (cg_grow((void **)&m->events, &m->events_cap, m->nevents + n, sizeof *m->events) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    for (size_t j = 0; j < n; j++) {
        char *d = cg_arena_dup(m, tok[j], tl[j]);
        if (d == NULL)
            return cg_fail(err, CG_RESOURCE, 0, "out of memory");
        m->events[m->nevents + j] =
            (struct cg_str){d, (uint32_t)tl[j], (uint32_t)cg_utf16_len(d, tl[j])};
    }
    p->first_event = m->nevents, p->nevents = (uint32_t)n;
    m->nevents += n;
    return 0;
}

/* summary/totals -> number (Space+ number)*, kept as given */
static int parse_costs(struct cg_model *m, struct cg_part *p, enum cg_header_key key, const char *s,
                       size_t len, uint64_t *v, struct cg_error *err)
{
    bool totals = key == CG_H_TOTALS;
    if (totals ? p->has_totals : p->has_summary)
        return cg_fail(err, CG_SYNTAX, 0, "'%s:' repeated in a part", cg_header_name(key));
    int n = number_list(s, len, v, CG_MAX_EVENTS, cg_header_name(key), err);
    if (n < 0)
        return -1;
    if (p->nevents && (uint32_t)n > p->nevents)
        return cg_fail(err, CG_SYNTAX, 0, "'%s:' has %d values for %u events", cg_header_name(key),
                       n, p->nevents);
    size_t at = cg_model_push_values(m, v, (size_t)n);
    if (at == SIZE_MAX)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    if (totals)
        p->has_totals = true, p->totals = at, p->ntotals = (uint32_t)n;
    else
        p->has_summary = true, p->summary = at, p->nsummary = (uint32_t)n;
    return n;
}

/* version, pid, thread, part -> number */
static int parse_number(struct cg_part *p, enum cg_header_key key, const char *s, size_t len,
                        uint64_t *v, struct cg_error *err)
{
    bool *has = key == CG_H_VERSION  ? &p->has_version
                : key == CG_H_PID    ? &p->has_pid
                : key == CG_H_THREAD ? &p->has_thread
                                     : &p->has_number;
    if (*has)
        return cg_fail(err, CG_SYNTAX, 0, "'%s:' repeated in a part", cg_header_name(key));
    if (number_list(s, len, v, 1, cg_header_name(key), err) < 0)
        return -1;
    if (key == CG_H_VERSION && *v != 1)
        return cg_fail(err, CG_UNSUPPORTED, 0, "format version %llu (only 1 is supported)",
                       (unsigned long long)*v);
    *has = true;
    if (key == CG_H_PID)
        p->pid = *v;
    else if (key == CG_H_THREAD)
        p->thread = *v;
    else if (key == CG_H_PART)
        p->number = *v;
    return 1;
}

/* Canonical value of a header into buf (or *text for text headers). */
static int header_value(struct cg_model *m, struct cg_part *p, enum cg_header_key key,
                        const char **text, size_t *len, char *buf, struct cg_error *err)
{
    uint64_t v[CG_MAX_EVENTS];
    int n;
    switch (key) {
    case CG_H_EVENTS:
        if (p->nevents)
            return cg_fail(err, CG_SYNTAX, 0, "'events:' repeated in a part");
        if (parse_events(m, p, *text, *len, err) < 0)
            return -1;
        return 0; /* canonical form is built by the caller */
    case CG_H_POSITIONS:
        if (p->has_positions)
            return cg_fail(err, CG_SYNTAX, 0, "'positions:' repeated in a part");
        return parse_positions(p, *text, *len, err);
    case CG_H_SUMMARY:
    case CG_H_TOTALS:
        n = parse_costs(m, p, key, *text, *len, v, err);
        break;
    case CG_H_VERSION:
    case CG_H_PID:
    case CG_H_THREAD:
    case CG_H_PART:
        n = parse_number(p, key, *text, *len, v, err);
        break;
    default:
        return 0; /* text: kept as trimmed */
    }
    if (n < 0)
        return -1;
    *len = decimal_u64s(buf, v, (size_t)n), *text = buf;
    return 0;
}

/* Canonical text of a part's events or positions into buf. */
static size_t canonical_list(const struct cg_model *m, const struct cg_part *p,
                             enum cg_header_key key, char *buf)
{
    static const char *const kinds[] = {"instr", "bb", "line"};
    size_t at = 0;
    if (key == CG_H_POSITIONS) {
        for (unsigned k = 0; k < 3; k++)
            if (p->positions & (1u << k)) {
                if (at)
                    buf[at++] = ' ';
                memcpy(buf + at, kinds[k], strlen(kinds[k]));
                at += strlen(kinds[k]);
            }
        return at;
    }
    for (uint32_t j = 0; j < p->nevents; j++) {
        const struct cg_str *e = cg_part_event(m, p, j);
        if (j)
            buf[at++] = ' ';
        memcpy(buf + at, e->ptr, e->len);
        at += e->len;
    }
    return at;
}

int cg_model_add_header(struct cg_model *m, enum cg_header_key key, const char *value, size_t len,
                        struct cg_error *err)
{
    struct cg_part *p = cg_model_part(m);
    if (p == NULL || (unsigned)key >= CG_H_COUNT)
        return cg_fail(err, CG_SYNTAX, 0, "header outside a part or of an unknown kind");
    if (p->nheaders >= CG_MAX_HEADERS)
        return cg_fail(err, CG_RESOURCE, 0, "more than %u headers in a part", CG_MAX_HEADERS);
    if (key != CG_H_TOTALS && p->nrecords)
        return cg_fail(err, CG_SYNTAX, 0, "'%s:' after the part's records", cg_header_name(key));
    while (len && cg_is_outer_space(*value))
        value++, len--;
    while (len && cg_is_outer_space(value[len - 1]))
        len--;
    if (cg_check_text(value, len, err) < 0)
        return -1;
    /* Room for 64 canonical numbers; a canonical event or position list is
     * never longer than the trimmed value, so that size is used when larger. */
    char buf[CG_MAX_EVENTS * 21 + 16];
    if (header_value(m, p, key, &value, &len, buf, err) < 0)
        return -1;
    char *big = NULL;
    if (key == CG_H_EVENTS || key == CG_H_POSITIONS) {
        big = len + 1 > sizeof buf ? cg_arena_dup(m, value, len) : buf;
        if (big == NULL)
            return cg_fail(err, CG_RESOURCE, 0, "out of memory");
        len = canonical_list(m, p, key, big), value = big;
    }
    char *d = cg_arena_dup(m, value, len);
    if (d == NULL ||
        cg_grow((void **)&m->headers, &m->headers_cap, m->nheaders + 1, sizeof *m->headers) < 0)
        return cg_fail(err, CG_RESOURCE, 0, "out of memory");
    m->headers[m->nheaders++] =
        (struct cg_header){key, {d, (uint32_t)len, (uint32_t)cg_utf16_len(d, len)}};
    p->nheaders++;
    return 0;
}
