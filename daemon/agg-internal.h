/*
 * agg internals shared by the aggregation files and the ranking.  Only
 * daemon/ includes this header.
 *
 * Id spaces: the wire's source, function and stack ids index `sources`,
 * `funcs` and `nodes` directly (they are dense from 0).  A function id maps
 * to an interned identity (`idents`): two FUNC records with the same
 * namespace, name, source and declaration span are one function.  Each
 * stack node maps to an interned call chain (`chains`): the sequence of
 * identities from the root to that node, whatever the call sites were.
 */
#ifndef JETT_DAEMON_AGG_INTERNAL_H
#define JETT_DAEMON_AGG_INTERNAL_H

#include "daemon/agg.h"
#include "daemon/export/costrun.h"
#include "daemon/live_track.h"

#define AGG_NONE UINT32_MAX

/* A growable array whose allocation (cap * elem bytes) is charged to a
 * budget counter by agg_vec_grow. */
struct agg_vec {
    void *p;
    uint32_t len, cap, elem;
};

/* Open-addressing index of entry numbers, keyed by a 32-bit hash stored in
 * the slot so that a resize needs no callback.  Slot entry AGG_NONE is
 * empty.  At most half full. */
struct agg_slot {
    uint32_t entry, hash;
};
struct agg_index {
    struct agg_slot *slots;
    uint32_t cap, n;
};

/* Equality of entry `entry` with `key`, for agg_index_find. */
typedef bool (*agg_eq_fn)(const void *ctx, uint32_t entry, const void *key);

struct agg_source {
    uint8_t origin;
    bool path_ok;  /* a normalized relative path (else the source is unavailable) */
    bool spans_ok; /* spans sorted, disjoint, inside the text (else no excerpts) */
    char *path;    /* NUL-terminated */
    uint32_t path_len;
    char *text;
    uint32_t text_len;
    struct wire_source_span *spans;
    uint32_t n_spans;
    uint32_t *lines; /* offset of each line start; lines[0] == 0 */
    uint32_t n_lines;
};

#define AGG_IDENT_TRUNCATED 1u /* <runtime>.<truncated-stack> */

struct agg_ident {
    uint32_t ns, ns_len, name, name_len; /* offsets into `strings` */
    uint32_t source;                     /* index into sources, AGG_NONE: unavailable */
    struct wire_span decl;               /* WIRE_SPAN_NONE: unavailable */
    uint32_t bucket;                     /* CPU function or memory site bucket offset, AGG_NONE */
    uint32_t hash;
    uint32_t flags;
};

#define AGG_NODE_OUTERMOST 1u /* no ancestor has the same identity */
#define AGG_NODE_INVALID 2u   /* defined by a bad record: samples are unavailable */
#define AGG_NODE_SOURCED 4u   /* its identity has a source (a copy, for the event path) */
/* The call that made this frame counts for a call line of its caller:
 * its site lies in the caller's source and no frame further out is the
 * caller's identity at the same call (jett-profile(7), call lines). */
#define AGG_NODE_CALL_OUTERMOST 8u

struct agg_node {
    uint32_t parent, ident, chain;
    uint32_t chain_bucket; /* a copy of the chain's bucket offset once it
                            * exists, so the sample walk skips the chain
                            * table (buckets are never removed); in memory
                            * mode the chain to the outermost occurrence
                            * of the node's leaf identity */
    union {
        uint32_t leaf_bucket;   /* likewise the leaf identity's site bucket in
                                 * memory mode: an allocation event reaches its
                                 * buckets from the node without the identity */
        uint32_t callee_bucket; /* CPU: the callee bucket of the call that made
                                 * the frame (AGG_NODE_CALL_OUTERMOST) */
    };
    uint32_t site;  /* the STACK's call site: start offset in the caller's
                     * source, AGG_NONE when it has none */
    uint16_t depth; /* 1 for a root frame */
    uint16_t flags;
};

