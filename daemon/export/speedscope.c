/* speedscope: a capture as a sampled speedscope profile (speedscope.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/export/fold.h"
#include "daemon/escape.h"
#include "daemon/export/speedscope.h"
#include "daemon/feed.h"
#include "proto/util/decimal.h"

/* Output is gathered in blocks this large: one write each. */
#define OUT_CHUNK (1u << 20)
#define MAX_DEPTH 4096 /* deeper than any stack the capture format allows */

/* A waiting sample's node (--weight wall) is kept with this bit: node
 * ids are below 2^24. */
#define WAITING_NODE 0x80000000u

struct speedscope {
    struct agg *g; /* kept for the names and the stack nodes */
    char *damage;
    bool nomem;
    bool wall;        /* the waiting samples too, under a <runtime>.<waiting> frame */
    uint32_t *stack;  /* each sample's leaf stack node, in order */
    uint64_t *weight; /* memory: each sample's bytes; CPU: NULL (1 each) */
    size_t n, cap;
    uint64_t total, last_attributed;
};

static void take(struct speedscope *p, uint32_t node, uint64_t w)
{
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 4096;
        uint32_t *s = realloc(p->stack, ncap * sizeof *s);
        if (s)
            p->stack = s;
        uint64_t *wt = s && agg_mode(p->g) == WIRE_MODE_MEMORY
                           ? realloc(p->weight, ncap * sizeof *wt)
                           : p->weight;
        if (!s || (agg_mode(p->g) == WIRE_MODE_MEMORY && !wt)) {
            p->nomem = true;
            return;
        }
        p->weight = wt, p->cap = ncap;
    }
    p->stack[p->n] = node;
    if (p->weight)
        p->weight[p->n] = w;
    p->n++;
    p->total += w;
}

/* After each entry (feed_capture_watched): a taken jett sample at a
 * valid stack, or an event that added attributed bytes. */
static void on_event(void *ctx, const struct wire_event *ev, bool accepted)
{
    struct speedscope *p = ctx;
    uint32_t parent, ident;
    if (p->nomem)
        return;
    if (ev->kind == WIRE_ENTRY_SAMPLE) {
        const struct wire_sample *s = &ev->u.sample;
        /* a stack the budget refused was not stored: unattributed */
        bool drawn = s->state == WIRE_STATE_JETT || (p->wall && s->state == WIRE_STATE_WAITING);
        if (accepted && drawn && s->stack_id < attrib_node_count(p->g) &&
            attrib_node(p->g, s->stack_id, &parent, &ident))
            take(p, s->stack_id | (s->state == WIRE_STATE_WAITING ? WAITING_NODE : 0), 1);
    } else if (ev->kind == WIRE_ENTRY_ALLOC) {
        /* the attributed bytes rise exactly by the event's pressure */
        struct attrib_mem_totals m;
        attrib_mem_totals(p->g, &m);
        uint64_t bytes = m.attributed - p->last_attributed;
        p->last_attributed = m.attributed;
        if (bytes > 0)
            take(p, ev->u.alloc.stack_id, bytes);
    }
}

enum speedscope_status speedscope_read(struct capture_reader *r, struct speedscope **out, char *err,
                                       size_t errlen)
{
    return speedscope_read_weighted(r, false, out, err, errlen);
}

enum speedscope_status speedscope_read_weighted(struct capture_reader *r, bool wall,
                                                struct speedscope **out, char *err, size_t errlen)
{
    struct speedscope *p = calloc(1, sizeof *p);
    if (!p || !(p->g = agg_new())) {
        free(p);
        return snprintf(err, errlen, "out of memory"), SPEEDSCOPE_E_NOMEM;
    }
    p->wall = wall;
    int damaged = feed_capture_watched(p->g, r, on_event, p, err, errlen);
    agg_end(p->g);
    agg_release_records(p->g);
    enum speedscope_status st = SPEEDSCOPE_OK;
    if (damaged && !agg_has_hello(p->g))
        st = SPEEDSCOPE_E_CAPTURE;
    else if (wall && agg_mode(p->g) != WIRE_MODE_CPU)
        st = SPEEDSCOPE_E_WEIGHT,
        snprintf(err, errlen, "--weight wall does not apply to a memory capture");
    else if (p->nomem || (damaged && !(p->damage = strdup(err))))
        st = SPEEDSCOPE_E_NOMEM, snprintf(err, errlen, "out of memory");
    if (st != SPEEDSCOPE_OK) {
        speedscope_free(p);
        return st;
    }
    *out = p;
    return SPEEDSCOPE_OK;
}

