/*
 * callgrind: the Callgrind 1 cost/call profile (seeds/callgrind_profile.md,
 * DESIGN section 11).
 *
 * Three layers, each usable alone:
 *   cg_parse      UTF-8 text -> record model (every limit checked)
 *   cg_model_*    the record model and the builder the parser itself uses,
 *                 so that an exporter can fill a model and print it
 *   cg_normalize  record model -> canonical Callgrind text
 * cg_read_file reads a file the way the CLI must (regular files only,
 * bounded chunks, UTF-8 checked across chunk boundaries).
 *
 * The model is a record model, not a document: comments, blank lines,
 * original ID spellings and unreferenced name declarations are not kept.
 * All strings it holds are UTF-8, owned by the model, and NUL-terminated.
 */
#ifndef JETT_PROTO_CALLGRIND_H
#define JETT_PROTO_CALLGRIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits of the profile.  Sizes count UTF-16 code units (DESIGN 11). */
#define CG_MAX_INPUT_UNITS ((size_t)16 << 20)
#define CG_MAX_LINE_UNITS ((size_t)1 << 20)
#define CG_MAX_PARTS 1024u
#define CG_MAX_RECORDS 200000u
#define CG_MAX_HEADERS 4096u
#define CG_MAX_EVENTS 64u
#define CG_MAX_IDS 100000u
#define CG_MAX_DIGITS 20u
#define CG_EXPANSION_BUDGET ((size_t)16 << 20)
#define CG_NORMALIZE_BUDGET ((size_t)16 << 20)
/* Expansion cost of one resolved record: fixed part and per numeric column. */
#define CG_RECORD_OVERHEAD 32u
#define CG_COLUMN_COST 21u
/* File reading (cg_read_file). */
#define CG_FILE_MAX_BYTES ((size_t)32 << 20)
#define CG_FILE_CHUNK ((size_t)64 << 10)

/* "No name": an object or file never set in the part. */
#define CG_NONE UINT32_MAX

enum cg_status { CG_OK = 0, CG_SYNTAX, CG_UNSUPPORTED, CG_RESOURCE };

/* An error: its class, a 1-based input line (0: whole input or API), text. */
struct cg_error {
    enum cg_status kind;
    uint64_t line;
    char message[200];
};

/* "Syntax", "Unsupported", "Resource" (or "OK"). */
const char *cg_status_name(enum cg_status kind);

/* Position kinds: a part's `positions:` is a nonempty subset in this order. */
enum {
    CG_POS_INSTR = 1u,
    CG_POS_BB = 2u,
    CG_POS_LINE = 4u,
};

/* Name namespaces: objects (ob, cob), files (fl, fi, fe, cfi, cfl),
 * functions (fn, cfn).  Each has its own ID dictionary. */
enum cg_ns { CG_NS_OBJECT, CG_NS_FILE, CG_NS_FUNCTION, CG_NS_COUNT };

enum cg_header_key {
    CG_H_VERSION,
    CG_H_CREATOR,
    CG_H_PID,
    CG_H_THREAD,
    CG_H_PART,
    CG_H_CMD,
    CG_H_DESC,
    CG_H_EVENT,
    CG_H_EVENTS,
    CG_H_POSITIONS,
    CG_H_SUMMARY,
    CG_H_TOTALS,
    CG_H_COUNT
};

/* The spelling of a header key ("version", "events", ...). */
const char *cg_header_name(enum cg_header_key key);

/* A string owned by the model: UTF-8 bytes, their UTF-16 length, NUL after. */
struct cg_str {
    const char *ptr;
    uint32_t len;
    uint32_t units;
};

/* A header in declared order.  Numeric and list values are canonical
 * (decimal, single spaces); text values are trimmed but otherwise kept. */
struct cg_header {
    enum cg_header_key key;
    struct cg_str value;
};

/* The callee side of a call record: object, file, function, call count. */
struct cg_call {
    uint32_t cob, cfl, cfn;
    uint64_t count;
};

/*
 * A resolved record.  Names index model->names[namespace]; ob, fl and fn_fl
 * may be CG_NONE, fn never is.  fl is the file of the costs (fl=, fi=, fe=);
 * fn_fl the file in effect when fn= was read, which with ob and fn names the
 * function (as callgrind_annotate keys it).  call indexes model->calls, or
 * is CG_NONE for a cost record.  values indexes model->values:
 *   cost: positions[npos], costs[nevents]
 *   call: target[npos], positions[npos], inclusive costs[nevents]
 * Omitted trailing costs are stored as zeros.
 */
struct cg_record {
    uint32_t ob, fl, fn, fn_fl;
    uint32_t values;
    uint32_t call;
};

/* Caller context as the builder takes it. */
enum { CG_CTX_OB, CG_CTX_FL, CG_CTX_FN, CG_CTX_FN_FL, CG_CTX_COUNT };

/*
 * A part: headers in order (totals included wherever it was declared; the
 * normalizer prints it last), its events and positions, its records.
 * Process/thread ids and the part number are metadata of the part.
 */
struct cg_part {
    size_t first_header, nheaders;
    size_t first_event;
    uint32_t nevents; /* 0 until `events:` */
    unsigned positions;
    uint32_t npos;
    size_t first_record, nrecords;
    bool has_pid, has_thread, has_number, has_summary, has_totals;
    uint64_t pid, thread, number;
    size_t summary, totals; /* into values */
    uint32_t nsummary, ntotals;
    bool has_positions, has_version;
};

struct cg_model_index;

