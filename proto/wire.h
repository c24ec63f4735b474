/*
 * wire: the records that travel between the launcher and jett-profd.
 *
 * A stream is a sequence of frames: a 4-byte big-endian length (at most
 * WIRE_MAX_FRAME) then one msgpack array whose first element is the record
 * type.  Hot events (STACK, CPU_SAMPLE, ALLOC) travel as fixed-layout
 * little-endian entries inside the bin of an EVENTS frame; see
 * jett-capture(5) for every layout.  Bump WIRE_PROTOCOL_VERSION whenever
 * any record or entry layout changes.
 *
 * Ids (source, function, stack) are assigned densely from 0 in the order
 * their defining records are sent, so a reference is valid exactly when it
 * is below the number of records of that kind seen so far.  This keeps the
 * decoder's validation state constant-size.
 */
#ifndef JETT_PROTO_WIRE_H
#define JETT_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <msgpack.h>

#define WIRE_PROTOCOL_VERSION 3
/* The oldest version a capture may carry and still be read: version 2
 * only adds records, so a version 1 stream is a version 2 stream without
 * them (what they would have said reads as unavailable); version 3 adds
 * the compact ALLOC entries and folds (wire_compact.h), which a stream
 * of an older version never holds. */
#define WIRE_PROTOCOL_MIN_VERSION 1
/* The first version whose ALLOC entries are compact. */
#define WIRE_COMPACT_VERSION 3
#define WIRE_MAX_FRAME (4u << 20) /* payload bytes, length prefix excluded */
#define WIRE_FRAME_HEADER 4
#define WIRE_MAX_NAME 4096         /* namespace, function, backend, path */
#define WIRE_MAX_SOURCE (2u << 20) /* a Jett source file is at most 2 MiB */

/* The contract's fixed budgets, the most HELLO may ask for: CPU detail
 * buckets, live-allocation records, and the stack tables of each side. */
#define WIRE_CPU_BUDGET (32u << 20)
#define WIRE_RETENTION_BUDGET (64u << 20)
#define WIRE_STACK_BUDGET (16u << 20)
#define WIRE_MAX_STACK_DEPTH 128

/* "absent" in fixed-layout entries and in decoded structs. */
#define WIRE_NONE32 UINT32_MAX
#define WIRE_NONE64 UINT64_MAX

enum wire_type {
    WIRE_HELLO = 1,       /* launcher -> daemon */
    WIRE_READY = 2,       /* daemon -> launcher */
    WIRE_UNSUPPORTED = 3, /* daemon -> launcher */
    WIRE_SOURCE = 4,      /* launcher -> daemon */
    WIRE_FUNC = 5,        /* launcher -> daemon */
    WIRE_EVENTS = 6,      /* launcher -> daemon: batched STACK/CPU_SAMPLE/ALLOC */
    WIRE_FINISH = 7,      /* launcher -> daemon */
    WIRE_RESULT = 8,      /* daemon -> launcher */
    WIRE_CALLS = 9,       /* launcher -> daemon: exact call counts, after the last EVENTS */
    WIRE_RETAINED = 10,   /* launcher -> daemon: the walk of retained holders */
};
#define WIRE_TYPE_MAX WIRE_RETAINED

/* Kinds of the fixed-layout entries inside an EVENTS bin. */
enum wire_entry_kind {
    WIRE_ENTRY_STACK = 1,
    WIRE_ENTRY_SAMPLE = 2,
    WIRE_ENTRY_ALLOC = 3,
    /* version 3: compact ALLOC entries (wire_compact.h), decoded as
     * WIRE_ENTRY_ALLOC events */
    WIRE_ENTRY_ALLOCATE = 4, /* an allocate, or a fold */
    WIRE_ENTRY_RESIZE = 5,
    WIRE_ENTRY_FREE = 6,
    WIRE_ENTRY_RESIZE_AGAIN = 7, /* a resize of what the last resize resized */
    WIRE_ENTRY_TASK = 8,         /* after the memory event path's */
};

