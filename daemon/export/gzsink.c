/* gzsink: protobuf-c's output through zlib into a file (gzsink.h). */
#include <limits.h>
#include <string.h>

#include "daemon/export/gzsink.h"

/* Runs deflate over what is pending with `flush`, writing each full
 * output buffer; false on an error. */
static bool drain(struct gzsink *s, int flush)
{
    for (;;) {
        s->z.next_out = s->buf;
        s->z.avail_out = sizeof s->buf;
        int rc = deflate(&s->z, flush);
        if (rc == Z_STREAM_ERROR)
            return false;
        size_t n = sizeof s->buf - s->z.avail_out;
        if (n && fwrite(s->buf, 1, n, s->out) != n)
            return false;
        if (flush == Z_FINISH ? rc == Z_STREAM_END : s->z.avail_out != 0)
            return true;
    }
}

static void append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    struct gzsink *s = (struct gzsink *)b;
    while (len > 0 && !s->failed) {
        uInt n = len > UINT_MAX ? UINT_MAX : (uInt)len;
        s->z.next_in = (Bytef *)(uintptr_t)data;
        s->z.avail_in = n;
        if (!drain(s, Z_NO_FLUSH))
            s->failed = true;
        data += n, len -= n;
    }
}

int gzsink_open(struct gzsink *s, FILE *out, int level)
{
    memset(&s->z, 0, sizeof s->z);
    s->base.append = append;
    s->out = out;
    s->failed = false;
    /* 15 + 16: the largest window, with a gzip header and trailer */
    return deflateInit2(&s->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

int gzsink_close(struct gzsink *s)
{
    if (!s->failed && !drain(s, Z_FINISH))
        s->failed = true;
    deflateEnd(&s->z);
    return s->failed ? -1 : 0;
}
