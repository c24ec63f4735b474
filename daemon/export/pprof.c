/* pprof: the aggregation's per-node, per-line costs -> profile.proto (pprof.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/escape.h"
#include "daemon/export/diskpath.h"
#include "daemon/export/gzsink.h"
#include "daemon/export/pprof.h"
#include "daemon/export/export_run.h"
#include "profile.pb-c.h"
#include "proto/util/mix64.h"

typedef Perftools__Profiles__Profile pp_profile;
typedef Perftools__Profiles__Sample pp_sample;
typedef Perftools__Profiles__ValueType pp_value_type;
typedef Perftools__Profiles__Location pp_location;
typedef Perftools__Profiles__Line pp_line;
typedef Perftools__Profiles__Function pp_function;
typedef Perftools__Profiles__Mapping pp_mapping;
typedef Perftools__Profiles__Label pp_label;

/* Samples are packed a part at a time, each part a Profile holding only
 * samples: concatenated, protobuf's rule for repeated fields makes them
 * one Profile, and memory stays at one part, not at the whole output. */
#define PP_PART 4096
#define PP_MAX_VALUES 3

/* A sample waiting for its leaf location (the location of line `line`
 * in its node's function); task: its `task` label, 0 for none. */
struct pp_pending {
    uint32_t node, line, task;
    bool waiting; /* under a <runtime>.<waiting> leaf (--weight wall) */
    int64_t v[PP_MAX_VALUES];
};
/* How far ahead a sample's index slot is fetched: the index of a large
 * profile is far bigger than the cache, and looking a slot up as soon as
 * its sample is known waited for memory at almost every sample. */
#define PP_AHEAD 16

/* Sample type slots in memory mode. */
enum { PP_OBJECTS, PP_SPACE, PP_INUSE };

struct pp {
    const struct agg *a;
    bool cpu, inuse;        /* inuse: memory mode, and live bytes are known */
    bool wall;              /* cpu: every requested tick, the pseudo-frames of ticks.h */
    uint64_t waiting_drawn; /* wall: the waiting samples on a stack */
    uint64_t inuse_drawn;   /* memory: the in-use bytes on a stack */
    unsigned n_values;
    int64_t period; /* CPU: ns a sample stands for, 0 when the rate is unknown */
    bool nomem;
    /* with task attribution, samples by (stack node, task): each carries
     * its task as a numeric label, key `task_key` (added with the first) */
    bool by_task;
    uint32_t task_key;
    /* the string table; entry 0 is "" */
    char **str;
    uint32_t n_str, cap_str;
    /* per source and per identity */
    struct attrib_source *src;
    uint32_t n_src, *src_path;
    uint32_t n_fn, *fn_src, *fn_name, *fn_decl;
    /* locations: key ident << 32 | line; a location's id is its index + 1 */
    uint64_t *loc_key;
    uint32_t n_loc, cap_loc;
    uint32_t *loc_index, index_cap; /* open addressing, id (0: empty) */
    /* per stack node: its caller (ATTRIB_NONE at a root), identity
     * (ATTRIB_NONE: invalid) and the location of its caller's frame */
    uint32_t n_node, *parent, *ident, *caller_loc;
    /* the part being filled */
    pp_sample samples[PP_PART];
    pp_sample *sample_ptr[PP_PART];
    pp_label labels[PP_PART];
    pp_label *label_ptr[PP_PART];
    int64_t values[PP_PART * PP_MAX_VALUES];
    uint32_t n_part;
    /* samples whose leaf location is looked up PP_AHEAD samples later,
     * once its index slot was fetched: a ring from `queued` on */
    struct pp_pending queue[PP_AHEAD];
    uint32_t queued, n_queued;
    uint64_t *pool; /* location ids of the part's samples */
    size_t n_pool, cap_pool;
    /* a part's locations, while the location table is written */
    pp_location locs[PP_PART];
    pp_location *loc_ptr[PP_PART];
    pp_line lines[PP_PART];
    pp_line *line_ptr[PP_PART];
    uint64_t *callers; /* the caller frames' locations of node callers_of */
    size_t n_callers, cap_callers;
    uint32_t callers_of;
    uint8_t *packed; /* a part, packed */
    size_t cap_packed;
    struct gzsink sink;
};

static void *grow(struct pp *p, void *arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return arr;
    uint64_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = c <= UINT32_MAX ? realloc(arr, (size_t)c * elem) : NULL;
    if (!q) {
        p->nomem = true;
        return NULL;
    }
    *cap = (uint32_t)c;
    return q;
}

/* ---- strings ---- */

/* Adds a copy of s[0..len) (a NUL inside would end it early for
 * protobuf-c: it is cut there); its index, 0 when out of memory. */