/* Entry sizes in bytes, kind byte included.  Layouts (little-endian):
 *   STACK:  kind u8, stack_id u32, parent u32, func_id u32,
 *           site_start u32, site_end u32
 *   SAMPLE: kind u8, state u8, sequence u64, requested_tick u64,
 *           task u32, actor u32, thread u32, stack_id u32,
 *           span_start u32, span_end u32
 *   ALLOC:  kind u8, operation u8, sequence u64, allocation_id u64,
 *           old_size u64, new_size u64, task u32, actor u32, thread u32,
 *           stack_id u32, span_start u32, span_end u32
 *   TASK:   kind u8, task u32, func_id u32, spawn_func u32,
 *           spawn_start u32, spawn_end u32 */
#define WIRE_STACK_SIZE 21
#define WIRE_SAMPLE_SIZE 42
#define WIRE_ALLOC_SIZE 58
#define WIRE_TASK_SIZE 21

enum wire_mode { WIRE_MODE_CPU = 0, WIRE_MODE_MEMORY = 1 };
enum wire_origin { WIRE_ORIGIN_PROJECT = 0, WIRE_ORIGIN_DEPENDENCY = 1, WIRE_ORIGIN_STDLIB = 2 };
enum wire_span_kind { WIRE_SPAN_COMMENT = 0, WIRE_SPAN_LITERAL = 1, WIRE_SPAN_SECRET = 2 };
enum wire_state {
    WIRE_STATE_JETT = 0,
    WIRE_STATE_RUNTIME = 1,
    WIRE_STATE_WAITING = 2,
    WIRE_STATE_UNAVAILABLE = 3,
};
/* WIRE_OP_FOLD (compact entries only): an allocate whose free came
 * before the next new peak of live bytes, at `free_seq`; its free has no
 * entry of its own (jett-capture(5)). */
enum wire_op { WIRE_OP_ALLOCATE = 0, WIRE_OP_RESIZE = 1, WIRE_OP_FREE = 2, WIRE_OP_FOLD = 3 };
enum wire_termination {
    WIRE_TERM_RETURNED = 0,
    WIRE_TERM_RUNTIME_ERROR = 1,
    WIRE_TERM_INTERRUPTED = 2,
};

/* Capability bits, in the contract's order. */
enum wire_capability {
    WIRE_CAP_CPU_TICK_SOURCE = 1u << 0,
    WIRE_CAP_SAFE_STACK_CAPTURE = 1u << 1,
    WIRE_CAP_RUNTIME_THREAD_REGISTRATION = 1u << 2,
    WIRE_CAP_TASK_ATTRIBUTION = 1u << 3,
    WIRE_CAP_SOURCE_SPANS = 1u << 4,
    WIRE_CAP_PROCESS_CPU_TIME = 1u << 5,
    WIRE_CAP_HEAP_ALLOCATION_HOOKS = 1u << 6,
    WIRE_CAP_FREE_AND_RESIZE_EVENTS = 1u << 7,
};
#define WIRE_CAP_COUNT 8
#define WIRE_CAP_ALL ((1u << WIRE_CAP_COUNT) - 1)

/* Names used by dump, the profile's capabilities object and UNSUPPORTED. */
extern const char *const wire_capability_names[WIRE_CAP_COUNT];
extern const char *const wire_type_names[WIRE_TYPE_MAX + 1];

/* A string inside a decoded frame (not NUL-terminated) or to encode. */
struct wire_str {
    const char *ptr;
    uint32_t len;
};

/* A byte range [start, end) of a source text; both WIRE_NONE32 if absent. */
struct wire_span {
    uint32_t start, end;
};
#define WIRE_SPAN_NONE ((struct wire_span){WIRE_NONE32, WIRE_NONE32})
static inline bool wire_span_present(struct wire_span s)
{
    return s.start != WIRE_NONE32;
}

struct wire_config {
    uint32_t rate_hz;          /* 1..1000 in CPU mode, 0 in memory mode */
    uint32_t threshold_bp;     /* 0..10000 */
    uint32_t limit;            /* 1..100 */
    uint64_t cpu_budget;       /* bytes; at most 32 MiB */
    uint64_t retention_budget; /* bytes; at most 64 MiB */
    uint64_t stack_budget;     /* bytes; at most 16 MiB */
};

