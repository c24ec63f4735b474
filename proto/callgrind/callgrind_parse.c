/* callgrind_parse: lines, headers and part boundaries of Callgrind text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind/callgrind-parse.h"

int cg_parser_fail(struct cg_parser *ps, enum cg_status kind, const char *fmt, ...)
{
    va_list ap;
    ps->err->kind = kind;
    ps->err->line = ps->line;
    va_start(ap, fmt);
    vsnprintf(ps->err->message, sizeof ps->err->message, fmt, ap);
    va_end(ap);
    return -1;
}

int cg_parser_here(struct cg_parser *ps)
{
    ps->err->line = ps->line;
    return -1;
}

/* Header key of `key`, or CG_H_COUNT when unknown. */
static enum cg_header_key header_key(const char *k, size_t len)
{
    for (int h = 0; h < CG_H_COUNT; h++) {
        const char *n = cg_header_name((enum cg_header_key)h);
        if (strlen(n) == len && memcmp(n, k, len) == 0)
            return (enum cg_header_key)h;
    }
    return CG_H_COUNT;
}

/* Records kept before the first flush of a part when normalizing while
 * parsing: small enough to stay in cache, large enough that flushes are
 * rare. */
#define STREAM_WINDOW 4096u

/* Closes the current part, reporting errors at the line it began; when
 * normalizing while parsing, prints the rest of it and drops its
 * records. */
static int part_end(struct cg_parser *ps)
{
    /* printed first, while the part is open; if it turns out invalid the
     * parse fails and the text is never used */
    if (ps->norm && cg_norm_error(ps->norm) == NULL &&
        cg_norm_part_end(ps->norm, ps->m->nparts - 1) == 0)
        cg_model_drop_records(ps->m, cg_model_part(ps->m)->nrecords);
    ps->flush_at = ps->window;
    if (cg_model_end_part(ps->m, ps->err) < 0) {
        ps->err->line = ps->part_line;
        return -1;
    }
    return 0;
}

/* Normalizing while parsing: prints the records of the part's complete
 * function runs (the last run may still grow, and the normalizer looks
 * ahead within a run) and drops them.  Not once the part has totals, nor
 * between calls= and its cost line; after a normalizer failure the
 * records simply stay, and the failure is reported if the parse
 * succeeds, as it would be after a whole parse. */
static void stream_flush(struct cg_parser *ps)
{
    struct cg_model *m = ps->m;
    struct cg_part *p = cg_model_part(m);
    if (ps->pending || p->has_totals || cg_norm_error(ps->norm) != NULL)
        return;
    const struct cg_record *r = m->records + p->first_record;
    size_t cut = p->nrecords;
    while (cut > 0 && r[cut - 1].fn == r[p->nrecords - 1].fn &&
           r[cut - 1].fn_fl == r[p->nrecords - 1].fn_fl)
        cut--;
    if (cut == 0) {
        ps->flush_at = p->nrecords * 2; /* one long run: look again later */
        return;
    }
    if (cg_norm_records(ps->norm, m->nparts - 1, cut) == 0)
        cg_model_drop_records(m, cut);
    ps->flush_at = p->nrecords + ps->window;
}

/* Opens a part whose first line is the current one. */
static int part_begin(struct cg_parser *ps)
{
    if (cg_model_begin_part(ps->m, ps->err) < 0)
        return cg_parser_here(ps);
    ps->part_line = ps->line;
    ps->in_body = false;
    cg_body_reset(ps);
    return 0;
}

/* Every selected event must be declared by the part. */
static int check_selected(struct cg_parser *ps)
{
    const struct cg_part *p = cg_model_part(ps->m);
    for (size_t i = 0; ps->opt && i < ps->opt->nselected; i++) {
        const char *want = ps->opt->selected_events[i];
        uint32_t j = 0;
        while (j < p->nevents && strcmp(cg_part_event(ps->m, p, j)->ptr, want) != 0)
            j++;
        if (j == p->nevents)
            return cg_parser_fail(ps, CG_UNSUPPORTED, "selected event '%s' is not recorded", want);
    }
    return 0;
}