const char *speedscope_damage(const struct speedscope *p)
{
    return p->damage;
}

void speedscope_free(struct speedscope *p)
{
    if (!p)
        return;
    agg_free(p->g);
    free(p->damage), free(p->stack), free(p->weight);
    free(p);
}

/* ---- writing ---- */

/* Output gathered in a buffer: millions of numbers, no printf. */
struct out {
    FILE *f;
    char buf[OUT_CHUNK];
    size_t len;
};

static void flush(struct out *o)
{
    fwrite(o->buf, 1, o->len, o->f);
    o->len = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
    if (o->len + n > sizeof o->buf)
        flush(o);
    if (n > sizeof o->buf) {
        fwrite(s, 1, n, o->f);
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
    char d[24];
    put(o, d, decimal_u64(d, v));
}

/* The body of a JSON string: the text as escape.h shows it (\xNN is
 * the text of a backslash and three characters, so every control
 * character is gone), with JSON's escapes of '"' and '\\'. */
static void put_text(struct out *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        bool esc;
        size_t u = escape_unit(s + i, len - i, &esc);
        if (esc) {
            char e[16];
            size_t n = escape_copy(e, s + i, u);
            for (size_t k = 0; k < n; k++)
                put(o, e[k] == '\\' ? "\\\\" : e + k, e[k] == '\\' ? 2 : 1);
        } else if (s[i] == '"' || s[i] == '\\') {
            char e[2] = {'\\', s[i]};
            put(o, e, 2);
        } else {
            put(o, s + i, u);
        }
        i += u;
    }
}

