/* stdfd: the standard descriptors of a command-line program. */
#ifndef JETT_UTIL_STDFD_H
#define JETT_UTIL_STDFD_H

#include <stddef.h>

/* Opens /dev/null on each of descriptors 0, 1 and 2 that is closed, so
 * that nothing the program opens later (a capture, a socket) takes one
 * of them and receives what is meant for standard output, or is read as
 * standard input.  Call it first.  0, or -1 when /dev/null cannot be
 * opened. */
int stdfd_ensure_open(void);

/* Flushes stdout and tells whether every write to it succeeded, this
 * flush or an earlier one (stdio remembers a failed write, while a later
 * fflush with nothing left to write succeeds).  0, or -1 with the reason
 * in err. */
int stdfd_flush_stdout(char *err, size_t errlen);

/* A writer that saw a write to stdout fail tells why (errno), so that
 * stdfd_flush_stdout can say it after the fact. */
void stdfd_note_stdout_error(int err);

#endif
