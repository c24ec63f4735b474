/* outfile: an export's output, whole or not at all, with the reason of a
 * failed write (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "proto/util/readfile.h"

#define OUT_BUFFER (1 << 16)

static void note(struct cli_out *o, int err)
{
    if (!o->error)
        o->error = err ? err : EIO;
}

/* The stream's writes: every byte or the first failure's errno (0 tells
 * stdio the write failed, which it then reports through ferror). */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    struct cli_out *o = cookie;
    for (size_t done = 0; done < n && !o->error;) {
        ssize_t w = write(o->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            note(o, w < 0 ? errno : ENOSPC);
        else
            done += (size_t)w;
    }
    return o->error ? 0 : (ssize_t)n;
}

static int out_close(void *cookie)
{
    struct cli_out *o = cookie;
    if (o->fd != STDOUT_FILENO && close(o->fd) != 0)
        note(o, errno);
    o->fd = -1;
    return 0;
}

static int fail(struct cli_out *o)
{
    cli_usage_error("cannot write %s: %s", o->path ? o->path : "standard output",
                    strerror(o->error));
    return -1;
}

/* Ends the output: `keep` false discards a temporary file; kept, it is
 * flushed and moved into place.  0, or -1 after the message. */
static int out_end(struct cli_out *o, bool keep)
{
    if (o->f) {
        if (keep && fflush(o->f) != 0)
            note(o, errno);
        fclose(o->f); /* out_close notes a failed close */
        o->f = NULL;
    } else if (o->fd >= 0 && o->fd != STDOUT_FILENO) {
        close(o->fd);
    }
    if (o->tmp) {
        if (keep && !o->error && rename(o->tmp, o->path) != 0)
            note(o, errno);
        if (!keep || o->error)
            unlink(o->tmp);
        free(o->tmp), o->tmp = NULL;
    }
    return keep && o->error ? fail(o) : 0;
}

/* A temporary file beside the path, with the mode a new file gets. */
static int open_tmp(struct cli_out *o)
{
    size_t n = strlen(o->path) + sizeof ".tmp-XXXXXX";
    if (!(o->tmp = malloc(n)))
        return note(o, ENOMEM), -1;
    snprintf(o->tmp, n, "%s.tmp-XXXXXX", o->path);
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        note(o, errno);
        free(o->tmp), o->tmp = NULL;
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(o->fd, 0666 & ~mask);
    return 0;
}

int cli_out_open(struct cli_out *o, const char *path)
{
    *o = (struct cli_out){NULL, path, NULL, STDOUT_FILENO, 0};
    /* past a file size limit a write fails with EFBIG, to be reported
     * like any other reason, instead of the signal ending the process */
    signal(SIGXFSZ, SIG_IGN);
    if (path && cli_output_is_special(path)) {
        if ((o->fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            return note(o, errno), fail(o);
    } else if (path && open_tmp(o) != 0) {
        return fail(o);
    }
    static const cookie_io_functions_t io = {NULL, out_write, NULL, out_close};
    o->f = fopencookie(o, "w", io);
    if (!o->f || setvbuf(o->f, NULL, _IOFBF, OUT_BUFFER) != 0) {
        note(o, ENOMEM);
        out_end(o, false);
        return fail(o);
    }
    return 0;
}

int cli_out_finish(struct cli_out *o, int rc)
{
    if (rc == 0 || o->error)
        return out_end(o, true) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    out_end(o, false);
    return -1;
}

int cli_out_write_buffer(const char *path, const void *buf, size_t len)
{
    struct cli_out o;
    if (cli_out_open(&o, path) != 0)
        return CLI_EXIT_USAGE;
    fwrite(buf, 1, len, o.f); /* a short write is in o.error */
    return cli_out_finish(&o, 0);
}

bool cli_out_is_input(const char *path, const char *in)
{
    struct stat a, b;
    if (stat(path, &a) != 0 || !S_ISREG(a.st_mode))
        return false;
    if (strcmp(in, "-") == 0 ? fstat(STDIN_FILENO, &b) != 0 : stat(in, &b) != 0)
        return false;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