static uint32_t add_string(struct pp *p, const char *s, size_t len)
{
    char **t = grow(p, p->str, &p->cap_str, p->n_str + 1, sizeof *t);
    if (!t)
        return 0;
    p->str = t;
    char *c = malloc(len + 1);
    if (!c)
        return p->nomem = true, 0;
    memcpy(c, s, len), c[len] = 0;
    p->str[p->n_str] = c;
    return p->n_str++;
}

static uint32_t add_cstr(struct pp *p, const char *s)
{
    return add_string(p, s, strlen(s));
}

/* Adds `prefix` and s[0..len) as escape.h shows it; its index, 0 when
 * out of memory. */
static uint32_t add_escaped(struct pp *p, const char *prefix, const char *s, size_t len)
{
    size_t n = strlen(prefix), e = escape_len(s, len);
    char *c = malloc(n + e + 1);
    if (!c)
        return p->nomem = true, 0;
    memcpy(c, prefix, n);
    escape_copy(c + n, s, len);
    uint32_t id = add_string(p, c, n + e);
    free(c);
    return id;
}

/* A source's file name as it lies on disk (diskpath.h), so that `go tool
 * pprof -list` run from the project's root finds it (the standard
 * library's with the -source_path that jett-export(1) gives). */
static uint32_t add_file(struct pp *p, const struct attrib_source *s)
{
    struct diskpath d = diskpath_of(s->origin, s->path, s->path_len);
    return add_escaped(p, d.prefix, s->path + d.skip, s->path_len - d.skip);
}

/* ---- lines and locations ---- */

/* 1-based line of an offset in an identity's source; 0 when unknown. */
static uint32_t line_in(const struct pp *p, uint32_t ident, uint32_t off)
{
    uint32_t s = p->fn_src[ident];
    if (s == ATTRIB_NONE || off == ATTRIB_NONE || !p->src[s].n_lines || off > p->src[s].text_len)
        return 0;
    return wire_line_index(p->src[s].lines, p->src[s].n_lines, off) + 1;
}

static int rebuild_index(struct pp *p)
{
    uint32_t cap = p->index_cap ? p->index_cap * 2 : 1024;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return p->nomem = true, -1;
    for (uint32_t i = 0; i < p->n_loc; i++) {
        uint64_t h = mix64(p->loc_key[i]);
        while (idx[h & (cap - 1)])
            h++;
        idx[h & (cap - 1)] = i + 1;
    }
    free(p->loc_index);
    p->loc_index = idx, p->index_cap = cap;
    return 0;
}

/* The id of the location (ident, line), added when new; 0 when out of
 * memory. */
static uint32_t location(struct pp *p, uint32_t ident, uint32_t line)
{
    uint64_t key = (uint64_t)ident << 32 | line;
    if ((uint64_t)p->n_loc * 2 + 2 > p->index_cap && rebuild_index(p) != 0)
        return 0;
    uint64_t h = mix64(key);
    for (;; h++) {
        uint32_t id = p->loc_index[h & (p->index_cap - 1)];
        if (id == 0)
            break;
        if (p->loc_key[id - 1] == key)
            return id;
    }
    uint64_t *k = grow(p, p->loc_key, &p->cap_loc, p->n_loc + 1, sizeof *k);
    if (!k)
        return 0;
    p->loc_key = k;
    p->loc_key[p->n_loc++] = key;
    p->loc_index[h & (p->index_cap - 1)] = p->n_loc;
    return p->n_loc;
}

/* ---- the model ---- */

static void *table(struct pp *p, uint32_t n, size_t elem)
{
    void *t = malloc(((size_t)n + 1) * elem);
    if (!t)
        p->nomem = true;
    return t;
}

/* Sources, identities (their names) and stack nodes (their callers'
 * locations): 0, or -1 when out of memory. */
