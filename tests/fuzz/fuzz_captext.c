/* libFuzzer target: packing arbitrary text; a text that packs must dump
 * to text that packs to the same bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "proto/captext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    msgpack_sbuffer a;
    msgpack_sbuffer_init(&a);
    char err[400];
    if (captext_pack((const char *)data, size, &a, err, sizeof err) == 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        struct capture_reader *r = capture_reader_mem(a.data, a.size);
        if (captext_dump(f, r, err, sizeof err) != 0)
            abort(); /* pack wrote something the reader refuses */
        capture_reader_free(r);
        fclose(f);
        msgpack_sbuffer b;
        msgpack_sbuffer_init(&b);
        if (captext_pack(text, len, &b, err, sizeof err) != 0 || b.size != a.size ||
            memcmp(a.data, b.data, a.size) != 0)
            abort(); /* pack(dump(x)) != x */
        msgpack_sbuffer_destroy(&b);
        free(text);
    }
    msgpack_sbuffer_destroy(&a);
    return 0;
}
