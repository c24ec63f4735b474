/* wire_events: the fixed-layout entries of EVENTS frames (daemon side). */
#include <stdlib.h>

#include "proto/wire-internal.h"
#include "proto/wire_alloc_entry.h"

static inline uint32_t entry_size(uint8_t kind)
{
    return kind == WIRE_ENTRY_STACK    ? WIRE_STACK_SIZE
           : kind == WIRE_ENTRY_SAMPLE ? WIRE_SAMPLE_SIZE
           : kind == WIRE_ENTRY_ALLOC  ? WIRE_ALLOC_SIZE
           : kind == WIRE_ENTRY_TASK   ? WIRE_TASK_SIZE
                                       : 0;
}

/* Whether the stream's version has compact ALLOC entries. */
static inline bool compact_stream(const struct wire_decoder *d)
{
    return d->version >= WIRE_COMPACT_VERSION;
}

/* The count must be non-zero; the entries' kinds and sizes are checked as
 * the iterator reaches them, so each byte is read once while it is hot. */
int wire_check_events(struct wire_decoder *d, const struct wire_events *ev)
{
    if (ev->count == 0) {
        wire_fail(d, WIRE_E_RANGE, "EVENTS.count: a batch holds at least one entry");
        return -1;
    }
    if (ev->bin_len / (compact_stream(d) ? WIRE_COMPACT_MIN : WIRE_STACK_SIZE) < ev->count) {
        wire_fail(d, WIRE_E_ARITY, "EVENTS.count: %u entries cannot fit in %u bytes", ev->count,
                  ev->bin_len);
        return -1;
    }
    return 0;
}

void wire_events_begin(struct wire_events_iter *it, const struct wire_events *ev)
{
    it->p = ev->bin;
    it->end = ev->bin + ev->bin_len;
    it->left = it->total = ev->count;
}

static int bad(struct wire_decoder *d, enum wire_errcode code, const char *field, const char *why)
{
    wire_fail(d, code, "%s: %s", field, why);
    return -1;
}

static int check_span(struct wire_decoder *d, const char *field, struct wire_span s)
{
    if ((s.start == WIRE_NONE32) != (s.end == WIRE_NONE32) || s.start > s.end)
        return bad(d, WIRE_E_RANGE, field, "span is neither absent nor start <= end");
    return 0;
}

/* Records the new stack's depth: its parent's plus one, at most
 * WIRE_MAX_STACK_DEPTH (a deeper stack ends in <truncated-stack>). */
static int stack_depth_put(struct wire_decoder *d, const struct wire_stack *s)
{
    if (s->stack_id >= WIRE_MAX_STACKS) {
        wire_fail(d, WIRE_E_LIMIT, "STACK record %u: more than %u stacks", s->stack_id + 1,
                  WIRE_MAX_STACKS);
        return -1;
    }
    unsigned depth = s->parent == WIRE_NONE32 ? 1 : d->stack_depth[s->parent] + 1u;
    if (depth > WIRE_MAX_STACK_DEPTH) {
        wire_fail(d, WIRE_E_RANGE, "STACK record %u: deeper than %d frames", s->stack_id + 1,
                  WIRE_MAX_STACK_DEPTH);
        return -1;
    }
    if (s->stack_id >= d->depth_cap) {
        uint32_t cap = d->depth_cap ? d->depth_cap * 2 : 1024;
        uint8_t *p = realloc(d->stack_depth, cap);
        if (!p) {
            wire_fail(d, WIRE_E_NOMEM, "out of memory decoding a STACK");
            return -1;
        }
        d->stack_depth = p, d->depth_cap = cap;
    }
    d->stack_depth[s->stack_id] = (uint8_t)depth;
    return 0;
}

