/*
 * libFuzzer target: parse, and for accepted input the normalizer round trip
 * (parse(normalize(x)) equals parse(x), normalizing twice is a fixed point).
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true
 *   ninja -C build-fuzz tests/fuzz/fuzz_callgrind
 *   build-fuzz/tests/fuzz/fuzz_callgrind -jobs=1 -max_len=16384 CORPUS SEEDS
 *
 * Good seeds: the files in ../shared/callgrind-foreign/, fixtures/callgrind/
 * and the valgrind corpus the callgrind_corpus suite writes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cg_error err;
    struct cg_model *m = cg_parse((const char *)data, size, NULL, &err);
    if (m == NULL) {
        if (err.kind == CG_OK || err.message[0] == '\0')
            abort();
        return 0;
    }
    round_trip(m);
    cg_model_free(m);
    return 0;
}