struct wire_hello {
    uint32_t version;
    uint8_t mode; /* enum wire_mode */
    struct wire_config config;
    struct wire_str backend;
    uint32_t capabilities; /* enum wire_capability bits */
    bool colour;
};

struct wire_ready {
    uint32_t version;
};

struct wire_unsupported {
    struct wire_str capability;
};

struct wire_source_span {
    uint8_t kind; /* enum wire_span_kind */
    uint32_t start, end;
};

struct wire_source {
    uint32_t source_id;
    uint8_t origin;       /* enum wire_origin */
    struct wire_str path; /* logical, relative, no ".." */
    struct wire_str text; /* literals, comments, secrets blanked to spaces */
    const struct wire_source_span *spans;
    uint32_t n_spans;
    const uint32_t *line_starts; /* offset of each line; [0] == 0 */
    uint32_t n_lines;
};

struct wire_func {
    uint32_t func_id;
    struct wire_str ns;
    struct wire_str name;
    uint32_t source_id; /* WIRE_NONE32: no source */
    struct wire_span decl;
};

struct wire_stack {
    uint32_t stack_id;
    uint32_t parent; /* WIRE_NONE32 for a root frame */
    uint32_t func_id;
    struct wire_span site; /* the call in the parent's function that made this frame */
};

struct wire_exec {
    uint32_t task, actor, thread; /* WIRE_NONE32 when unknown */
};

/* A task of the run (a TASK entry precedes every event of the task):
 * numbered from 1 (main) in spawn order, the function it runs and where
 * it was spawned, the spawn call in spawn_func's source (main: neither). */
struct wire_task {
    uint32_t task;
    uint32_t func_id;
    uint32_t spawn_func; /* WIRE_NONE32 for main */
    struct wire_span site;
};

struct wire_sample {
    uint64_t sequence;
    uint64_t requested_tick;
    struct wire_exec exec;
    uint8_t state;         /* enum wire_state */
    uint32_t stack_id;     /* leaf stack node, WIRE_NONE32 if none */
    struct wire_span span; /* leaf statement, in the leaf function's source */
};

/* The operation says which sizes an event has: an allocate no old size,
 * a free no new size.  A size the operation has may be any u64 (2^64 - 1
 * included); one it has not is WIRE_NONE64.  A fold has a new size and
 * no old size: where the old size would be it carries the sequence of
 * its free (wire_fold_free_seq), 1 to WIRE_FOLD_MAX past its own. */
struct wire_alloc {
    uint64_t sequence;
    uint8_t op; /* enum wire_op */
    uint64_t allocation_id;
    uint64_t old_size; /* WIRE_NONE64 for allocate; a fold's free sequence */
    uint64_t new_size; /* WIRE_NONE64 for free */
    struct wire_exec exec;
    uint32_t stack_id;
    struct wire_span span;
};
#define WIRE_FOLD_MAX 255

static inline uint64_t wire_fold_free_seq(const struct wire_alloc *a)
{
    return a->old_size;
}

/* Whether the sizes are absent exactly where the operation has none (a
 * known operation assumed), without a branch: what the decoder and the
 * aggregation both require.  A fold's free sequence is checked where it
 * is read (it is 1 to WIRE_FOLD_MAX past the fold's own). */
static inline bool wire_alloc_sizes_ok(uint8_t op, uint64_t old_size, uint64_t new_size)
{
    return ((op != WIRE_OP_ALLOCATE) | (old_size == WIRE_NONE64)) &
           ((op != WIRE_OP_FREE) | (new_size == WIRE_NONE64));
}

struct wire_finish {
    uint8_t termination; /* enum wire_termination */
    uint64_t wall_ns;
    uint64_t cpu_ns; /* WIRE_NONE64: unavailable */
    uint64_t requested_ticks;
    uint64_t coalesced_ticks;
    uint64_t dropped_ticks;
    bool collector_failure;
    bool stack_limit; /* the agent's stack table hit its cap */
};

struct wire_result {
    struct wire_str profile; /* canonical TOON */
    struct wire_str human;
};

