/* source: per-source metadata for the profiler (line starts, spans of
 * comments, literals and secret expressions) and a blanked copy. */
#include "agent/diag.h"
#include "agent/source.h"
#include "proto/wire.h"
#include "proto/wire_rules.h"

#include <stdlib.h>
#include <string.h>

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

/* The wire's canonical order (outer spans before the spans they hold);
 * whether the spans pass the wire's rules is checked before main. */
void source_sort_spans(struct interp_source *src)
{
    _Static_assert(sizeof(struct interp_source_span) == sizeof(struct wire_source_span),
                   "source spans travel as they are");
    uint32_t at;
    const char *why;
    (void)wire_rule_spans((struct wire_source_span *)src->spans, src->n_spans, src->len, &at, &why);
}

void source_check_wire(const struct interp_source *src, struct interp_diags *d)
{
    const char *why;
    uint32_t at;
    if (wire_rule_path((uint8_t)src->origin, src->path, (uint32_t)strlen(src->path), &why) != 0)
        diag_add_path(d, src->path, 1, 1, "this file name cannot be a logical path: %s", why);
    if (src->n_spans == 0)
        return;
    struct wire_source_span *copy = malloc(sizeof *copy * src->n_spans);
    if (copy == NULL)
        return;
    memcpy(copy, src->spans, sizeof *copy * src->n_spans);
    if (wire_rule_spans(copy, src->n_spans, src->len, &at, &why) != 0)
        diag_add_path(d, src->path, 1, 1, "internal error: source span %u %s", at, why);
    free(copy);
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
    uint32_t lo = wire_line_index(src->line_starts, src->n_lines, offset);
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

char *interp_source_blanked(const struct interp_source *src)
{
    char *out = malloc((size_t)src->len + 1);
    if (out == NULL)
        return NULL;
    memcpy(out, src->text, (size_t)src->len + 1);
    for (uint32_t i = 0; i < src->n_spans; i++)
        for (uint32_t b = src->spans[i].start; b < src->spans[i].end && b < src->len; b++)
            if (out[b] != '\n')
                out[b] = ' ';
    return out;
}
