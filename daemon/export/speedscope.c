/* speedscope: a capture as a sampled speedscope profile (speedscope.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon/attrib.h"
#include "daemon/export/diskpath.h"
#include "daemon/escape.h"
#include "daemon/export/speedscope.h"
#include "daemon/feed.h"
#include "proto/util/decimal.h"

/* Output is gathered in blocks this large: one write each. */
#define OUT_CHUNK (1u << 20)
#define MAX_DEPTH 4096 /* deeper than any stack the capture format allows */

/* A waiting sample's node (--weight wall) is kept with this bit, and a
 * sample of a pseudo-frame at the root (ticks.h) as PSEUDO_NODE plus the
 * frame: node ids are below 2^24. */
#define WAITING_NODE 0x80000000u
#define PSEUDO_NODE 0x40000000u

struct speedscope {
    struct agg *g; /* kept for the names and the stack nodes */
    char *damage;
    bool nomem;
    bool wall;        /* every requested tick, what has no stack at the root */
    uint32_t *stack;  /* each sample's leaf stack node, in order */
    uint64_t *weight; /* memory: each sample's bytes; CPU: NULL (1 each) */
    uint32_t *task;   /* with task attribution: each sample's task, else NULL */
    size_t n, cap;
    uint64_t last_attributed;
    struct ticks ticks;
    /* wall: the samples placed at each pseudo-frame in the stream's
     * order, then (once read) what has no place in it, each frame's one
     * weighted sample after the others: the coalesced and dropped ticks,
     * and the samples the profile counts but took as collector errors */
    uint64_t placed[TICKS_FRAMES], tail[TICKS_FRAMES];
};

static void take(struct speedscope *p, uint32_t node, uint64_t w, uint32_t task)
{
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 4096;
        uint32_t *s = realloc(p->stack, ncap * sizeof *s);
        if (s)
            p->stack = s;
        uint64_t *wt = s && agg_mode(p->g) == WIRE_MODE_MEMORY
                           ? realloc(p->weight, ncap * sizeof *wt)
                           : p->weight;
        if (wt)
            p->weight = wt;
        uint32_t *t = s && attrib_tasks_on(p->g) ? realloc(p->task, ncap * sizeof *t) : p->task;
        if (!s || (agg_mode(p->g) == WIRE_MODE_MEMORY && !wt) || (attrib_tasks_on(p->g) && !t)) {
            p->nomem = true;
            return;
        }
        p->task = t, p->cap = ncap;
    }
    p->stack[p->n] = node;
    if (p->weight)
        p->weight[p->n] = w;
    if (p->task)
        p->task[p->n] = task;
    p->n++;
}

/* With --weight wall, a taken sample that has no Jett stack: at the
 * pseudo-frame of its state, in the stream's order. */
static void take_pseudo(struct speedscope *p, const struct wire_sample *s, bool on_stack)
{
    enum ticks_frame k = s->state == WIRE_STATE_WAITING   ? TICKS_WAITING
                         : s->state == WIRE_STATE_RUNTIME ? TICKS_RUNTIME
                                                          : TICKS_UNAVAILABLE;
    if (on_stack || !p->wall)
        return;
    p->placed[k]++;
    take(p, PSEUDO_NODE + k, 1, s->exec.task);
}

/* After each entry (feed_capture_watched): a taken jett sample at a
 * valid stack (with --weight wall a waiting one too, and at its
 * pseudo-frame any other), or an event that added attributed bytes. */
static void on_event(void *ctx, const struct wire_event *ev, bool accepted)
{
    struct speedscope *p = ctx;
    uint32_t parent, ident;
    if (p->nomem)
        return;
    if (ev->kind == WIRE_ENTRY_SAMPLE) {
        const struct wire_sample *s = &ev->u.sample;
        /* a stack the budget refused was not stored: unattributed */
        bool stacked = (s->state == WIRE_STATE_JETT || s->state == WIRE_STATE_WAITING) &&
                       s->stack_id < attrib_node_count(p->g) &&
                       attrib_node(p->g, s->stack_id, &parent, &ident);
        bool drawn = s->state == WIRE_STATE_JETT || (p->wall && s->state == WIRE_STATE_WAITING);
        if (accepted && drawn && stacked)
            take(p, s->stack_id | (s->state == WIRE_STATE_WAITING ? WAITING_NODE : 0), 1,
                 s->exec.task);
        else if (accepted)
            take_pseudo(p, s, drawn && stacked);
    } else if (ev->kind == WIRE_ENTRY_ALLOC) {
        /* the attributed bytes rise exactly by the event's pressure */
        struct attrib_mem_totals m;
        attrib_mem_totals(p->g, &m);
        uint64_t bytes = m.attributed - p->last_attributed;
        p->last_attributed = m.attributed;
        if (bytes > 0)
            take(p, ev->u.alloc.stack_id, bytes, ev->u.alloc.exec.task);
    }
}