static int take_model(struct pp *p)
{
    const struct agg *a = p->a;
    p->n_src = attrib_source_count(a);
    p->n_fn = attrib_ident_count(a);
    p->n_node = attrib_node_count(a);
    p->src = table(p, p->n_src, sizeof *p->src);
    p->src_path = table(p, p->n_src, sizeof *p->src_path);
    p->fn_src = table(p, p->n_fn, sizeof *p->fn_src);
    p->fn_name = table(p, p->n_fn, sizeof *p->fn_name);
    p->fn_decl = table(p, p->n_fn, sizeof *p->fn_decl);
    p->parent = table(p, p->n_node, sizeof *p->parent);
    p->ident = table(p, p->n_node, sizeof *p->ident);
    p->caller_loc = table(p, p->n_node, sizeof *p->caller_loc);
    if (p->nomem)
        return -1;
    for (uint32_t i = 0; i < p->n_src; i++) {
        attrib_source(a, i, &p->src[i]);
        p->src_path[i] = 0; /* named once a function is in it */
    }
    for (uint32_t i = 0; i < p->n_fn && !p->nomem; i++) {
        struct attrib_ident d;
        attrib_ident(a, i, &d);
        p->fn_src[i] = d.source < p->n_src ? d.source : ATTRIB_NONE;
        if (d.source < p->n_src && !p->src_path[d.source])
            p->src_path[d.source] = add_file(p, &p->src[d.source]);
        p->fn_decl[i] = wire_span_present(d.decl) ? line_in(p, i, d.decl.start) : 0;
        /* `namespace.function`, as the folded export names a frame */
        size_t n = (size_t)d.ns_len + 1 + d.name_len;
        char *name = malloc(n);
        if (!name)
            return p->nomem = true, -1;
        memcpy(name, d.ns, d.ns_len);
        name[d.ns_len] = '.';
        memcpy(name + d.ns_len + 1, d.name, d.name_len);
        p->fn_name[i] = add_escaped(p, "", name, n);
        free(name);
    }
    for (uint32_t i = 0; i < p->n_node && !p->nomem; i++) {
        uint32_t parent, ident;
        p->ident[i] = p->parent[i] = ATTRIB_NONE;
        p->caller_loc[i] = 0;
        if (!attrib_node(a, i, &parent, &ident) || ident >= p->n_fn)
            continue; /* a bad STACK: its events were unavailable */
        if (parent != ATTRIB_NONE && (parent >= i || p->ident[parent] == ATTRIB_NONE))
            continue;
        p->ident[i] = ident, p->parent[i] = parent;
        if (parent == ATTRIB_NONE)
            continue;
        struct attrib_node_quantities q;
        attrib_node_quantities(a, i, &q);
        uint32_t caller = p->ident[parent];
        p->caller_loc[i] = location(p, caller, line_in(p, caller, q.site));
    }
    return p->nomem ? -1 : 0;
}

/* ---- samples ---- */

/* Room for a part in the packed buffer; false when out of memory. */
static bool packed_room(struct pp *p, size_t n)
{
    if (n <= p->cap_packed)
        return true;
    uint8_t *b = realloc(p->packed, n);
    if (!b)
        return p->nomem = true, false;
    p->packed = b, p->cap_packed = n;
    return true;
}

/* Packs one part into memory (protobuf-c's flat packing is far faster
 * than its buffer callbacks, one call per value) and compresses it.
 * `bound`: at least the part's packed size, so that protobuf-c's sizing
 * pass (as long again as the packing for millions of location ids) is
 * not run; 0 to have it measured. */
static void pack_part(struct pp *p, const pp_profile *part, size_t bound)
{
    if (!packed_room(p, bound ? bound : perftools__profiles__profile__get_packed_size(part)))
        return;
    size_t n = perftools__profiles__profile__pack(part, p->packed);
    p->sink.base.append(&p->sink.base, n, p->packed);
}

/* The most a field of the messages below takes: a one-byte tag (field
 * numbers below 16), then a varint (10 bytes at most) or a length (5). */
#define PB_TAG 1
#define PB_VARINT 10
#define PB_LEN 5
/* A Sample in Profile.sample, past its packed location ids and values:
 * its own tag and length, those of the two packed fields, and a label
 * (tag, length, key and number). */
#define PB_SAMPLE_FRAME (3 * (PB_TAG + PB_LEN) + PB_TAG + PB_LEN + 2 * (PB_TAG + PB_VARINT))
/* A Location in Profile.location: its tag and length, id and mapping id,
 * and one Line (tag, length, function id and line). */
#define PB_LOCATION (2 * (PB_TAG + PB_LEN) + 4 * (PB_TAG + PB_VARINT))

/* Packs the part's samples as one Profile of samples only. */
static void flush_part(struct pp *p)
{
    if (p->n_part == 0)
        return;
    pp_profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
    part.n_sample = p->n_part;
    part.sample = p->sample_ptr;
    size_t values = p->n_pool + (size_t)p->n_part * p->n_values;
    pack_part(p, &part, (size_t)p->n_part * PB_SAMPLE_FRAME + values * PB_VARINT);
    p->n_part = 0;
    p->n_pool = 0;
}

/* Packs the location table a part at a time: one line each, in the
 * shared mapping. */