static inline int read_stack(struct wire_decoder *d, const uint8_t *p, struct wire_stack *s)
{
    s->stack_id = wire_get32(p + 1);
    s->parent = wire_get32(p + 5);
    s->func_id = wire_get32(p + 9);
    s->site.start = wire_get32(p + 13);
    s->site.end = wire_get32(p + 17);
    if (s->stack_id != d->n_stacks || s->stack_id == WIRE_NONE32) {
        wire_fail(d, WIRE_E_SEQUENCE,
                  "STACK record %u: stack_id does not number the records from 0", d->n_stacks + 1);
        return -1;
    }
    if (s->parent != WIRE_NONE32 && s->parent >= s->stack_id)
        return bad(d, WIRE_E_REF, "STACK.parent", "parent stack is not defined");
    if (s->func_id >= d->n_funcs)
        return bad(d, WIRE_E_REF, "STACK.func_id", "function is not defined");
    if (check_span(d, "STACK.site", s->site) != 0)
        return -1;
    if (s->parent == WIRE_NONE32 && wire_span_present(s->site))
        return bad(d, WIRE_E_RANGE, "STACK.site", "a root frame has no call site");
    if (stack_depth_put(d, s) != 0)
        return -1;
    d->n_stacks++;
    return 0;
}

/* Shared checks of the stack and span an event names. */
static inline int check_leaf(struct wire_decoder *d, const char *rec, uint32_t stack,
                             struct wire_span span)
{
    if (stack != WIRE_NONE32 && stack >= d->n_stacks) {
        wire_fail(d, WIRE_E_REF, "%s.stack_id: the stack is not defined", rec);
        return -1;
    }
    if ((span.start == WIRE_NONE32) != (span.end == WIRE_NONE32) || span.start > span.end) {
        wire_fail(d, WIRE_E_RANGE, "%s.span: span is neither absent nor start <= end", rec);
        return -1;
    }
    if (stack == WIRE_NONE32 && span.start != WIRE_NONE32) {
        wire_fail(d, WIRE_E_RANGE, "%s.span: a span needs a stack", rec);
        return -1;
    }
    return 0;
}

static inline int read_sample(struct wire_decoder *d, const uint8_t *p, struct wire_sample *s)
{
    s->state = p[1];
    s->sequence = wire_get64(p + 2);
    s->requested_tick = wire_get64(p + 10);
    wire_get_tail(p + 18, &s->exec, &s->stack_id, &s->span);
    if (s->state > WIRE_STATE_UNAVAILABLE)
        return bad(d, WIRE_E_RANGE, "CPU_SAMPLE.state", "unknown state");
    if (d->have_sample && s->sequence <= d->last_sample_seq)
        return bad(d, WIRE_E_SEQUENCE, "CPU_SAMPLE.sequence", "does not increase");
    if (d->have_sample && s->requested_tick < d->last_tick)
        return bad(d, WIRE_E_SEQUENCE, "CPU_SAMPLE.requested_tick", "goes backwards");
    if (check_leaf(d, "CPU_SAMPLE", s->stack_id, s->span) != 0)
        return -1;
    bool has_stack = s->stack_id != WIRE_NONE32;
    if (s->state == WIRE_STATE_JETT && !has_stack)
        return bad(d, WIRE_E_RANGE, "CPU_SAMPLE.stack_id", "a jett sample needs a stack");
    if ((s->state == WIRE_STATE_RUNTIME || s->state == WIRE_STATE_UNAVAILABLE) && has_stack)
        return bad(d, WIRE_E_RANGE, "CPU_SAMPLE.stack_id",
                   "runtime and unavailable samples have no Jett stack");
    d->have_sample = true;
    d->last_sample_seq = s->sequence, d->last_tick = s->requested_tick;
    return 0;
}

/* Tasks are numbered from 1 in the order they are described; a task's
 * function is defined, and its spawn site is a span of a defined function
 * (main has neither). */
static inline int read_task(struct wire_decoder *d, const uint8_t *p, struct wire_task *t)
{
    t->task = wire_get32(p + 1);
    t->func_id = wire_get32(p + 5);
    t->spawn_func = wire_get32(p + 9);
    t->site.start = wire_get32(p + 13);
    t->site.end = wire_get32(p + 17);
    if (t->task != d->n_tasks + 1 || t->task == WIRE_NONE32) {
        wire_fail(d, WIRE_E_SEQUENCE, "TASK record %u: task does not number the tasks from 1",
                  d->n_tasks + 1);
        return -1;
    }
    if (t->func_id >= d->n_funcs)
        return bad(d, WIRE_E_REF, "TASK.func_id", "function is not defined");
    if (t->spawn_func != WIRE_NONE32 && t->spawn_func >= d->n_funcs)
        return bad(d, WIRE_E_REF, "TASK.spawn_func", "function is not defined");
    if (check_span(d, "TASK.site", t->site) != 0)
        return -1;
    if (t->spawn_func == WIRE_NONE32 && wire_span_present(t->site))
        return bad(d, WIRE_E_RANGE, "TASK.site", "a spawn site needs its function");
    d->n_tasks++;
    return 0;
}

