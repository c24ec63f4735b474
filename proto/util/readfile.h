/* readfile: whole-file reads for the launcher's subcommands. */
#ifndef JETT_CLI_READFILE_H
#define JETT_CLI_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/capture.h"

/* Reads `path` ("-" is standard input) into a malloc'd, NUL-terminated
 * buffer of at most `max` bytes.  0, or -1 with a message (which never
 * repeats the path) in err. */
int cli_read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* Opens `path` for reading ("-" is standard input); -1 with err set. */
int cli_open_input(const char *path, char *err, size_t errlen);

/* A capture being read: its descriptor and reader. */
struct cli_capture {
    int fd;
    struct capture_reader *r; /* NULL when memory ran out */
};
/* Opens the capture at `path` ("-" is standard input) with a reader that,
 * when follow_ms > 0, follows a file still being written for up to that
 * long without growth.  0 (c->r may be NULL: out of memory), or -1 with
 * err set when the file cannot be opened. */
int cli_capture_open(struct cli_capture *c, const char *path, uint32_t follow_ms, char *err,
                     size_t errlen);
/* Frees the reader and closes the descriptor (never standard input). */
void cli_capture_close(struct cli_capture *c);

/* True when `path` exists and is not a regular file (a device such as
 * /dev/null, a FIFO): output goes straight to it, since renaming a
 * finished temporary file over it would replace it with a file. */
bool cli_output_is_special(const char *path);

#endif
