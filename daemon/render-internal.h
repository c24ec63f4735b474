/*
 * render-internal: the pieces of text both human renderers of a report
 * print (numbers, counts, byte sizes, shares, places), so that each
 * section reads its numbers the same way.  Only daemon/ includes this.
 */
#ifndef JETT_DAEMON_RENDER_INTERNAL_H
#define JETT_DAEMON_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/rank.h"

/* A name or path as escape.h shows it, or "unavailable". */
void render_put_str(FILE *f, struct rank_str s);
/* A count, or "unavailable". */
void render_put_num(FILE *f, uint64_t v);

/* A count with its noun, singular for one: "1 sample", "2 samples". */
void render_put_count(FILE *f, uint64_t n, const char *noun);

/* A byte count as people read it, with the exact number beside it:
 * "760 bytes", "1.50 KiB (1536 bytes)".  Without `unit` the plain
 * "bytes" is left out. */
void render_put_size(FILE *f, uint64_t v, bool unit);

/* The same without the exact number: "760 bytes", "1.50 KiB". */
void render_put_short_size(FILE *f, uint64_t v);

/* A byte count: exact whatever its value, or unavailable. */
void render_put_bytes(FILE *f, uint64_t v, bool unavailable);

/* Hundredths padded to two decimals: 34.10. */
void render_put_hundredths(FILE *f, uint64_t h);

/* A line of the totals: a padded label, then the count and its unit. */
void render_put_line(FILE *f, const char *label, uint64_t v, const char *unit);
/* The same for a byte count, exact beside its scaled form. */
void render_put_byte_line(FILE *f, const char *label, uint64_t v, bool unavailable);

/* n of d as a share with two decimals (d > 0). */
void render_put_share(FILE *f, uint64_t n, uint64_t d);

/* PATH:LINE[:COLUMN], or "(no source)" for a frame without one. */
void render_put_location(FILE *f, struct rank_str path, uint64_t line, uint64_t column);

/* " (PATH:LINE)", or " (no source)". */
void render_put_paren_location(FILE *f, struct rank_str path, uint64_t line);

/* The opening of a report (render_human_leads.c): a memory report's
 * summary line, and the leads under "look first:". */
void render_mem_summary(FILE *f, const struct rank_report *r);
void render_leads(FILE *f, const struct rank_report *r);

#endif