/* header -> key ":" value; after body lines (except totals) or a second
 * part: it starts a new part */
static int parse_header(struct cg_parser *ps, const char *k, size_t klen, const char *v,
                        size_t vlen)
{
    enum cg_header_key key = header_key(k, klen);
    if (key == CG_H_COUNT)
        return cg_parser_fail(ps, CG_UNSUPPORTED, "unknown header '%.*s:'",
                              (int)(klen < 40 ? klen : 40), k);
    if (ps->pending)
        return cg_parser_fail(ps, CG_SYNTAX,
                              "header after 'calls=' at line %llu; expected "
                              "its cost line",
                              (unsigned long long)ps->pending_line);
    const struct cg_part *p = cg_model_part(ps->m);
    if ((ps->in_body && key != CG_H_TOTALS) || (key == CG_H_PART && p->has_number))
        if (part_end(ps) < 0 || part_begin(ps) < 0)
            return -1;
    if (cg_model_add_header(ps->m, key, v, vlen, ps->err) < 0)
        return cg_parser_here(ps);
    return key == CG_H_EVENTS ? check_selected(ps) : 0;
}

static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* line -> blank | "#" comment | key ":" value | key "=" value | cost line */
static int parse_line(struct cg_parser *ps, const char *s, size_t len)
{
    while (len && cg_is_outer_space(*s))
        s++, len--;
    while (len && cg_is_outer_space(s[len - 1]))
        len--;
    if (len == 0 || s[0] == '#')
        return 0;
    /* CR LF ends a line as LF does; a CR left inside one means lines that
     * end with CR alone, which would all run into one */
    if (memchr(s, '\r', len) != NULL)
        return cg_parser_fail(ps, CG_SYNTAX,
                              "carriage return inside a line: lines end with LF or CR LF, "
                              "not CR alone");
    /* keys start with a letter, so a digit, sign or '*' is a cost line */
    if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' || s[0] == '*') {
        if (cg_model_part(ps->m)->nevents == 0)
            return cg_parser_fail(ps, CG_SYNTAX, "body line before the part's 'events:' line");
        ps->in_body = true;
        return cg_body_cost(ps, s, len);
    }
    size_t k = 0;
    while (k < len && is_ident(s[k]))
        k++;
    if (k > 0 && k < len && s[k] == ':')
        return parse_header(ps, s, k, s + k + 1, len - k - 1);
    if (cg_model_part(ps->m)->nevents == 0)
        return cg_parser_fail(ps, CG_SYNTAX, "body line before the part's 'events:' line");
    ps->in_body = true;
    if (k > 0 && k < len && s[k] == '=')
        return cg_body_directive(ps, s, k, s + k + 1, len - k - 1);
    return cg_parser_fail(ps, CG_SYNTAX, "unrecognized line");
}

/* Checks the whole input's encoding and size before any line is read. */
static int check_input(struct cg_parser *ps, const char *text, size_t len)
{
    struct cg_utf8 u;
    cg_utf8_init(&u);
    for (size_t at = 0; at < len;) {
        size_t n = len - at < CG_FILE_CHUNK ? len - at : CG_FILE_CHUNK;
        if (cg_utf8_feed_text(&u, text, at, n, ps->err) < 0)
            return -1;
        if (u.units > CG_MAX_INPUT_UNITS)
            return cg_fail(ps->err, CG_RESOURCE, 0, "input exceeds %zu UTF-16 code units",
                           CG_MAX_INPUT_UNITS);
        at += n;
    }
    return cg_utf8_finish_text(&u, text, len, ps->err);
}

