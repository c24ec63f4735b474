/* stdfd: closed standard descriptors and standard output's write errors. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/util/stdfd.h"

int stdfd_ensure_open(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* The lowest free descriptor is fd itself: those below are open. */
        int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (null < 0)
            return -1;
        if (null != fd) {
            int rc = dup2(null, fd);
            close(null);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

static int noted; /* the errno of an earlier failed write, or 0 */

void stdfd_note_stdout_error(int err)
{
    if (!noted)
        noted = err;
}

int stdfd_flush_stdout(char *err, size_t errlen)
{
    errno = 0;
    if (fflush(stdout) != 0) {
        snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
        return -1;
    }
    if (ferror(stdout)) {
        snprintf(err, errlen, "%s", noted ? strerror(noted) : "a write failed");
        return -1;
    }
    return 0;
}
