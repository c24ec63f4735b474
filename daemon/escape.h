/*
 * escape: the one rule by which names, paths and source excerpts from a
 * capture are shown to a reader, in every report and export
 * (jett-profile(7), "Escaped text").
 *
 * A unit of text is a well-formed UTF-8 character, or a single byte that
 * is not part of one.  A unit is escaped, each of its bytes written as
 * `\xNN` (lowercase hex), when it is a byte that is not UTF-8, a control
 * character (C0 U+0000..U+001F, DEL U+007F, C1 U+0080..U+009F), one of
 * the noncharacters U+FFFE and U+FFFF, or a format character (Unicode
 * 14.0's general category Cf: the bidirectional controls, the zero-width
 * characters, the soft hyphen, the byte order mark and the others listed
 * in format_chars): text that would steer a terminal, reorder or hide
 * what is around it, or that a format (XML) cannot hold.  Every other
 * unit is written as it is, a backslash included.
 */
#ifndef JETT_DAEMON_ESCAPE_H
#define JETT_DAEMON_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The unit at s[0..n) (n >= 1): its length in bytes, and in *escaped
 * whether it is shown as \xNN for each of them. */
size_t escape_unit(const char *s, size_t n, bool *escaped);

/* Whether any unit of s[0..n) is escaped. */
bool escape_needed(const char *s, size_t n);

/* The length of s[0..n) once escaped. */
size_t escape_len(const char *s, size_t n);

/* Writes the escaped s[0..n) to dst, which holds escape_len(s, n) bytes
 * (no NUL is added); returns that length. */
size_t escape_copy(char *dst, const char *s, size_t n);

/* The escaped s[0..n) in a malloc'd, NUL-terminated string (its length in
 * *len when len is not NULL); NULL when out of memory. */
char *escape_dup(const char *s, size_t n, size_t *len);

/* Writes the escaped s[0..n) to f. */
void escape_fwrite(FILE *f, const char *s, size_t n);

#endif