struct agg_chain {
    uint32_t parent; /* chain of the caller, AGG_NONE at the root */
    uint32_t ident;
    uint32_t bucket; /* chain bucket offset (samples or bytes), AGG_NONE */
    uint32_t hash;
};

/* CPU detail buckets, carved from the CPU arena. */
struct agg_fnb {
    uint64_t inclusive, self;
    uint64_t calls;    /* from CALLS */
    uint32_t hot_head; /* first hot-line bucket of this function */
    uint32_t pad;
};
struct agg_chainb {
    uint64_t samples;
};
/* A hot line, or (ident with AGG_HOT_WAITING) a waiting call site: the
 * waiting samples at a leaf statement, listed from wait_head; or (key
 * with AGG_HOT_SUB) a callee of a call line (ident: the callee, start:
 * the call line's offset), listed from the call line's `callees`, or a
 * chain of a waiting call site (ident: the chain, start: the site's
 * offset), listed from wait_chain_head.  All are found through
 * hot_index by (ident with its kind bits, start). */
#define AGG_HOT_WAITING 0x80000000u
#define AGG_HOT_CALL 0x40000000u /* agg_callb */
#define AGG_HOT_SUB 0xc0000000u
#define AGG_HOT_KIND 0xc0000000u
struct agg_hotb {
    uint64_t self;
    uint32_t ident;
    uint32_t start, end; /* leaf statement span, AGG_NONE: unavailable */
    uint32_t next;
};

/* A call line (ident with AGG_HOT_CALL: the caller): the calls made from
 * the call site starting at `start` (from CALLS), listed from call_head,
 * with its callees' samples in the list from `callees`.  Laid out as a
 * hot line up to `next`, so that one index finds both. */
struct agg_callb {
    uint64_t calls;
    uint32_t ident;
    uint32_t start, end;
    uint32_t next;
    uint32_t callees;
    uint32_t pad;
};

/* Live bytes of the allocations one creation site (a function, or a
 * stack node) holds, with live_at_peak kept lazily: `at_peak` is the
 * value at the latest global peak once the site has changed after it
 * (last_change > peak_event); otherwise `live` still is. */
struct agg_live {
    uint64_t live, at_peak, last_change;
};

/* Memory-mode site bucket (one per creation or resizing function), also
 * carved from the arena. */
struct agg_siteb {
    uint64_t allocation_count, allocated_bytes, resize_count, freed_bytes;
    struct agg_live held;
};

/* What the exports read per stack node (agg_keep_detail): CPU samples
 * with the node as leaf; allocation pressure (initial bytes and growth),
 * allocations created and events with pressure at the node; the live
 * bytes of allocations it created; the STACK's call site (its start
 * offset in the caller's source, WIRE_NONE32: none).  Held beside the
 * node table, charged to no budget: it is bounded by the capture's
 * stacks. */
struct agg_node_detail {
    uint64_t self, count, events;
    uint64_t waiting; /* CPU: waiting samples with the node as leaf */
    struct agg_live held;
    /* with agg_keep_node_lines: the leaf span key (start + 1, 0: none)
     * of every event so far while `lines` is AGG_LINES_ONE; from the
     * second key on (AGG_LINES_MANY) the costs are in node_lines */
    uint32_t leaf_key;
    uint8_t lines;
};
enum { AGG_LINES_NONE, AGG_LINES_ONE, AGG_LINES_MANY };

/* A node's detail summed over its subtree (the node and all it called):
 * what a call edge into it carries. */
struct agg_node_below {
    uint64_t self, count, events, retained, live_at_peak, waiting;
};
struct agg_mchainb {
    uint64_t bytes;
};

/* Memory-mode allocation line: the allocations created and the bytes
 * allocated (initial sizes and growth) by events whose leaf statement
 * starts at `start` in the leaf function's source.  Carved from the
 * arena, found through hot_index, listed from mem.line_head. */
