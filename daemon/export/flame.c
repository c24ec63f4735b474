/* flame: an SVG flame graph of a folded capture (see flame.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/flame.h"
#include "proto/wire.h"

#define FLAME_TOP 88      /* the heading's height */
#define FLAME_BOTTOM 24   /* margin under the root */
#define FLAME_CHAR_PX 7.3 /* a 12 px monospace character, generously */
#define FLAME_EMPTY_H 160 /* height of an image without frames */
#define FLAME_BACKGROUND "rgb(253,250,245)"

/* ---- text ---- */

/* Length of the UTF-8 sequence at s[i], 0 when it is not one or is a
 * character XML cannot hold (U+FFFE, U+FFFF). */
static size_t utf8_unit(const unsigned char *s, size_t len, size_t i)
{
    unsigned char c = s[i];
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || len - i < n)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[i + k] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && c == 0xef && s[i + 1] == 0xbf && s[i + 2] >= 0xbe)
        return 0;
    return n;
}

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

static uint32_t code_point(const unsigned char *p, size_t n)
{
    uint32_t cp = n == 2 ? p[0] & 0x1fu : n == 3 ? p[0] & 0x0fu : p[0] & 0x07u;
    for (size_t k = 1; k < n; k++)
        cp = cp << 6 | (p[k] & 0x3fu);
    return cp;
}

static struct flame_unit next_unit(const unsigned char *s, size_t len, size_t i)
{
    unsigned char c = s[i];
    if (c < 0x20 || c == 0x7f)
        return (struct flame_unit){1, 4, true};
    if (c < 0x80)
        return (struct flame_unit){1, 1, false};
    size_t n = utf8_unit(s, len, i);
    if (n == 0)
        return (struct flame_unit){1, 4, true};
    return (struct flame_unit){n, wide(code_point(s + i, n)) ? 2 : 1, false};
}

static void put_unit(FILE *out, const unsigned char *p, struct flame_unit u)
{
    if (u.hex) {
        fprintf(out, "\\x%02x", *p);
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
    size_t room = width <= max_chars ? width : max_chars < 2 ? 0 : max_chars - 2;
    size_t used = 0;
    for (size_t i = 0; i < len;) {
        struct flame_unit u = next_unit(s, len, i);
        if (used + u.width > room)
            break;
        put_unit(out, s + i, u);
        used += u.width, i += u.bytes;
    }
    if (width > max_chars)
        fputs(max_chars < 2 ? "" : "..", out);
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
    default:
        return "Memory flame graph: allocated bytes";
    }
}

static void put_totals(FILE *out, const struct fold *f)
{
    const struct fold_totals *t = fold_totals(f);
    if (fold_mode(f) == WIRE_MODE_CPU) {
        fprintf(out,
                "samples: %" PRIu64 " recorded, %" PRIu64 " jett, %" PRIu64 " runtime, %" PRIu64
                " waiting, %" PRIu64 " unavailable",
                t->samples, t->jett_samples, t->runtime_samples, t->waiting_samples,
                t->unavailable_samples);
        return;
    }
    fprintf(out, "allocations: %" PRIu64 ", resizes: %" PRIu64 ", allocated: %" PRIu64 " bytes",
            t->allocations, t->resizes, t->allocated_bytes);
    if (t->live_exact)
        fprintf(out,
                ", freed: %" PRIu64 " bytes, peak live: %" PRIu64 " bytes, retained: %" PRIu64
                " bytes",
                t->freed_bytes, t->peak_live_bytes, t->retained_bytes);
    else
        fputs(", freed, peak live and retained: unavailable", out);
}

static void put_heading(FILE *out, const struct fold *f)
{
    const struct fold_totals *t = fold_totals(f);
    const char *reason = fold_partial_reason(f);
    fprintf(out, "<text x=\"%d\" y=\"22\" font-size=\"17\" font-weight=\"bold\">%s</text>\n",
            FLAME_PAD, weight_title(fold_weight(f)));
    fprintf(out, "<text x=\"%d\" y=\"42\">status: %s%s%s</text>\n", FLAME_PAD,
            reason ? "partial (" : "complete", reason ? reason : "", reason ? ")" : "");
    fprintf(out, "<text x=\"%d\" y=\"58\">", FLAME_PAD);
    put_totals(out, f);
    fputs("</text>\n", out);
    fprintf(out, "<text x=\"%d\" y=\"74\">drawn: %" PRIu64 " of %" PRIu64 " %s (%s)</text>\n",
            FLAME_PAD, t->weight_attributed, t->weight_total, unit_name(f, t->weight_total),
            fold_mode(f) == WIRE_MODE_CPU ? "the jett samples" : "events with a Jett stack");
}

