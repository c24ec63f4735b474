/*
 * render: the two faces of a report.  Both print the same rank_report, so
 * they carry the same status, totals, partial reason and order.
 *
 * render_toon writes the `profile:` document of DESIGN section 7 in
 * canonical TOON (a depth-0 key, so the launcher can splice it into the
 * run envelope verbatim); render_human the stderr report of section 9.
 */
#ifndef JETT_DAEMON_RENDER_H
#define JETT_DAEMON_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "daemon/rank.h"
#include "proto/toon.h"

/* The value of the `profile` key; NULL when memory runs out. */
struct toon_value *render_profile_value(const struct rank_report *r);

/* "profile:\n  schema: ..." without a trailing newline, malloc'd.
 * 0, or -1 with a message in err. */
int render_toon(const struct rank_report *r, char **out, size_t *len, char *err, size_t errlen);

/* The human report, ending with a newline, malloc'd.  0 or -1 (memory). */
int render_human(const struct rank_report *r, char **out, size_t *len);

/* Writes `n` bytes of s to f as escape.h shows text (control and format
 * characters, invalid UTF-8 as \xNN), so names cannot drive a terminal
 * or reorder a line. */
void render_escaped(FILE *f, const char *s, size_t n);

#endif