struct agg_lineb {
    uint64_t bytes, count;
    uint32_t ident, start, end, next;
};

/* A live record (live_table.h) packs its size (low 40 bits) and creation
 * site (high 24 bits: the site bucket's arena offset in 8-byte units,
 * which fits because the arena is at most 64 MiB; AGG_MEM_NO_SITE when it
 * has none).  With detail kept, the site is the creation stack node
 * instead (node tables under the 16 MiB stack budget hold fewer than
 * 2^24 - 2 nodes), whose leaf bucket is the site.  A size of AGG_MEM_WIDE
 * (2^40 - 1) or more is kept whole beside the record (live_track_set_wide)
 * and its size field holds AGG_MEM_WIDE: every size up to 2^64 - 1 is
 * exact. */
#define AGG_MEM_SIZE_BITS 40
#define AGG_MEM_WIDE ((UINT64_C(1) << AGG_MEM_SIZE_BITS) - 1)
#define AGG_MEM_NO_SITE 0xfffffeu /* 0xffffff never occurs: no record is LIVE_EMPTY */
#define AGG_MEM_SITE_SHIFT 3

/* Past this many bytes of live records, nodes and buckets, a run of
 * allocation events prefetches what its entries name (agg_mem_run):
 * measured, below it the prefetches cost more than they save, even when
 * the events' ids and stacks are random. */
#define AGG_MEM_WARM_BYTES ((size_t)16 << 20)

#define AGG_LINE_SEEN 64

/* A fold's free that a memory timeline has yet to see (agg_watch_live):
 * its bytes leave the live total once the stream passes its sequence.
 * A fold's free is at most WIRE_FOLD_MAX sequences past the fold, and
 * sequences increase, so at most that many wait. */
struct agg_fold_pending {
    uint64_t free_seq, order, size;
    uint32_t key; /* the creation site's, as agg_live_fn reports it */
};
#define AGG_FOLDS_PENDING (WIRE_FOLD_MAX + 1)

struct agg_mem {
    uint64_t allocation_count, resize_count, free_count, allocated_bytes, freed_bytes, attributed;
    uint64_t live, peak, events, peak_event;
    uint64_t max_id;
    /* limited: no allocation is tracked (the records were released for
     * the buckets); full: the buckets alone filled the budget, and no
     * more are made (jett-profile(7), Budgets) */
    bool have_id, limited, full;
    uint32_t line_head; /* first allocation line, AGG_NONE */
    size_t warm_bytes;  /* runs prefetch past this (agg_prefetch_above) */
    /* the allocation lines of recent spans, by a hash of (function,
     * span): a loop that allocates at a few statements finds their
     * lines without the index.  `key` is the function's identity and the
     * span's start (agg_line_key), `line` the bucket offset; an empty
     * one's identity is AGG_NONE, which no function has */
    struct agg_line_seen {
        uint64_t key;
        uint32_t end, line;
    } line_seen[AGG_LINE_SEEN];
    struct live_track track; /* the live records */
    struct live_limit limit; /* their growth, under the retention budget */
    /* the folds' frees still to come, for a watcher: a heap by free
     * sequence, then the folds' order */
    struct agg_fold_pending folds[AGG_FOLDS_PENDING];
    uint32_t n_folds;
    uint64_t fold_order;
};

/* The walk's RETAINED records (agg_retained.c): a list of blocks in the
 * arena, and the sums of every record's rows, kept or not. */
struct agg_retained {
    uint32_t head, tail; /* block offsets, AGG_NONE: none */
    bool seen, closed, cut, refused;
    uint64_t bytes, objects;
};

struct agg_cpu_totals {
    uint64_t recorded, attributed, runtime, waiting, unavailable, truncated;
};