/* With --weight wall, once the stream was read: what has no place in
 * its order, so that the profile holds every requested tick as the
 * pseudo-frames of the other exports do (ticks_root).  A sample the
 * profile counts is placed unless the aggregation took it as a collector
 * error; the rest of each frame's count is here. */
static void take_tail(struct speedscope *p)
{
    if (!p->wall || agg_mode(p->g) != WIRE_MODE_CPU)
        return;
    uint64_t root[TICKS_FRAMES];
    uint64_t waiting_on_stacks = 0;
    for (size_t i = 0; i < p->n; i++)
        waiting_on_stacks += (p->stack[i] & WAITING_NODE) != 0;
    ticks_root(&p->ticks, waiting_on_stacks, root);
    for (int k = 0; k < TICKS_FRAMES; k++)
        p->tail[k] = root[k] > p->placed[k] ? root[k] - p->placed[k] : 0;
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
    ticks_read(p->g, &p->ticks);
    take_tail(p);
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
    free(p->damage), free(p->stack), free(p->weight), free(p->task);
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
        if (d.source != ATTRIB_NONE) { /* where it lies on disk (diskpath.h) */
            struct attrib_source s;
            attrib_source(g, d.source, &s);
            struct diskpath dp = diskpath_of(s.origin, s.path, s.path_len);
            puts_(o, ",\"file\":\"");
            puts_(o, dp.prefix);
            put_text(o, s.path + dp.skip, s.path_len - dp.skip);
            put(o, "\"", 1);
        }
        uint32_t line = attrib_ident_line(g, i);
        if (line) {
            puts_(o, ",\"line\":");
            put_u64(o, line);
        }
        puts_(o, "}");
    }
    /* the pseudo-frames, ident_count + k: <runtime>.<waiting> above a
     * waiting sample's leaf, and each at the root */
    for (int k = 0; wall && k < TICKS_FRAMES; k++) {
        puts_(o, attrib_ident_count(g) || k ? ",\n{\"name\":\"" : "\n{\"name\":\"");
        puts_(o, ticks_frame_name((enum ticks_frame)k));
        puts_(o, "\"}");
    }
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
 * stack starts with the <runtime>.<waiting> frame, `waiting`; a
 * pseudo-frame's sample is that frame (`waiting` + k) alone. */
