/*
 * redact: the safe excerpt of a source line for a hot line (DESIGN
 * section 10), built only from the SOURCE text and its spans.
 *
 * The excerpt is the whole line with comments dropped, each string or
 * byte literal replaced by `<redacted-literal>`, each secret-typed
 * expression by `<secret-expression>`, leading and trailing blanks
 * (space, tab) trimmed, the units escape.h escapes (control and format
 * characters, bytes that are not UTF-8) written as `\xNN` (lowercase
 * hex) for each of their bytes, then cut to at most
 * REDACT_MAX bytes at a character boundary (never inside a token or an
 * escape).  `redacted` is true when any rule changed the line: a comment,
 * literal or secret span touches it, a byte was escaped or the line was
 * cut.  A CR before the line's LF belongs to the line break.
 */
#ifndef JETT_DAEMON_REDACT_H
#define JETT_DAEMON_REDACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

#define REDACT_MAX 160
#define REDACT_LITERAL "<redacted-literal>"
#define REDACT_SECRET "<secret-expression>"

/* A source as the aggregation holds it: spans sorted by start and
 * disjoint, lines[k] the offset of line k (0-based), lines[0] == 0. */
struct redact_source {
    const char *text;
    uint32_t text_len;
    const struct wire_source_span *spans;
    uint32_t n_spans;
    const uint32_t *lines;
    uint32_t n_lines;
};

/* 0-based index of the line holding byte `pos` (pos <= text_len). */
uint32_t redact_line_of(const struct redact_source *s, uint32_t pos);

/* Writes the excerpt of line `line` (0-based) into `out` (NUL-terminated,
 * *len bytes).  Returns 0, or -1 when the line does not exist. */
int redact_excerpt(const struct redact_source *s, uint32_t line, char out[REDACT_MAX + 1],
                   size_t *len, bool *redacted);

#endif
