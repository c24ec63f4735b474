/*
 * run_capture: the --profile-capture file of `jett run`, which replaces
 * its target only when it is whole.
 *
 * A regular file (or a path that does not exist yet) is written as a
 * temporary file beside it, PATH.partial-XXXXXX, renamed over PATH once
 * the stream is complete (FINISH written) and removed otherwise, so that
 * a run that fails or is interrupted before that leaves a previous PATH
 * as it was.  A device, FIFO or socket is written directly: renaming over
 * it would replace it with a file.
 */
#ifndef JETT_CLI_RUN_CAPTURE_H
#define JETT_CLI_RUN_CAPTURE_H

#include <stddef.h>

struct run_capture {
    int fd;       /* -1: no capture */
    char *tmp;    /* the temporary file, or NULL when written directly */
    char *target; /* what tmp is renamed to (a symlink's target) */
};

/* Opens the capture for `path` (checked before anything is loaded) and
 * writes its magic.  The program file itself is refused.  0, or -1 with
 * a message naming the option and path. */
int run_capture_open(struct run_capture *c, const char *path, const char *program, char *err,
                     size_t errlen);

/* The capture is complete: close it and move it into place.  0, or -1
 * with the reason in err (the temporary file is then removed). */
int run_capture_commit(struct run_capture *c, char *err, size_t errlen);

/* Closes it and removes the temporary file if it was not committed. */
void run_capture_discard(struct run_capture *c);

#endif