/* CALLS: how often each function was called and how many calls each
 * call site (a call expression's span in the calling function's source)
 * made.  On the wire two bins of fixed entries, little-endian:
 *   function: func_id u32, calls u64
 *   site:     func_id u32, start u32, end u32, calls u64
 * sorted (functions by id, sites by function, start, end), each entry
 * after the one before it.  Decoded, the bins point into the frame; read
 * the entries with wire_calls_function and wire_calls_site. */
#define WIRE_CALLS_FN_SIZE 12
#define WIRE_CALLS_SITE_SIZE 20
struct wire_fn_calls {
    uint32_t func_id;
    uint64_t calls;
};
struct wire_site_calls {
    uint32_t func_id;
    struct wire_span site;
    uint64_t calls;
};
struct wire_calls {
    const uint8_t *functions, *sites;
    uint32_t n_functions, n_sites;
};
struct wire_fn_calls wire_calls_function(const struct wire_calls *c, uint32_t i);
struct wire_site_calls wire_calls_site(const struct wire_calls *c, uint32_t i);
/* The most entries (of both kinds together) one CALLS record carries:
 * what fits a frame, with room to spare; more take several records. */
#define WIRE_CALLS_MAX_ENTRIES (128u << 10)

/* RETAINED: what the walk of the live heap credited to one holder, a
 * namespace-level binding (ns.ptr NULL: the closing record, objects no
 * binding reaches).  The rows are n_rows fixed entries of
 * WIRE_RETAINED_ROW_SIZE bytes (wire_retained_row_at):
 *   func_id u32 (WIRE_NONE32: creation stack unknown), bytes u64,
 *   objects u64, little-endian.
 * complete is false when the budget stopped the walk in this holder. */
#define WIRE_RETAINED_ROW_SIZE 20
struct wire_retained {
    struct wire_str ns, name; /* both ptr NULL, or both 1..WIRE_MAX_NAME bytes */
    uint32_t source_id;       /* WIRE_NONE32: none */
    struct wire_span decl;    /* the binding's declaration */
    const uint8_t *rows;
    uint32_t n_rows;
    bool complete;
};

struct wire_retained_row {
    uint32_t func_id;
    uint64_t bytes, objects;
};

/* One hot event, as the EVENTS iterator yields it. */
struct wire_event {
    uint8_t kind; /* enum wire_entry_kind */
    union {
        struct wire_stack stack;
        struct wire_sample sample;
        struct wire_alloc alloc;
        struct wire_task task;
    } u;
};

/* An EVENTS frame: `count` entries in `bin`.  Iterate with wire_events_next. */
struct wire_events {
    uint32_t count;
    const uint8_t *bin;
    uint32_t bin_len;
};

struct wire_record {
    uint8_t type; /* enum wire_type */
    union {
        struct wire_hello hello;
        struct wire_ready ready;
        struct wire_unsupported unsupported;
        struct wire_source source;
        struct wire_func func;
        struct wire_events events;
        struct wire_finish finish;
        struct wire_result result;
        struct wire_calls calls;
        struct wire_retained retained;
    } u;
};

/* ---- errors ---- */

enum wire_errcode {
    WIRE_OK = 0,
    WIRE_E_FRAME_SIZE, /* length prefix over the limit or zero */
    WIRE_E_TRUNCATED,  /* stream ended inside a frame */
    WIRE_E_MSGPACK,    /* payload is not exactly one msgpack object */
    WIRE_E_TYPE,       /* unknown or misplaced record type */
    WIRE_E_ARITY,      /* wrong number of fields */
    WIRE_E_FIELD_TYPE, /* a field has the wrong msgpack type */
    WIRE_E_RANGE,      /* an enum or number out of range */
    WIRE_E_REF,        /* reference to an undefined id */
    WIRE_E_PATH,       /* logical path absolute, empty or with ".." */
    WIRE_E_SEQUENCE,   /* a sequence or id that does not increase */
    WIRE_E_ORDER,      /* record out of protocol order */
    WIRE_E_UTF8,       /* malformed UTF-8 */
    WIRE_E_LIMIT,      /* a size or count over its limit */
    WIRE_E_NOMEM,      /* the decoder could not allocate its bounded buffer */
};

