/* run_stdout: a closed reader drops the program's output. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/run_stdout.h"
#include "proto/util/stdfd.h"

/* After a failed write: a closed pipe sends the rest to /dev/null. */
static void drop_if_reader_gone(int err)
{
    if (!ferror(stdout))
        return;
    if (err != EPIPE) {
        stdfd_note_stdout_error(err);
        return;
    }
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0)
        return;
    dup2(null, STDOUT_FILENO);
    close(null);
    clearerr(stdout);
    fflush(stdout); /* what stdio still holds goes the same way */
}

void run_stdout_write(const char *data, size_t len)
{
    errno = 0;
    if (fwrite(data, 1, len, stdout) < len)
        drop_if_reader_gone(errno);
}

void run_stdout_flush(void)
{
    errno = 0;
    if (fflush(stdout) != 0)
        drop_if_reader_gone(errno);
}