static void put_frames(struct out *o, const struct agg *g, bool wall)
{
    puts_(o, "\"shared\":{\"frames\":[");
    for (uint32_t i = 0; i < attrib_ident_count(g); i++) {
        struct attrib_ident d;
        attrib_ident(g, i, &d);
        puts_(o, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
        put_text(o, d.ns, d.ns_len);
        put(o, ".", 1);
        put_text(o, d.name, d.name_len);
        put(o, "\"", 1);
        if (d.source != ATTRIB_NONE) {
            struct attrib_source s;
            attrib_source(g, d.source, &s);
            puts_(o, ",\"file\":\"");
            put_text(o, s.path, s.path_len);
            put(o, "\"", 1);
        }
        uint32_t line = attrib_ident_line(g, i);
        if (line) {
            puts_(o, ",\"line\":");
            put_u64(o, line);
        }
        puts_(o, "}");
    }
    if (wall) /* frame ident_count: above a waiting sample's leaf */
        puts_(o, attrib_ident_count(g) ? ",\n{\"name\":\"" FOLD_WAITING_NAME "\"}"
                                       : "\n{\"name\":\"" FOLD_WAITING_NAME "\"}");
    puts_(o, "]},\n");
}

/* A stored node's caller and identity, read once for the millions of
 * stack walks (ident ATTRIB_NONE: a bad node, where a walk stops). */
struct node_link {
    uint32_t parent, ident;
};

static struct node_link *node_links(const struct agg *g)
{
    uint32_t n = attrib_node_count(g);
    struct node_link *l = malloc(((size_t)n + 1) * sizeof *l);
    for (uint32_t i = 0; l && i < n; i++)
        if (!attrib_node(g, i, &l[i].parent, &l[i].ident))
            l[i] = (struct node_link){ATTRIB_NONE, ATTRIB_NONE};
    return l;
}

/* The most one stack's text takes: brackets, and for each frame up to
 * ten digits and a comma, and the word a decimal store may run past. */
#define STACK_TEXT (2 + 11 * MAX_DEPTH + 8)

/* Stacks walked at once.  A walk is a chain of dependent loads, mostly
 * cache misses in a large profile: walked a frame of each in turn, the
 * lanes wait for memory together rather than one after another. */
#define LANES 8

struct walks {
    uint32_t path[LANES][MAX_DEPTH]; /* each stack's frames, leaf first */
    uint32_t depth[LANES];
};

/* Walks the stacks of the nodes whose `walk` is set among nodes[0..n)
 * (n <= LANES) together; the others get depth 0.  A waiting sample's
 * stack starts with the <runtime>.<waiting> frame, `waiting`. */
static void walk_lanes(struct walks *w, const struct node_link *links, uint32_t n_links,
                       const uint32_t *nodes, const bool *walk, unsigned n, uint32_t waiting)
{
    uint32_t at[LANES];
    bool on[LANES];
    for (unsigned k = 0; k < n; k++) {
        at[k] = nodes[k] & ~WAITING_NODE, on[k] = walk[k], w->depth[k] = 0;
        if (walk[k] && (nodes[k] & WAITING_NODE))
            w->path[k][w->depth[k]++] = waiting;
    }
    for (bool more = true; more;) {
        more = false;
        for (unsigned k = 0; k < n; k++) {
            uint32_t node = at[k];
            if (!on[k] || node >= n_links || links[node].ident == ATTRIB_NONE ||
                w->depth[k] == MAX_DEPTH) {
                on[k] = false;
                continue;
            }
            w->path[k][w->depth[k]++] = links[node].ident;
            at[k] = links[node].parent;
            more = true;
        }
    }
}

/* One stack, root first, from its frames leaf first, written at `at`
 * (STACK_TEXT bytes of room); its length. */
static size_t stack_text(char *at, const uint32_t *path, uint32_t depth)
{
    char *w = at;
    *w++ = '[';
    for (uint32_t k = depth; k-- > 0;) {
        w += decimal_u64(w, path[k]);
        *w++ = ',';
    }
    w[-(depth > 0)] = ']'; /* over the last comma */
    return (size_t)(w - at) + (depth == 0);
}

/* The samples' stacks, comma and newline apart, LANES at a time.  A run
 * of samples at one node (a loop between ticks) is walked once: its
 * text is copied (walked again only right after a block was written). */
static void put_samples(struct out *o, const struct speedscope *p, const struct node_link *links,
                        struct walks *w)
{
    uint32_t n_links = attrib_node_count(p->g), waiting = attrib_ident_count(p->g);
    size_t last = 0; /* the previous sample's text: its length, at the end of buf */
    for (size_t i = 0; i < p->n; i += LANES) {
        unsigned n = p->n - i < LANES ? (unsigned)(p->n - i) : LANES;
        bool walk[LANES];
        for (unsigned k = 0; k < n; k++)
            walk[k] = i + k == 0 || p->stack[i + k] != p->stack[i + k - 1];
        walk_lanes(w, links, n_links, p->stack + i, walk, n, waiting);
        for (unsigned k = 0; k < n; k++) {
            if (o->len + 2 + STACK_TEXT > sizeof o->buf)
                flush(o), last = 0;
            if (i + k)
                memcpy(o->buf + o->len, ",\n", 2), o->len += 2;
            char *at = o->buf + o->len;
            if (!walk[k] && !last) { /* a repeat whose text was just written out */
                walk[k] = true;
                walk_lanes(w, links, n_links, p->stack + i + k, &walk[k], 1, waiting);
                last = stack_text(at, w->path[0], w->depth[0]);
            } else if (!walk[k]) {
                memcpy(at, at - 2 - last, last);
            } else {
                last = stack_text(at, w->path[k], w->depth[k]);
            }
            o->len += last;
        }
    }
}

/* The weights, comma apart. */
static void put_weights(struct out *o, const struct speedscope *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (o->len + 1 + 20 + 8 > sizeof o->buf)
            flush(o);
        if (i)
            o->buf[o->len++] = ',';
        o->len += decimal_u64(o->buf + o->len, p->weight ? p->weight[i] : 1);
    }
}

int speedscope_write(const struct speedscope *p, FILE *f)
{
    struct out *o = malloc(sizeof *o);
    struct walks *walks = malloc(sizeof *walks);
    struct node_link *links = node_links(p->g);
    if (!o || !walks || !links) {
        free(o), free(walks), free(links);
        return -1;
    }
    o->f = f, o->len = 0;
    bool memory = agg_mode(p->g) == WIRE_MODE_MEMORY;
    puts_(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n");
    puts_(o, "\"exporter\":\"jett profile export\",\"name\":\"");
    puts_(o, memory ? "jett memory profile" : "jett CPU profile");
    puts_(o, "\",\"activeProfileIndex\":0,\n");
    put_frames(o, p->g, p->wall);
    puts_(o, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"");
    puts_(o, memory    ? "allocated bytes, in event order"
             : p->wall ? "jett and waiting samples, in tick order"
                       : "jett samples, in tick order");
    puts_(o, memory ? "\",\"unit\":\"bytes\"" : "\",\"unit\":\"none\"");
    puts_(o, ",\"startValue\":0,\"endValue\":");
    put_u64(o, p->total);
    puts_(o, ",\n\"samples\":[");
    put_samples(o, p, links, walks);
    puts_(o, "],\n\"weights\":[");
    put_weights(o, p);
    puts_(o, "]}]}\n");
    flush(o);
    free(o), free(walks), free(links);
    return ferror(f) ? -1 : 0;
}
