/*
 * toon_json: test helpers that turn jansson values and conformance fixture
 * files into toon trees.  Test-only: the writer itself never reads JSON.
 */
#ifndef JETT_TESTS_TOON_JSON_H
#define JETT_TESTS_TOON_JSON_H

#include <jansson.h>

#include "proto/toon.h"

/* Converts a JSON value (object key order kept); NULL when memory runs
 * out.  Integers become toon_int, reals toon_double. */
struct toon_value *toon_from_json(const json_t *j);

/* Loads a fixture file: JSON that may hold integers beyond int64 (read
 * as reals then).  NULL with a message in err on failure. */
json_t *toon_json_load(const char *path, char *err, size_t errlen);

/* Reads a fixture test's options into opt; -1 for one we do not know. */
int toon_json_options(const json_t *test, struct toon_options *opt);

/* The folder of the official encode fixtures: $JETT_TOON_FIXTURES, else
 * $JETT_SOURCE_ROOT/fixtures/toon-conformance/encode. */
const char *toon_json_fixture_dir(char *buf, size_t len);

#endif
