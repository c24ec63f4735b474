/* diag: diagnostics lists and per-source metadata (line starts, spans). */
#include "agent/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void diag_push(struct interp_diags *d, const char *path, uint32_t line, uint32_t column,
                      char *msg)
{
    if (d->len == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        struct interp_diag *items = realloc(d->items, sizeof *items * cap);
        if (items == NULL) {
            free(msg);
            return;
        }
        d->items = items;
        d->cap = cap;
    }
    d->items[d->len++] = (struct interp_diag){strdup(path), line, column, msg};
}

static char *diag_vformat(const char *fmt, va_list ap)
{
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return NULL;
    return msg;
}

void diag_add(struct interp_diags *d, const struct interp_source *src, uint32_t offset,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = diag_vformat(fmt, ap);
    va_end(ap);
    if (msg == NULL)
        return;
    uint32_t line, column;
    interp_source_position(src, offset, &line, &column);
    diag_push(d, src->path, line, column, msg);
}

void diag_add_path(struct interp_diags *d, const char *path, uint32_t line, uint32_t column,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = diag_vformat(fmt, ap);
    va_end(ap);
    if (msg != NULL)
        diag_push(d, path, line, column, msg);
}

void interp_diags_free(struct interp_diags *d)
{
    for (size_t i = 0; i < d->len; i++) {
        free(d->items[i].path);
        free(d->items[i].message);
    }
    free(d->items);
    memset(d, 0, sizeof *d);
}

int interp_diag_format(const struct interp_diag *d, char *buf, size_t size)
{
    return snprintf(buf, size, "%s:%u:%u: error: %s", d->path, d->line, d->column, d->message);
}

void source_add_span(struct interp_source *src, enum interp_span_kind kind, uint32_t start,
                     uint32_t end)
{
    if (src->n_spans == src->cap_spans) {
        uint32_t cap = src->cap_spans ? src->cap_spans * 2 : 16;
        struct interp_source_span *s = realloc(src->spans, sizeof *s * cap);
        if (s == NULL)
            return;
        src->spans = s;
        src->cap_spans = cap;
    }
    src->spans[src->n_spans++] = (struct interp_source_span){(uint8_t)kind, start, end};
}

static int source_span_cmp(const void *a, const void *b)
{
    const struct interp_source_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->kind - y->kind;
}

void source_sort_spans(struct interp_source *src)
{
    if (src->n_spans > 1)
        qsort(src->spans, src->n_spans, sizeof *src->spans, source_span_cmp);
}

int source_index_lines(struct interp_source *src)
{
    uint32_t n = 1;
    for (uint32_t i = 0; i < src->len; i++)
        n += src->text[i] == '\n';
    src->line_starts = malloc(sizeof *src->line_starts * n);
    if (src->line_starts == NULL)
        return -1;
    src->line_starts[0] = 0;
    src->n_lines = 1;
    for (uint32_t i = 0; i < src->len; i++)
        if (src->text[i] == '\n')
            src->line_starts[src->n_lines++] = i + 1;
    return 0;
}

void interp_source_position(const struct interp_source *src, uint32_t offset, uint32_t *line,
                            uint32_t *column)
{
    uint32_t lo = 0, hi = src->n_lines;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (src->line_starts[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    *line = lo + 1;
    *column = offset - (src->n_lines ? src->line_starts[lo] : 0) + 1;
}

void source_free(struct interp_source *src)
{
    free(src->path);
    free(src->text);
    free(src->line_starts);
    free(src->spans);
    free(src);
}
