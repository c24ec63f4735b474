/* readfile: whole-file reads for the launcher's subcommands. */
#ifndef JETT_CLI_READFILE_H
#define JETT_CLI_READFILE_H

#include <stddef.h>

/* Reads `path` ("-" is standard input) into a malloc'd, NUL-terminated
 * buffer of at most `max` bytes.  0, or -1 with a message (which never
 * repeats the path) in err. */
int cli_read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* Opens `path` for reading ("-" is standard input); -1 with err set. */
int cli_open_input(const char *path, char *err, size_t errlen);

/* Writes buf to `path` through a temporary file renamed into place, so a
 * failure never leaves a partial file.  0, or -1 with err set. */
int cli_write_file_atomic(const char *path, const void *buf, size_t len, char *err, size_t errlen);

#endif
