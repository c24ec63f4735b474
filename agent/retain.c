/* retain: the walk of retained holders (see retain.h). */
#include <stdlib.h>
#include <string.h>

#include "agent/channel.h"
#include "agent/interp-internal.h"
#include "agent/retain.h"
#include "agent/task.h"

_Static_assert((size_t)WIRE_STACK_BUDGET / (2 * STACKTAB_SLOT_CHARGE) < HEAP_SITE_NONE,
               "every stack node id fits an object's site");

/* One level of the path: a list or map and the next of its children to
 * look at (a map has two per entry, its key then its value). */
struct retain_level {
    struct heap_obj *o;
    uint64_t next;
};
_Static_assert(sizeof(struct retain_level) == RETAIN_LEVEL_CHARGE, "the documented level cost");

/* The rows one RETAINED frame holds beside the largest names. */
#define RETAIN_RECORD_ROWS ((WIRE_MAX_FRAME - 2 * WIRE_MAX_NAME - 64) / WIRE_RETAINED_ROW_SIZE)

struct retain_acc {
    uint64_t bytes, objects;
};
_Static_assert(sizeof(struct retain_acc) + sizeof(uint32_t) + WIRE_RETAINED_ROW_SIZE ==
                   RETAIN_SLOT_CHARGE,
               "the documented slot cost");

struct retain_walker {
    const struct stacktab *tab;
    size_t budget, fixed;   /* the budget, and what the slots take of it */
    uint32_t n_slots;       /* functions, <truncated-stack>, unknown */
    struct retain_acc *acc; /* per slot, for the holder being walked */
    uint32_t *touched, n_touched;
    uint8_t *rows; /* the record's rows */
    struct retain_level *path;
    uint32_t depth, cap;
    uint8_t unmarked; /* the heap's mark of an object not reached yet */
    uint64_t credited;
    uint32_t last_site, last_slot; /* the site slot_of found last */
    retain_emit_fn emit;
    void *ctx;
};

/* Once per object: inlined whole into the walk's loop. */
#define HOT static inline __attribute__((always_inline))

/* The function slot of an object's creation site (the last: unknown);
 * objects come in runs of one site, whose slot is kept. */
HOT uint32_t slot_of(struct retain_walker *w, const struct heap_obj *o)
{
    uint32_t site = o->site;
    if (site == w->last_site)
        return w->last_slot;
    uint32_t unknown = w->n_slots - 1, func = unknown;
    if (site != HEAP_SITE_NONE && site < w->tab->count)
        func = w->tab->nodes[site].func;
    w->last_site = site;
    return w->last_slot = func < unknown ? func : unknown;
}

HOT void credit(struct retain_walker *w, const struct heap_obj *o)
{
    uint32_t k = slot_of(w, o);
    if (w->acc[k].objects++ == 0)
        w->touched[w->n_touched++] = k;
    w->acc[k].bytes += heap_size(o);
}

/* Marks and credits an object not reached before; whether the walk goes
 * into it (a list or a map, or a channel or task: those are shared
 * objects, which count nothing, and the walk goes through them to the
 * values a channel holds and a task's result). */
HOT bool reach(struct retain_walker *w, struct value v)
{
    if (v.tag < V_FIRST_HEAP || v.u.o->konst == HEAP_CONST || v.u.o->mark != w->unmarked)
        return false;
    v.u.o->mark = !w->unmarked;
    if (__builtin_expect(v.u.o->konst == HEAP_SHARED_OBJ, 0))
        return true;
    w->credited++;
    credit(w, v.u.o);
    return v.u.o->type == HEAP_LIST || v.u.o->type == HEAP_MAP;
}

/* The child of a channel (its messages, oldest first) or of a task (its
 * result, then its copy of it that no join took yet) at level l's next
 * position. */
