/* timeline_svg: the memory timeline drawn as a stacked area chart.
 *
 * Deterministic and self-contained (no script, no external resource).
 * The exact numbers ride along as data attributes, so that a reader (or
 * a test) need not measure the drawing: on the root the peak, where it
 * was, the retained and allocated bytes; on the series group the points'
 * x and totals; on each area its site and values, and a site's the most
 * it held and what it retained.  The allocated bytes run along the axis
 * up to TL_AXIS_END; the last point, the exit, is a step of its own
 * right of it, so that what was freed after the last allocation shows. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/flame.h"
#include "daemon/export/timeline.h"

#define TL_WIDTH 1200
#define TL_LEFT 100
#define TL_RIGHT 1170
#define TL_AXIS_END 1110 /* the allocated bytes' end; the exit step after it */
#define TL_EXIT 1130     /* where the exit step starts */
#define TL_TOP 104
#define TL_BOTTOM 454
#define TL_LEGEND 512 /* the first legend row's baseline */
#define TL_ROW 18
#define TL_TICKS 4
#define TL_NAME_CHARS 80
#define TL_BACKGROUND "rgb(253,250,245)"

static const char *const palette[TIMELINE_TOP_SITES] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                        "#59a14f"};
#define TL_OTHER_COLOUR "#bab0ac"

struct scale {
    double x_max, y_max;
};

static double px(const struct scale *s, uint64_t x)
{
    return TL_LEFT + (TL_AXIS_END - TL_LEFT) * ((double)x / s->x_max);
}

static double py(const struct scale *s, uint64_t y)
{
    return TL_BOTTOM - (TL_BOTTOM - TL_TOP) * ((double)y / s->y_max);
}

/* A byte count for an axis: "512 B", "1.5 KiB", "20.0 MiB". */
static void put_bytes_short(FILE *out, double v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0])
        v /= 1024, u++;
    if (u == 0)
        fprintf(out, "%.0f %s", v, units[u]);
    else
        fprintf(out, "%.1f %s", v, units[u]);
}

static void put_axes(FILE *out, const struct scale *s)
{
    fprintf(out,
            "<g stroke=\"#888\" stroke-width=\"1\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
            "y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
            TL_LEFT, TL_BOTTOM, TL_RIGHT, TL_BOTTOM, TL_LEFT, TL_TOP, TL_LEFT, TL_BOTTOM);
    for (int i = 0; i <= TL_TICKS; i++) {
        double yv = s->y_max * i / TL_TICKS, xv = s->x_max * i / TL_TICKS;
        double y = TL_BOTTOM - (double)(TL_BOTTOM - TL_TOP) * i / TL_TICKS;
        double x = TL_LEFT + (double)(TL_AXIS_END - TL_LEFT) * i / TL_TICKS;
        fprintf(out, "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">", TL_LEFT - 6, y + 4);
        put_bytes_short(out, yv);
        fprintf(out, "</text><line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#ddd\"/>\n",
                TL_LEFT + 1, y, TL_RIGHT, y);
        /* the last label ends at the axis' end, inside the picture */
        fprintf(out, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"%s\">", x, TL_BOTTOM + 16,
                i == TL_TICKS ? "end" : "middle");
        put_bytes_short(out, xv);
        fputs("</text>\n", out);
    }
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">allocated bytes so far (time)</text>\n",
            (TL_LEFT + TL_AXIS_END) / 2, TL_BOTTOM + 32);
    fprintf(out,
            "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">"
            "live Jett-heap bytes</text>\n",
            (TL_TOP + TL_BOTTOM) / 2, (TL_TOP + TL_BOTTOM) / 2);
}

/* The exit, apart from the axis, over the bands: what changed after the
 * last allocation, at no allocated byte of its own. */
static void put_exit(FILE *out)
{
    fprintf(
        out,
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555\" "
        "stroke-dasharray=\"2 2\"/><text x=\"%d\" y=\"%d\" text-anchor=\"middle\">exit</text>\n",
        (TL_AXIS_END + TL_EXIT) / 2, TL_TOP, (TL_AXIS_END + TL_EXIT) / 2, TL_BOTTOM,
        (TL_EXIT + TL_RIGHT) / 2, TL_BOTTOM + 16);
}

static void put_numbers(FILE *out, const char *attr, const uint64_t *v, uint32_t n)
{
    fprintf(out, " %s=\"", attr);
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s%" PRIu64, i ? " " : "", v[i]);
    fputc('"', out);
}

