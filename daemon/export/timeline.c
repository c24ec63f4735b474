/* timeline: live bytes over allocated bytes, from the aggregation's
 * stream of live changes (see timeline.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/attrib.h"
#include "daemon/escape.h"
#include "daemon/export/timeline.h"
#include "daemon/feed.h"
#include "daemon/render.h"

/* Changes applied to their sites and logged at once (struct first). */
#define PENDING 1024
/* How many changes ahead a batch loads the index entry and the state. */
#define AHEAD_INDEX 16
#define AHEAD_STATE 8

/* Column points kept while reading: the start, the peak, each drawn
 * site's maximum, the last allocation and the exit make up the rest of
 * TIMELINE_POINTS. */
#define COLUMNS_MAX (TIMELINE_POINTS - 4 - TIMELINE_TOP_SITES)

/* A creation site's live bytes in the first pass, and the change (and
 * the allocated bytes then) at which it first held its most. */
struct site_state {
    uint32_t key;
    uint64_t live, max_live;
    uint64_t max_event, max_x;
};

/* The state at the end of a column of allocated bytes: after `event`
 * changes (counted from 1). */
struct column {
    uint64_t col, event, x, total;
};

/* The first pass: the total's columns, the peak and every site's most. */
struct first {
    bool nomem;
    /* a site key (a bucket offset, so below the arena's size) -> its
     * index in `sites` + 1, 0: not seen; found without hashing or
     * probing, as every change looks its site up */
    uint32_t *index;
    uint32_t index_cap;
    struct site_state *sites; /* in the order sites first changed */
    uint32_t n_sites, sites_cap;
    struct column *cols;
    uint32_t n_cols;
    unsigned shift; /* a column is 2^shift allocated bytes */
    bool open;      /* a change since the last closed column */
    uint64_t col, event, x, total, peak, peak_at, peak_event;
    /* the last change that allocated (the allocated bytes grew): every
     * later one happened at exit, as far as the clock can tell */
    uint64_t grow_event, grow_x;
    /* the changes not yet applied to their sites: applied in batches,
     * loading each site's state ahead, since a site's state is a cache
     * miss; then appended to the log */
    FILE *log;
    int log_errno; /* the log's first write error, 0: none */
    uint32_t n_pending;
    uint32_t pending_key[PENDING];
    uint64_t pending_delta[PENDING], pending_x[PENDING];
};

/* Room for a site never seen: false when out of memory. */
static bool grow_sites(struct first *r, uint32_t key)
{
    if (key >= r->index_cap) {
        uint32_t ncap = r->index_cap ? r->index_cap : 1024;
        while (ncap <= key)
            ncap = ncap > UINT32_MAX / 2 ? UINT32_MAX : ncap * 2;
        uint32_t *n = realloc(r->index, (size_t)ncap * sizeof *n);
        if (!n)
            return false;
        memset(n + r->index_cap, 0, (size_t)(ncap - r->index_cap) * sizeof *n);
        r->index = n, r->index_cap = ncap;
    }
    if (r->n_sites == r->sites_cap) {
        uint32_t ncap = r->sites_cap ? r->sites_cap * 2 : 64;
        struct site_state *n =
            ncap > r->sites_cap ? realloc(r->sites, (size_t)ncap * sizeof *n) : NULL;
        if (!n)
            return false;
        r->sites = n, r->sites_cap = ncap;
    }
    return true;
}

static struct site_state *find_site(struct first *r, uint32_t key)
{
    uint32_t i = key < r->index_cap ? r->index[key] : 0;
    if (__builtin_expect(i != 0, 1))
        return &r->sites[i - 1];
    if (!grow_sites(r, key))
        return r->nomem = true, NULL;
    r->sites[r->n_sites] = (struct site_state){key, 0, 0, 0, 0};
    r->index[key] = ++r->n_sites;
    return &r->sites[r->n_sites - 1];
}

/* Applies the pending changes to their sites, in stream order, and logs
 * them for the second pass: a block of their count, keys and changes. */