/* A task of the run (agg_tasks.c): its entry function and spawn site
 * (identities, AGG_NONE: unavailable; the site's start offset in the
 * spawning function's source), its jett and runtime samples and its
 * waiting samples (cpu), the bytes it allocated (initial sizes and
 * growth) and the live bytes of the allocations it created (memory).  A
 * row per task, charged to the stack budget. */
struct agg_task {
    uint32_t ident, spawn_ident, spawn_at, pad;
    uint64_t samples, waiting, allocated, live;
};

/* What an export keeps of one stack node in one task (agg_keep_task_nodes):
 * as agg_node_detail's self, count and events, and the live bytes of the
 * allocations the task created at the node. */
struct agg_task_node {
    uint32_t node, task; /* task: the row, AGG_NONE for events of no task */
    uint64_t self, count, events, live;
    uint64_t waiting; /* CPU: waiting samples with the node as leaf */
};

struct agg {
    bool have_hello, have_finish, ended;
    uint8_t mode;
    struct wire_config cfg;
    char *backend;
    uint32_t capabilities;
    bool colour;
    struct wire_finish finish;

    uint64_t errors;
    char first_error[256];

    /* Stack tables: everything below up to `arena` is charged here. */
    size_t stack_bytes;
    bool stack_limited;                    /* a record was refused by the stack budget */
    uint32_t n_sources, n_funcs, n_stacks; /* ids defined on the wire */
    char label[512];                       /* how an error message names a record (never by id) */
    struct agg_vec sources;                /* struct agg_source */
    struct agg_index source_index;
    struct agg_vec strings; /* char */
    struct agg_vec idents;  /* struct agg_ident */
    struct agg_index ident_index;
    struct agg_vec funcs; /* uint32_t ident or AGG_NONE */
    struct agg_vec nodes; /* struct agg_node */
    struct agg_vec chains;
    struct agg_index chain_index;

    /* CPU detail: an arena of cfg.cpu_budget bytes plus the hot index
     * (in memory mode, the index of the allocation lines). */
    unsigned char *arena; /* cpu_budget (cpu) or retention_budget (memory) bytes */
    size_t arena_size;
    size_t arena_used; /* arena bytes handed out */
    struct agg_index hot_index;
    uint32_t wait_head;       /* first waiting call site, AGG_NONE */
    uint32_t wait_chain_head; /* first chain of a waiting call site, AGG_NONE */
    uint32_t call_head;       /* first call line, AGG_NONE */
    bool have_calls;          /* a CALLS record was taken */
    bool cpu_limited;
    struct agg_cpu_totals cpu;
    struct agg_mem mem;
    struct agg_retained retained;
    /* per-node quantities for the exports; NULL unless agg_keep_detail */
    bool detail;
    agg_live_fn live_fn; /* agg_watch_live, without detail only */
    void *live_ctx;
    struct agg_node_detail *node_detail;
    uint32_t node_detail_cap;
    /* the same summed over each node's subtree, once the stream ended */
    struct agg_node_below *node_below;
    /* and self costs by (leaf identity, leaf span start + 1, 0: none):
     * samples, or bytes and allocations (costrun.h) */
    struct costrun *self_lines;
    /* and by (stack node, leaf span start + 1) for the nodes whose
     * events had more than one leaf span (agg_keep_node_lines) */
    bool keep_node_lines;
    struct costrun *node_lines;
    /* agg_keep_waiting: in CPU mode the self costs hold waiting samples
     * as a second value */
    bool keep_waiting;
    /* agg_keep_node_lines_only: neither self_lines nor node_below */
    bool node_lines_only;
    /* agg_keep_node_self: each node's self cost (room for node_self_cap
     * nodes) and, once the stream ended, its subtree's */
    bool keep_node_self;
    uint64_t *node_self, *node_self_below;
    uint32_t node_self_cap;
    uint64_t last_sequence;
    bool have_sequence;
    /* tasks, when HELLO declares task attribution (agg_tasks.c) */
    bool tasks_on;
    uint32_t n_tasks;     /* described on the wire */
    struct agg_vec tasks; /* struct agg_task, task N at N - 1 */
    uint32_t cur_task;    /* the task of the event being aggregated */
    /* agg_keep_task_nodes: per (stack node, task) pair, their self costs
     * by leaf span (by pair), and the pairs by (node, task) once ended */
    bool keep_task_nodes;
    struct agg_vec task_nodes; /* struct agg_task_node */
    struct agg_index task_node_index;
    struct costrun *task_lines;
    uint32_t *task_node_order;
};

