/* capture: reading and writing JETTCAP1 files over the wire decoder. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/capture.h"

#define CAPTURE_CHUNK 65536

struct capture_reader {
    int fd; /* -1 when reading from memory */
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    uint8_t buf[CAPTURE_CHUNK];
    size_t pos, len;
    uint64_t offset; /* bytes handed to the decoder or magic so far */
    bool started, eof, failed;
    struct wire_decoder *dec;
    char err[320];
};

static struct capture_reader *reader_new(void)
{
    struct capture_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->dec = wire_decoder_new(WIRE_TO_DAEMON);
    if (!r->dec) {
        free(r);
        return NULL;
    }
    wire_decoder_set_base(r->dec, CAPTURE_MAGIC_LEN);
    return r;
}

struct capture_reader *capture_reader_fd(int fd)
{
    struct capture_reader *r = reader_new();
    if (r)
        r->fd = fd;
    return r;
}

struct capture_reader *capture_reader_mem(const void *data, size_t len)
{
    struct capture_reader *r = reader_new();
    if (r)
        r->fd = -1, r->mem = data, r->mem_len = len;
    return r;
}

void capture_reader_free(struct capture_reader *r)
{
    if (!r)
        return;
    wire_decoder_free(r->dec);
    free(r);
}

struct wire_decoder *capture_reader_decoder(struct capture_reader *r)
{
    return r->dec;
}

const char *capture_reader_error(const struct capture_reader *r)
{
    return r->err;
}

uint64_t capture_reader_offset(const struct capture_reader *r)
{
    return wire_decoder_error(r->dec)->offset;
}

static int fail(struct capture_reader *r, uint64_t at, const char *msg)
{
    r->failed = true;
    snprintf(r->err, sizeof r->err, "byte %" PRIu64 ": %s", at, msg);
    return -1;
}

/* Refills the buffer when it is empty; sets eof at end of input. */
static int fill(struct capture_reader *r)
{
    if (r->pos < r->len || r->eof)
        return 0;
    r->pos = r->len = 0;
    if (r->fd < 0) {
        size_t n = r->mem_len - r->mem_pos;
        n = n > CAPTURE_CHUNK ? CAPTURE_CHUNK : n;
        memcpy(r->buf, r->mem + r->mem_pos, n);
        r->mem_pos += n, r->len = n;
        r->eof = n == 0;
        return 0;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf, sizeof r->buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(r, r->offset, strerror(errno));
        r->len = (size_t)n;
        r->eof = n == 0;
        return 0;
    }
}

static int read_magic(struct capture_reader *r)
{
    uint8_t magic[CAPTURE_MAGIC_LEN];
    size_t have = 0;
    while (have < CAPTURE_MAGIC_LEN) {
        if (fill(r) != 0)
            return -1;
        if (r->eof)
            return fail(r, have, "file ends inside the 8-byte JETTCAP1 magic");
        size_t take = r->len - r->pos;
        if (take > CAPTURE_MAGIC_LEN - have)
            take = CAPTURE_MAGIC_LEN - have;
        memcpy(magic + have, r->buf + r->pos, take);
        have += take, r->pos += take;
    }
    r->offset = CAPTURE_MAGIC_LEN;
    if (memcmp(magic, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN) != 0)
        return fail(r, 0, "not a capture: bad magic (expected JETTCAP1)");
    r->started = true;
    return 0;
}

static int decoder_failed(struct capture_reader *r)
{
    const struct wire_error *e = wire_decoder_error(r->dec);
    return fail(r, e->offset, e->msg);
}

/* After FINISH nothing may follow. */
static int expect_end(struct capture_reader *r)
{
    if (fill(r) != 0)
        return -1;
    if (!r->eof)
        return fail(r, r->offset, "trailing data after FINISH");
    return 0;
}

int capture_reader_next(struct capture_reader *r, struct wire_record *rec)
{
    if (r->failed)
        return -1;
    if (!r->started && read_magic(r) != 0)
        return -1;
    for (;;) {
        int rc = wire_decoder_next(r->dec, rec);
        if (rc > 0)
            return 1;
        if (rc < 0)
            return decoder_failed(r);
        if (wire_decoder_finished(r->dec))
            return expect_end(r);
        if (fill(r) != 0)
            return -1;
        if (r->eof) {
            if (wire_decoder_end(r->dec) != 0)
                return decoder_failed(r);
            return fail(r, r->offset, "capture ends without FINISH");
        }
        size_t n = wire_decoder_push(r->dec, r->buf + r->pos, r->len - r->pos);
        r->pos += n, r->offset += n;
    }
}

int capture_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n, len -= (size_t)n;
    }
    return 0;
}