struct wire_error {
    enum wire_errcode code;
    uint64_t offset; /* byte offset of the offending frame in the stream */
    char msg[256];   /* names record and field, e.g. "FUNC.source_id: ..." */
};

const char *wire_errcode_name(enum wire_errcode code);

/* ---- encoding (msgpack packer into an sbuffer) ---- */

/* Each appends one complete frame to `buf`; -1 if the payload would exceed
 * WIRE_MAX_FRAME (nothing is appended then). */
int wire_encode_hello(msgpack_sbuffer *buf, const struct wire_hello *r);
int wire_encode_ready(msgpack_sbuffer *buf, const struct wire_ready *r);
int wire_encode_unsupported(msgpack_sbuffer *buf, const struct wire_unsupported *r);
int wire_encode_source(msgpack_sbuffer *buf, const struct wire_source *r);
int wire_encode_func(msgpack_sbuffer *buf, const struct wire_func *r);
int wire_encode_events(msgpack_sbuffer *buf, uint32_t count, const uint8_t *bin, size_t bin_len);
int wire_encode_finish(msgpack_sbuffer *buf, const struct wire_finish *r);
int wire_encode_result(msgpack_sbuffer *buf, const struct wire_result *r);
/* One CALLS record of n + m entries (at most WIRE_CALLS_MAX_ENTRIES),
 * sorted as the record requires. */
int wire_encode_calls(msgpack_sbuffer *buf, const struct wire_fn_calls *fn, uint32_t n,
                      const struct wire_site_calls *site, uint32_t m);
int wire_encode_retained(msgpack_sbuffer *buf, const struct wire_retained *r);
int wire_encode_record(msgpack_sbuffer *buf, const struct wire_record *r);

/* The bytes of an EVENTS frame that precede its bin of `bin_len` bytes
 * (length prefix, array, type, count and bin header), written to `out`,
 * so that a sender can write the bin from where it lies: header then bin
 * is exactly what wire_encode_events appends.  Their number, or 0 when
 * the payload would exceed WIRE_MAX_FRAME. */
#define WIRE_EVENTS_HEADER_MAX 16
size_t wire_encode_events_header(uint8_t out[WIRE_EVENTS_HEADER_MAX], uint32_t count,
                                 size_t bin_len);

/* The 0-based line holding byte `off`, given sorted line starts
 * (starts[0] == 0); 0 when there are none. */
uint32_t wire_line_index(const uint32_t *starts, uint32_t n, uint32_t off);

/* Computes the line-start offsets of `text` into `out` (capacity `cap`);
 * returns the number of lines (a text of n newlines has n + 1 lines). */
uint32_t wire_line_starts(const char *text, uint32_t len, uint32_t *out, uint32_t cap);

/* ---- fixed-layout entries (agent side; no allocation, no msgpack) ---- */

static inline uint8_t *wire_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
#endif
    return p + 4;
}

static inline uint8_t *wire_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    wire_le32(p, (uint32_t)v);
    wire_le32(p + 4, (uint32_t)(v >> 32));
#endif
    return p + 8;
}

/* Each writes one entry at `dst` (which must have room for its size) and
 * returns the size written. */
static inline size_t wire_put_stack(uint8_t *dst, const struct wire_stack *s)
{
    uint8_t *p = dst;
    *p++ = WIRE_ENTRY_STACK;
    p = wire_le32(p, s->stack_id);
    p = wire_le32(p, s->parent);
    p = wire_le32(p, s->func_id);
    p = wire_le32(p, s->site.start);
    wire_le32(p, s->site.end);
    return WIRE_STACK_SIZE;
}

static inline uint8_t *wire_put_exec_tail(uint8_t *p, const struct wire_exec *e, uint32_t stack,
                                          struct wire_span span)
{
    p = wire_le32(p, e->task);
    p = wire_le32(p, e->actor);
    p = wire_le32(p, e->thread);
    p = wire_le32(p, stack);
    p = wire_le32(p, span.start);
    return wire_le32(p, span.end);
}