/* ---- frames ---- */

struct flame_ctx {
    FILE *out;
    const struct fold *f;
    uint64_t root;
    uint32_t max_depth;
};

static void put_frame(const struct flame_ctx *c, const struct fold_node *n, uint64_t offset)
{
    const double gw = FLAME_WIDTH - 2 * FLAME_PAD;
    double x = FLAME_PAD + gw * ((double)offset / (double)c->root);
    double w = gw * ((double)n->total / (double)c->root);
    unsigned y = FLAME_TOP + (c->max_depth - n->depth) * FLAME_FRAME_H;
    uint64_t pct = pct_hundredths(n->total, c->root);
    size_t len;
    const char *name = fold_node_name(c->f, n, &len);
    fputs("<g><title>", c->out);
    flame_write_text(c->out, name, len, SIZE_MAX);
    fprintf(c->out, ": %" PRIu64 " %s (%" PRIu64 ".%02" PRIu64 "%%)</title>", n->total,
            unit_name(c->f, n->total), pct / 100, pct % 100);
    fprintf(c->out, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"", x, y,
            w, FLAME_FRAME_H - 1);
    put_colour(c->out, name, len);
    /* a thin outline in the background colour keeps neighbours apart
     * without changing any width */
    fputs("\" stroke=\"" FLAME_BACKGROUND "\" stroke-width=\"0.5\"/>", c->out);
    double chars = (w - 6) / FLAME_CHAR_PX;
    if (chars >= 3) {
        fprintf(c->out, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + 12);
        flame_write_text(c->out, name, len, (size_t)chars);
        fputs("</text>", c->out);
    }
    fputs("</g>\n", c->out);
}

/* Draws the tree depth first without recursion (stacks can be deep).
 * Frames narrower than FLAME_MIN_PX, and so all their descendants, are
 * left out: their value stays inside the parent's width as unlabelled
 * room, so the root keeps its exact width and the others their shares. */
static int put_frames(const struct flame_ctx *c)
{
    const double gw = FLAME_WIDTH - 2 * FLAME_PAD;
    uint32_t n_nodes = fold_node_count(c->f);
    struct todo {
        uint32_t node;
        uint64_t offset;
    } *todo = malloc((size_t)n_nodes * sizeof *todo);
    if (!todo)
        return -1;
    size_t top = 0;
    todo[top++] = (struct todo){FOLD_ROOT, 0};
    while (top > 0) {
        struct todo t = todo[--top];
        const struct fold_node *n = fold_node(c->f, t.node);
        put_frame(c, n, t.offset);
        /* children are pushed right to left so that they are written in
         * name order; the parent's self value lies after the last one */
        uint64_t end = t.offset + n->total - n->self;
        for (uint32_t i = n->n_children; i-- > 0;) {
            uint32_t child = fold_child(c->f, n, i);
            uint64_t v = fold_node(c->f, child)->total;
            end -= v;
            if (gw * ((double)v / (double)c->root) >= FLAME_MIN_PX)
                todo[top++] = (struct todo){child, end};
        }
    }
    free(todo);
    return 0;
}

static void put_empty(FILE *out, const struct fold *f)
{
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" font-size=\"17\" text-anchor=\"middle\">no samples</text>\n",
            FLAME_WIDTH / 2, FLAME_TOP + 32);
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">nothing to draw: no %s with a "
            "Jett stack</text>\n",
            FLAME_WIDTH / 2, FLAME_TOP + 52,
            fold_mode(f) == WIRE_MODE_CPU ? "jett samples" : unit_name(f, 2));
}

int flame_write_svg(const struct fold *f, FILE *out)
{
    const struct fold_totals *t = fold_totals(f);
    uint32_t max_depth = fold_max_depth(f);
    bool empty = t->weight_attributed == 0;
    unsigned height =
        empty ? FLAME_EMPTY_H : FLAME_TOP + (max_depth + 1) * FLAME_FRAME_H + FLAME_BOTTOM;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%u\" viewBox=\"0 0 %d %u\" font-family=\"monospace\" font-size=\"12\">\n",
            FLAME_WIDTH, height, FLAME_WIDTH, height);
    fprintf(out,
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"" FLAME_BACKGROUND "\"/>\n",
            FLAME_WIDTH, height);
    put_heading(out, f);
    struct flame_ctx c = {out, f, t->weight_attributed, max_depth};
    if (empty)
        put_empty(out, f);
    else if (put_frames(&c) != 0)
        return -1;
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
