/*
 * wire_rules: the rules a SOURCE or FUNC record must follow beyond its
 * msgpack shape, in one place.  The wire decoder applies them (so the
 * daemon, replay and `jett profile pack` refuse the same records with
 * the same messages), the aggregator applies them to records injected
 * without a decoder, and the launcher checks its own manifest with them
 * before main.  jett-capture(5) lists every rule.
 *
 * Each check returns 0, or -1 with *why set to a static message that
 * never repeats the offending value (a path may be absolute).
 */
#ifndef JETT_PROTO_WIRE_RULES_H
#define JETT_PROTO_WIRE_RULES_H

#include <stdint.h>

#include "proto/wire.h"

/* A logical path: relative, '/'-separated, no empty, "." or ".."
 * segment, no control byte (NUL included), no backslash, no drive
 * ("c:") in the first segment; a stdlib path starts with "stdlib/". */
int wire_rule_path(uint8_t origin, const char *s, uint32_t len, const char **why);

/* Two SOURCE records never share an origin and a logical path. */
#define WIRE_RULE_DUPLICATE_PATH "another SOURCE has the same origin and path"

/* The (origin, path) pairs seen so far, to apply that rule. */
struct wire_path_set {
    char *bytes; /* origin byte then path, per entry */
    size_t used, cap;
    uint64_t *slots; /* hash << 32 | (entry offset + 1), 0: empty */
    uint32_t n, n_slots;
};

/* Adds a pair: 1 when new, 0 when already there, -1 out of memory. */
int wire_path_set_add(struct wire_path_set *s, uint8_t origin, const char *p, uint32_t len);
void wire_path_set_free(struct wire_path_set *s);

/* A namespace or function name: 1..WIRE_MAX_NAME bytes without NUL. */
int wire_rule_name(const char *s, uint32_t len, const char **why);

/* Sorts spans into canonical order -- start
 * ascending, then end descending, then kind descending, so a span comes
 * before every span it contains -- and checks them: a known kind, start
 * <= end <= text_len, and any two spans disjoint or nested, where only a
 * secret-expression span may contain another (a literal or a comment
 * inside a secret-typed expression).  On failure *at is the index, in
 * canonical order, of the first span that breaks a rule. */
int wire_rule_spans(struct wire_source_span *sp, uint32_t n, uint32_t text_len, uint32_t *at,
                    const char **why);

/* Puts spans that are sorted by start into canonical order (as
 * wire_rule_spans sorts them), which moves only spans of one start;
 * spans not sorted by start stay as they are, for the decoder to refuse.
 * A text capture's packer writes spans so, as the dump prints them: that
 * pack(dump(x)) is x also when two spans start together. */
void wire_spans_order_ties(struct wire_source_span *sp, uint32_t n);

/* Keeps only the outermost of spans that wire_rule_spans accepted (an
 * outer span replaces everything it contains); returns the new count. */
uint32_t wire_spans_outermost(struct wire_source_span *sp, uint32_t n);

#endif