static void apply_pending(struct first *r)
{
    uint32_t n = r->n_pending;
    r->n_pending = 0;
    errno = 0;
    if (n > 0 && !r->log_errno &&
        (fwrite(&n, sizeof n, 1, r->log) != 1 ||
         fwrite(r->pending_key, sizeof *r->pending_key, n, r->log) != n ||
         fwrite(r->pending_delta, sizeof *r->pending_delta, n, r->log) != n))
        r->log_errno = errno ? errno : EIO;
    for (uint32_t i = 0; i < n && !r->nomem; i++) {
        if (r->pending_key[i] == UINT32_MAX)
            continue; /* no site: a part of "other" */
        if (i + AHEAD_INDEX < n && r->pending_key[i + AHEAD_INDEX] < r->index_cap)
            __builtin_prefetch(&r->index[r->pending_key[i + AHEAD_INDEX]]);
        if (i + AHEAD_STATE < n) {
            uint32_t k = r->pending_key[i + AHEAD_STATE];
            uint32_t j = k < r->index_cap ? r->index[k] : 0;
            if (j)
                __builtin_prefetch(&r->sites[j - 1], 1);
        }
        struct site_state *s = find_site(r, r->pending_key[i]);
        if (s) {
            s->live += r->pending_delta[i];
            if (s->live > s->max_live) /* the changes pending end at r->event */
                s->max_live = s->live, s->max_event = r->event - n + 1 + i,
                s->max_x = r->pending_x[i];
        }
    }
}

/* Ends the open column with the state reached (before the change that
 * leaves it); past the bound, columns double in width, each merged run
 * keeping its last state. */
static void close_column(struct first *r)
{
    if (!r->cols && !(r->cols = malloc((COLUMNS_MAX + 1) * sizeof *r->cols))) {
        r->nomem = true;
        return;
    }
    r->cols[r->n_cols++] = (struct column){r->col, r->event, r->x, r->total};
    r->open = false;
    while (r->n_cols > COLUMNS_MAX) {
        r->shift++;
        uint32_t kept = 0;
        for (uint32_t i = 0; i < r->n_cols; i++) {
            r->cols[i].col >>= 1;
            if (kept > 0 && r->cols[kept - 1].col == r->cols[i].col)
                kept--;
            r->cols[kept++] = r->cols[i];
        }
        r->n_cols = kept;
    }
}

/* The aggregation's report of one change (agg_watch_live), first pass. */
static void on_first(void *ctx, uint32_t key, uint64_t delta, uint64_t allocated)
{
    struct first *r = ctx;
    if (r->nomem)
        return;
    if (r->open && allocated >> r->shift != r->col)
        close_column(r);
    r->col = allocated >> r->shift; /* closing may have widened the columns */
    r->event++;
    if (allocated > r->x)
        r->grow_event = r->event, r->grow_x = allocated;
    r->x = allocated;
    r->total += delta;
    r->pending_key[r->n_pending] = key, r->pending_delta[r->n_pending] = delta;
    r->pending_x[r->n_pending] = allocated;
    if (++r->n_pending == PENDING)
        apply_pending(r);
    if (r->total > r->peak)
        r->peak = r->total, r->peak_at = allocated, r->peak_event = r->event;
    r->open = true;
}

/* The second pass: the chosen sites' values after the points' changes. */
struct second {
    struct timeline *t;
    const uint32_t *keys;  /* the chosen sites' keys */
    const uint64_t *after; /* each point's change count, increasing from 1 */
    uint32_t next;         /* the next point to fill */
    uint64_t event, total;
    uint64_t vals[TIMELINE_TOP_SITES];
};