static bool next_shared_child(struct retain_level *l, struct value *out)
{
    const struct rt_shared *o = (const struct rt_shared *)l->o;
    if (o->kind == RT_CHANNEL) {
        const struct interp_channel *ch = (const struct interp_channel *)o;
        if (l->next >= ch->len)
            return false;
        *out = ch->buf[(ch->head + l->next++) % ch->buf_cap].v;
        return true;
    }
    const struct interp_task *t = (const struct interp_task *)o;
    if (l->next >= 2 || t->outcome != TASK_RETURNED)
        return false;
    *out = l->next++ == 0 ? t->result : t->sent;
    return true;
}

/* Room for one more level; false when the budget (or memory) refuses it. */
static bool grow_path(struct retain_walker *w)
{
    if (w->depth < w->cap)
        return true;
    uint32_t cap = w->cap ? w->cap * 2 : RETAIN_FIRST_LEVELS;
    if (w->fixed + (size_t)(w->cap + cap) * RETAIN_LEVEL_CHARGE > w->budget)
        return false;
    struct retain_level *p = realloc(w->path, (size_t)cap * sizeof *p);
    if (p == NULL)
        return false;
    w->path = p, w->cap = cap;
    return true;
}

/* The child of level l at its next position, advancing it; false when it
 * has no more. */
static bool next_child(struct retain_level *l, struct value *out)
{
    enum { AHEAD = 8 }; /* an object's header is a cache miss: fetch a few ahead */
    if (__builtin_expect(l->o->konst == HEAP_SHARED_OBJ, 0))
        return next_shared_child(l, out);
    if (l->o->type == HEAP_LIST) {
        const struct heap_list *list = (const struct heap_list *)l->o;
        if (l->next >= list->len)
            return false;
        if (l->next + AHEAD < list->len && list->items[l->next + AHEAD].tag >= V_FIRST_HEAP)
            __builtin_prefetch(list->items[l->next + AHEAD].u.o, 1);
        *out = list->items[l->next++];
        return true;
    }
    const struct heap_map *m = (const struct heap_map *)l->o;
    for (; l->next < 2 * (uint64_t)m->used; l->next++) {
        const struct heap_map_entry *e = &m->entries[l->next / 2];
        if (e->key == NULL)
            continue;
        if (l->next % 2 == 0 && l->next / 2 + AHEAD < m->used) {
            const struct heap_map_entry *f = &m->entries[l->next / 2 + AHEAD];
            if (f->key)
                __builtin_prefetch(f->key, 1);
            if (f->key && f->val.tag >= V_FIRST_HEAP)
                __builtin_prefetch(f->val.u.o, 1);
        }
        *out = l->next++ % 2 == 0 ? val_str(e->key) : e->val;
        return true;
    }
    return false;
}

/* Everything a binding's value reaches that nothing reached before;
 * false when the budget stopped it. */
