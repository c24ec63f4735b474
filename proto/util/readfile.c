/* readfile: bounded reads and atomic writes of whole files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/util/readfile.h"
#include "proto/capture.h"

int cli_open_input(const char *path, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return STDIN_FILENO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "is a directory");
        return -1;
    }
    return fd;
}

int cli_capture_open(struct cli_capture *c, const char *path, uint32_t follow_ms, char *err,
                     size_t errlen)
{
    c->r = NULL;
    if ((c->fd = cli_open_input(path, err, errlen)) < 0)
        return -1;
    const char *name = c->fd == STDIN_FILENO ? NULL : path; /* "-" names no file */
    c->r = follow_ms ? capture_reader_follow(c->fd, name, follow_ms) : capture_reader_fd(c->fd);
    return 0;
}

void cli_capture_close(struct cli_capture *c)
{
    capture_reader_free(c->r);
    c->r = NULL;
    if (c->fd >= 0 && c->fd != STDIN_FILENO)
        close(c->fd);
    c->fd = -1;
}

int cli_read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    int fd = cli_open_input(path, err, errlen);
    if (fd < 0)
        return -1;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max)
                break;
            cap = cap * 2 > max ? max : cap * 2;
            char *nb = realloc(buf, cap + 1);
            if (!nb)
                break;
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "read failed: %s", strerror(errno));
            goto fail;
        }
        if (r == 0) {
            if (fd != STDIN_FILENO)
                close(fd);
            buf[n] = 0;
            *out = buf, *len = n;
            return 0;
        }
        n += (size_t)r;
    }
    snprintf(err, errlen, buf ? "larger than %zu bytes" : "out of memory", max);
fail:
    if (fd != STDIN_FILENO)
        close(fd);
    free(buf);
    return -1;
}

bool cli_output_is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}
