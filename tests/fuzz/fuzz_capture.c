/* libFuzzer target: the capture reader and text dump over arbitrary
 * bytes; whatever dumps cleanly must pack back to the same bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "proto/captext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct capture_reader *r = capture_reader_mem(data, size);
    char err[400];
    int rc = captext_dump(f, r, err, sizeof err);
    capture_reader_free(r);
    fclose(f);
    if (rc == 0) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        if (captext_pack(text, len, &sb, err, sizeof err) != 0 || sb.size != size ||
            memcmp(sb.data, data, size) != 0) {
            /* Only captures our encoder wrote are canonical; a valid but
             * non-canonical msgpack encoding may pack differently, but it
             * must still pack. */
            if (captext_pack(text, len, &sb, err, sizeof err) != 0)
                abort();
        }
        msgpack_sbuffer_destroy(&sb);
    }
    free(text);
    return 0;
}