static bool walk_value(struct retain_walker *w, struct value v)
{
    if (!reach(w, v))
        return true;
    if (!grow_path(w))
        return false;
    w->path[w->depth++] = (struct retain_level){v.u.o, 0};
    while (w->depth > 0) {
        struct value c;
        if (!next_child(&w->path[w->depth - 1], &c)) {
            w->depth--;
            continue;
        }
        if (!reach(w, c))
            continue;
        if (!grow_path(w)) {
            w->depth = 0;
            return false;
        }
        w->path[w->depth++] = (struct retain_level){c.u.o, 0};
    }
    return true;
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Sends the holder's rows (by function id, unknown last) and starts the
 * next holder from nothing. */
static int emit_rows(struct retain_walker *w, struct wire_retained *rec)
{
    if (w->n_touched > 1)
        qsort(w->touched, w->n_touched, sizeof *w->touched, u32_cmp);
    for (uint32_t i = 0; i < w->n_touched; i++) {
        uint32_t k = w->touched[i];
        struct wire_retained_row row = {k == w->n_slots - 1 ? WIRE_NONE32 : k, w->acc[k].bytes,
                                        w->acc[k].objects};
        wire_put_retained_row(w->rows + (size_t)i * WIRE_RETAINED_ROW_SIZE, &row);
        w->acc[k] = (struct retain_acc){0, 0};
    }
    /* rows that one frame cannot hold go on in records of the same holder
     * (the closing rows in more closing records) */
    uint32_t n = w->n_touched;
    bool complete = rec->complete;
    w->n_touched = 0;
    for (uint32_t at = 0;; at += RETAIN_RECORD_ROWS) {
        rec->rows = n ? w->rows + (size_t)at * WIRE_RETAINED_ROW_SIZE : NULL; /* no rows: none */
        rec->n_rows = n - at < RETAIN_RECORD_ROWS ? n - at : RETAIN_RECORD_ROWS;
        rec->complete = complete || at + rec->n_rows < n;
        if (w->emit(w->ctx, rec) != 0)
            return -1;
        if (at + rec->n_rows >= n)
            return 0;
    }
}

/* The bindings in order; 0, 1 (cut) or -1 (emit failed). */
static int walk_bindings(struct retain_walker *w, struct interp_state *s)
{
    const struct interp_program *p = s->prog;
    for (uint32_t g = 0; g < p->n_globals; g++) {
        const struct interp_global *b = &p->globals[g];
        const struct interp_ns *ns = &p->nss[b->ns];
        bool whole = walk_value(w, s->globals[g]);
        if (w->n_touched == 0)
            continue;
        struct wire_retained rec = {{ns->name, (uint32_t)strlen(ns->name)},
                                    {b->name, (uint32_t)strlen(b->name)},
                                    ns->source_id,
                                    {b->decl->start, b->decl->end},
                                    NULL,
                                    0,
                                    whole};
        if (emit_rows(w, &rec) != 0)
            return -1;
        if (!whole)
            return 1;
    }
    return 0;
}

/* Unmarks every object and, unless the walk was cut, credits what no
 * binding reached to no holder; then the closing record (without rows
 * when the walk was cut, or never started).  When the bindings reached
 * every live object, the heap's meaning of a mark flips instead of a
 * pass over them all (half the walk's time).  Every live object is on
 * the heap's list by then, a channel's messages too (runtime_gather). */
static int close_walk(struct retain_walker *w, struct interp_state *s, int rc)
{
    const struct heap_obj *end = &s->heap.live;
    if (rc == 0 && w->credited == s->heap.n_live)
        s->heap.unmarked = !w->unmarked;
    else if (rc == 0 || w->credited > 0)
        for (struct heap_obj *o = s->heap.live.next; o != end; o = o->next) {
            if (o->mark != w->unmarked)
                o->mark = w->unmarked;
            else if (rc == 0)
                credit(w, o);
        }
    /* the tasks and channels gone through read as not reached again */
    for (struct rt_shared *o = s->run->reg; o; o = o->reg_next)
        o->h.mark = s->heap.unmarked;
    if (rc < 0)
        return rc;
    struct wire_retained rec = {{NULL, 0}, {NULL, 0}, WIRE_NONE32, WIRE_SPAN_NONE,
                                NULL,      0,         rc == 0};
    return emit_rows(w, &rec) != 0 ? -1 : rc;
}

int retain_walk(struct interp_state *s, const struct stacktab *tab, size_t budget,
                retain_emit_fn emit, void *ctx)
{
    struct retain_walker w = {.tab = tab,
                              .budget = budget,
                              .emit = emit,
                              .ctx = ctx,
                              .unmarked = s->heap.unmarked,
                              .last_site = UINT32_MAX}; /* no site is that: it has 24 bits */
    w.n_slots = interp_func_count(s->prog) + 2;
    w.fixed = (size_t)w.n_slots * RETAIN_SLOT_CHARGE;
    int rc = 1; /* without room for the slots nothing is walked */
    if (w.fixed <= budget) {
        w.acc = calloc(w.n_slots, sizeof *w.acc);
        w.touched = malloc((size_t)w.n_slots * sizeof *w.touched);
        w.rows = malloc((size_t)w.n_slots * WIRE_RETAINED_ROW_SIZE);
        if (w.acc && w.touched && w.rows)
            rc = walk_bindings(&w, s);
    }
    rc = close_walk(&w, s, rc);
    free(w.acc);
    free(w.touched);
    free(w.rows);
    free(w.path);
    return rc;
}