static void on_second(void *ctx, uint32_t key, uint64_t delta, uint64_t allocated)
{
    (void)allocated;
    struct second *r = ctx;
    struct timeline *t = r->t;
    r->event++;
    r->total += delta;
    for (uint32_t k = 0; k < t->n_sites; k++)
        if (r->keys[k] == key)
            r->vals[k] += delta;
    for (; r->next < t->n_points && r->after[r->next] == r->event; r->next++) {
        t->total[r->next] = r->total;
        for (uint32_t k = 0; k < t->n_sites; k++)
            t->values[(size_t)k * t->n_points + r->next] = r->vals[k];
    }
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

static int describe_unknown(const struct site_state *s, struct timeline_site *out)
{
    static const char name[] = "<unknown-site>";
    *out = (struct timeline_site){
        copy(name, sizeof name - 1), sizeof name - 1, copy("", 0), 0, s->max_live, s->live};
    return out->name && out->path ? 0 : -1;
}

/* Whether site a ranks before b: the larger maximum, then the site that
 * allocated first (keys grow in the order sites first allocate). */
static bool ranks_before(const struct site_state *a, const struct site_state *b)
{
    return a->max_live != b->max_live ? a->max_live > b->max_live : a->key < b->key;
}

static bool holds_more(const struct site_state *a, const struct site_state *b)
{
    return a->live != b->live ? a->live > b->live : a->key < b->key;
}

/* The top sites by their own maximum and the site retaining the most;
 * their names, found by key among the identities. */
static int pick_sites(struct timeline *t, const struct first *r, const struct agg *g,
                      uint32_t *keys, const struct site_state **chosen)
{
    const struct site_state *top[TIMELINE_TOP_SITES], *grower = NULL;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_sites; i++) {
        const struct site_state *s = &r->sites[i];
        if (s->live > 0 && (!grower || holds_more(s, grower)))
            grower = s;
        if (s->max_live == 0 || (n == TIMELINE_TOP_SITES && !ranks_before(s, top[n - 1])))
            continue;
        uint32_t k = n < TIMELINE_TOP_SITES ? n++ : n - 1;
        while (k > 0 && ranks_before(s, top[k - 1]))
            top[k] = top[k - 1], k--;
        top[k] = s;
    }
    t->n_sites = n;
    t->has_grower = grower != NULL;
    for (uint32_t k = 0; k < n; k++)
        keys[k] = top[k]->key, chosen[k] = top[k];
    for (uint32_t i = 0; i < attrib_ident_count(g); i++) {
        uint32_t key = attrib_site_key(g, i);
        for (uint32_t k = 0; k < n; k++)
            if (key == keys[k] && describe(g, i, top[k], &t->sites[k]) != 0)
                return -1;
        if (grower && key == grower->key && describe(g, i, grower, &t->grower) != 0)
            return -1;
    }
    /* every site has an identity; should one not, it still gets a name */
    for (uint32_t k = 0; k < n; k++)
        if (!t->sites[k].name && describe_unknown(top[k], &t->sites[k]) != 0)
            return -1;
    return grower && !t->grower.name ? describe_unknown(grower, &t->grower) : 0;
}

/* A point of the series: after `event` changes, at x allocated bytes. */
struct mark {
    uint64_t event, x;
};

static int by_event(const void *a, const void *b)
{
    const struct mark *x = a, *y = b;
    return (x->event > y->event) - (x->event < y->event);
}

/* Lays out the points from the first pass, in change order: the start,
 * each column's end, the peak, the first moment each drawn site held its
 * most (so that every maximum the legend gives is drawn), the state
 * after the last change that allocated, each once; then the exit, the
 * final state, always last (drawn apart: the changes after the last
 * allocation, such as what is freed at exit, have no clock of their
 * own).  `after` gets each point's change count; the totals and values
 * are the second pass's. */
static int lay_out(struct timeline *t, const struct first *r, const struct site_state **chosen,
                   uint64_t **after)
{
    uint32_t cap = r->n_cols + 4 + TIMELINE_TOP_SITES, n = 0;
    struct mark *m = malloc(cap * sizeof *m);
    t->x = malloc(cap * sizeof *t->x);
    t->total = calloc(cap, sizeof *t->total);
    *after = malloc(cap * sizeof **after);
    if (!m || !t->x || !t->total || !*after)
        return free(m), -1;
    m[n++] = (struct mark){0, 0};
    for (uint32_t c = 0; c < r->n_cols; c++)
        m[n++] = (struct mark){r->cols[c].event, r->cols[c].x};
    m[n++] = (struct mark){r->peak_event, r->peak_at};
    for (uint32_t k = 0; k < t->n_sites; k++)
        m[n++] = (struct mark){chosen[k]->max_event, chosen[k]->max_x};
    m[n++] = (struct mark){r->grow_event, r->grow_x};
    qsort(m, n, sizeof *m, by_event); /* the start stays first: event 0 */
    uint32_t p = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (p > 0 && m[i].event == (*after)[p - 1])
            continue;
        if (m[i].event == r->peak_event)
            t->peak_point = p;
        (*after)[p] = m[i].event, t->x[p] = m[i].x, p++;
    }
    (*after)[p] = r->event, t->x[p] = r->x, p++; /* the exit */
    free(m);
    t->n_points = p;
    t->values = calloc((size_t)p * (t->n_sites ? t->n_sites : 1), sizeof *t->values);
    return t->values ? 0 : -1;
}

/* The folder of the log: $TMPDIR, or /tmp when it is unset or empty. */
static const char *log_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && dir[0] ? dir : "/tmp";
}

/* The log of the first pass's changes: a temporary file, gone once
 * closed.  NULL with errno set when it cannot be made. */