/* Why wire_alloc_entry_ok refused an ALLOC entry: the first check it fails,
 * as an error; always -1. */
static int alloc_rejection(struct wire_decoder *d, const struct wire_alloc *a)
{
    if (a->op > WIRE_OP_FREE)
        return bad(d, WIRE_E_RANGE, "ALLOC.operation", "unknown operation");
    if (d->have_alloc && a->sequence <= d->last_alloc_seq)
        return bad(d, WIRE_E_SEQUENCE, "ALLOC.sequence", "does not increase");
    if (a->allocation_id == WIRE_NONE64)
        return bad(d, WIRE_E_RANGE, "ALLOC.allocation_id", "the id is absent");
    if (a->op == WIRE_OP_ALLOCATE && a->allocation_id < d->next_alloc_id)
        return bad(d, WIRE_E_SEQUENCE, "ALLOC.allocation_id",
                   "an allocate's id does not increase (ids are never reused)");
    if (a->op == WIRE_OP_ALLOCATE && a->old_size != WIRE_NONE64)
        return bad(d, WIRE_E_RANGE, "ALLOC.old_size", "an allocate has no old size");
    if (a->op == WIRE_OP_FREE && a->new_size != WIRE_NONE64)
        return bad(d, WIRE_E_RANGE, "ALLOC.new_size", "a free has no new size");
    if (check_leaf(d, "ALLOC", a->stack_id, a->span) != 0)
        return -1;
    return bad(d, WIRE_E_RANGE, "ALLOC", "entry refused"); /* not reached */
}

/* The message of each wire_compact_why, by the field it concerns. */
static int compact_rejection(struct wire_decoder *d, unsigned why, uint32_t index)
{
    static const struct {
        enum wire_errcode code;
        const char *what;
    } whys[] = {
        [WIRE_CW_KIND] = {WIRE_E_TYPE, "ALLOC: not a compact ALLOC entry"},
        [WIRE_CW_CUT] = {WIRE_E_TRUNCATED, "ALLOC: the entry is cut short"},
        [WIRE_CW_HEADER] = {WIRE_E_RANGE, "ALLOC.header: reserved bits or site field 3"},
        [WIRE_CW_VARINT] = {WIRE_E_RANGE,
                            "ALLOC: a varint is cut short, longer than 10 bytes or past 2^64 - 1"},
        [WIRE_CW_SEQUENCE] = {WIRE_E_SEQUENCE, "ALLOC.sequence: does not increase"},
        [WIRE_CW_ID] = {WIRE_E_RANGE, "ALLOC.allocation_id: the id is absent or past 2^64 - 1"},
        [WIRE_CW_FREE_SEQ] = {WIRE_E_RANGE, "FOLD.free_seq: past 2^64 - 1"},
        [WIRE_CW_STACK] = {WIRE_E_REF, "ALLOC.stack_id: the stack is not defined"},
        [WIRE_CW_SPAN] = {WIRE_E_RANGE, "ALLOC.span: span is neither absent nor start <= end"},
        [WIRE_CW_SPAN_STACK] = {WIRE_E_RANGE, "ALLOC.span: a span needs a stack"},
        [WIRE_CW_EXEC] = {WIRE_E_RANGE, "ALLOC.exec: a task, actor or thread past 2^32 - 2"},
        [WIRE_CW_AGAIN] = {WIRE_E_ORDER, "ALLOC: a RESIZE_AGAIN before any compact resize"},
    };
    if (why >= sizeof whys / sizeof whys[0])
        why = WIRE_CW_KIND;
    wire_fail(d, whys[why].code, "%s (entry %u)", whys[why].what, index);
    return -1;
}

