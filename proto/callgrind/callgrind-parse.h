/* callgrind parser state, shared by callgrind_parse.c and callgrind_body.c. */
#ifndef JETT_PROTO_CALLGRIND_PARSE_H
#define JETT_PROTO_CALLGRIND_PARSE_H

#include "proto/callgrind/callgrind-internal.h"

/* An ID dictionary: compressed-name ID -> name index, open addressing. */
struct cg_idmap {
    uint64_t *keys;
    uint32_t *vals; /* name index + 1; 0 marks an empty slot */
    size_t count, cap;
};

/*
 * Parser state.  Per part: position bases (the last self-cost line), the current
 * object/file/function, the cob/cfi overrides (resolved when cfn= is read, cleared after a call's
 * cost line), the resolved callee (valid until the next fn= or part) and a
 * pending call (calls= read, its cost line expected next).  The ID
 * dictionaries survive parts.
 */
struct cg_parser {
    struct cg_model *m;
    const struct cg_options *opt;
    struct cg_error *err;
    uint64_t line;
    struct cg_idmap ids[CG_NS_COUNT];
    uint64_t part_line;
    bool in_body;
    uint64_t base[3];
    uint32_t ctx[CG_CTX_COUNT];
    uint32_t ov_ob, ov_fl;
    uint32_t callee[3];
    bool has_callee;
    bool pending;
    uint64_t pending_line, count, target[3];
    uint64_t cols[3 + CG_MAX_EVENTS]; /* a cost line: npos positions, then costs */
    struct cg_norm *norm;             /* normalizing while parsing, or NULL */
    size_t window;                    /* records a part keeps before a flush */
    size_t flush_at;                  /* records in the part before the next flush */
};

/* Fails with the current line; returns -1. */
int cg_parser_fail(struct cg_parser *ps, enum cg_status kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Gives a builder error (line 0) the current line; returns -1. */
int cg_parser_here(struct cg_parser *ps);

/* Handles a trimmed body line: a directive (key=value) or a cost line. */
int cg_body_directive(struct cg_parser *ps, const char *key, size_t klen, const char *val,
                      size_t vlen);
int cg_body_cost(struct cg_parser *ps, const char *s, size_t len);
/* The common case of a cost line, read straight from the input at *cur:
 * plain numbers, blanks, then a newline or `end`.  Returns 1 with *cur past
 * the line, 0 when the line needs the general path, -1 on error. */
int cg_body_plain(struct cg_parser *ps, const char **cur, const char *end);
/* Resets the per-part state. */
void cg_body_reset(struct cg_parser *ps);

/* ID dictionaries. */
int cg_idmap_get(const struct cg_idmap *d, uint64_t id, uint32_t *name);
int cg_idmap_put(struct cg_idmap *d, uint64_t id, uint32_t name);
void cg_idmap_free(struct cg_idmap *d);

#endif
