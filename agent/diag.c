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

/* The path with control bytes as \xNN: a file name cannot drive the
 * terminal that shows its diagnostic. */
static size_t diag_path_escaped(const char *path, char *buf, size_t size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        char one[5] = {(char)*p, 0};
        if (*p < 0x20 || *p == 0x7f)
            snprintf(one, sizeof one, "\\x%02x", *p);
        for (const char *c = one; *c; c++, n++)
            if (n + 1 < size)
                buf[n] = *c;
    }
    if (size)
        buf[n < size ? n : size - 1] = 0;
    return n;
}

int interp_diag_format(const struct interp_diag *d, char *buf, size_t size)
{
    size_t n = diag_path_escaped(d->path, buf, size);
    int rest = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, ":%u:%u: error: %s",
                        d->line, d->column, d->message);
    return rest < 0 ? rest : (int)(n + (size_t)rest);
}