size_t wire_compact_take(const uint8_t *p0, const uint8_t *end, struct wire_compact_rule *cr,
                         struct wire_alloc *a, unsigned *how, unsigned *why)
{
    const uint8_t *p = p0;
    uint8_t kind = p[0];
    if (kind < WIRE_ENTRY_ALLOCATE || kind > WIRE_ENTRY_RESIZE_AGAIN)
        return *why = WIRE_CW_KIND, 0;
    bool again = kind == WIRE_ENTRY_RESIZE_AGAIN;
    if (again && !cr->s.resized)
        return *why = WIRE_CW_AGAIN, 0;
    bool create = kind == WIRE_ENTRY_ALLOCATE;
    if (end - p < (create ? 3 : 2))
        return *why = WIRE_CW_CUT, 0;
    uint8_t d = create ? p[1] : 0, h = p[create ? 2 : 1];
    p += create ? 3 : 2;
    unsigned site = (h & WIRE_CH_SITE) >> WIRE_CH_SITE_SHIFT;
    if ((h & WIRE_CH_RESERVED) || site > WIRE_SITE_NEW || (!create && (h & WIRE_CH_ID)))
        return *why = WIRE_CW_HEADER, 0;
    struct wire_alloc_rule *r = &cr->r;
    uint64_t delta = (h & WIRE_CH_SEQ) + 1, v;
    if ((h & WIRE_CH_SEQ) == WIRE_CH_SEQ_VARINT) {
        if (!(p = wire_varint_get(p, end, &v)))
            return *why = WIRE_CW_VARINT, 0;
        if (__builtin_add_overflow(v, 4, &delta))
            return *why = WIRE_CW_SEQUENCE, 0;
    }
    uint64_t prev = r->have ? r->last : 0, seq;
    if (__builtin_add_overflow(prev, delta, &seq))
        return *why = WIRE_CW_SEQUENCE, 0;
    uint64_t id = r->next_id;
    if (create && (h & WIRE_CH_ID)) {
        if (!(p = wire_varint_get(p, end, &v)))
            return *why = WIRE_CW_VARINT, 0;
        if (__builtin_add_overflow(id, v, &id) || __builtin_add_overflow(id, 1, &id))
            return *why = WIRE_CW_ID, 0;
    } else if (again) {
        id = cr->s.resized_id;
    } else if (!create) {
        if (!(p = wire_varint_get(p, end, &v)))
            return *why = WIRE_CW_VARINT, 0;
        id = r->next_id - 1 - v;
    }
    if (id == WIRE_NONE64)
        return *why = WIRE_CW_ID, 0;
    uint64_t old = again ? cr->s.resized_size : WIRE_NONE64, neu = WIRE_NONE64;
    if (!create && !again && !(p = wire_varint_get(p, end, &old)))
        return *why = WIRE_CW_VARINT, 0;
    if (kind != WIRE_ENTRY_FREE && !(p = wire_varint_get(p, end, &neu)))
        return *why = WIRE_CW_VARINT, 0;
    if (kind == WIRE_ENTRY_RESIZE || again)
        neu = wire_unzigzag(old, neu);
    if (d && __builtin_add_overflow(seq, d, &old)) /* a fold's free sequence */
        return *why = WIRE_CW_FREE_SEQ, 0;
    struct wire_site s;
    if (site == WIRE_SITE_NEW) {
        if (!(p = wire_compact_get_site(p, end, r->n_stacks, &s, why)))
            return 0;
    } else {
        s = cr->s.site[site];
    }
    struct wire_exec x = cr->s.exec;
    if ((h & WIRE_CH_EXEC) && (!(p = wire_compact_get32(p, end, &x.task, why)) ||
                               !(p = wire_compact_get32(p, end, &x.actor, why)) ||
                               !(p = wire_compact_get32(p, end, &x.thread, why))))
        return 0;
    /* taken: the rule moves past it */
    if (site != WIRE_SITE_LAST) {
        cr->s.site[1] = cr->s.site[0];
        cr->s.site[0] = s;
    }
    cr->s.exec = x;
    r->have = true;
    r->last = seq;
    if (create)
        r->next_id = id + 1;
    bool resize = kind == WIRE_ENTRY_RESIZE || again;
    if (resize)
        cr->s.resized = true, cr->s.resized_id = id, cr->s.resized_size = neu;
    *a = (struct wire_alloc){
        seq,
        create ? (d ? WIRE_OP_FOLD : WIRE_OP_ALLOCATE) : resize ? WIRE_OP_RESIZE : WIRE_OP_FREE,
        id,
        old,
        neu,
        x,
        s.stack,
        s.span};
    *how = site;
    return (size_t)(p - p0);
}

