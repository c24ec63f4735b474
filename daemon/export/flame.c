/* flame: an SVG flame graph of a folded capture (see flame.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/escape.h"
#include "daemon/export/flame.h"
#include "daemon/export/flame_assets.h"
#include "daemon/rank.h"
#include "proto/util/utf8.h"
#include "proto/wire.h"

#define FLAME_TOP 88      /* the heading's height, without a legend */
#define FLAME_LINE_H 16   /* a line of the heading */
#define FLAME_BOTTOM 24   /* margin under the root */
#define FLAME_CHAR_PX 7.3 /* a 12 px monospace character, generously */
#define FLAME_EMPTY_H 160 /* height of an image without frames */
#define FLAME_BACKGROUND "rgb(253,250,245)"
#define FLAME_MERGED_FILL "rgb(200,200,200)"
/* The pseudo-frames of --weight wall (ticks.h): <runtime>.<waiting> a
 * cool blue, apart from the warm colours of running code; the coalesced
 * ticks, which ran Jett code without a stack, a pale beige; the runtime,
 * unavailable and dropped ones, which are no Jett code or of unknown
 * place, grey. */
#define FLAME_WAITING_FILL "rgb(140,180,235)"
#define FLAME_COALESCED_FILL "rgb(236,214,170)"
#define FLAME_NO_STACK_FILL "rgb(190,190,190)"
#define FLAME_ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* ---- text ---- */

/* One visible unit of a name: its bytes in s and its width in characters. */
struct flame_unit {
    size_t bytes, width;
    bool hex; /* shown as \xNN */
};

/* True for the East Asian wide and fullwidth ranges, which take two
 * columns of a monospace font. */
