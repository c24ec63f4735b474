/* Helpers shared by the callgrind suites: parse, render, round trip. */
#ifndef JETT_TESTS_CALLGRIND_UTIL_H
#define JETT_TESTS_CALLGRIND_UTIL_H

#include <stddef.h>

#include <check.h>

#include "proto/callgrind/callgrind.h"

/* The suites (tests/test_callgrind*.c). */
Suite *callgrind_suite(void);
Suite *callgrind_limits_suite(void);
Suite *callgrind_corpus_suite(void);

/* Parses a NUL-terminated text; fails the test if rejected. */
/* Parsing and normalizing in one pass (cg_parse_normalize) gives what
 * cg_parse then cg_normalize give: the same text or the same error. */
void cgt_same_in_one_pass(const char *text, size_t len);
/* Parses text that must be accepted (checking the one-pass path too). */
struct cg_model *cgt_parse_ok(const char *text);
/* Parses a text that must be rejected with this kind at this line; the
 * message must contain `needle` (when not NULL). */
void cgt_parse_err(const char *text, size_t len, enum cg_status kind, uint64_t line,
                   const char *needle);
/* One line per record of every part, written independently of the code
 * under test: "cost OB FL FN | pos.. | costs.." or
 * "call OB FL FN -> COB CFL CFN xCOUNT @target.. | pos.. | costs..";
 * FN is followed by [FILE] when the function's own file (in effect at its
 * fn= line) is not FL; an unset name is "-".  Caller frees. */
char *cgt_render(const struct cg_model *m);
/* parse(normalize(m)) equals m, and normalizing that again is identical. */
void cgt_round_trip(const struct cg_model *m);
/* Asserts the records of text render exactly as expected (and round trip). */
void cgt_expect_records(const char *text, const char *expected);
/* Reads a whole file (test data); NULL if absent. */
char *cgt_slurp(const char *path, size_t *len);
/* $JETT_SOURCE_ROOT/rel and $JETT_BUILD_ROOT/rel, written into buf. */
#define CGT_PATH 4096
char *cgt_src(char buf[CGT_PATH], const char *rel);
char *cgt_build(char buf[CGT_PATH], const char *rel);

#endif