size_t wire_compact_size(const uint8_t *p, const uint8_t *end)
{
    uint8_t kind = p < end ? p[0] : 0;
    if (kind < WIRE_ENTRY_ALLOCATE || kind > WIRE_ENTRY_RESIZE_AGAIN)
        return 0;
    bool create = kind == WIRE_ENTRY_ALLOCATE;
    const uint8_t *q = p + (create ? 3 : 2);
    if (q > end)
        return 0;
    uint8_t h = q[-1];
    uint64_t v;
    /* sequence, id, sizes */
    unsigned n =
        ((h & WIRE_CH_SEQ) == WIRE_CH_SEQ_VARINT) + (kind == WIRE_ENTRY_RESIZE_AGAIN ? 1
                                                     : create ? ((h & WIRE_CH_ID) != 0) + 1u
                                                     : kind == WIRE_ENTRY_RESIZE ? 3u
                                                                                 : 2u);
    while (n-- > 0)
        if (!(q = wire_varint_get(q, end, &v)))
            return 0;
    if (((h & WIRE_CH_SITE) >> WIRE_CH_SITE_SHIFT) == WIRE_SITE_NEW) {
        uint64_t start;
        if (!(q = wire_varint_get(q, end, &v)) || !(q = wire_varint_get(q, end, &start)) ||
            (start != 0 && !(q = wire_varint_get(q, end, &v))))
            return 0;
    }
    for (n = (h & WIRE_CH_EXEC) ? 3 : 0; n-- > 0;)
        if (!(q = wire_varint_get(q, end, &v)))
            return 0;
    return (size_t)(q - p);
}

static inline void alloc_rule_get(const struct wire_decoder *d, struct wire_alloc_rule *r)
{
    *r = (struct wire_alloc_rule){d->last_alloc_seq, d->next_alloc_id, d->n_stacks, d->have_alloc};
}

static inline void alloc_rule_put(struct wire_decoder *d, const struct wire_alloc_rule *r)
{
    d->have_alloc = r->have;
    d->last_alloc_seq = r->last;
    d->next_alloc_id = r->next_id;
}

static inline void compact_rule_get(const struct wire_decoder *d, struct wire_compact_rule *r)
{
    alloc_rule_get(d, &r->r);
    r->s = d->compact;
}

static inline void compact_rule_put(struct wire_decoder *d, const struct wire_compact_rule *r)
{
    alloc_rule_put(d, &r->r);
    d->compact = r->s;
}

/* A compact ALLOC entry: its size, or 0 (and the decoder failed). */
static inline size_t read_compact(struct wire_decoder *d, const uint8_t *p, const uint8_t *end,
                                  uint32_t index, struct wire_alloc *a)
{
    struct wire_compact_rule r;
    compact_rule_get(d, &r);
    unsigned how, why = WIRE_CW_KIND;
    size_t n = wire_compact_take(p, end, &r, a, &how, &why);
    if (n == 0)
        return compact_rejection(d, why, index), 0;
    compact_rule_put(d, &r);
    return n;
}

static inline int read_alloc(struct wire_decoder *d, const uint8_t *p, struct wire_alloc *a)
{
    struct wire_alloc_rule r;
    alloc_rule_get(d, &r);
    wire_alloc_entry_read(p, a);
    if (!wire_alloc_entry_ok(p[0], a, &r))
        return alloc_rejection(d, a);
    wire_alloc_rule_pass(&r, a);
    alloc_rule_put(d, &r);
    return 0;
}

