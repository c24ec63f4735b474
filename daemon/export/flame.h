/*
 * flame: a folded capture (proto/fold.h) drawn as an SVG flame graph.
 *
 * The SVG is self-contained and deterministic: no script, no external
 * resource, and the same fold always gives the same bytes.  The root is at
 * the bottom and spans the graph's width; every frame's width is its share
 * of the root's value.  Each frame carries a <title> with its exact value
 * and percentage of the root (two decimals, rounded half away from zero).
 * Colours come from a hash of the frame's name in a warm range.
 */
#ifndef JETT_PROTO_FLAME_H
#define JETT_PROTO_FLAME_H

#include <stdio.h>

#include "daemon/export/fold.h"

#define FLAME_WIDTH 1200 /* pixels, the whole image */
#define FLAME_PAD 10     /* left and right margin */
#define FLAME_FRAME_H 17 /* pixels per stack level, gap included */
#define FLAME_MIN_PX 0.1 /* narrower frames are not drawn */

/* Writes the SVG document.  0, or -1 on a write error. */
int flame_write_svg(const struct fold *f, FILE *out);

/* Writes s[0..len) as XML character data: & < > " ' escaped, control
 * characters, U+FFFE, U+FFFF and bytes that are not UTF-8 shown as \xNN
 * (XML cannot hold them at all).  At most max_chars columns are written
 * (an East Asian wide character takes two, \xNN four); a longer text is
 * cut to max_chars - 2 columns and ends in "..". */
void flame_write_text(FILE *out, const char *s, size_t len, size_t max_chars);

#endif
