/* capture: reading and writing JETTCAP1 files over the wire decoder. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/capture.h"
#include "proto/capture_map.h"

#define CAPTURE_CHUNK (1 << 20)

struct capture_reader {
    int fd; /* -1 when reading from memory */
    const uint8_t *mem;
    size_t mem_len;
    /* A regular file is mapped up to its size at open (then read on). */
    bool mapped;
    struct capture_map map;
    const uint8_t *data; /* the bytes at hand: buf, a window or mem */
    uint8_t buf[CAPTURE_CHUNK];
    size_t pos, len;
    uint64_t offset; /* bytes handed to the decoder or magic so far */
    bool started, eof, failed;
    /* Following: wait at end of file for up to timeout_ms without growth;
     * idle_since is when the current wait began (0: not waiting). */
    bool follow;
    uint32_t timeout_ms;
    uint64_t idle_since;
    char *path; /* the followed file's name, or NULL */
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

static struct capture_reader *reader_on(int fd)
{
    struct capture_reader *r = reader_new();
    if (r)
        r->fd = fd, r->data = r->buf;
    /* a pipe as large as the read buffer: a writer that is ahead fills it
     * and each read takes a whole chunk (best effort) */
    fcntl(fd, F_SETPIPE_SZ, CAPTURE_CHUNK);
    return r;
}

struct capture_reader *capture_reader_fd(int fd)
{
    struct capture_reader *r = reader_on(fd);
    if (r)
        r->mapped = capture_map_open(&r->map, fd);
    return r;
}

struct capture_reader *capture_reader_follow(int fd, const char *path, uint32_t timeout_ms)
{
    struct capture_reader *r = reader_on(fd);
    struct stat st;
    if (r && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        r->follow = true, r->timeout_ms = timeout_ms;
        if (path && (r->path = strdup(path)) == NULL) {
            capture_reader_free(r);
            return NULL;
        }
    }
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
    if (r->mapped)
        capture_map_close(&r->map);
    wire_decoder_free(r->dec);
    free(r->path);
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
    return wire_decoder_frame_offset(r->dec);
}

static int fail(struct capture_reader *r, uint64_t at, const char *msg)
{
    r->failed = true;
    snprintf(r->err, sizeof r->err, "byte %" PRIu64 ": %s", at, msg);
    return -1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#define SHRANK_MSG "the file was truncated while it was being read"
#define REPLACED_MSG                                                                               \
    "the file was replaced or removed while it was being followed: its name no longer leads "      \
    "to the file being read (what was read is a partial result)"

/* A followed file cut below what was read, or whose name now leads to
 * another file (or none), will never bring the rest of this capture. */
static int follow_check(struct capture_reader *r)
{
    struct stat st, named;
    off_t at = lseek(r->fd, 0, SEEK_CUR);
    if (fstat(r->fd, &st) == 0 && at >= 0 && st.st_size < at)
        return fail(r, r->offset, SHRANK_MSG);
    if (r->path &&
        (stat(r->path, &named) != 0 || named.st_dev != st.st_dev || named.st_ino != st.st_ino))
        return fail(r, r->offset, REPLACED_MSG);
    return 0;
}

/* At the end of a followed file: sleeps one poll interval, or fails once
 * the file has not grown for timeout_ms, was truncated or was replaced. */
static int follow_wait(struct capture_reader *r)
{
    if (follow_check(r) != 0)
        return -1;
    uint64_t now = now_ms() + 1; /* never 0, which means "not waiting" */
    if (r->idle_since == 0)
        r->idle_since = now;
    if (now - r->idle_since >= r->timeout_ms) {
        char msg[200], span[32];
        if (r->timeout_ms % 1000 == 0)
            snprintf(span, sizeof span, "%" PRIu32 " s", r->timeout_ms / 1000);
        else
            snprintf(span, sizeof span, "%" PRIu32 " ms", r->timeout_ms);
        snprintf(msg, sizeof msg,
                 "no new data for %s: the capture is incomplete, followed up to byte %" PRIu64
                 " without FINISH (what was read is a partial result)",
                 span, r->offset);
        return fail(r, r->offset, msg);
    }
    poll(NULL, 0, CAPTURE_FOLLOW_POLL_MS);
    return 0;
}

/* Refills the buffer when it is empty; sets eof at end of input.  A
 * followed file is waited for unless `final` (after FINISH nothing more
 * is expected, so the end of what is there is the end). */
static int fill_from(struct capture_reader *r, bool final)
{
    if (r->pos < r->len || r->eof)
        return 0;
    r->pos = r->len = 0;
    if (r->fd < 0) {
        /* all of it at once, then the end */
        r->data = r->mem, r->len = r->mem_len;
        r->eof = r->mem == NULL;
        r->mem = NULL;
        return 0;
    }
    if (r->mapped) {
        size_t n;
        const uint8_t *p = capture_map_next(&r->map, &n);
        if (p) {
            r->data = p, r->len = n;
            return 0;
        }
        /* past the size seen at open, or no mapping: read() from there */
        r->mapped = false, r->data = r->buf;
        if (lseek(r->fd, (off_t)r->map.next, SEEK_SET) < 0)
            return fail(r, r->offset, strerror(errno));
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf, sizeof r->buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(r, r->offset, strerror(errno));
        if (n == 0 && r->follow && !final) {
            if (follow_wait(r) != 0)
                return -1;
            continue;
        }
        r->idle_since = 0;
        r->len = (size_t)n;
        r->eof = n == 0;
        return 0;
    }
}

static int fill(struct capture_reader *r)
{
    return fill_from(r, false);
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
        memcpy(magic + have, r->data + r->pos, take);
        have += take, r->pos += take;
    }
    r->offset = CAPTURE_MAGIC_LEN;
    if (memcmp(magic, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN) != 0)
        return fail(r, 0, "not a capture: bad magic (expected JETTCAP1)");
    r->started = true;
    return 0;
}

/* Whether the file shrank under a mapped window: what was decoded since
 * came from zero pages. */
static bool shrank(const struct capture_reader *r)
{
    return r->fd >= 0 && capture_map_shrank(&r->map);
}

static int decoder_failed(struct capture_reader *r)
{
    if (shrank(r))
        return fail(r, r->offset, SHRANK_MSG);
    const struct wire_error *e = wire_decoder_error(r->dec);
    return fail(r, e->offset, e->msg);
}

void capture_reader_decode_error(const struct capture_reader *r, char *err, size_t errlen)
{
    if (shrank(r)) {
        snprintf(err, errlen, "byte %" PRIu64 ": %s", r->offset, SHRANK_MSG);
        return;
    }
    const struct wire_error *e = wire_decoder_error(r->dec);
    snprintf(err, errlen, "byte %" PRIu64 ": %s", e->offset, e->msg);
}

/* After FINISH nothing may follow. */
static int expect_end(struct capture_reader *r)
{
    if (fill_from(r, true) != 0)
        return -1;
    if (!r->eof)
        return fail(r, r->offset, "trailing data after FINISH");
    return 0;
}

int capture_reader_next(struct capture_reader *r, struct wire_record *rec)
{
    if (r->failed)
        return -1;
    if (shrank(r))
        return fail(r, r->offset, SHRANK_MSG);
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
        size_t n = wire_decoder_push(r->dec, r->data + r->pos, r->len - r->pos);
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
