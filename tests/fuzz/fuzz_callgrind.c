/* libFuzzer target: parse, and for accepted input the normalizer round trip. */
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