/* The record model.  Read-only for users; fill it with cg_model_* only. */
struct cg_model {
    struct cg_part *parts;
    size_t nparts, parts_cap;
    struct cg_header *headers;
    size_t nheaders, headers_cap;
    struct cg_str *events; /* event names of all parts, in order */
    size_t nevents, events_cap;
    struct cg_record *records;
    size_t nrecords, records_cap;
    struct cg_call *calls;
    size_t ncalls, calls_cap;
    uint64_t *values;
    size_t nvalues, values_cap;
    struct cg_str *names[CG_NS_COUNT];
    size_t nnames[CG_NS_COUNT], names_cap[CG_NS_COUNT];
    size_t expansion; /* units charged against CG_EXPANSION_BUDGET */
    struct cg_model_index *index;
};

/* Parse options: events every part must declare (absent -> Unsupported). */
struct cg_options {
    const char *const *selected_events;
    size_t nselected;
};

/* Parses a complete buffer.  Returns a model, or NULL with *err set. */
struct cg_model *cg_parse(const char *text, size_t len, const struct cg_options *opt,
                          struct cg_error *err);

/* cg_parse for text that cg_read_file accepted: its UTF-8 was checked as
 * it was read, so it is decoded again only when it may be too long. */
struct cg_model *cg_parse_read(const char *text, size_t len, const struct cg_options *opt,
                               struct cg_error *err);

/* cg_parse (or cg_parse_read when `valid`) and cg_normalize in one pass:
 * the text of the model the input describes, printed while it is parsed,
 * so that its records never fill memory; the same text and the same
 * error as the two steps.  Returns 0 with *out (malloc'd, NUL-terminated,
 * *out_len bytes), or -1 with *err set. */
int cg_parse_normalize(const char *text, size_t len, bool valid, const struct cg_options *opt,
                       char **out, size_t *out_len, struct cg_error *err);

/* Canonical text of a model (malloc'd, NUL-terminated, *out_len bytes).
 * Returns 0, or -1 with *err set (Syntax for a corrupted model). */
int cg_normalize(const struct cg_model *m, char **out, size_t *out_len, struct cg_error *err);
/* The same into a caller's malloc'd buffer *buf of *cap bytes (or NULL),
 * reused as it is (its pages are likely mapped already), grown or moved as
 * needed; *buf and *cap are updated and stay the caller's to free, whether
 * it succeeds or not. */
int cg_normalize_into(const struct cg_model *m, char **buf, size_t *cap, size_t *out_len,
                      struct cg_error *err);

/* Same records, parts, events and headers (part numbers are compared only
 * when both sides have one).  Returns true, or false with a reason. */
bool cg_model_equal(const struct cg_model *a, const struct cg_model *b, char *why, size_t why_len);

/* --- builder (used by the parser; line numbers in errors are 0) --- */
struct cg_model *cg_model_new(void);
void cg_model_free(struct cg_model *m);
/* Starts a part (Resource past CG_MAX_PARTS). */
int cg_model_begin_part(struct cg_model *m, struct cg_error *err);
/* Adds a header to the current part, parsing and checking its value. */
int cg_model_add_header(struct cg_model *m, enum cg_header_key key, const char *value, size_t len,
                        struct cg_error *err);
/* Closes the current part: it must have events; summary/totals must fit. */
int cg_model_end_part(struct cg_model *m, struct cg_error *err);
/* Interns a name (trimmed, nonempty, valid UTF-8) in a namespace. */
int cg_model_name(struct cg_model *m, enum cg_ns ns, const char *s, size_t len, uint32_t *id,
                  struct cg_error *err);
/* Appends a cost record (ncosts <= nevents; the rest are zero); ctx is
 * indexed by CG_CTX_*. */
int cg_model_add_cost(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT], const uint64_t *pos,
                      const uint64_t *costs, size_t ncosts, struct cg_error *err);
/* Appends a call record; callee[3] = object, file, function. */
int cg_model_add_call(struct cg_model *m, const uint32_t ctx[CG_CTX_COUNT],
                      const uint32_t callee[3], uint64_t count, const uint64_t *target,
                      const uint64_t *pos, const uint64_t *costs, size_t ncosts,
                      struct cg_error *err);

/* Event name j of a part, the values of a record, its callee (NULL for a
 * cost record). */
const struct cg_str *cg_part_event(const struct cg_model *m, const struct cg_part *p, size_t j);
const uint64_t *cg_record_values(const struct cg_model *m, const struct cg_record *r);
const struct cg_call *cg_record_call(const struct cg_model *m, const struct cg_record *r);

/* --- UTF-8 (incremental, so a reader can check chunk by chunk) --- */
struct cg_utf8 {
    uint32_t need;  /* continuation bytes still expected */
    uint32_t cp;    /* code point so far */
    uint32_t min;   /* smallest code point allowed for this length */
    uint64_t units; /* UTF-16 code units decoded */
    uint64_t line;  /* 1-based line of the next byte */
};
void cg_utf8_init(struct cg_utf8 *u);
/* Feeds bytes; returns 0, or -1 (Syntax, naming the line) on bad UTF-8. */
int cg_utf8_feed(struct cg_utf8 *u, const char *p, size_t n, struct cg_error *err);
/* Ends the input; a truncated sequence is an error. */
int cg_utf8_finish(const struct cg_utf8 *u, struct cg_error *err);

/* --- files --- */
enum cg_read_status { CG_READ_OK, CG_READ_REJECTED, CG_READ_UNREADABLE };
/* Reads a regular file (see the seed's file rules).  On CG_READ_OK *buf is
 * malloc'd.  REJECTED: over a limit or bad UTF-8 (err set); UNREADABLE: not
 * a regular file or an I/O error (err->message set, kind CG_OK). */
enum cg_read_status cg_read_file(const char *path, char **buf, size_t *len, struct cg_error *err);

#endif