/* Runs every line, then closes the last part. */
static int parse_lines(struct cg_parser *ps, const char *text, size_t len)
{
    ps->line = 1;
    if (part_begin(ps) < 0)
        return -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        if (*p >= '0' && *p <= '9') {
            int rc = cg_body_plain(ps, &p, end);
            if (rc < 0)
                return -1;
            if (rc > 0)
                continue;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > CG_MAX_LINE_UNITS && cg_utf16_len(p, n) > CG_MAX_LINE_UNITS)
            return cg_parser_fail(ps, CG_RESOURCE, "line exceeds %zu UTF-16 code units",
                                  CG_MAX_LINE_UNITS);
        if (parse_line(ps, p, n) < 0)
            return -1;
        p += n + (nl != NULL);
        ps->line += nl != NULL;
        if (ps->norm && cg_model_part(ps->m)->nrecords >= ps->flush_at)
            stream_flush(ps);
    }
    if (ps->pending) {
        ps->line = ps->pending_line;
        return cg_parser_fail(ps, CG_SYNTAX, "input ends after 'calls='; expected its cost line");
    }
    return part_end(ps);
}

/* cg_parse, with the input's encoding known valid when `valid`; when
 * `norm` is not NULL, normalizing while parsing (*norm is set). */
static struct cg_model *parse(const char *text, size_t len, bool valid,
                              const struct cg_options *opt, struct cg_error *err,
                              struct cg_norm **norm, size_t window)
{
    struct cg_error scratch;
    struct cg_parser ps = {
        .opt = opt, .err = err ? err : &scratch, .window = window, .flush_at = window};
    *ps.err = (struct cg_error){CG_OK, 0, ""};
    if (text == NULL && len)
        return cg_fail(ps.err, CG_SYNTAX, 0, "no input"), NULL;
    /* Valid UTF-8 has no more UTF-16 units than bytes: only a longer text
     * could pass the limit. */
    if ((!valid || len > CG_MAX_INPUT_UNITS) && check_input(&ps, text, len) < 0)
        return NULL;
    ps.m = cg_model_new();
    if (ps.m == NULL)
        return cg_fail(ps.err, CG_RESOURCE, 0, "out of memory"), NULL;
    /* the text is about as long as the input */
    if (norm && (*norm = ps.norm = cg_norm_begin(ps.m, len + 64)) == NULL) {
        cg_model_free(ps.m);
        return cg_fail(ps.err, CG_RESOURCE, 0, "out of memory"), NULL;
    }
    int rc = parse_lines(&ps, text ? text : "", len);
    for (int k = 0; k < CG_NS_COUNT; k++)
        cg_idmap_free(&ps.ids[k]);
    if (rc < 0) {
        cg_model_free(ps.m);
        return NULL;
    }
    return ps.m;
}

struct cg_model *cg_parse(const char *text, size_t len, const struct cg_options *opt,
                          struct cg_error *err)
{
    return parse(text, len, false, opt, err, NULL, 0);
}

struct cg_model *cg_parse_read(const char *text, size_t len, const struct cg_options *opt,
                               struct cg_error *err)
{
    return parse(text, len, true, opt, err, NULL, 0);
}

int cg_parse_normalize_every(const char *text, size_t len, bool valid, const struct cg_options *opt,
                             size_t window, char **out, size_t *out_len, struct cg_error *err)
{
    struct cg_error scratch;
    err = err ? err : &scratch;
    struct cg_norm *norm = NULL;
    struct cg_model *m = parse(text, len, valid, opt, err, &norm, window ? window : 1);
    int rc = m ? cg_norm_finish(norm, out, out_len, err) : -1;
    cg_norm_free(norm);
    cg_model_free(m);
    return rc;
}

int cg_parse_normalize(const char *text, size_t len, bool valid, const struct cg_options *opt,
                       char **out, size_t *out_len, struct cg_error *err)
{
    return cg_parse_normalize_every(text, len, valid, opt, STREAM_WINDOW, out, out_len, err);
}