static void write_locations(struct pp *p)
{
    for (uint32_t first = 0; first < p->n_loc; first += PP_PART) {
        uint32_t n = p->n_loc - first < PP_PART ? p->n_loc - first : PP_PART;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t key = p->loc_key[first + k];
            p->lines[k] = (pp_line)PERFTOOLS__PROFILES__LINE__INIT;
            p->lines[k].function_id = (key >> 32) + 1;
            p->lines[k].line = (uint32_t)key;
            p->line_ptr[k] = &p->lines[k];
            p->locs[k] = (pp_location)PERFTOOLS__PROFILES__LOCATION__INIT;
            p->locs[k].id = first + k + 1;
            p->locs[k].mapping_id = 1;
            p->locs[k].n_line = 1;
            p->locs[k].line = &p->line_ptr[k];
            p->loc_ptr[k] = &p->locs[k];
        }
        pp_profile part = PERFTOOLS__PROFILES__PROFILE__INIT;
        part.n_location = n;
        part.location = p->loc_ptr;
        pack_part(p, &part, (size_t)n * PB_LOCATION);
    }
}

static int64_t clamp64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The locations of a node's caller frames, up to the root: once per
 * node, for all of its samples. */
static int take_callers(struct pp *p, uint32_t node)
{
    p->callers_of = node;
    p->n_callers = 0;
    for (uint32_t m = node; p->parent[m] != ATTRIB_NONE; m = p->parent[m]) {
        if (p->n_callers == p->cap_callers) {
            size_t cap = p->cap_callers ? p->cap_callers * 2 : 256;
            uint64_t *c = realloc(p->callers, cap * sizeof *c);
            if (!c)
                return p->nomem = true, -1;
            p->callers = c, p->cap_callers = cap;
        }
        p->callers[p->n_callers++] = p->caller_loc[m];
    }
    return 0;
}

/* One sample of a node: the leaf location (below `pre`, the <runtime>.<waiting>
 * location, when not 0), then the callers'; a task label when task is
 * not 0. */
