/* runout: rendering RunOutputV1 as canonical TOON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/runout.h"
#include "proto/toon.h"
#include "proto/util/utf8.h"

/* A TOON string of the program's output; bytes that are not UTF-8 become
 * U+FFFD so that nothing the program writes can break the document. */
static struct toon_value *text_value(const char *s, size_t len)
{
    size_t bad;
    if (utf8_valid(s, len, &bad))
        return toon_string(s, len);
    char *fixed = malloc(len * 3 + 1);
    size_t n = 0, at = 0;
    if (!fixed)
        return NULL;
    while (at < len) {
        if (utf8_valid(s + at, len - at, &bad)) {
            memcpy(fixed + n, s + at, len - at);
            n += len - at;
            break;
        }
        memcpy(fixed + n, s + at, bad);
        n += bad;
        memcpy(fixed + n, "\xef\xbf\xbd", 3);
        n += 3;
        at += bad + 1;
    }
    struct toon_value *v = toon_string(fixed, n);
    free(fixed);
    return v;
}

static struct toon_value *row(void)
{
    return toon_object();
}

static struct toon_value *debug_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_debug; i++) {
        const struct runout_debug *d = &r->debug[i];
        struct toon_value *o = row();
        toon_set(o, "seq", toon_uint(d->seq));
        toon_set(o, "path", text_value(d->path, strlen(d->path)));
        toon_set(o, "line", toon_uint(d->line));
        toon_set(o, "column", toon_uint(d->column));
        toon_set(o, "value", text_value(d->value ? d->value : "", d->value_len));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *log_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_logs; i++) {
        struct toon_value *o = row();
        toon_set(o, "seq", toon_uint(r->logs[i].seq));
        toon_set(o, "level", text_value(r->logs[i].level, strlen(r->logs[i].level)));
        toon_set(o, "message",
                 text_value(r->logs[i].message ? r->logs[i].message : "", r->logs[i].message_len));
        toon_set(o, "source", toon_uint(r->logs[i].source));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *source_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_sources; i++) {
        const struct runout_source *s = &r->sources[i];
        struct toon_value *o = row();
        toon_set(o, "source", toon_uint(i));
        toon_set(o, "path", text_value(s->path, strlen(s->path)));
        toon_set(o, "line", toon_uint(s->line));
        toon_set(o, "column", toon_uint(s->column));
        toon_set(o, "namespace", text_value(s->ns, strlen(s->ns)));
        toon_set(o, "function", text_value(s->function, strlen(s->function)));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *segment_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_sources; i++)
        for (uint32_t k = 0; k < r->sources[i].n_chain; k++) {
            struct toon_value *o = row();
            toon_set(o, "source", toon_uint(i));
            toon_set(o, "index", toon_uint(k));
            toon_set(o, "segment",
                     text_value(r->sources[i].chain[k], strlen(r->sources[i].chain[k])));
            toon_push(a, o);
        }
    return a;
}

static struct toon_value *field_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_fields; i++) {
        struct toon_value *o = row();
        toon_set(o, "seq", toon_uint(r->fields[i].seq));
        const struct runout_field *f = &r->fields[i];
        toon_set(o, "key", text_value(f->key ? f->key : "", f->key_len));
        toon_set(o, "value", text_value(f->value ? f->value : "", f->value_len));
        toon_push(a, o);
    }
    return a;
}

static struct toon_value *diag_rows(const struct runout *r)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < r->n_diags; i++) {
        struct toon_value *o = row();
        toon_set(o, "path", text_value(r->diags[i].path, strlen(r->diags[i].path)));
        toon_set(o, "line", toon_uint(r->diags[i].line));
        toon_set(o, "column", toon_uint(r->diags[i].column));
        toon_set(o, "severity", toon_cstr("error"));
        toon_set(o, "message", text_value(r->diags[i].message, strlen(r->diags[i].message)));
        toon_push(a, o);
    }
    return a;
}

/* Everything before the profile. */
static struct toon_value *head(const struct runout *r)
{
    struct toon_value *o = toon_object();
    toon_set(o, "schema", toon_cstr("jett.run.v1"));
    toon_set(o, "status", toon_cstr(r->error_kind ? "error" : "ok"));
    toon_set(o, "termination", toon_cstr(r->termination));
    toon_set(o, "exit_code", toon_int(r->exit_code));
    toon_set(o, "stdout", text_value(r->out.data ? r->out.data : "", r->out.len));
    toon_set(o, "stderr", text_value(r->err.data ? r->err.data : "", r->err.len));
    toon_set(o, "debug", debug_rows(r));
    toon_set(o, "logs", log_rows(r));
    toon_set(o, "log_sources", source_rows(r));
    toon_set(o, "log_source_graph_path_segments", segment_rows(r));
    toon_set(o, "log_fields", field_rows(r));
    if (r->n_diags)
        toon_set(o, "diagnostics", diag_rows(r));
    return o;
}

/* Appends the canonical encoding of a depth-0 object; its keys are
 * independent lines, so the parts concatenate into one document. */
static int append_part(struct toon_value *part, char **doc, size_t *len, char *err, size_t errlen)
{
    char *text;
    size_t n;
    int rc = toon_encode(part, NULL, &text, &n, err, errlen);
    toon_free(part);
    if (rc != 0)
        return -1;
    char *p = realloc(*doc, *len + n + 2);
    if (!p) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (*len)
        p[(*len)++] = '\n';
    memcpy(p + *len, text, n + 1);
    *len += n;
    *doc = p;
    free(text);
    return 0;
}

int runout_render(const struct runout *r, char **out, size_t *len, char *err, size_t errlen)
{
    char *doc = NULL;
    size_t n = 0;
    if (append_part(head(r), &doc, &n, err, errlen) != 0)
        goto fail;
    if (r->profile) {
        char *p = realloc(doc, n + r->profile_len + 2);
        if (!p)
            goto fail;
        doc = p;
        doc[n++] = '\n';
        memcpy(doc + n, r->profile, r->profile_len);
        n += r->profile_len;
        doc[n] = 0;
    }
    if (r->error_kind) {
        struct toon_value *tail = toon_object();
        toon_set(tail, "error_kind", toon_cstr(r->error_kind));
        toon_set(tail, "error", toon_cstr(r->error ? r->error : ""));
        if (append_part(tail, &doc, &n, err, errlen) != 0)
            goto fail;
    }
    *out = doc, *len = n;
    return 0;
fail:
    free(doc);
    return -1;
}
