/* timeline: live bytes over allocated bytes, from the aggregation's
 * stream of live changes (see timeline.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/export/timeline.h"
#include "daemon/feed.h"
#include "daemon/render.h"

/* Column points kept while reading: the start, the peak and the end make
 * up the rest of TIMELINE_POINTS. */
#define COLUMNS_MAX (TIMELINE_POINTS - 3)

/* A creation site's live bytes while reading, with the value at the
 * latest global peak kept lazily as the aggregation does: `at_peak` is
 * it once the site changed after that peak (last_change > peak_event),
 * otherwise `live` still is. */
struct site_state {
    uint64_t live, max_live, at_peak, last_change;
    uint32_t dirty; /* 1 + its index in the dirty list, 0: clean */
    uint32_t stamp; /* merging: the last group that took its value */
};

/* A site's value at a point: a column point lists the sites that changed
 * since the point before it. */
struct delta {
    uint32_t site;
    uint64_t value;
};

struct column {
    uint64_t col, event, x, total;
    size_t first, n; /* its deltas */
};

struct reader {
    const struct agg *g;
    bool nomem;
    struct site_state *sites; /* by identity */
    uint32_t n_sites;
    uint32_t *dirty;
    uint32_t n_dirty;
    struct column *cols;
    uint32_t n_cols;
    struct delta *deltas;
    size_t n_deltas, deltas_cap;
    uint32_t group;
    unsigned shift; /* a column is 2^shift allocated bytes */
    bool open;      /* an event since the last closed column */
    uint64_t col, event, x, total, peak, peak_at, peak_event;
};

static int grow_sites(struct reader *r, uint32_t ident)
{
    if (ident < r->n_sites)
        return 0;
    uint32_t n = r->n_sites ? r->n_sites : 16;
    while (n <= ident)
        n *= 2;
    struct site_state *s = realloc(r->sites, (size_t)n * sizeof *s);
    uint32_t *d = s ? realloc(r->dirty, (size_t)n * sizeof *d) : NULL;
    if (s)
        r->sites = s;
    if (!s || !d)
        return r->nomem = true, -1;
    r->dirty = d;
    memset(s + r->n_sites, 0, (size_t)(n - r->n_sites) * sizeof *s);
    r->n_sites = n;
    return 0;
}

static int push_delta(struct reader *r, struct delta **arr, size_t *n, size_t *cap, struct delta d)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        struct delta *p = realloc(*arr, ncap * sizeof *p);
        if (!p)
            return r->nomem = true, -1;
        *arr = p, *cap = ncap;
    }
    (*arr)[(*n)++] = d;
    return 0;
}

/* Merges each run of columns with one column number into its last one:
 * the state at the run's end, each site's latest value. */
static void merge_runs(struct reader *r)
{
    struct delta *out = NULL;
    size_t n_out = 0, cap = 0;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->n_cols && !r->nomem;) {
        uint32_t j = i;
        while (j + 1 < r->n_cols && r->cols[j + 1].col == r->cols[i].col)
            j++;
        struct column c = r->cols[j];
        c.first = n_out;
        r->group++;
        for (uint32_t k = j + 1; k-- > i;)
            for (size_t m = 0; m < r->cols[k].n; m++) {
                struct delta d = r->deltas[r->cols[k].first + m];
                if (r->sites[d.site].stamp == r->group)
                    continue;
                r->sites[d.site].stamp = r->group;
                push_delta(r, &out, &n_out, &cap, d);
            }
        c.n = n_out - c.first;
        r->cols[kept++] = c;
        i = j + 1;
    }
    if (r->nomem) {
        free(out);
        return;
    }
    free(r->deltas);
    r->deltas = out, r->n_deltas = n_out, r->deltas_cap = cap;
    r->n_cols = kept;
}

/* Ends the open column with the state reached (before the event that
 * leaves it): its point and the sites changed since the last one. */
