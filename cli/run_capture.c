/* run_capture: a temporary file beside the target, renamed when whole. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/run_capture.h"
#include "proto/capture.h"

#define PARTIAL ".partial-XXXXXX"

static int fail(char *err, size_t errlen, const char *path, const char *why)
{
    snprintf(err, errlen, "--profile-capture: cannot write '%s': %s", path, why);
    return -1;
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* A device, FIFO or socket: opened as it is. */
static int open_direct(struct run_capture *c, const char *path, char *err, size_t errlen)
{
    c->fd = open(path, O_WRONLY | O_CLOEXEC);
    return c->fd < 0 ? fail(err, errlen, path, strerror(errno)) : 0;
}

/* A regular file or a new one: PATH.partial-XXXXXX beside the file a
 * symlink names, with the mode a new file would get. */
static int open_partial(struct run_capture *c, const char *path, char *err, size_t errlen)
{
    struct stat st;
    char real[PATH_MAX];
    bool exists = stat(path, &st) == 0;
    if (exists && access(path, W_OK) != 0)
        return fail(err, errlen, path, strerror(errno));
    const char *target = exists && realpath(path, real) ? real : path;
    size_t n = strlen(target) + sizeof PARTIAL;
    c->target = strdup(target);
    c->tmp = malloc(n);
    if (!c->target || !c->tmp)
        return fail(err, errlen, path, "out of memory");
    snprintf(c->tmp, n, "%s" PARTIAL, target);
    c->fd = mkostemp(c->tmp, O_CLOEXEC);
    if (c->fd < 0) {
        int e = errno;
        free(c->tmp), c->tmp = NULL;
        return fail(err, errlen, path, strerror(e));
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(c->fd, 0666 & ~mask);
    return 0;
}

int run_capture_open(struct run_capture *c, const char *path, const char *program, char *err,
                     size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (!path)
        return 0;
    if (program && same_file(path, program)) {
        snprintf(err, errlen, "--profile-capture: '%s' is the program file", path);
        return -1;
    }
    struct stat st;
    int rc;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        rc = fail(err, errlen, path, strerror(EISDIR));
    else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        rc = open_direct(c, path, err, errlen);
    else
        rc = open_partial(c, path, err, errlen);
    if (rc == 0 && capture_write_all(c->fd, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN) != 0)
        rc = fail(err, errlen, path, strerror(errno));
    if (rc != 0)
        run_capture_discard(c);
    return rc;
}

int run_capture_commit(struct run_capture *c, char *err, size_t errlen)
{
    if (c->fd < 0)
        return 0;
    int rc = close(c->fd);
    c->fd = -1;
    if (rc == 0 && c->tmp && rename(c->tmp, c->target) == 0) {
        free(c->tmp), c->tmp = NULL;
        return 0;
    }
    if (rc == 0 && !c->tmp)
        return 0;
    snprintf(err, errlen, "%s", strerror(errno));
    run_capture_discard(c);
    return -1;
}

void run_capture_discard(struct run_capture *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->tmp)
        unlink(c->tmp);
    free(c->tmp), free(c->target);
    c->tmp = c->target = NULL;
}