static inline size_t wire_put_sample(uint8_t *dst, const struct wire_sample *s)
{
    uint8_t *p = dst;
    *p++ = WIRE_ENTRY_SAMPLE;
    *p++ = s->state;
    p = wire_le64(p, s->sequence);
    p = wire_le64(p, s->requested_tick);
    wire_put_exec_tail(p, &s->exec, s->stack_id, s->span);
    return WIRE_SAMPLE_SIZE;
}

static inline size_t wire_put_alloc(uint8_t *dst, const struct wire_alloc *a)
{
    uint8_t *p = dst;
    *p++ = WIRE_ENTRY_ALLOC;
    *p++ = a->op;
    p = wire_le64(p, a->sequence);
    p = wire_le64(p, a->allocation_id);
    p = wire_le64(p, a->old_size);
    p = wire_le64(p, a->new_size);
    wire_put_exec_tail(p, &a->exec, a->stack_id, a->span);
    return WIRE_ALLOC_SIZE;
}

static inline size_t wire_put_task(uint8_t *dst, const struct wire_task *t)
{
    uint8_t *p = dst;
    *p++ = WIRE_ENTRY_TASK;
    p = wire_le32(p, t->task);
    p = wire_le32(p, t->func_id);
    p = wire_le32(p, t->spawn_func);
    p = wire_le32(p, t->site.start);
    wire_le32(p, t->site.end);
    return WIRE_TASK_SIZE;
}

/* One RETAINED row written at dst (WIRE_RETAINED_ROW_SIZE bytes). */
static inline void wire_put_retained_row(uint8_t *dst, const struct wire_retained_row *r)
{
    wire_le64(wire_le64(wire_le32(dst, r->func_id), r->bytes), r->objects);
}

/* Row i of a RETAINED record. */
struct wire_retained_row wire_retained_row_at(const struct wire_retained *r, uint32_t i);

/* A batch of entries being built for one EVENTS frame. */
struct wire_batch {
    uint8_t *buf;
    size_t cap, len;
    uint32_t count;
};

static inline bool wire_batch_stack(struct wire_batch *b, const struct wire_stack *s)
{
    if (b->cap - b->len < WIRE_STACK_SIZE)
        return false;
    b->len += wire_put_stack(b->buf + b->len, s);
    b->count++;
    return true;
}

static inline bool wire_batch_sample(struct wire_batch *b, const struct wire_sample *s)
{
    if (b->cap - b->len < WIRE_SAMPLE_SIZE)
        return false;
    b->len += wire_put_sample(b->buf + b->len, s);
    b->count++;
    return true;
}

static inline bool wire_batch_alloc(struct wire_batch *b, const struct wire_alloc *a)
{
    if (b->cap - b->len < WIRE_ALLOC_SIZE)
        return false;
    b->len += wire_put_alloc(b->buf + b->len, a);
    b->count++;
    return true;
}

static inline bool wire_batch_task(struct wire_batch *b, const struct wire_task *t)
{
    if (b->cap - b->len < WIRE_TASK_SIZE)
        return false;
    b->len += wire_put_task(b->buf + b->len, t);
    b->count++;
    return true;
}

/* ---- decoding ---- */

enum wire_direction {
    WIRE_TO_DAEMON,   /* HELLO, SOURCE, FUNC, EVENTS, CALLS, FINISH */
    WIRE_TO_LAUNCHER, /* READY, UNSUPPORTED, RESULT */
};

struct wire_decoder;

struct wire_decoder *wire_decoder_new(enum wire_direction dir);
void wire_decoder_free(struct wire_decoder *d);

/* Offset of the first byte not yet consumed, counted from the stream start
 * (the caller may add a base, e.g. the capture magic, via `base`). */
void wire_decoder_set_base(struct wire_decoder *d, uint64_t base);

/* Takes bytes up to the end of the current frame; returns how many it took.
 * Call wire_decoder_next after each push.  A frame that arrives whole is
 * decoded in place, so `data` must stay unchanged until the next push
 * (records point into it). */
size_t wire_decoder_push(struct wire_decoder *d, const void *data, size_t len);

