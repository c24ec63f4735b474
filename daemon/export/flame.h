/*
 * flame: a folded capture (proto/fold.h) drawn as an SVG flame graph.
 *
 * The SVG is self-contained and deterministic: no external resource, and
 * the same fold always gives the same bytes.  The root is at the bottom
 * and spans the graph's width; every frame's width is its share of the
 * root's value.  Each frame carries a <title> with its exact value and
 * percentage of the root (two decimals, rounded half away from zero) and
 * its function's origin and path:line as data attributes.  Colours come
 * from a hash of the frame's name in a warm range.  The layout is drawn
 * here, so the file is a picture without script; an inline script
 * (flame.js) adds zoom, search and tooltips, reading everything it shows
 * from the document.  Neighbouring frames narrower than a pixel are drawn
 * as one, so a capture of a million chains stays a small file.
 */
#ifndef JETT_PROTO_FLAME_H
#define JETT_PROTO_FLAME_H

#include <stdio.h>

#include "daemon/export/fold.h"

#define FLAME_WIDTH 1200   /* pixels, the whole image */
#define FLAME_PAD 10       /* left and right margin */
#define FLAME_FRAME_H 17   /* pixels per stack level, gap included */
#define FLAME_MIN_PX 0.1   /* narrower frames are not drawn */
#define FLAME_MERGE_PX 1.0 /* narrower neighbours are drawn as one frame */

/* Writes the SVG document.  0, or -1 on a write error. */
int flame_write_svg(const struct fold *f, FILE *out);

/* What a frame shows beyond its name and value (a differential graph's
 * change). */
struct flame_paint {
    /* For each frame of a function but the root: writes its fill, an
     * rgb() colour, into fill (left empty: the name's colour) and any
     * further attributes to out, each with a leading space and its value
     * escaped (flame_write_text). */
    void (*frame)(void *ctx, const struct fold *f, const struct fold_node *n, char fill[32],
                  FILE *out);
    void *ctx;
    const char *title; /* the heading's first line, or NULL */
    /* lines under the heading, separated by '\n', or NULL: SVG text
     * content of the caller's own (tspans allowed), never a name from
     * a capture, written as it is */
    const char *legend;
    const char *root_fill; /* the root's fill, an rgb() colour, or NULL:
                            * its name's colour */
    const char *status;    /* the status line's text, or NULL: the fold's */
};
/* The same with a paint (NULL: none). */
int flame_write_svg_painted(const struct fold *f, const struct flame_paint *p, FILE *out);

/* Writes s[0..len) as XML character data: & < > " ' escaped, and the
 * units escape.h escapes (control and format characters, U+FFFE, U+FFFF,
 * bytes that are not UTF-8, which XML cannot hold or a reader would not
 * see) shown as \xNN.  At most max_chars columns are written (an East
 * Asian wide character takes two, \xNN four); a longer text is
 * cut from the start to max_chars - 1 columns after an ellipsis (U+2026),
 * so that the end, the function's own name, stays. */
void flame_write_text(FILE *out, const char *s, size_t len, size_t max_chars);

#endif
