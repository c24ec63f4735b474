/* captext-internal: what dump, the tokenizer and pack share. */
#ifndef JETT_PROTO_CAPTEXT_INTERNAL_H
#define JETT_PROTO_CAPTEXT_INTERNAL_H

extern const char *const captext_modes[2];
extern const char *const captext_origins[3];
extern const char *const captext_span_kinds[3];
extern const char *const captext_states[4];
extern const char *const captext_ops[3];
extern const char *const captext_terminations[3];

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/wire.h"
#include "proto/wire_compact.h"

#define PACK_MAX_FIELDS 16

struct pack_field {
    const char *key, *val;
    size_t key_len, val_len;
    bool quoted;
};

enum batch_mode { BATCH_NONE, BATCH_EXPLICIT, BATCH_IMPLICIT };

struct packer {
    msgpack_sbuffer *out;
    struct wire_decoder *check;
    char *err;
    size_t errlen;
    uint32_t line;
    const char *kw;
    size_t kw_len;
    struct pack_field f[PACK_MAX_FIELDS];
    int nf;
    char *strbuf; /* decoded quoted values of the current line */
    size_t strcap;
    uint32_t version;            /* HELLO's */
    struct wire_compact_enc enc; /* the compact entries written so far */
    /* The EVENTS frame being built. */
    enum batch_mode batch;
    struct wire_batch b;
    uint32_t *entry_lines;
    size_t entry_cap;
    struct wire_source_span *spans;
    size_t spans_cap;
    /* a CALLS line's entries */
    struct wire_fn_calls *fn_calls;
    size_t fn_calls_cap;
    struct wire_site_calls *site_calls;
    size_t site_calls_cap;
    uint8_t *rows; /* RETAINED rows being packed */
    size_t rows_cap;
    bool finished;
};

int pack_err(struct packer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pack_tokenize(struct packer *p, const char *s, const char *end);
bool pack_kw_is(const struct packer *p, const char *kw);
const struct pack_field *pack_field(struct packer *p, int i, const char *key);
int pack_no_more(struct packer *p, int n);
int pack_num32(struct packer *p, int i, const char *key, bool opt, uint32_t *out);
int pack_num64(struct packer *p, int i, const char *key, bool opt, uint64_t *out);
/* Any u64, for fields that have no absent value (sequences, ticks). */
int pack_u64(struct packer *p, int i, const char *key, uint64_t *out);
/* An ALLOC size: when the operation has it (`present`), a number from 0
 * to 2^64 - 1; else '-' (a number is refused, saying `why`). */
int pack_size(struct packer *p, int i, const char *key, bool present, const char *why,
              uint64_t *out);
int pack_enum(struct packer *p, int i, const char *key, const char *const *names, int n,
              uint8_t *out);
int pack_bool(struct packer *p, int i, const char *key, bool *out);
int pack_str(struct packer *p, int i, const char *key, struct wire_str *out);
/* A quoted string, or '-' (ptr NULL). */
int pack_opt_str(struct packer *p, int i, const char *key, struct wire_str *out);
int pack_span(struct packer *p, int i, const char *key, struct wire_span *out);
int pack_span_text(struct packer *p, const char *key, const char *s, size_t n,
                   struct wire_span *out);
bool pack_parse_u64(const char *s, size_t n, uint64_t *out);

/* captext_calls.c: a CALLS line's entries, read into the packer's
 * fn_calls[0..*n) and site_calls[0..*m) (0, or -1 reported), and a
 * CALLS record written as one. */
int captext_calls_of(struct packer *p, uint32_t *n, uint32_t *m);
void captext_dump_calls(FILE *out, const struct wire_calls *c);

#endif