static void close_column(struct reader *r)
{
    if (!r->cols && !(r->cols = malloc((COLUMNS_MAX + 1) * sizeof *r->cols))) {
        r->nomem = true;
        return;
    }
    struct column c = {r->col, r->event, r->x, r->total, r->n_deltas, r->n_dirty};
    for (uint32_t i = 0; i < r->n_dirty; i++) {
        uint32_t s = r->dirty[i];
        r->sites[s].dirty = 0;
        if (push_delta(r, &r->deltas, &r->n_deltas, &r->deltas_cap,
                       (struct delta){s, r->sites[s].live}) != 0)
            return;
    }
    r->n_dirty = 0;
    r->cols[r->n_cols++] = c;
    r->open = false;
    while (r->n_cols > COLUMNS_MAX && !r->nomem) {
        r->shift++;
        for (uint32_t i = 0; i < r->n_cols; i++)
            r->cols[i].col >>= 1;
        merge_runs(r);
    }
}

/* The aggregation's report of one change (agg_watch_live). */
static void on_live(void *ctx, uint32_t node, uint64_t delta, uint64_t allocated)
{
    struct reader *r = ctx;
    if (r->nomem)
        return;
    uint64_t col = allocated >> r->shift;
    if (r->open && col != r->col)
        close_column(r);
    /* merging may have widened the columns */
    r->col = allocated >> r->shift;
    r->event++;
    r->x = allocated;
    r->total += delta;
    uint32_t parent, ident;
    if (node != UINT32_MAX && attrib_node(r->g, node, &parent, &ident) &&
        grow_sites(r, ident) == 0) {
        struct site_state *s = &r->sites[ident];
        if (s->last_change <= r->peak_event)
            s->at_peak = s->live;
        s->live += delta;
        s->last_change = r->event;
        if (s->live > s->max_live)
            s->max_live = s->live;
        if (!s->dirty) {
            r->dirty[r->n_dirty++] = ident;
            s->dirty = r->n_dirty;
        }
    }
    if (r->total > r->peak)
        r->peak = r->total, r->peak_at = allocated, r->peak_event = r->event;
    r->open = true;
}

/* ---- the result ---- */

static char *copy(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (p)
        memcpy(p, s, len), p[len] = 0;
    return p;
}

static int describe(const struct agg *g, uint32_t ident, const struct site_state *s,
                    struct timeline_site *out)
{
    struct attrib_ident d;
    attrib_ident(g, ident, &d);
    out->name_len = (size_t)d.ns_len + 1 + d.name_len;
    out->name = malloc(out->name_len + 1);
    const char *path = "";
    size_t path_len = 0;
    if (d.source != ATTRIB_NONE) {
        struct attrib_source src;
        attrib_source(g, d.source, &src);
        path = src.path, path_len = src.path_len;
    }
    out->path = copy(path, path_len);
    if (!out->name || !out->path)
        return -1;
    memcpy(out->name, d.ns, d.ns_len);
    out->name[d.ns_len] = '.';
    memcpy(out->name + d.ns_len + 1, d.name, d.name_len);
    out->name[out->name_len] = 0;
    out->line = attrib_ident_line(g, ident);
    out->max_live = s->max_live;
    out->retained = s->live;
    return 0;
}

/* The top sites by their own maximum (then by identity, for a stable
 * order), and the site retaining the most. */
