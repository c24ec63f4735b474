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