int wire_events_next(struct wire_decoder *d, struct wire_events_iter *it, struct wire_event *ev)
{
    if (d->failed)
        return -1;
    if (it->left == 0) {
        if (it->p != it->end) {
            wire_fail(d, WIRE_E_ARITY, "EVENTS.count: %zu bytes after the last counted entry",
                      (size_t)(it->end - it->p));
            return -1;
        }
        return 0;
    }
    const uint8_t *p = it->p;
    size_t avail = (size_t)(it->end - p);
    uint32_t index = it->total - it->left;
    /* A frame read in place (a mapped capture) comes from memory the
     * cache has not seen; the streamer stops at page ends, this does not.
     * Never faults, even past the end. */
    __builtin_prefetch(p + 2048);
    ev->kind = p[0];
    if (ev->kind >= WIRE_ENTRY_ALLOCATE && ev->kind <= WIRE_ENTRY_RESIZE_AGAIN &&
        compact_stream(d)) {
        size_t n = read_compact(d, p, it->end, index, &ev->u.alloc);
        ev->kind = WIRE_ENTRY_ALLOC;
        it->p = p + n;
        it->left--;
        return n > 0 ? 1 : -1;
    }
    uint32_t size = entry_size(ev->kind);
    if (size == 0) {
        wire_fail(d, WIRE_E_TYPE, "EVENTS.entries: entry %u has unknown kind %u", index, p[0]);
        return -1;
    }
    if (avail < size) {
        wire_fail(d, WIRE_E_TRUNCATED, "EVENTS.entries: entry %u is cut short", index);
        return -1;
    }
    int rc;
    if (ev->kind == WIRE_ENTRY_ALLOC)
        rc = read_alloc(d, p, &ev->u.alloc);
    else if (ev->kind == WIRE_ENTRY_SAMPLE)
        rc = read_sample(d, p, &ev->u.sample);
    else if (ev->kind == WIRE_ENTRY_TASK)
        rc = read_task(d, p, &ev->u.task);
    else
        rc = read_stack(d, p, &ev->u.stack);
    it->p = p + size;
    it->left--;
    return rc == 0 ? 1 : -1;
}

const uint8_t *wire_events_alloc_open(struct wire_decoder *d, struct wire_events_iter *it,
                                      size_t max, size_t *room, struct wire_alloc_rule *r)
{
    size_t fit = (size_t)(it->end - it->p) / WIRE_ALLOC_SIZE;
    if (max > it->left)
        max = it->left;
    if (max > fit)
        max = fit;
    *room = d->failed ? 0 : max;
    alloc_rule_get(d, r);
    return it->p;
}

void wire_events_alloc_close(struct wire_decoder *d, struct wire_events_iter *it,
                             const struct wire_alloc_rule *r, size_t n)
{
    alloc_rule_put(d, r);
    it->p += n * WIRE_ALLOC_SIZE;
    it->left -= (uint32_t)n;
}

const uint8_t *wire_events_compact_open(struct wire_decoder *d, const struct wire_events_iter *it,
                                        uint32_t *room, struct wire_compact_rule *r)
{
    *room = d->failed || !compact_stream(d) ? 0 : it->left;
    compact_rule_get(d, r);
    return it->p;
}

void wire_events_compact_close(struct wire_decoder *d, struct wire_events_iter *it,
                               const struct wire_compact_rule *r, const uint8_t *to, uint32_t n)
{
    compact_rule_put(d, r);
    it->p = to;
    it->left -= n;
}

int wire_events_batch(struct wire_decoder *d, struct wire_events_iter *it, struct wire_event *ev,
                      unsigned max, unsigned *n)
{
    int rc = 1;
    *n = 0;
    while (*n < max && (rc = wire_events_next(d, it, &ev[*n])) > 0)
        ++*n;
    return rc;
}

uint32_t wire_event_stack(const struct wire_event *ev)
{
    return ev->kind == WIRE_ENTRY_SAMPLE  ? ev->u.sample.stack_id
           : ev->kind == WIRE_ENTRY_ALLOC ? ev->u.alloc.stack_id
                                          : WIRE_NONE32;
}