static int pick_sites(struct timeline *t, const struct reader *r, uint32_t *top)
{
    uint32_t n = 0, grower = UINT32_MAX;
    for (uint32_t i = 0; i < r->n_sites; i++) {
        const struct site_state *s = &r->sites[i];
        if (s->live > 0 && (grower == UINT32_MAX || s->live > r->sites[grower].live))
            grower = i;
        if (s->max_live == 0)
            continue;
        uint32_t k = n < TIMELINE_TOP_SITES ? n++ : n;
        if (k == TIMELINE_TOP_SITES && s->max_live <= r->sites[top[k - 1]].max_live)
            continue;
        if (k == TIMELINE_TOP_SITES)
            k--;
        while (k > 0 && r->sites[top[k - 1]].max_live < s->max_live)
            top[k] = top[k - 1], k--;
        top[k] = i;
    }
    t->n_sites = n;
    for (uint32_t k = 0; k < n; k++)
        if (describe(r->g, top[k], &r->sites[top[k]], &t->sites[k]) != 0)
            return -1;
    t->has_grower = grower != UINT32_MAX;
    return t->has_grower ? describe(r->g, grower, &r->sites[grower], &t->grower) : 0;
}

/* One point of the series: x, total and the top sites' values. */
static void put_point(struct timeline *t, uint32_t i, uint64_t x, uint64_t total,
                      const uint64_t *vals)
{
    t->x[i] = x, t->total[i] = total;
    for (uint32_t k = 0; k < t->n_sites; k++)
        t->values[(size_t)k * t->n_points + i] = vals[k];
}

/* Lays out start, columns, peak (in event order) and end. */
static int build_series(struct timeline *t, struct reader *r)
{
    uint32_t top[TIMELINE_TOP_SITES];
    if (pick_sites(t, r, top) != 0)
        return -1;
    uint32_t *rank = calloc(r->n_sites ? r->n_sites : 1, sizeof *rank); /* 1 + top index */
    t->n_points = r->n_cols + 3;
    t->x = malloc(t->n_points * sizeof *t->x);
    t->total = malloc(t->n_points * sizeof *t->total);
    t->values = calloc((size_t)t->n_points * (t->n_sites ? t->n_sites : 1), sizeof *t->values);
    if (!rank || !t->x || !t->total || !t->values) {
        free(rank);
        return -1;
    }
    for (uint32_t k = 0; k < t->n_sites; k++)
        rank[top[k]] = k + 1;
    uint64_t run[TIMELINE_TOP_SITES] = {0}, at_peak[TIMELINE_TOP_SITES], end[TIMELINE_TOP_SITES];
    for (uint32_t k = 0; k < t->n_sites; k++) {
        const struct site_state *s = &r->sites[top[k]];
        at_peak[k] = s->last_change <= r->peak_event ? s->live : s->at_peak;
        end[k] = s->live;
    }
    uint32_t p = 0;
    put_point(t, p++, 0, 0, run);
    bool peak_done = r->peak_event == 0;
    for (uint32_t c = 0; c < r->n_cols; c++) {
        const struct column *col = &r->cols[c];
        if (!peak_done && r->peak_event <= col->event) {
            t->peak_point = p;
            put_point(t, p++, r->peak_at, r->peak, at_peak);
            peak_done = true;
        }
        for (size_t m = 0; m < col->n; m++) {
            const struct delta *d = &r->deltas[col->first + m];
            if (rank[d->site])
                run[rank[d->site] - 1] = d->value;
        }
        if (col->event != r->peak_event)
            put_point(t, p++, col->x, col->total, run);
    }
    if (!peak_done) {
        t->peak_point = p;
        put_point(t, p++, r->peak_at, r->peak, at_peak);
    }
    if (r->event != r->peak_event || r->event == 0)
        put_point(t, p++, r->x, r->total, end);
    free(rank);
    /* the points put are fewer than reserved when the peak was a column's end */
    for (uint32_t k = 1; k < t->n_sites && p < t->n_points; k++)
        memmove(t->values + (size_t)k * p, t->values + (size_t)k * t->n_points,
                p * sizeof(uint64_t));
    t->n_points = p;
    return 0;
}

/* Aggregates the whole capture, watching the live bytes: 1 when reading
 * stopped at damage (message in err), else 0. */