static void put_site_label(FILE *out, const struct timeline_site *s, size_t max_chars)
{
    flame_write_text(out, s->name, s->name_len, max_chars);
    if (s->path[0]) {
        fputs(" (", out);
        flame_write_text(out, s->path, strlen(s->path), max_chars);
        if (s->line)
            fprintf(out, ":%" PRIu32, s->line);
        fputc(')', out);
    }
}

/* How put_line writes a vertex: in a path's d (the first after M, the
 * others after L) or a polyline's points. */
enum tl_line { TL_PATH_FIRST, TL_PATH_MORE, TL_POINTS };

/* The vertices of a line through values y[i] of the points: each point
 * at its allocated bytes, but the last, the exit, as a step of its own
 * from TL_EXIT to TL_RIGHT (the value before it held until then);
 * backwards when `back`. */
static void put_line(FILE *out, const struct timeline *t, const struct scale *s, const uint64_t *y,
                     bool back, enum tl_line form)
{
    uint32_t n = t->n_points, last = n - 1;
    double vx[TIMELINE_POINTS + 2], vy[TIMELINE_POINTS + 2];
    uint32_t m = 0;
    for (uint32_t i = 0; i < last; i++)
        vx[m] = px(s, t->x[i]), vy[m++] = py(s, y[i]);
    if (last > 0)
        vx[m] = TL_EXIT, vy[m++] = py(s, y[last - 1]);
    vx[m] = TL_EXIT, vy[m++] = py(s, y[last]);
    vx[m] = TL_RIGHT, vy[m++] = py(s, y[last]);
    for (uint32_t k = 0; k < m; k++) {
        uint32_t j = back ? m - 1 - k : k;
        if (form == TL_POINTS)
            fprintf(out, "%s%.2f,%.2f", k ? " " : "", vx[j], vy[j]);
        else
            fprintf(out, "%s%.2f %.2f", k == 0 && form == TL_PATH_FIRST ? "M" : " L", vx[j], vy[j]);
    }
}

/* One band between the running sum `low` and low + v, as a closed path. */
static void put_band(FILE *out, const struct timeline *t, const struct scale *s,
                     const uint64_t *low, const uint64_t *v, uint64_t *high)
{
    for (uint32_t i = 0; i < t->n_points; i++)
        high[i] = low[i] + v[i];
    fputs(" d=\"", out);
    put_line(out, t, s, high, false, TL_PATH_FIRST);
    put_line(out, t, s, low, true, TL_PATH_MORE);
    fputs(" Z\"", out);
}

static int put_series(FILE *out, const struct timeline *t, const struct scale *s)
{
    uint32_t n = t->n_points;
    uint64_t *low = calloc(n, sizeof *low), *other = malloc(n * sizeof *other);
    uint64_t *high = malloc(n * sizeof *high);
    if (!low || !other || !high) {
        free(low), free(other), free(high);
        return -1;
    }
    fputs("<g id=\"series\"", out);
    put_numbers(out, "data-x", t->x, n);
    put_numbers(out, "data-total", t->total, n);
    fputs(">\n", out);
    for (uint32_t k = 0; k <= t->n_sites; k++) {
        const uint64_t *v = other;
        if (k < t->n_sites) {
            v = t->values + (size_t)k * n;
        } else {
            for (uint32_t i = 0; i < n; i++)
                other[i] = t->total[i] - low[i];
        }
        fputs("<path data-site=\"", out);
        if (k < t->n_sites)
            flame_write_text(out, t->sites[k].name, t->sites[k].name_len, SIZE_MAX);
        else
            fputs("other", out);
        fputc('"', out);
        put_numbers(out, "data-values", v, n);
        if (k < t->n_sites) /* what the legend gives: among the values, the last */
            fprintf(out, " data-max=\"%" PRIu64 "\" data-retained=\"%" PRIu64 "\"",
                    t->sites[k].max_live, t->sites[k].retained);
        fprintf(out, " fill=\"%s\" stroke=\"none\"", k < t->n_sites ? palette[k] : TL_OTHER_COLOUR);
        put_band(out, t, s, low, v, high);
        fputs("><title>", out);
        if (k < t->n_sites)
            put_site_label(out, &t->sites[k], SIZE_MAX);
        else
            fputs("other sites and allocations without a Jett stack", out);
        fputs("</title></path>\n", out);
        for (uint32_t i = 0; i < n; i++)
            low[i] += v[i];
    }
    fputs("<polyline id=\"total\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.2\" points=\"",
          out);
    put_line(out, t, s, t->total, false, TL_POINTS);
    fputs("\"/>\n</g>\n", out);
    free(low), free(other), free(high);
    return 0;
}

