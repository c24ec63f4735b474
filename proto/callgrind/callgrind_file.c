/* callgrind_file: reading a profile file within the CLI's limits. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/callgrind/callgrind-internal.h"

/* Unreadable: kind CG_OK, the reason in the message. */
static enum cg_read_status unreadable(struct cg_error *err, const char *why)
{
    err->kind = CG_OK, err->line = 0;
    snprintf(err->message, sizeof err->message, "%s", why);
    return CG_READ_UNREADABLE;
}

/* Opens without blocking (a FIFO must not hang us) and requires a regular file. */
static int open_regular(const char *path, off_t *size, struct cg_error *err)
{
    errno = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return unreadable(err, strerror(errno)), -1;
    errno = 0;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        bool dir = errno == 0 && S_ISDIR(st.st_mode);
        unreadable(err, dir ? "is a directory" : "not a regular file");
        close(fd);
        return -1;
    }
    *size = st.st_size;
    return fd;
}

/* Grows the buffer so that `want` more bytes fit (never past the limit + 1). */
static int room_for(char **buf, size_t *cap, size_t have, size_t want)
{
    if (*cap - have >= want)
        return 0;
    size_t n = *cap * 2 > have + want ? *cap * 2 : have + want;
    if (n > CG_FILE_MAX_BYTES + 2)
        n = CG_FILE_MAX_BYTES + 2;
    char *b = realloc(*buf, n);
    if (b == NULL)
        return -1;
    *buf = b, *cap = n;
    return 0;
}

/* Reads chunks of at most CG_FILE_CHUNK, checking UTF-8 as they arrive,
 * never more than CG_FILE_MAX_BYTES + 1 bytes in total. */
static enum cg_read_status read_chunks(int fd, char **buf, size_t *cap, size_t *len,
                                       struct cg_error *err)
{
    struct cg_utf8 u;
    cg_utf8_init(&u);
    size_t have = 0;
    for (;;) {
        size_t want = CG_FILE_MAX_BYTES + 1 - have;
        want = want < CG_FILE_CHUNK ? want : CG_FILE_CHUNK;
        /* Fill the room the size guess gave (one byte kept for the NUL);
         * grow only when it is full, i.e. the file grew. */
        if (*cap - have < 2 && room_for(buf, cap, have, want + 1) < 0)
            return unreadable(err, "out of memory");
        want = want < *cap - have - 1 ? want : *cap - have - 1;
        ssize_t n = read(fd, *buf + have, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return unreadable(err, strerror(errno));
        if (n == 0)
            break;
        have += (size_t)n;
        if (have > CG_FILE_MAX_BYTES)
            return cg_fail(err, CG_RESOURCE, 0, "file exceeds %zu bytes", CG_FILE_MAX_BYTES),
                   CG_READ_REJECTED;
        if (cg_utf8_feed_text(&u, *buf, have - (size_t)n, (size_t)n, err) < 0)
            return CG_READ_REJECTED;
    }
    if (cg_utf8_finish_text(&u, *buf, have, err) < 0)
        return CG_READ_REJECTED;
    *len = have;
    return CG_READ_OK;
}

enum cg_read_status cg_read_file(const char *path, char **buf, size_t *len, struct cg_error *err)
{
    off_t size;
    *err = (struct cg_error){CG_OK, 0, ""};
    int fd = open_regular(path, &size, err);
    if (fd < 0)
        return CG_READ_UNREADABLE;
    if ((uint64_t)size > CG_FILE_MAX_BYTES) {
        close(fd);
        cg_fail(err, CG_RESOURCE, 0, "file exceeds %zu bytes", CG_FILE_MAX_BYTES);
        return CG_READ_REJECTED;
    }
    /* The size is a first guess; a file that grows is still read in chunks. */
    size_t cap = (size_t)size + 2;
    char *b = malloc(cap);
    if (b)
        cg_prefault(b, cap); /* every byte of it is about to be written */
    enum cg_read_status st =
        b ? read_chunks(fd, &b, &cap, len, err) : unreadable(err, "out of memory");
    close(fd);
    if (st != CG_READ_OK) {
        free(b);
        return st;
    }
    b[*len] = '\0';
    *buf = b;
    return st;
}