static bool wide(uint32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
           (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
           (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
           (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x20000 && cp <= 0x3fffd);
}

/* A unit as escape.h shows it: escaped, 4 columns a byte; else one
 * character. */
static struct flame_unit next_unit(const unsigned char *s, size_t len, size_t i)
{
    bool esc;
    size_t n = escape_unit((const char *)s + i, len - i, &esc);
    if (esc)
        return (struct flame_unit){n, 4 * n, true};
    uint32_t cp = s[i];
    if (n > 1)
        utf8_char(s + i, n, &cp);
    return (struct flame_unit){n, wide(cp) ? 2 : 1, false};
}

static void put_unit(FILE *out, const unsigned char *p, struct flame_unit u)
{
    if (u.hex) {
        escape_fwrite(out, (const char *)p, u.bytes);
        return;
    }
    switch (*p) {
    case '&':
        fputs("&amp;", out);
        break;
    case '<':
        fputs("&lt;", out);
        break;
    case '>':
        fputs("&gt;", out);
        break;
    case '"':
        fputs("&quot;", out);
        break;
    case '\'':
        fputs("&apos;", out);
        break;
    default:
        fwrite(p, 1, u.bytes, out);
    }
}

void flame_write_text(FILE *out, const char *str, size_t len, size_t max_chars)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t width = 0;
    for (size_t i = 0; i < len;) {
        struct flame_unit u = next_unit(s, len, i);
        width += u.width, i += u.bytes;
    }
    /* A cut keeps the end, where the function's own name is: units are
     * skipped from the start until the rest fits beside the ellipsis. */
    size_t i = 0;
    if (width > max_chars) {
        if (max_chars == 0)
            return;
        while (i < len && width > max_chars - 1) {
            struct flame_unit u = next_unit(s, len, i);
            width -= u.width, i += u.bytes;
        }
        fputs(FLAME_ELLIPSIS, out);
    }
    while (i < len) {
        struct flame_unit u = next_unit(s, len, i);
        put_unit(out, s + i, u);
        i += u.bytes;
    }
}

/* ---- numbers ---- */

/* value / total as a percentage with two decimals, rounded half away from
 * zero, in hundredths (total > 0). */
static uint64_t pct_hundredths(uint64_t value, uint64_t total)
{
    unsigned __int128 num = (unsigned __int128)value * 20000u + total;
    return (uint64_t)(num / ((unsigned __int128)total * 2u));
}

static const char *unit_name(const struct fold *f, uint64_t v)
{
    switch (fold_weight(f)) {
    case FOLD_WEIGHT_SAMPLES:
        return v == 1 ? "sample" : "samples";
    case FOLD_WEIGHT_WALL: /* samples and the ticks that are none */
        return v == 1 ? "tick" : "ticks";
    case FOLD_WEIGHT_COUNT:
        return v == 1 ? "allocation" : "allocations";
    default:
        return v == 1 ? "byte" : "bytes";
    }
}

/* FNV-1a of the name picks a colour among warm, light shades, so that black
 * text stays readable and the same name always has the same colour. */
static void put_colour(FILE *out, const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    h ^= h >> 29;
    unsigned r = 225 + (unsigned)(h % 31), g = 100 + (unsigned)((h >> 16) % 116),
             b = 40 + (unsigned)((h >> 32) % 56);
    fprintf(out, "rgb(%u,%u,%u)", r, g, b);
}

/* ---- heading ---- */

static const char *weight_title(enum fold_weight w)
{
    switch (w) {
    case FOLD_WEIGHT_COUNT:
        return "Memory flame graph: allocation count";
    case FOLD_WEIGHT_RETAINED:
        return "Memory flame graph: retained bytes";
    case FOLD_WEIGHT_LIVE_AT_PEAK:
        return "Memory flame graph: bytes live at peak";
    case FOLD_WEIGHT_SAMPLES:
        return "CPU flame graph: samples";
    case FOLD_WEIGHT_WALL:
        return "CPU flame graph: wall time (every requested tick)";
    default:
        return "Memory flame graph: allocated bytes";
    }
}

static void put_totals(FILE *out, const struct fold *f)
{
    const struct fold_totals *t = fold_totals(f);
    if (fold_mode(f) == WIRE_MODE_CPU) {
        const struct ticks *k = &t->ticks;
        fprintf(out,
                "samples: %" PRIu64 " recorded, %" PRIu64 " jett, %" PRIu64 " runtime, %" PRIu64
                " waiting, %" PRIu64 " unavailable",
                t->samples, t->jett_samples, t->runtime_samples, t->waiting_samples,
                t->unavailable_samples);
        if (k->finished)
            fprintf(out,
                    "; ticks: %" PRIu64 " requested, %" PRIu64 " coalesced, %" PRIu64 " dropped",
                    k->requested, k->coalesced, k->dropped);
        else
            fputs("; coalesced and dropped ticks: unknown (no FINISH)", out);
        return;
    }
    fprintf(out, "allocations: %" PRIu64 ", resizes: %" PRIu64 ", allocated: %" PRIu64 " bytes",
            t->allocations, t->resizes, t->allocated_bytes);
    if (!t->live_exact)
        fputs(", freed, peak live and retained: unavailable", out);
    else if (!t->retained_exact) /* a capture cut short: the peak is of the events read */
        fprintf(out,
                ", freed: %" PRIu64 " bytes, peak live: %" PRIu64 " bytes, retained: unavailable",
                t->freed_bytes, t->peak_live_bytes);
    else
        fprintf(out,
                ", freed: %" PRIu64 " bytes, peak live: %" PRIu64 " bytes, retained: %" PRIu64
                " bytes",
                t->freed_bytes, t->peak_live_bytes, t->retained_bytes);
}

/* The heading's legend, lines '\n' apart, in buf: the painter's; else
 * what the blue frames of a wall-time graph are; else, for a graph of
 * the jett samples, a warning when a noticeable share of the requested
 * ticks has no stack and is not drawn (ticks.h).  NULL for none. */
static const char *legend_of(const struct fold *f, const struct flame_paint *p, char *buf,
                             size_t len)
{
    if (p && p->legend)
        return p->legend;
    if (fold_weight(f) == FOLD_WEIGHT_WALL)
        return "blue frames: &lt;runtime&gt;.&lt;waiting&gt;, the program was waiting (at the "
               "root: without a stack)\n"
               "beige frame: &lt;runtime&gt;.&lt;coalesced&gt;, ticks that found Jett code "
               "running and took no stack\n"
               "grey frames: &lt;runtime&gt;.&lt;runtime&gt; (the interpreter), "
               "&lt;runtime&gt;.&lt;unavailable&gt; (no stack kept), &lt;runtime&gt;.&lt;"
               "dropped&gt; (state unknown)";
    const struct ticks *k = &fold_totals(f)->ticks;
    if (fold_mode(f) != WIRE_MODE_CPU || !ticks_noticeable(k))
        return NULL;
    uint64_t none = k->coalesced + k->dropped;
    uint64_t pct = rank_percent_hundredths(none, k->requested);
    snprintf(buf, len,
             "not drawn: %" PRIu64 " of %" PRIu64 " requested ticks (%" PRIu64 ".%02" PRIu64
             "%%) have no stack, %" PRIu64 " coalesced and %" PRIu64
             " dropped; the report counts the coalesced ones as running Jett code",
             none, k->requested, pct / 100, pct % 100, k->coalesced, k->dropped);
    return buf;
}

/* The heading's height: FLAME_TOP and a line for each of the legend's. */
static unsigned heading_height(const char *legend)
{
    unsigned h = FLAME_TOP;
    for (const char *l = legend; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        h += FLAME_LINE_H;
    return h;
}

static void put_heading(FILE *out, const struct fold *f, const struct flame_paint *p,
                        const char *legend)
{
    const struct fold_totals *t = fold_totals(f);
    const char *reason = fold_partial_reason(f);
    fprintf(
        out,
        "<text class=\"h\" x=\"%d\" y=\"22\" font-size=\"17\" font-weight=\"bold\">%s%s</text>\n",
        FLAME_PAD, p && p->title ? p->title : weight_title(fold_weight(f)),
        fold_by_task(f) ? ", by task" : "");
    if (p && p->status)
        fprintf(out, "<text class=\"h\" x=\"%d\" y=\"42\">status: %s</text>\n", FLAME_PAD,
                p->status);
    else
        fprintf(out, "<text class=\"h\" x=\"%d\" y=\"42\">status: %s%s%s</text>\n", FLAME_PAD,
                reason ? "partial (" : "complete", reason ? reason : "", reason ? ")" : "");
    fprintf(out, "<text class=\"h\" x=\"%d\" y=\"58\">", FLAME_PAD);
    put_totals(out, f);
    fputs("</text>\n", out);
    fprintf(out,
            "<text class=\"h\" x=\"%d\" y=\"74\">drawn: %" PRIu64 " of %" PRIu64
            " %s (%s)</text>\n",
            FLAME_PAD, t->weight_attributed, t->weight_total, unit_name(f, t->weight_total),
            fold_weight(f) == FOLD_WEIGHT_WALL ? "every sample and the coalesced and dropped ticks"
            : fold_mode(f) == WIRE_MODE_CPU    ? "the jett samples"
                                               : "events with a Jett stack");
    unsigned y = 74;
    for (const char *l = legend; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        int len = (int)strcspn(l, "\n");
        y += FLAME_LINE_H;
        fprintf(out, "<text class=\"h lg\" x=\"%d\" y=\"%u\">%.*s</text>\n", FLAME_PAD, y, len, l);
    }
}

/* ---- frames ---- */

struct flame_ctx {
    FILE *out;
    const struct fold *f;
    const struct flame_paint *paint;
    uint64_t root;
    uint32_t max_depth;
    unsigned top; /* the heading's height */
};

/* What one drawn frame is: a node, or a run of `merged` narrow siblings
 * (n their first) drawn as one. */
struct flame_item {
    uint32_t node;
    uint32_t merged; /* 0 for a node drawn as itself */
    uint64_t value, offset;
};

static const char *origin_name(int origin)
{
    static const char *const names[] = {"project", "dependency", "stdlib"};
    return origin >= 0 && origin <= 2 ? names[origin] : NULL;
}

/* What a pseudo-frame of --weight wall is, in its tooltip. */
static const char *const pseudo_meaning[TICKS_FRAMES] = {
    [TICKS_COALESCED] = "coalesced ticks: running Jett code, no stack taken",
    [TICKS_RUNTIME] = "runtime samples: the interpreter, no Jett frame",
    [TICKS_UNAVAILABLE] = "unavailable samples: the stack was not kept",
    [TICKS_DROPPED] = "dropped ticks: state unknown",
};

/* The frame's function, origin and path:line as data attributes, which
 * the script shows in its tooltip (read from the DOM: no name from the
 * capture is ever part of the script). */
static void put_func_attrs(const struct flame_ctx *c, const struct fold_node *n)
{
    struct fold_func fn;
    if (!fold_node_func(c->f, n, &fn)) {
        if (n->func == FOLD_MANY_FUNCS)
            fputs(" data-o=\"several functions of this name\"", c->out);
        if (n->func == FOLD_WAITING)
            fputs(" data-o=\"waiting: blocked, not running\"", c->out);
        for (int k = TICKS_WAITING + 1; k < TICKS_FRAMES; k++)
            if (n->func == FOLD_PSEUDO(k))
                fprintf(c->out, " data-o=\"%s\"", pseudo_meaning[k]);
        return;
    }
    const char *origin = origin_name(fn.origin);
    if (origin)
        fprintf(c->out, " data-o=\"%s\"", origin);
    if (fn.path_len == 0)
        return;
    fputs(" data-p=\"", c->out);
    flame_write_text(c->out, fn.path, fn.path_len, SIZE_MAX);
    if (fn.line)
        fprintf(c->out, ":%" PRIu64, fn.line);
    fputc('"', c->out);
}

static void put_frame(const struct flame_ctx *c, const struct flame_item *it)
{
    const double gw = FLAME_WIDTH - 2 * FLAME_PAD;
    const struct fold_node *n = fold_node(c->f, it->node);
    double x = FLAME_PAD + gw * ((double)it->offset / (double)c->root);
    double w = gw * ((double)it->value / (double)c->root);
    unsigned y = c->top + (c->max_depth - n->depth) * FLAME_FRAME_H;
    uint64_t pct = pct_hundredths(it->value, c->root);
    char merged[48], fill[32] = "";
    size_t len;
    const char *name = fold_node_name(c->f, n, &len);
    if (it->merged) {
        len = (size_t)snprintf(merged, sizeof merged, "[%" PRIu32 " narrow frames]", it->merged);
        name = merged;
        strcpy(fill, FLAME_MERGED_FILL);
    }
    fputs(it->merged ? "<g class=\"f m\"" : "<g class=\"f\"", c->out);
    if (!it->merged) {
        put_func_attrs(c, n);
        if (c->paint && it->node != FOLD_ROOT)
            c->paint->frame(c->paint->ctx, c->f, n, fill, c->out);
        else if (c->paint && c->paint->root_fill)
            snprintf(fill, sizeof fill, "%s", c->paint->root_fill);
        if (n->func == FOLD_WAITING)
            strcpy(fill, FLAME_WAITING_FILL);
        else if (n->func == FOLD_PSEUDO(TICKS_COALESCED))
            strcpy(fill, FLAME_COALESCED_FILL);
        else if (n->func <= FOLD_PSEUDO(TICKS_RUNTIME) && n->func >= FOLD_PSEUDO(TICKS_DROPPED))
            strcpy(fill, FLAME_NO_STACK_FILL);
    }
    fputs("><title>", c->out);
    flame_write_text(c->out, name, len, SIZE_MAX);
    fprintf(c->out, ": %" PRIu64 " %s (%" PRIu64 ".%02" PRIu64 "%%)</title>", it->value,
            unit_name(c->f, it->value), pct / 100, pct % 100);
    fprintf(c->out, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"", x, y,
            w, FLAME_FRAME_H - 1);
    if (fill[0])
        fputs(fill, c->out);
    else
        put_colour(c->out, name, len);
    /* the thin outline that keeps neighbours apart is the style's
     * (flame.css): an attribute on each of thousands of frames was a
     * fifth of a large graph's markup */
    fputs("\"/>", c->out);
    double chars = (w - 6) / FLAME_CHAR_PX;
    if (chars >= 3) {
        fprintf(c->out, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + 12);
        flame_write_text(c->out, name, len, (size_t)chars);
        fputs("</text>", c->out);
    }
    fputs("</g>\n", c->out);
}

/* Pushes what a node's children are drawn as, right to left so that they
 * come out in name order: each child at least FLAME_MERGE_PX wide as
 * itself, each run of narrower neighbours as one frame (a run of one as
 * that child, which goes on the same way), and a run narrower than
 * FLAME_MIN_PX not at all: its value stays inside the parent's width as
 * unlabelled room, so the root keeps its exact width and the others
 * their shares.  The parent's self value lies after the last child. */
static size_t push_children(const struct flame_ctx *c, const struct flame_item *parent,
                            struct flame_item *todo, size_t top)
{
    const double px = (FLAME_WIDTH - 2 * FLAME_PAD) / (double)c->root;
    const struct fold_node *n = fold_node(c->f, parent->node);
    uint64_t end = parent->offset + n->total - n->self;
    struct flame_item run = {0, 0, 0, 0};
    for (uint32_t i = n->n_children; i-- > 0;) {
        uint32_t child = fold_child(c->f, n, i);
        uint64_t v = fold_node(c->f, child)->total;
        end -= v;
        bool narrow = px * (double)v < FLAME_MERGE_PX;
        if (narrow) {
            run = (struct flame_item){child, run.merged + 1, run.value + v, end};
            if (i > 0)
                continue;
        }
        if (run.merged && px * (double)run.value >= FLAME_MIN_PX) {
            if (run.merged == 1)
                run.merged = 0;
            todo[top++] = run;
        }
        run.merged = 0, run.value = 0;
        if (!narrow)
            todo[top++] = (struct flame_item){child, 0, v, end};
    }
    return top;
}

/* Draws the tree depth first without recursion (stacks can be deep). */
static int put_frames(const struct flame_ctx *c)
{
    struct flame_item *todo = malloc(((size_t)fold_node_count(c->f) + 1) * sizeof *todo);
    if (!todo)
        return -1;
    size_t top = 0;
    todo[top++] = (struct flame_item){FOLD_ROOT, 0, c->root, 0};
    fputs("<g id=\"frames\">\n", c->out);
    while (top > 0) {
        struct flame_item it = todo[--top];
        put_frame(c, &it);
        if (!it.merged)
            top = push_children(c, &it, todo, top);
    }
    fputs("</g>\n", c->out);
    free(todo);
    return 0;
}

static void put_empty(FILE *out, const struct fold *f, unsigned top)
{
    fprintf(out,
            "<text class=\"h\" x=\"%d\" y=\"%d\" font-size=\"17\" text-anchor=\"middle\">no "
            "samples</text>\n",
            FLAME_WIDTH / 2, top + 32);
    fprintf(out,
            "<text class=\"h\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">nothing to draw: no %s "
            "with a Jett stack</text>\n",
            FLAME_WIDTH / 2, top + 52,
            fold_mode(f) == WIRE_MODE_CPU ? "jett samples" : unit_name(f, 2));
}

int flame_write_svg(const struct fold *f, FILE *out)
{
    return flame_write_svg_painted(f, NULL, out);
}

int flame_write_svg_painted(const struct fold *f, const struct flame_paint *p, FILE *out)
{
    const struct fold_totals *t = fold_totals(f);
    uint32_t max_depth = fold_max_depth(f);
    bool empty = t->weight_attributed == 0;
    char buf[320];
    const char *legend = legend_of(f, p, buf, sizeof buf);
    unsigned top = heading_height(legend);
    unsigned height = empty ? FLAME_EMPTY_H + top - FLAME_TOP
                            : top + (max_depth + 1) * FLAME_FRAME_H + FLAME_BOTTOM;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%u\" viewBox=\"0 0 %d %u\" font-family=\"monospace\" font-size=\"12\" "
            "class=\"jett-flame\" data-pad=\"%d\" data-char-px=\"%.1f\">\n",
            FLAME_WIDTH, height, FLAME_WIDTH, height, FLAME_PAD, FLAME_CHAR_PX);
    /* style and script come from flame.css and flame.js, built in */
    fprintf(out, "<style><![CDATA[\n%s]]></style>\n", flame_style);
    fprintf(out,
            "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" "
            "fill=\"" FLAME_BACKGROUND "\"/>\n",
            FLAME_WIDTH, height);
    put_heading(out, f, p, legend);
    struct flame_ctx c = {out, f, p, t->weight_attributed, max_depth, top};
    if (empty)
        put_empty(out, f, top);
    else if (put_frames(&c) != 0)
        return -1;
    if (!empty)
        fprintf(out, "<script type=\"text/javascript\"><![CDATA[\n%s]]></script>\n", flame_script);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