static void put_peak(FILE *out, const struct timeline *t, const struct scale *s)
{
    double x = px(s, t->peak_at), y = py(s, t->peak);
    fprintf(out, "<g id=\"peak\" data-bytes=\"%" PRIu64 "\" data-at=\"%" PRIu64 "\">", t->peak,
            t->peak_at);
    fprintf(out,
            "<title>peak: %" PRIu64 " bytes live at %" PRIu64 " bytes allocated</title>"
            "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#c00\" "
            "stroke-dasharray=\"4 3\"/><circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"#c00\"/>",
            t->peak, t->peak_at, x, TL_TOP - 6, x, TL_BOTTOM, x, y);
    bool left = x > (TL_LEFT + TL_RIGHT) / 2.0;
    fprintf(out, "<text x=\"%.2f\" y=\"%d\" fill=\"#c00\" text-anchor=\"%s\">peak ",
            left ? x - 6 : x + 6, TL_TOP - 8, left ? "end" : "start");
    put_bytes_short(out, (double)t->peak);
    fprintf(out, " (%" PRIu64 " bytes)</text></g>\n", t->peak);
}

static void put_legend(FILE *out, const struct timeline *t)
{
    for (uint32_t k = 0; k <= t->n_sites; k++) {
        int y = TL_LEGEND + (int)k * TL_ROW;
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", TL_LEFT,
                y - 10, k < t->n_sites ? palette[k] : TL_OTHER_COLOUR);
        fprintf(out, "<text x=\"%d\" y=\"%d\">", TL_LEFT + 18, y);
        if (k == t->n_sites) {
            fputs("other sites and allocations without a Jett stack</text>\n", out);
            continue;
        }
        const struct timeline_site *s = &t->sites[k];
        put_site_label(out, s, TL_NAME_CHARS);
        fprintf(out, ": at most %" PRIu64 " bytes live, %" PRIu64 " retained at exit</text>\n",
                s->max_live, s->retained);
    }
}

static void put_heading(FILE *out, const struct timeline *t)
{
    fputs("<text x=\"10\" y=\"22\" font-size=\"17\" font-weight=\"bold\">Memory over time: live "
          "Jett-heap bytes by creation site</text>\n",
          out);
    fprintf(out, "<text x=\"10\" y=\"42\">status: %s%s%s</text>\n",
            t->partial ? "partial (" : "complete", t->partial ? t->partial : "",
            t->partial ? ")" : "");
    fprintf(out,
            "<text x=\"10\" y=\"58\">peak: %" PRIu64 " bytes live at %" PRIu64
            " bytes allocated; retained at exit: %" PRIu64 " bytes; allocated: %" PRIu64
            " bytes</text>\n",
            t->peak, t->peak_at, t->retained, t->allocated);
    fprintf(out,
            "<text x=\"10\" y=\"74\">%" PRIu32 " points; the top %d sites by the most each held "
            "live at once, each drawn at its most; what changed after the last allocation at "
            "exit</text>\n",
            t->n_points, TIMELINE_TOP_SITES);
}

int timeline_write_svg(const struct timeline *t, FILE *out)
{
    unsigned height = TL_LEGEND + (t->n_sites + 1) * TL_ROW + 8;
    uint64_t x_last = t->n_points ? t->x[t->n_points - 1] : 0;
    struct scale s = {(double)(x_last > 0 ? x_last : 1), (double)(t->peak > 0 ? t->peak : 1)};
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%u\" "
            "viewBox=\"0 0 %d %u\" font-family=\"monospace\" font-size=\"12\" "
            "data-peak-bytes=\"%" PRIu64 "\" data-peak-at=\"%" PRIu64
            "\" data-retained-bytes=\"%" PRIu64 "\" data-allocated-bytes=\"%" PRIu64 "\">\n",
            TL_WIDTH, height, TL_WIDTH, height, t->peak, t->peak_at, t->retained, t->allocated);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"" TL_BACKGROUND "\"/>\n",
            TL_WIDTH, height);
    put_heading(out, t);
    put_axes(out, &s);
    if (put_series(out, t, &s) != 0)
        return -1;
    put_exit(out);
    if (t->peak == 0)
        fprintf(out,
                "<text x=\"%d\" y=\"%d\" font-size=\"17\" text-anchor=\"middle\">no live "
                "bytes: nothing to draw</text>\n",
                (TL_LEFT + TL_RIGHT) / 2, (TL_TOP + TL_BOTTOM) / 2);
    else
        put_peak(out, t, &s);
    put_legend(out, t);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
