/* redact: safe hot-line excerpts from blanked source text and spans. */
#include <stdio.h>
#include <string.h>

#include "daemon/escape.h"
#include "daemon/redact.h"

enum unit_kind { U_BLANK, U_COMMENT, U_TOKEN, U_CHAR, U_ESCAPE };

/* One output unit: what a stretch [start, end) of the line becomes. */
struct unit {
    enum unit_kind kind;
    uint32_t start, end;
    const char *out;
    size_t out_len;
    char buf[16];
};

/* Scan state over one line: byte position and next span. */
struct scan {
    const struct redact_source *s;
    uint32_t i, le, j;
};

uint32_t redact_line_of(const struct redact_source *s, uint32_t pos)
{
    return wire_line_index(s->lines, s->n_lines, pos);
}

/* A unit of at most 4 bytes as \xNN each (into the unit's 16 bytes). */
static void unit_escape(struct unit *u, const unsigned char *p, uint32_t n)
{
    u->kind = U_ESCAPE;
    u->out = u->buf;
    u->out_len = escape_copy(u->buf, (const char *)p, n);
}

/* The unit at a byte that no span covers. */
static void unit_byte(const struct scan *c, struct unit *u)
{
    const unsigned char *p = (const unsigned char *)c->s->text + c->i;
    uint32_t limit = c->le - c->i;
    if (c->j < c->s->n_spans && c->s->spans[c->j].start - c->i < limit)
        limit = c->s->spans[c->j].start - c->i;
    bool esc;
    uint32_t n = (uint32_t)escape_unit((const char *)p, limit, &esc);
    u->start = c->i;
    u->end = c->i + n;
    u->out = (const char *)p;
    u->out_len = n;
    if (p[0] == ' ')
        u->kind = U_BLANK;
    else if (p[0] == '\t') {
        unit_escape(u, p, 1); /* a control character, but trimmed at the ends */
        u->kind = U_BLANK;
    } else if (esc)
        unit_escape(u, p, n); /* the rule of escape.h */
    else
        u->kind = U_CHAR;
}

/* Advances over the next unit of the line; false at its end. */
static bool unit_next(struct scan *c, struct unit *u)
{
    const struct redact_source *s = c->s;
    if (c->j < s->n_spans && s->spans[c->j].start <= c->i && c->i <= c->le &&
        (c->i < c->le || s->spans[c->j].start == c->le)) {
        const struct wire_source_span *sp = &s->spans[c->j++];
        u->start = c->i;
        u->end = sp->end < c->le ? (sp->end > c->i ? sp->end : c->i) : c->le;
        u->kind = sp->kind == WIRE_SPAN_COMMENT ? U_COMMENT : U_TOKEN;
        u->out = sp->kind == WIRE_SPAN_SECRET ? REDACT_SECRET : REDACT_LITERAL;
        u->out_len = u->kind == U_COMMENT ? 0 : strlen(u->out);
        c->i = u->end;
        return true;
    }
    if (c->i >= c->le)
        return false;
    unit_byte(c, u);
    c->i = u->end;
    return true;
}

/* First span that can touch [ls, ...): ends after ls, or is empty at or
 * after it. */
static uint32_t first_span(const struct redact_source *s, uint32_t ls)
{
    uint32_t lo = 0, hi = s->n_spans;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct wire_source_span *p = &s->spans[mid];
        if (p->end > ls || (p->start == p->end && p->start >= ls))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Pass 1: where the trimmed content starts and ends, and whether any
 * span touches the line. */
static void line_bounds(struct scan c, struct scan *first, uint32_t *p1, bool *touched)
{
    struct unit u;
    bool found = false;
    *p1 = c.i;
    *first = c;
    for (struct scan before = c; unit_next(&c, &u); before = c) {
        if (u.kind == U_COMMENT || u.kind == U_TOKEN)
            *touched = true;
        if (u.kind == U_BLANK || u.kind == U_COMMENT)
            continue;
        if (!found)
            *first = before, found = true;
        *p1 = u.end;
    }
    if (!found)
        *p1 = first->i;
}

int redact_excerpt(const struct redact_source *s, uint32_t line, char out[REDACT_MAX + 1],
                   size_t *len, bool *redacted)
{
    if (line >= s->n_lines)
        return -1;
    uint32_t ls = s->lines[line];
    uint32_t le = line + 1 < s->n_lines ? s->lines[line + 1] - 1 : s->text_len;
    if (le > ls && s->text[le - 1] == '\r')
        le--;
    struct scan c = {s, ls, le, first_span(s, ls)}, first;
    uint32_t p1;
    *redacted = false;
    line_bounds(c, &first, &p1, redacted);
    size_t n = 0;
    struct unit u;
    while (unit_next(&first, &u)) {
        bool empty_token_at_end = u.start == p1 && u.end == p1 && u.kind == U_TOKEN;
        if (u.start >= p1 && !empty_token_at_end)
            break;
        if (u.kind == U_COMMENT)
            continue;
        if (u.kind != U_CHAR && u.out_len != 1)
            *redacted = true; /* a token or an escape */
        if (n + u.out_len > REDACT_MAX) {
            *redacted = true;
            break;
        }
        memcpy(out + n, u.out, u.out_len);
        n += u.out_len;
    }
    out[n] = '\0';
    *len = n;
    return 0;
}