/* 1: *rec holds a record (valid until the next push); 0: more bytes needed;
 * -1: error (see wire_decoder_error; the decoder stays failed). */
int wire_decoder_next(struct wire_decoder *d, struct wire_record *rec);

/* At end of input: 0 when the stream ended on a frame boundary, -1 (with
 * WIRE_E_TRUNCATED) when a frame was cut short. */
int wire_decoder_end(struct wire_decoder *d);

const struct wire_error *wire_decoder_error(const struct wire_decoder *d);

/* Byte offset of the frame last returned (or being read). */
uint64_t wire_decoder_frame_offset(const struct wire_decoder *d);

/* True once FINISH (to daemon) or RESULT/UNSUPPORTED (to launcher) was seen. */
bool wire_decoder_finished(const struct wire_decoder *d);

/* Count of defined stack ids so far. */
uint32_t wire_decoder_stacks(const struct wire_decoder *d);
/* Tasks described so far (TASK entries). */
uint32_t wire_decoder_tasks(const struct wire_decoder *d);

/* Iterates the entries of the EVENTS record last returned by
 * wire_decoder_next, validating each before it is returned.
 * 1: *ev holds an entry; 0: batch done; -1: error (decoder failed). */
struct wire_events_iter {
    const uint8_t *p, *end;
    uint32_t left, total;
};
void wire_events_begin(struct wire_events_iter *it, const struct wire_events *ev);
int wire_events_next(struct wire_decoder *d, struct wire_events_iter *it, struct wire_event *ev);
/* Up to `max` entries into ev[0..*n), so that a consumer can fetch what
 * they name before handling them.  The last wire_events_next result: 1
 * when more may follow, 0 at the end of the frame, -1 on error (the
 * entries decoded before it are in ev). */
int wire_events_batch(struct wire_decoder *d, struct wire_events_iter *it, struct wire_event *ev,
                      unsigned max, unsigned *n);
/* The run of up to `max` ALLOC entries at the iterator that
 * wire_events_next would accept, for a consumer that checks each entry
 * as it reads it in place (wire_alloc_entry.h, every WIRE_ALLOC_SIZE
 * bytes): open gives where the run starts, how many entries it may hold
 * (*room; 0 once the decoder failed) and the decoder's acceptance state
 * of ALLOC entries; the consumer takes entries from the start while
 * wire_alloc_entry_take does (which checks each as wire_events_next
 * would and moves the state past it), and close moves the decoder and
 * the iterator past the n it took.  The entry that ends a run (another
 * kind, a bad one, the end of the frame) is left for wire_events_next,
 * which takes or reports it. */
struct wire_alloc_rule {
    uint64_t last;     /* sequence of the last entry taken, if have */
    uint64_t next_id;  /* an allocate's id is at least this */
    uint32_t n_stacks; /* stacks defined */
    bool have;         /* an entry was taken */
};
const uint8_t *wire_events_alloc_open(struct wire_decoder *d, struct wire_events_iter *it,
                                      size_t max, size_t *room, struct wire_alloc_rule *r);
void wire_events_alloc_close(struct wire_decoder *d, struct wire_events_iter *it,
                             const struct wire_alloc_rule *r, size_t n);
/* The same for runs of compact ALLOC entries (wire_compact.h), which the
 * consumer reads with wire_compact_take up to the iterator's end: open
 * gives where the run starts, how many entries it may hold (*room; 0
 * once the decoder failed or before a version 3 HELLO) and the rule;
 * close moves the decoder and the iterator to `to`, past the n entries
 * taken. */
struct wire_compact_rule;
const uint8_t *wire_events_compact_open(struct wire_decoder *d, const struct wire_events_iter *it,
                                        uint32_t *room, struct wire_compact_rule *r);
void wire_events_compact_close(struct wire_decoder *d, struct wire_events_iter *it,
                               const struct wire_compact_rule *r, const uint8_t *to, uint32_t n);
/* The stack an entry names: a sample's or an allocation's, else
 * WIRE_NONE32. */
uint32_t wire_event_stack(const struct wire_event *ev);

#endif
