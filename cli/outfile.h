/*
 * outfile: where `jett profile export`, `jett profile diff --format svg`,
 * `jett profile pack` and `jett callgrind normalize` write, and how a
 * failed write is told.
 *
 * The output is standard output; a device or FIFO named by -o, written
 * directly (renaming over it would replace it with a file); or a
 * temporary file beside the -o PATH, PATH.tmp-XXXXXX, renamed over PATH
 * once it is whole and removed otherwise, so that PATH is written whole
 * or not at all.  The writer writes into a stream that keeps the reason
 * (errno) of the first write that failed, whatever the writer was doing
 * then, so that every failure reads `cannot write PATH: REASON`, PATH as
 * the user gave it or `standard output`.  A file size limit is such a
 * reason (EFBIG), not a signal that ends the process.
 */
#ifndef JETT_CLI_OUTFILE_H
#define JETT_CLI_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct cli_out {
    FILE *f;          /* what the writer writes into */
    const char *path; /* the -o PATH, NULL for standard output */
    char *tmp;        /* the temporary file, or NULL when written directly */
    int fd;
    int error; /* errno of the first failed write, open, close or rename */
};

/* Opens the output for `path` (NULL: standard output).  0, or -1 after
 * printing `cannot write PATH: REASON`. */
int cli_out_open(struct cli_out *o, const char *path);

/* Ends the output of a writer that returned `rc` (0 or -1): kept when it
 * succeeded, or when a write failed, which is then the failure reported
 * (whatever else went wrong); discarded otherwise.  CLI_EXIT_OK when
 * written whole, CLI_EXIT_USAGE after `cannot write PATH: REASON`, or -1
 * when the writer failed for a reason of its own, for the caller to
 * report. */
int cli_out_finish(struct cli_out *o, int rc);

/* Writes a whole buffer to `path` (NULL: standard output) as above:
 * CLI_EXIT_OK, or CLI_EXIT_USAGE after `cannot write PATH: REASON`. */
int cli_out_write_buffer(const char *path, const void *buf, size_t len);

/* True when the output PATH is an existing regular file that is the
 * input `in` ("-": standard input): the same device and inode whatever
 * the spelling (a symlink, a hard link, ./), which writing would
 * replace. */
bool cli_out_is_input(const char *path, const char *in);

#endif