/* ---- agg_util.c ---- */
void agg_errorf(struct agg *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether a record named `what` comes between HELLO and FINISH; an error
 * ("what before HELLO", "what after FINISH") when not. */
bool agg_in_stream(struct agg *a, const char *what);
uint32_t agg_hash_bytes(uint32_t h, const void *p, size_t n);
uint32_t agg_hash_u32(uint32_t h, uint32_t v);
/* Bytes that room for `more` elements would add; the caller checks its
 * budget with it before reserving.  Reserve charges the growth. */
size_t agg_vec_growth(const struct agg_vec *v, uint32_t more);
int agg_vec_reserve(struct agg_vec *v, uint32_t more, size_t *charged);
/* Appends one element (len incremented) and returns it; NULL: no memory. */
void *agg_vec_push(struct agg_vec *v, size_t *charged);
void agg_vec_free(struct agg_vec *v);
uint32_t agg_index_find(const struct agg_index *ix, uint32_t hash, agg_eq_fn eq, const void *ctx,
                        const void *key);
/* Bytes the index would hold after one more insert. */
size_t agg_index_bytes_after_insert(const struct agg_index *ix);
/* The most the index holds during one more insert: a resize allocates the
 * new table before it frees the old one, and budgets count both. */
size_t agg_index_peak_after_insert(const struct agg_index *ix);
size_t agg_index_bytes(const struct agg_index *ix);
/* Inserts (growing first if needed); -1 when memory runs out. */
int agg_index_insert(struct agg_index *ix, uint32_t hash, uint32_t entry);
void agg_index_free(struct agg_index *ix);

static inline void *agg_vec_at(const struct agg_vec *v, uint32_t i)
{
    return (char *)v->p + (size_t)i * v->elem;
}

/* What line_seen knows a line by, with the span's end: its function's
 * identity and the span's start, compared at once. */
static inline uint64_t agg_line_key(uint32_t ident, uint32_t start)
{
    return (uint64_t)ident << 32 | start;
}

/* Stack node i, typed: indexing by the vector's element size would
 * multiply on every access of an event's path. */
static inline struct agg_node *agg_node_at(const struct agg *a, uint32_t i)
{
    return (struct agg_node *)a->nodes.p + i;
}

static inline struct agg_ident *agg_ident_at(const struct agg *a, uint32_t i)
{
    return (struct agg_ident *)agg_vec_at(&a->idents, i);
}

static inline const char *agg_str(const struct agg *a, uint32_t off)
{
    return (const char *)a->strings.p + off;
}

static inline void *agg_bucket_at(const struct agg *a, uint32_t off)
{
    return a->arena + off;
}

/* `n` zeroed bytes of the bucket arena (allocated at `size` bytes on
 * first use): their offset, or AGG_NONE with an error naming `what` when
 * memory runs out.  The caller checked its budget. */
uint32_t agg_arena_take(struct agg *a, size_t size, size_t n, const char *what);
void agg_arena_free(struct agg *a);

/* ---- agg_tables.c ---- */
void agg_tables_free(struct agg *a);

/* ---- agg_tasks.c ---- */
void agg_tasks_hello(struct agg *a);
/* An accepted sample or allocation event, for its task's row. */
void agg_tasks_sample(struct agg *a, const struct wire_sample *s);
/* With tasks each live record keeps its creator's word beside it: the
 * task's row (its number - 1) in the low bits (all ones: an allocation of
 * no task, kept only for its pair), and with pairs kept the creation
 * pair + 1 above. */
#define AGG_TASK_ROW_BITS 24
#define AGG_TASK_ROW_MASK ((UINT64_C(1) << AGG_TASK_ROW_BITS) - 1)
#define AGG_CREATOR_NONE AGG_TASK_ROW_MASK

/* The creator's word of the record a RESIZE or FREE of id is about to
 * change (read before the memory aggregation retires it), else
 * AGG_CREATOR_NONE. */
static inline uint64_t agg_tasks_creator(const struct agg *a, uint8_t op, uint64_t id)
{
    if (op != WIRE_OP_RESIZE && op != WIRE_OP_FREE)
        return AGG_CREATOR_NONE;
    const uint64_t *r = live_track_find(&a->mem.track, id);
    return r ? *live_track_creator(&a->mem.track, id, r) : AGG_CREATOR_NONE;
}

/* `creator`: agg_tasks_creator of the event, read before it was
 * aggregated. */
void agg_tasks_alloc(struct agg *a, const struct wire_alloc *e, uint64_t creator);
/* The same, of an event given by its fields (a run's quick ways read no
 * event in memory): agg_tasks_credit_in, out of line. */
void agg_tasks_credit(struct agg *a, uint8_t op, uint64_t id, uint64_t old, uint64_t neu,
                      uint32_t task, uint32_t stack, uint64_t creator);

/* Row i (below a->tasks.len): the vector holds rows, indexed without
 * its element size. */
static inline struct agg_task *agg_task_row_at(struct agg *a, uint32_t i)
{
    return (struct agg_task *)a->tasks.p + i;
}

/* The row of an event's task, NULL when it has none. */
static inline struct agg_task *agg_task_row(struct agg *a, uint32_t task)
{
    if (task == WIRE_NONE32 || task == 0 || task > a->tasks.len)
        return NULL;
    return agg_task_row_at(a, task - 1);
}

/* The creator's word of an allocate of row `index` with the pair of its
 * stack node, kept for an export (agg_keep_task_nodes). */
uint64_t agg_tasks_pair_word(struct agg *a, uint32_t stack, uint64_t index);

/* The live bytes of a creator's row and pair move by delta (modulo
 * 2^64); a word names rows and pairs that exist, checked all the same. */
static inline void agg_tasks_creator_live(struct agg *a, uint64_t word, uint64_t delta)
{
    uint64_t index = word & AGG_TASK_ROW_MASK, pair1 = word >> AGG_TASK_ROW_BITS;
    if (index < a->tasks.len)
        agg_task_row_at(a, (uint32_t)index)->live += delta;
    if (__builtin_expect(pair1 != 0, 0) && pair1 - 1 < a->task_nodes.len)
        ((struct agg_task_node *)agg_vec_at(&a->task_nodes, (uint32_t)(pair1 - 1)))->live += delta;
}

/* What an accepted event adds to its task's row and its creator's live
 * bytes.  In line in a run's quick ways, where each entry's operation is
 * known where it is credited: a call per entry, with its saved
 * registers, was a tenth of a run's instructions with tasks. */
static inline __attribute__((always_inline)) void
agg_tasks_credit_in(struct agg *a, uint8_t op, uint64_t id, uint64_t old, uint64_t neu,
                    uint32_t task, uint32_t stack, uint64_t creator)
{
    struct agg_task *row = agg_task_row(a, task);
    if (op == WIRE_OP_FOLD) { /* its allocate and free: allocated, never live at the end */
        if (row)
            row->allocated += neu;
        return;
    }
    if (op == WIRE_OP_ALLOCATE) {
        if (row)
            row->allocated += neu;
        /* an allocation the budget left untracked is live in no task:
         * the memory figures then say they are not exact */
        uint64_t *rec = live_track_find(&a->mem.track, id);
        if (rec == NULL)
            return;
        uint64_t index = row ? (uint64_t)(row - agg_task_row_at(a, 0)) : AGG_TASK_ROW_MASK;
        uint64_t word = __builtin_expect(a->task_lines == NULL, 1) || stack >= a->nodes.len
                            ? index
                            : agg_tasks_pair_word(a, stack, index);
        *live_track_creator(&a->mem.track, id, rec) = word;
        agg_tasks_creator_live(a, word, neu);
        return;
    }
    if (op == WIRE_OP_RESIZE && row && neu > old)
        row->allocated += neu - old;
    agg_tasks_creator_live(a, creator, op == WIRE_OP_RESIZE ? neu - old : 0 - old);
}
void agg_tasks_free(struct agg *a);
/* The self cost w (key: leaf span start + 1) of an event at node, for
 * its task's pair (agg_keep_task_nodes). */
void agg_tasks_node_self(struct agg *a, uint32_t node, uint32_t key, const uint64_t *w);
/* A waiting sample at node, for its task's pair. */
void agg_tasks_node_waiting(struct agg *a, uint32_t node);
/* Ends the pairs' runs and puts the pairs in (node, task) order. */
void agg_tasks_end(struct agg *a);
/* True when `id` names a stored, valid stack node. */
bool agg_node_usable(const struct agg *a, uint32_t id);

/* The export detail of a stored node (agg_keep_detail only). */
static inline struct agg_node_detail *agg_detail_at(const struct agg *a, const struct agg_node *n)
{
    return &a->node_detail[n - (const struct agg_node *)a->nodes.p];
}

/* Adds one event's self cost at its leaf node and leaf span (start
 * WIRE_NONE32: unknown) to the detail, once the node's detail has
 * counted it (self, and count in memory mode); a collector error when
 * out of memory. */
void agg_detail_self(struct agg *a, const struct agg_node *n, uint32_t start, const uint64_t *w);
/* The same for a waiting sample at leaf node n (CPU): its waiting count
 * and, with agg_keep_waiting, its cost as the second value. */
void agg_detail_waiting(struct agg *a, const struct agg_node *n, uint32_t start);
/* A node's second self value: waiting samples (CPU), or allocations. */
static inline uint64_t agg_detail_second(const struct agg *a, const struct agg_node_detail *d)
{
    return a->mode == WIRE_MODE_CPU ? d->waiting : d->count;
}
/* Sums the detail over every node's subtree once the stream ended; a
 * collector error when out of memory. */
void agg_detail_settle(struct agg *a);
/* The same for agg_keep_node_self's costs. */
void agg_node_self_settle(struct agg *a);

/* ---- agg_mem.c ---- */
int agg_mem_event(struct agg *a, const struct wire_alloc *e);
size_t agg_mem_bytes(const struct agg *a);
void agg_mem_free(struct agg *a);
/* Sets the live records' limit once HELLO has set the budget. */
void agg_mem_start(struct agg *a);
/* With a watcher: reports the frees of the folds whose free sequence is
 * at most `sequence` (UINT64_MAX: every one, at the end). */
void agg_mem_folds_passed(struct agg *a, uint64_t sequence);
/* A site's live bytes at the global peak (resolving the lazy capture). */
uint64_t agg_mem_at_peak(const struct agg *a, const struct agg_live *h);

/* ---- agg_retained.c ---- */
/* At FINISH: a complete walk holds exactly the live allocations. */
void agg_retained_finish(struct agg *a);

/* ---- agg_cpu.c ---- */
int agg_cpu_sample(struct agg *a, const struct wire_sample *s);
/* A CALLS record's counts into the function buckets and call lines there
 * are (agg_calls checked the mode). */
int agg_cpu_calls(struct agg *a, const struct wire_calls *c);
void agg_cpu_free(struct agg *a);

#endif
