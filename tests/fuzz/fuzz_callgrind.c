/*
 * libFuzzer target: parse, and for accepted input the normalizer round trip
 * (parse(normalize(x)) equals parse(x), normalizing twice is a fixed point);
 * normalizing while parsing, flushing after every record or every few,
 * gives the same text or the same error as the two steps.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true
 *   ninja -C build-fuzz tests/fuzz/fuzz_callgrind
 *   build-fuzz/tests/fuzz/fuzz_callgrind -jobs=1 -max_len=16384 CORPUS SEEDS
 *
 * Good seeds: the files in fixtures/callgrind/ and fixtures/callgrind/foreign/,
 * and valgrind's own output (tests/fuzz/run-fuzzers writes two).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Accepted input must normalize, read back equal, and be a fixed point. */
static void round_trip(const struct cg_model *m)
{
    char *a = NULL, *b = NULL, why[256];
    size_t alen, blen;
    struct cg_error err;
    if (cg_normalize(m, &a, &alen, &err) < 0) {
        /* only a size limit may refuse a model the parser built */
        if (err.kind != CG_RESOURCE)
            abort();
        return;
    }
    struct cg_model *m2 = cg_parse(a, alen, NULL, &err);
    if (m2 == NULL || !cg_model_equal(m, m2, why, sizeof why))
        abort();
    if (cg_normalize(m2, &b, &blen, &err) < 0 || blen != alen || memcmp(a, b, alen) != 0)
        abort();
    free(a);
    free(b);
    cg_model_free(m2);
}

/* One pass with the window `window` against the two steps' outcome. */
static void one_pass(const uint8_t *data, size_t size, size_t window, int rc1, const char *out1,
                     size_t len1, const struct cg_error *e1)
{
    char *out2 = NULL;
    size_t len2 = 0;
    struct cg_error e2;
    int rc2 =
        cg_parse_normalize_every((const char *)data, size, false, NULL, window, &out2, &len2, &e2);
    if (rc1 != rc2)
        abort();
    if (rc1 == 0
            ? len1 != len2 || memcmp(out1, out2, len1) != 0
            : e1->kind != e2.kind || e1->line != e2.line || strcmp(e1->message, e2.message) != 0)
        abort();
    free(out2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cg_error err;
    struct cg_model *m = cg_parse((const char *)data, size, NULL, &err);
    if (m == NULL) {
        if (err.kind == CG_OK || err.message[0] == '\0')
            abort();
    } else {
        round_trip(m);
    }
    char *out = NULL;
    size_t len = 0;
    int rc = m ? cg_normalize(m, &out, &len, &err) : -1;
    for (size_t window = 1; window <= 4096; window *= 8)
        one_pass(data, size, window, rc, out, len, &err);
    free(out);
    cg_model_free(m);
    return 0;
}