static FILE *log_open(void)
{
    const char *dir = log_dir();
    size_t n = strlen(dir) + sizeof "/jett-timeline-XXXXXX";
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/jett-timeline-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    free(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!f && fd >= 0) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

/* The second pass: the logged changes, in order, to on_second. */
static int replay_log(FILE *log, struct second *s)
{
    if (fflush(log) != 0 || fseek(log, 0, SEEK_SET) != 0)
        return -1;
    uint32_t n, keys[PENDING];
    uint64_t deltas[PENDING];
    while (fread(&n, sizeof n, 1, log) == 1) {
        if (n == 0 || n > PENDING || fread(keys, sizeof *keys, n, log) != n ||
            fread(deltas, sizeof *deltas, n, log) != n)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            on_second(s, keys[i], deltas[i], 0);
    }
    return ferror(log) ? -1 : 0;
}

/* After the first pass: what the capture allows, then the second. */
static enum timeline_status second_pass(struct timeline *t, struct first *r, const struct agg *g,
                                        char *err, size_t errlen)
{
    if (agg_mode(g) != WIRE_MODE_MEMORY)
        return snprintf(err, errlen, "--format timeline needs a memory capture, not a CPU capture"),
               TIMELINE_E_MODE;
    const char *gap = attrib_live_gap(g, true); /* it ends with the bytes retained at exit */
    if (gap)
        return snprintf(err, errlen, "--format timeline is unavailable: %s", gap),
               TIMELINE_E_UNAVAILABLE;
    enum agg_reason reason;
    if (agg_status(g, &reason) != AGG_COMPLETE)
        t->partial = agg_reason_name(reason);
    struct attrib_mem_totals m;
    attrib_mem_totals(g, &m);
    t->allocated = m.allocated_bytes;
    t->peak = r->peak, t->peak_at = r->peak_at, t->retained = r->total;
    uint32_t keys[TIMELINE_TOP_SITES];
    const struct site_state *chosen[TIMELINE_TOP_SITES];
    uint64_t *after = NULL;
    if (r->nomem || pick_sites(t, r, g, keys, chosen) != 0 || lay_out(t, r, chosen, &after) != 0) {
        free(after);
        return snprintf(err, errlen, "out of memory"), TIMELINE_E_NOMEM;
    }
    struct second s = {t, keys, after, 1, 0, 0, {0}};
    if (r->log_errno)
        return snprintf(err, errlen, "cannot write the temporary file of the changes: %s",
                        strerror(r->log_errno)),
               free(after), TIMELINE_E_TEMP;
    int rc = replay_log(r->log, &s);
    free(after);
    if (rc != 0 || s.event != r->event || s.total != r->total)
        return snprintf(err, errlen, "cannot read back the temporary file of the changes: %s",
                        rc != 0 && errno ? strerror(errno) : "it changed"),
               TIMELINE_E_TEMP;
    return TIMELINE_OK;
}

enum timeline_status timeline_read(struct capture_reader *cr, struct timeline **out, char *err,
                                   size_t errlen)
{
    struct timeline *t = calloc(1, sizeof *t);
    struct first *r = calloc(1, sizeof *r);
    struct agg *g = t && r ? agg_new() : NULL;
    if (!g) {
        free(t), free(r);
        return snprintf(err, errlen, "out of memory"), TIMELINE_E_NOMEM;
    }
    enum timeline_status st = TIMELINE_OK;
    if (!(r->log = log_open())) {
        /* the folder the user named, shown as every name is */
        int e = errno;
        char *dir = escape_dup(log_dir(), strlen(log_dir()), NULL);
        snprintf(err, errlen, "cannot make a temporary file for the changes in %s%s: %s",
                 dir ? dir : "?", getenv("TMPDIR") && getenv("TMPDIR")[0] ? " (TMPDIR)" : "",
                 strerror(e));
        free(dir);
        st = TIMELINE_E_TEMP;
    }
    if (st == TIMELINE_OK) {
        agg_watch_live(g, on_first, r);
        int damaged = feed_capture(g, cr, err, errlen);
        agg_end(g);
        agg_release_records(g);
        apply_pending(r);
        if (damaged && !agg_has_hello(g))
            st = TIMELINE_E_CAPTURE;
        else if (damaged && !(t->damage = strdup(err)))
            st = TIMELINE_E_NOMEM, snprintf(err, errlen, "out of memory");
    }
    if (st == TIMELINE_OK)
        st = second_pass(t, r, g, err, errlen);
    agg_free(g);
    if (r->log)
        fclose(r->log);
    free(r->index), free(r->sites), free(r->cols), free(r);
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