static int aggregate(struct agg *g, struct reader *r, struct capture_reader *cr, char *err,
                     size_t errlen)
{
    agg_keep_detail(g);
    agg_watch_live(g, on_live, r);
    int damaged = feed_capture(g, cr, err, errlen);
    agg_end(g);
    agg_release_records(g);
    return damaged;
}

static enum timeline_status finish(struct timeline *t, struct reader *r, const struct agg *g,
                                   char *err, size_t errlen)
{
    if (agg_mode(g) != WIRE_MODE_MEMORY)
        return snprintf(err, errlen, "--format timeline needs a memory capture, not a CPU capture"),
               TIMELINE_E_MODE;
    if (!attrib_mem_exact(g))
        return snprintf(err, errlen,
                        "--format timeline is unavailable: the profile is partial "
                        "(retention_metadata_limit) and stopped tracking live allocations"),
               TIMELINE_E_UNAVAILABLE;
    enum agg_reason reason;
    if (agg_status(g, &reason) != AGG_COMPLETE)
        t->partial = agg_reason_name(reason);
    struct attrib_mem_totals m;
    attrib_mem_totals(g, &m);
    t->allocated = m.allocated_bytes;
    t->peak = r->peak, t->peak_at = r->peak_at, t->retained = r->total;
    if (r->nomem || build_series(t, r) != 0)
        return snprintf(err, errlen, "out of memory"), TIMELINE_E_NOMEM;
    return TIMELINE_OK;
}

enum timeline_status timeline_read(struct capture_reader *cr, struct timeline **out, char *err,
                                   size_t errlen)
{
    struct timeline *t = calloc(1, sizeof *t);
    struct agg *g = agg_new();
    struct reader r = {.g = g};
    enum timeline_status st = TIMELINE_OK;
    if (!t || !g)
        st = TIMELINE_E_NOMEM, snprintf(err, errlen, "out of memory");
    int damaged = st == TIMELINE_OK ? aggregate(g, &r, cr, err, errlen) : 0;
    if (damaged && !agg_has_hello(g))
        st = TIMELINE_E_CAPTURE;
    else if (damaged && !(t->damage = strdup(err)))
        st = TIMELINE_E_NOMEM, snprintf(err, errlen, "out of memory");
    if (st == TIMELINE_OK)
        st = finish(t, &r, g, err, errlen);
    agg_free(g);
    free(r.sites), free(r.dirty), free(r.cols), free(r.deltas);
    if (st != TIMELINE_OK) {
        timeline_free(t);
        return st;
    }
    *out = t;
    return TIMELINE_OK;
}

static void site_free(struct timeline_site *s)
{
    free(s->name), free(s->path);
}

void timeline_free(struct timeline *t)
{
    if (!t)
        return;
    for (uint32_t k = 0; k < t->n_sites; k++)
        site_free(&t->sites[k]);
    if (t->has_grower)
        site_free(&t->grower);
    free(t->damage), free(t->x), free(t->total), free(t->values);
    free(t);
}

/* ---- the summary ---- */

void timeline_write_summary(const struct timeline *t, FILE *out)
{
    fprintf(out,
            "jett: timeline: peak %" PRIu64 " bytes live at %" PRIu64
            " bytes allocated; retained at exit %" PRIu64 " bytes of %" PRIu64 " allocated\n",
            t->peak, t->peak_at, t->retained, t->allocated);
    if (!t->has_grower) {
        fputs("jett: timeline: no site holds memory at exit\n", out);
        return;
    }
    const struct timeline_site *s = &t->grower;
    fputs("jett: timeline: largest growing site: ", out);
    render_escaped(out, s->name, s->name_len);
    if (s->path[0]) {
        fputs(" (", out);
        render_escaped(out, s->path, strlen(s->path));
        if (s->line)
            fprintf(out, ":%" PRIu32, s->line);
        fputs(")", out);
    }
    fprintf(out, ", %" PRIu64 " bytes retained at exit (at most %" PRIu64 " live)\n", s->retained,
            s->max_live);
}