static void walk_lanes(struct walks *w, const struct node_link *links, uint32_t n_links,
                       const uint32_t *nodes, const bool *walk, unsigned n, uint32_t waiting)
{
    uint32_t at[LANES];
    bool on[LANES];
    for (unsigned k = 0; k < n; k++) {
        at[k] = nodes[k] & ~WAITING_NODE, on[k] = walk[k], w->depth[k] = 0;
        if (walk[k] && (nodes[k] & WAITING_NODE))
            w->path[k][w->depth[k]++] = waiting;
        if (walk[k] && (nodes[k] & PSEUDO_NODE) && !(nodes[k] & WAITING_NODE))
            w->path[k][w->depth[k]++] = waiting + (nodes[k] - PSEUDO_NODE), on[k] = false;
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
static void put_samples(struct out *o, const struct speedscope *p, const uint32_t *stack,
                        size_t n_samples, const struct node_link *links, struct walks *w)
{
    uint32_t n_links = attrib_node_count(p->g), waiting = attrib_ident_count(p->g);
    size_t last = 0; /* the previous sample's text: its length, at the end of buf */
    for (size_t i = 0; i < n_samples; i += LANES) {
        unsigned n = n_samples - i < LANES ? (unsigned)(n_samples - i) : LANES;
        bool walk[LANES];
        for (unsigned k = 0; k < n; k++)
            walk[k] = i + k == 0 || stack[i + k] != stack[i + k - 1];
        walk_lanes(w, links, n_links, stack + i, walk, n, waiting);
        for (unsigned k = 0; k < n; k++) {
            if (o->len + 2 + STACK_TEXT > sizeof o->buf)
                flush(o), last = 0;
            if (i + k)
                memcpy(o->buf + o->len, ",\n", 2), o->len += 2;
            char *at = o->buf + o->len;
            if (!walk[k] && !last) { /* a repeat whose text was just written out */
                walk[k] = true;
                walk_lanes(w, links, n_links, stack + i + k, &walk[k], 1, waiting);
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

/* The weights (NULL: 1 each), comma apart. */
static void put_weights(struct out *o, const uint64_t *weight, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (o->len + 1 + 20 + 8 > sizeof o->buf)
            flush(o);
        if (i)
            o->buf[o->len++] = ',';
        o->len += decimal_u64(o->buf + o->len, weight ? weight[i] : 1);
    }
}

/* Which samples a profile holds: all of them, a task's (1..), or those
 * of no task the capture described. */
#define GROUP_ALL UINT32_MAX
#define GROUP_NONE 0

/* A profile's name, as jett-export(1) gives it: with tasks "all tasks: ",
 * "task N (ns.fn): " (the function escaped as a frame's name is) or "no
 * task: ", then the samples' words, then the status when the profile is
 * not complete. */
static void put_name(struct out *o, const struct speedscope *p, bool tasks, uint32_t group)
{
    bool memory = agg_mode(p->g) == WIRE_MODE_MEMORY;
    if (tasks && group == GROUP_ALL)
        puts_(o, "all tasks: ");
    else if (tasks && group == GROUP_NONE)
        puts_(o, "no task: ");
    else if (tasks) {
        puts_(o, "task ");
        put_u64(o, group);
        struct attrib_task t;
        attrib_task(p->g, group, &t);
        if (t.ident != ATTRIB_NONE) {
            struct attrib_ident d;
            attrib_ident(p->g, t.ident, &d);
            puts_(o, " (");
            put_text(o, d.ns, d.ns_len);
            put(o, ".", 1);
            put_text(o, d.name, d.name_len);
            puts_(o, ")");
        }
        puts_(o, ": ");
    }
    /* with --weight wall only the profile of all tasks has the ticks
     * of no task, coalesced and dropped, after its samples */
    puts_(o, memory                          ? "allocated bytes, in event order"
             : p->wall && group == GROUP_ALL ? "every requested tick, in tick order"
             : p->wall                       ? "every sample, in tick order"
                                             : "jett samples, in tick order");
    enum agg_reason reason;
    if (agg_status(p->g, &reason) != AGG_COMPLETE) {
        puts_(o, "; partial (");
        puts_(o, agg_reason_name(reason));
        puts_(o, ")");
    }
}

/* After a profile's samples: with --weight wall, each pseudo-frame's
 * ticks that have no place in the stream's order, one sample of their
 * weight (the profile of all tasks only); commas first, as a list's
 * next items. */
static void put_tail(struct out *o, const struct speedscope *p, bool weights, size_t n,
                     uint32_t first_pseudo)
{
    for (int k = 0; p->wall && k < TICKS_FRAMES; k++) {
        if (p->tail[k] == 0)
            continue;
        if (n++)
            puts_(o, weights ? "," : ",\n");
        if (weights)
            put_u64(o, p->tail[k]);
        else
            put(o, "[", 1), put_u64(o, first_pseudo + (uint32_t)k), put(o, "]", 1);
    }
}

/* One sampled profile of samples[0..n) (weight NULL: 1 each), and of
 * all tasks the tail (put_tail). */
static void put_profile(struct out *o, const struct speedscope *p, bool tasks, uint32_t group,
                        const uint32_t *stack, const uint64_t *weight, size_t n,
                        const struct node_link *links, struct walks *walks)
{
    bool memory = agg_mode(p->g) == WIRE_MODE_MEMORY, tail = group == GROUP_ALL;
    uint64_t total = weight ? 0 : n;
    for (size_t i = 0; weight && i < n; i++)
        total += weight[i];
    for (int k = 0; tail && k < TICKS_FRAMES; k++)
        total += p->tail[k];
    uint32_t first_pseudo = attrib_ident_count(p->g);
    puts_(o, "{\"type\":\"sampled\",\"name\":\"");
    put_name(o, p, tasks, group);
    puts_(o, memory ? "\",\"unit\":\"bytes\"" : "\",\"unit\":\"none\"");
    puts_(o, ",\"startValue\":0,\"endValue\":");
    put_u64(o, total);
    puts_(o, ",\n\"samples\":[");
    put_samples(o, p, stack, n, links, walks);
    if (tail)
        put_tail(o, p, false, n, first_pseudo);
    puts_(o, "],\n\"weights\":[");
    put_weights(o, weight, n);
    if (tail)
        put_tail(o, p, true, n, first_pseudo);
    puts_(o, "]}");
}

/* With tasks: one profile per task the capture described, in task
 * order, each with that task's samples in the stream's order, then one
 * of the samples of no (described) task when there are any.  0, or -1
 * when out of memory. */
static int put_task_profiles(struct out *o, const struct speedscope *p,
                             const struct node_link *links, struct walks *walks)
{
    uint32_t n_tasks = attrib_task_count(p->g);
    size_t *start = calloc((size_t)n_tasks + 2, sizeof *start);
    uint32_t *stack = malloc((p->n + 1) * sizeof *stack);
    uint64_t *weight = p->weight ? malloc((p->n + 1) * sizeof *weight) : NULL;
    if (!start || !stack || (p->weight && !weight)) {
        free(start), free(stack), free(weight);
        return -1;
    }
    /* a stable counting sort by group: task N is group N, none 0 */
#define GROUP(i) (p->task[i] >= 1 && p->task[i] <= n_tasks ? p->task[i] : 0)
    for (size_t i = 0; i < p->n; i++)
        start[GROUP(i) + 1]++;
    for (uint32_t g = 1; g <= n_tasks + 1; g++)
        start[g] += start[g - 1];
    size_t none = start[1];
    for (size_t i = 0; i < p->n; i++) {
        size_t at = start[GROUP(i)]++;
        stack[at] = p->stack[i];
        if (weight)
            weight[at] = p->weight[i];
    }
#undef GROUP
    /* start[g] is now the end of group g; all tasks first, so that the
     * file opens on the whole run */
    put_profile(o, p, true, GROUP_ALL, p->stack, p->weight, p->n, links, walks);
    for (uint32_t g = 1; g <= n_tasks; g++) {
        size_t from = start[g - 1];
        puts_(o, ",\n");
        put_profile(o, p, true, g, stack + from, weight ? weight + from : NULL, start[g] - from,
                    links, walks);
    }
    if (none) {
        puts_(o, ",\n");
        put_profile(o, p, true, GROUP_NONE, stack, weight, none, links, walks);
    }
    free(start), free(stack), free(weight);
    return 0;
}

/* The file's name, speedscope's window title: the mode, the status with
 * its reason, and for a CPU capture its ticks (ticks.h). */
static void put_file_name(struct out *o, const struct speedscope *p, bool memory)
{
    enum agg_reason reason;
    enum agg_status st = agg_status(p->g, &reason);
    puts_(o, memory ? "jett memory profile: " : "jett CPU profile: ");
    puts_(o, agg_status_name(st));
    if (st != AGG_COMPLETE) {
        puts_(o, " (");
        puts_(o, agg_reason_name(reason));
        puts_(o, ")");
    }
    if (!memory) {
        char buf[200];
        ticks_describe(&p->ticks, buf, sizeof buf);
        puts_(o, "; ticks: ");
        puts_(o, buf);
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
    put_file_name(o, p, memory);
    puts_(o, "\",\"activeProfileIndex\":0,\n");
    put_frames(o, p->g, p->wall);
    puts_(o, "\"profiles\":[");
    int rc = 0;
    if (attrib_tasks_on(p->g))
        rc = put_task_profiles(o, p, links, walks);
    else
        put_profile(o, p, false, GROUP_ALL, p->stack, p->weight, p->n, links, walks);
    puts_(o, "]}\n");
    flush(o);
    free(o), free(walks), free(links);
    return rc != 0 || ferror(f) ? -1 : 0;
}

const struct ticks *speedscope_ticks(const struct speedscope *p)
{
    return &p->ticks;
}