static int add_sample(struct pp *p, uint32_t node, uint32_t pre, uint32_t leaf, uint32_t task,
                      const int64_t *v)
{
    if (node == ATTRIB_NONE) /* a pseudo-frame's sample: no caller */
        p->callers_of = ATTRIB_NONE, p->n_callers = 0;
    else if (p->callers_of != node && take_callers(p, node) != 0)
        return -1;
    size_t n = p->n_callers + 1 + (pre != 0);
    if (p->n_part == PP_PART || p->n_pool + n > p->cap_pool)
        flush_part(p);
    if (n > p->cap_pool) { /* the part is empty: the pool can move */
        size_t cap = p->cap_pool ? p->cap_pool : 1 << 16;
        while (cap < n)
            cap *= 2;
        uint64_t *pool = realloc(p->pool, cap * sizeof *pool);
        if (!pool)
            return p->nomem = true, -1;
        p->pool = pool, p->cap_pool = cap;
    }
    uint64_t *ids = p->pool + p->n_pool;
    if (pre)
        *ids++ = pre;
    ids[0] = leaf;
    if (p->n_callers) /* a root has none (and may have no array yet) */
        memcpy(ids + 1, p->callers, p->n_callers * sizeof *ids);
    ids -= pre != 0;
    p->n_pool += n;
    pp_sample *s = &p->samples[p->n_part];
    *s = (pp_sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
    s->n_location_id = n;
    s->location_id = ids;
    s->n_value = p->n_values;
    s->value = &p->values[(size_t)p->n_part * PP_MAX_VALUES];
    memcpy(s->value, v, p->n_values * sizeof *v);
    if (task && !p->task_key && !(p->task_key = add_cstr(p, "task")))
        return -1;
    if (task) {
        pp_label *l = &p->labels[p->n_part];
        *l = (pp_label)PERFTOOLS__PROFILES__LABEL__INIT;
        l->key = p->task_key, l->num = task;
        p->label_ptr[p->n_part] = l;
        s->n_label = 1, s->label = &p->label_ptr[p->n_part];
    }
    p->sample_ptr[p->n_part++] = s;
    return 0;
}

/* A node's self costs by leaf line: spans come in ascending order, so
 * those of one line are consecutive and summed here.  pair: with tasks,
 * the (node, task) pair's costs (attrib_task_node), else UINT32_MAX. */
struct pp_lines {
    struct attrib_node_self_iter it;
    struct attrib_self_iter pit;
    uint32_t pair;
    bool more, pending;
    uint32_t line;
    uint64_t w[2];
};

static void lines_begin(const struct pp *p, uint32_t node, uint32_t pair, struct pp_lines *l)
{
    l->pair = pair;
    l->more = pair == UINT32_MAX ? attrib_node_self_begin(p->a, node, &l->it)
                                 : attrib_task_node_self_begin(p->a, pair, &l->pit);
    l->pending = false;
}

static bool lines_step(const struct pp *p, struct pp_lines *l, uint32_t *start, uint64_t *v)
{
    return l->pair == UINT32_MAX ? attrib_node_self_next(p->a, &l->it, start, v)
                                 : attrib_task_node_self_next(p->a, &l->pit, start, v);
}

static bool lines_next(const struct pp *p, uint32_t node, struct pp_lines *l, uint32_t *line,
                       uint64_t *w)
{
    uint32_t start;
    uint64_t v[2] = {0, 0};
    while (l->more && (l->more = lines_step(p, l, &start, v))) {
        uint32_t ln = line_in(p, p->ident[node], start);
        if (l->pending && ln == l->line) {
            l->w[0] += v[0], l->w[1] += v[1];
            continue;
        }
        bool had = l->pending;
        *line = l->line, w[0] = l->w[0], w[1] = l->w[1];
        l->pending = true, l->line = ln, l->w[0] = v[0], l->w[1] = v[1];
        if (had)
            return true;
    }
    if (!l->pending)
        return false;
    *line = l->line, w[0] = l->w[0], w[1] = l->w[1];
    l->pending = false;
    return true;
}

/* Adds the oldest queued sample. */
static int add_queued(struct pp *p)
{
    struct pp_pending *q = &p->queue[p->queued];
    p->queued = (p->queued + 1) % PP_AHEAD, p->n_queued--;
    uint32_t leaf = location(p, p->ident[q->node], q->line);
    /* the <runtime>.<waiting> function is the one after every identity */
    uint32_t pre = q->waiting ? location(p, p->n_fn, 0) : 0;
    return leaf && (pre || !q->waiting) && add_sample(p, q->node, pre, leaf, q->task, q->v) == 0
               ? 0
               : -1;
}

/* A sample of `node` at `line`: queued, its index slot fetched, while
 * the oldest one is added; 0, or -1 when out of memory. */
static int queue_sample(struct pp *p, uint32_t node, uint32_t line, bool waiting, uint32_t task,
                        const int64_t *v)
{
    if (p->n_queued == PP_AHEAD && add_queued(p) != 0)
        return -1;
    if (p->loc_index) {
        uint64_t key = (uint64_t)p->ident[node] << 32 | line;
        __builtin_prefetch(&p->loc_index[mix64(key) & (p->index_cap - 1)]);
    }
    struct pp_pending *q = &p->queue[(p->queued + p->n_queued++) % PP_AHEAD];
    q->node = node, q->line = line, q->waiting = waiting, q->task = task;
    memcpy(q->v, v, sizeof q->v);
    return 0;
}

/* n samples as the values of a CPU sample: the count and, when the
 * rate is known, the nanoseconds they stand for. */
static void cpu_values(const struct pp *p, uint64_t n, int64_t v[PP_MAX_VALUES])
{
    v[0] = clamp64(n);
    if (p->period)
        v[1] = n > (uint64_t)INT64_MAX / (uint64_t)p->period ? INT64_MAX : clamp64(n * p->period);
}

/* A node's jett samples by leaf line and, with --weight wall, its
 * waiting samples (the second value) under <runtime>.<waiting> at their
 * line (pair: of one task, as lines_begin). */
static int cpu_node(struct pp *p, uint32_t node, uint32_t pair, uint32_t task)
{
    struct pp_lines l;
    uint32_t line;
    uint64_t w[2];
    lines_begin(p, node, pair, &l);
    while (lines_next(p, node, &l, &line, w)) {
        for (int k = 0; k < (p->wall ? 2 : 1); k++) {
            int64_t v[PP_MAX_VALUES] = {0};
            if (w[k] == 0)
                continue;
            cpu_values(p, w[k], v);
            p->waiting_drawn += k == 1 ? w[k] : 0;
            if (queue_sample(p, node, line, k == 1, task, v) != 0)
                return -1;
        }
    }
    return 0;
}

/* Memory: the node's allocations and bytes by line; its live bytes on
 * the one line that created allocations, or on line 0 when several did. */
static int memory_node(struct pp *p, uint32_t node, uint32_t pair, uint32_t task)
{
    struct pp_lines l;
    uint32_t line, creating = 0, n_creating = 0, n_, t_;
    uint64_t w[2];
    struct attrib_node_quantities q;
    if (pair == UINT32_MAX)
        attrib_node_quantities(p->a, node, &q);
    else
        attrib_task_node(p->a, pair, &n_, &t_, &q);
    uint64_t inuse = p->inuse ? q.retained : 0;
    p->inuse_drawn += inuse;
    lines_begin(p, node, pair, &l);
    while (lines_next(p, node, &l, &line, w))
        if (w[1] > 0)
            creating = line, n_creating++;
    lines_begin(p, node, pair, &l);
    while (lines_next(p, node, &l, &line, w)) {
        int64_t v[PP_MAX_VALUES] = {clamp64(w[1]), clamp64(w[0]), 0};
        if (n_creating == 1 && line == creating)
            v[PP_INUSE] = clamp64(inuse), inuse = 0;
        if (!v[0] && !v[1] && !v[2])
            continue;
        if (queue_sample(p, node, line, false, task, v) != 0)
            return -1;
    }
    if (inuse) {
        int64_t v[PP_MAX_VALUES] = {0, 0, clamp64(inuse)};
        if (queue_sample(p, node, 0, false, task, v) != 0)
            return -1;
    }
    return 0;
}

/* With tasks: the samples of each (node, task) pair, in node then task
 * order, each labelled with its task (events of no task: no label). */
static int write_task_samples(struct pp *p)
{
    uint32_t n = attrib_task_node_count(p->a);
    for (uint32_t i = 0; i < n && !p->sink.failed; i++) {
        uint32_t node, task;
        struct attrib_node_quantities q;
        attrib_task_node(p->a, i, &node, &task, &q);
        if (node >= p->n_node || p->ident[node] == ATTRIB_NONE)
            continue;
        uint32_t label = task == ATTRIB_NONE ? 0 : task;
        if ((p->cpu ? cpu_node(p, node, i, label) : memory_node(p, node, i, label)) != 0)
            return -1;
    }
    return 0;
}

/* With --weight wall, once the stacks' samples are in: what has no Jett
 * stack, a Sample of one Location each, the pseudo-frame's function
 * (after every identity, at line 0) with no task label. */
static int write_pseudo(struct pp *p)
{
    struct ticks t;
    uint64_t v[TICKS_FRAMES];
    ticks_read(p->a, &t);
    ticks_root(&t, p->waiting_drawn, v);
    for (uint32_t k = 0; k < TICKS_FRAMES; k++) {
        int64_t values[PP_MAX_VALUES] = {0};
        if (v[k] == 0)
            continue;
        cpu_values(p, v[k], values);
        uint32_t loc = location(p, p->n_fn + k, 0);
        if (!loc || add_sample(p, ATTRIB_NONE, 0, loc, 0, values) != 0)
            return -1;
    }
    return 0;
}

static int write_samples(struct pp *p)
{
    p->callers_of = ATTRIB_NONE;
    if (p->by_task && write_task_samples(p) != 0)
        return -1;
    for (uint32_t i = 0; i < p->n_node && !p->by_task && !p->sink.failed; i++)
        if (p->ident[i] != ATTRIB_NONE &&
            (p->cpu ? cpu_node(p, i, UINT32_MAX, 0) : memory_node(p, i, UINT32_MAX, 0)) != 0)
            return -1;
    while (p->n_queued)
        if (add_queued(p) != 0)
            return -1;
    if (p->wall && write_pseudo(p) != 0)
        return -1;
    flush_part(p);
    return 0;
}

/* ---- the rest of the profile ---- */

/* The most comments write_comments makes. */
#define PP_COMMENTS 4

/* A comment line: its string index is appended to comments. */
static void comment(struct pp *p, int64_t *comments, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void comment(struct pp *p, int64_t *comments, size_t *n, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    comments[(*n)++] = add_cstr(p, buf);
}

/* A CPU profile's comments: which samples it holds and which it leaves
 * out, and the ticks that are no sample (ticks.h); worded for any count. */
static void cpu_comments(struct pp *p, int64_t *c, size_t *n)
{
    struct ticks t;
    ticks_read(p->a, &t);
    const struct attrib_cpu_totals *s = &t.samples;
    typedef unsigned long long ull;
    if (!p->wall) {
        comment(p, c, n,
                "jett: of the %llu samples recorded, this profile holds the %llu on Jett stacks "
                "and leaves out the runtime (%llu), waiting (%llu) and unavailable (%llu) ones.",
                (ull)s->recorded, (ull)s->attributed, (ull)s->runtime, (ull)s->waiting,
                (ull)s->unavailable);
        if (t.finished)
            comment(p, c, n,
                    "jett: of the %llu ticks requested, the samples took %llu; %llu were "
                    "coalesced (the program was running Jett code and took no stack) and %llu "
                    "dropped, and are in no sample.",
                    (ull)t.requested, (ull)s->recorded, (ull)t.coalesced, (ull)t.dropped);
    } else {
        uint64_t v[TICKS_FRAMES];
        ticks_root(&t, p->waiting_drawn, v);
        comment(p, c, n,
                "jett: every one of the %llu samples recorded is in this profile: at their "
                "stacks the jett samples (%llu) and the waiting ones that have a stack (%llu, "
                "under <runtime>.<waiting>); at the root the waiting samples without a stack "
                "(%llu, <runtime>.<waiting>), the runtime samples (%llu, <runtime>.<runtime>) "
                "and the unavailable ones (%llu, <runtime>.<unavailable>).",
                (ull)s->recorded, (ull)s->attributed, (ull)p->waiting_drawn, (ull)v[TICKS_WAITING],
                (ull)v[TICKS_RUNTIME], (ull)v[TICKS_UNAVAILABLE]);
        if (t.finished)
            comment(p, c, n,
                    "jett: every one of the %llu ticks requested is in this profile: the samples "
                    "(%llu), the coalesced ticks (%llu, <runtime>.<coalesced>: the program was "
                    "running Jett code and took no stack) and the dropped ones (%llu, "
                    "<runtime>.<dropped>).",
                    (ull)t.requested, (ull)s->recorded, (ull)t.coalesced, (ull)t.dropped);
    }
    if (!t.finished)
        comment(p, c, n, "jett: the coalesced and dropped ticks are unknown (no FINISH).");
}

/* What the profile leaves out, in words: comments (at most PP_COMMENTS). */
static size_t write_comments(struct pp *p, int64_t *c)
{
    size_t n = 0;
    enum agg_reason reason;
    if (p->cpu) {
        cpu_comments(p, c, &n);
    } else {
        struct attrib_mem_totals t;
        attrib_mem_totals(p->a, &t);
        typedef unsigned long long ull;
        if (p->inuse) /* live bytes without a stack: those no sample holds */
            comment(p, c, &n,
                    "jett: of the %llu allocations, %llu bytes allocated and %llu bytes in use at "
                    "the end, this profile holds those with a Jett stack; the %llu bytes "
                    "allocated and %llu bytes in use without one are not in it.",
                    (ull)t.allocation_count, (ull)t.allocated_bytes, (ull)t.live,
                    (ull)(t.allocated_bytes - t.attributed),
                    (ull)(t.live > p->inuse_drawn ? t.live - p->inuse_drawn : 0));
        else
            comment(p, c, &n,
                    "jett: of the %llu allocations and %llu bytes allocated, this profile holds "
                    "those with a Jett stack; the %llu bytes allocated without one are not in "
                    "it.",
                    (ull)t.allocation_count, (ull)t.allocated_bytes,
                    (ull)(t.allocated_bytes - t.attributed));
        if (!p->inuse)
            comment(p, c, &n, "jett: inuse_space is unavailable: %s", attrib_live_gap(p->a, true));
    }
    if (agg_status(p->a, &reason) == AGG_PARTIAL)
        comment(p, c, &n, "jett: the profile is partial (%s)", agg_reason_name(reason));
    return n;
}

/* Packs the locations, then sample types, functions, strings and the
 * header fields: 0, or -1 when out of memory. */
static int write_tables(struct pp *p)
{
    static const char *const cpu_types[][2] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
    static const char *const wall_types[][2] = {{"samples", "count"}, {"wall", "nanoseconds"}};
    static const char *const mem_types[][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_space", "bytes"}};
    pp_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
    pp_value_type vt[PP_MAX_VALUES], *vt_ptr[PP_MAX_VALUES], period_type;
    for (unsigned i = 0; i < p->n_values; i++) {
        const char *const *t = p->wall ? wall_types[i] : p->cpu ? cpu_types[i] : mem_types[i];
        vt[i] = (pp_value_type)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        vt[i].type = add_cstr(p, t[0]);
        vt[i].unit = add_cstr(p, t[1]);
        vt_ptr[i] = &vt[i];
    }
    prof.n_sample_type = p->n_values;
    prof.sample_type = vt_ptr;
    prof.default_sample_type = vt[p->n_values - 1].type; /* cpu, inuse or alloc space */
    if (p->cpu && p->period) {
        period_type = vt[1];
        prof.period_type = &period_type;
        prof.period = p->period;
    }
    const struct wire_finish *fin = agg_finish_record(p->a);
    if (fin)
        prof.duration_nanos = clamp64(fin->wall_ns);
    int64_t comments[PP_COMMENTS];
    prof.n_comment = write_comments(p, comments);
    prof.comment = comments;
    /* one mapping that says every location is symbolized already, so
     * that readers look for no binary */
    pp_mapping map = PERFTOOLS__PROFILES__MAPPING__INIT, *map_ptr = &map;
    map.id = 1;
    map.filename = add_cstr(p, "jett");
    map.has_functions = map.has_filenames = map.has_line_numbers = true;
    prof.n_mapping = 1;
    prof.mapping = &map_ptr;

    /* with --weight wall, the pseudo-frames' functions come after the
     * others, in the order of enum ticks_frame */
    uint32_t n_fn = p->n_fn + (p->wall ? TICKS_FRAMES : 0);
    pp_function *fn = calloc((size_t)n_fn + 1, sizeof *fn);
    pp_function **fn_ptr = calloc((size_t)n_fn + 1, sizeof *fn_ptr);
    uint32_t pseudo_name[TICKS_FRAMES];
    for (int k = 0; k < TICKS_FRAMES; k++)
        pseudo_name[k] = p->wall ? add_cstr(p, ticks_frame_name((enum ticks_frame)k)) : 0;
    int rc = -1;
    if (!fn || !fn_ptr || p->nomem)
        goto out;
    for (uint32_t i = 0; i < n_fn; i++) {
        fn[i] = (pp_function)PERFTOOLS__PROFILES__FUNCTION__INIT;
        fn[i].id = i + 1;
        fn_ptr[i] = &fn[i];
        if (i >= p->n_fn) {
            fn[i].name = fn[i].system_name = pseudo_name[i - p->n_fn];
            continue;
        }
        fn[i].name = fn[i].system_name = p->fn_name[i];
        fn[i].filename = p->fn_src[i] == ATTRIB_NONE ? 0 : p->src_path[p->fn_src[i]];
        fn[i].start_line = p->fn_decl[i];
    }
    write_locations(p);
    prof.n_function = n_fn;
    prof.function = fn_ptr;
    prof.n_string_table = p->n_str;
    prof.string_table = p->str;
    pack_part(p, &prof, 0);
    rc = 0;
out:
    free(fn), free(fn_ptr);
    if (rc != 0)
        p->nomem = true;
    return rc;
}

static void pp_free(struct pp *p)
{
    for (uint32_t i = 0; i < p->n_str; i++)
        free(p->str[i]);
    free(p->str), free(p->src), free(p->src_path);
    free(p->fn_src), free(p->fn_name), free(p->fn_decl);
    free(p->loc_key), free(p->loc_index);
    free(p->parent), free(p->ident), free(p->caller_loc), free(p->pool), free(p->packed),
        free(p->callers);
    free(p);
}

/* Writes the profile of an aggregated capture (with the waiting samples
 * when `wall`): 0, -1 with err, or -2 when the weight does not apply. */
static int write_weighted(const struct agg *a, bool wall, FILE *out, char *err, size_t errlen)
{
    if (wall && agg_mode(a) != WIRE_MODE_CPU)
        return snprintf(err, errlen, "--weight wall does not apply to a memory capture"), -2;
    struct pp *p = calloc(1, sizeof *p);
    if (!p || gzsink_open(&p->sink, out, Z_BEST_SPEED) != 0) {
        free(p);
        return snprintf(err, errlen, "out of memory"), -1;
    }
    p->a = a;
    p->wall = wall;
    p->by_task = attrib_tasks_on(a);
    p->cpu = agg_mode(a) == WIRE_MODE_CPU;
    p->inuse = !p->cpu && attrib_retained_exact(a);
    p->n_values = p->cpu ? 2 : p->inuse ? 3 : 2;
    uint32_t rate = agg_config(a)->rate_hz;
    if (p->cpu)
        p->period = rate ? (int64_t)((1000000000ull + rate / 2) / rate) : 0;
    if (p->cpu && !p->period)
        p->n_values = 1;
    p->str = NULL;
    if (add_string(p, "", 0) != 0 || p->nomem || take_model(p) != 0 || write_samples(p) != 0)
        p->nomem = true;
    if (!p->nomem)
        write_tables(p);
    bool failed = gzsink_close(&p->sink) != 0;
    int rc = 0;
    if (p->nomem)
        rc = -1, snprintf(err, errlen, "out of memory");
    else if (failed)
        rc = -1, snprintf(err, errlen, "cannot write the profile");
    pp_free(p);
    return rc;
}

static int write_model(const struct agg *a, FILE *out, char *err, size_t errlen)
{
    return write_weighted(a, false, out, err, errlen);
}

static int write_wall(const struct agg *a, FILE *out, char *err, size_t errlen)
{
    return write_weighted(a, true, out, err, errlen);
}

/* Samples by node and line (and task): no sums by function or subtree. */
static void keep_lines(struct agg *a)
{
    agg_keep_node_lines_only(a);
    agg_keep_task_nodes(a);
}

/* The same, and the waiting ones as a second value. */
static void keep_wall(struct agg *a)
{
    keep_lines(a);
    agg_keep_waiting(a);
}

int pprof_write(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err, size_t errlen)
{
    return export_run(r, keep_lines, write_model, out, ticks, err, errlen);
}

int pprof_write_wall(struct capture_reader *r, FILE *out, struct ticks *ticks, char *err,
                     size_t errlen)
{
    return export_run(r, keep_wall, write_wall, out, ticks, err, errlen);
}
