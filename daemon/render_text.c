/* render_text: numbers, sizes, shares and places as the human report
 * writes them (jett-profile(7), "Human report"). */
#include "daemon/escape.h"
#include "daemon/render-internal.h"
#include "daemon/render.h"

void render_escaped(FILE *f, const char *s, size_t n)
{
    escape_fwrite(f, s, n);
}

void render_put_str(FILE *f, struct rank_str s)
{
    if (s.ptr == NULL)
        fputs("unavailable", f);
    else
        render_escaped(f, s.ptr, s.len);
}

void render_put_num(FILE *f, uint64_t v)
{
    if (v == RANK_NA)
        fputs("unavailable", f);
    else
        fprintf(f, "%llu", (unsigned long long)v);
}

/* A count with its noun, singular for one: "1 sample", "2 samples". */
void render_put_count(FILE *f, uint64_t n, const char *noun)
{
    fprintf(f, "%llu %s%s", (unsigned long long)n, noun, n == 1 ? "" : "s");
}

/* A byte count from 1024 up in the largest binary unit whose value,
 * rounded half away from zero to hundredths, is at least 1.00 and below
 * 1024.00: "1.50 KiB". */
static void render_put_scaled(FILE *f, uint64_t v)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    unsigned __int128 d = 1024, h;
    for (;;) {
        h = ((unsigned __int128)v * 200 + d) / (d * 2);
        if (h < 102400 || u == 5)
            break;
        d *= 1024, u++;
    }
    fprintf(f, "%llu.%02llu %s", (unsigned long long)(h / 100), (unsigned long long)(h % 100),
            units[u]);
}

/* A byte count as people read it, with the exact number beside it:
 * "760 bytes", "1.50 KiB (1536 bytes)".  Without `unit` the plain
 * "bytes" is left out. */
void render_put_size(FILE *f, uint64_t v, bool unit)
{
    if (v < 1024) {
        fprintf(f, unit ? "%llu byte%s" : "%llu", (unsigned long long)v, v == 1 ? "" : "s");
        return;
    }
    render_put_scaled(f, v);
    fprintf(f, " (%llu%s)", (unsigned long long)v, unit ? " bytes" : "");
}

/* The same without the exact number: "760 bytes", "1.50 KiB". */
void render_put_short_size(FILE *f, uint64_t v)
{
    if (v < 1024)
        fprintf(f, "%llu byte%s", (unsigned long long)v, v == 1 ? "" : "s");
    else
        render_put_scaled(f, v);
}

/* A byte count: exact whatever its value, or unavailable. */
void render_put_bytes(FILE *f, uint64_t v, bool unavailable)
{
    if (unavailable)
        fputs("unavailable", f);
    else
        render_put_size(f, v, true);
}

/* Hundredths padded to two decimals: 34.10. */
void render_put_hundredths(FILE *f, uint64_t h)
{
    if (h == RANK_NA)
        fputs("unavailable", f);
    else
        fprintf(f, "%llu.%02llu", (unsigned long long)(h / 100), (unsigned long long)(h % 100));
}

void render_put_line(FILE *f, const char *label, uint64_t v, const char *unit)
{
    fprintf(f, "  %-22s", label);
    render_put_num(f, v);
    if (v != RANK_NA && unit)
        fputs(unit, f);
    fputc('\n', f);
}

void render_put_byte_line(FILE *f, const char *label, uint64_t v, bool unavailable)
{
    fprintf(f, "  %-22s", label);
    if (unavailable)
        fputs("unavailable", f);
    else
        render_put_size(f, v, false); /* the label says bytes */
    fputc('\n', f);
}

/* n of d as a share with two decimals (d > 0). */
void render_put_share(FILE *f, uint64_t n, uint64_t d)
{
    render_put_hundredths(f, rank_percent_hundredths(n, d));
    fputc('%', f);
}

/* PATH:LINE[:COLUMN], or "(no source)" for a frame without one. */
void render_put_location(FILE *f, struct rank_str path, uint64_t line, uint64_t column)
{
    if (path.ptr == NULL) {
        fputs("(no source)", f);
        return;
    }
    render_put_str(f, path);
    if (line == RANK_NA) { /* "path:unavailable" would read as a line named so */
        fputs(" (line unavailable)", f);
        return;
    }
    fputc(':', f);
    render_put_num(f, line);
    if (column != RANK_NA) {
        fputc(':', f);
        render_put_num(f, column);
    }
}

/* " (PATH:LINE)", or " (no source)". */
void render_put_paren_location(FILE *f, struct rank_str path, uint64_t line)
{
    fputs(path.ptr ? " (" : " ", f);
    render_put_location(f, path, line, RANK_NA);
    if (path.ptr)
        fputc(')', f);
}
