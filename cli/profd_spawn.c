/* profd_spawn: find the daemon, fork + exec it with one socket. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/profd_spawn.h"
#include "proto/util/selfexe.h"

int profd_find(char **path)
{
    char self[PATH_MAX];
    if (self_exe_dir(self, sizeof self) != 0)
        return -1;
    /* Installed, the daemon is beside jett; in the build tree, in daemon/. */
    static const char *const rel[] = {"/jett-profd", "/../daemon/jett-profd"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char cand[PATH_MAX + 32];
        snprintf(cand, sizeof cand, "%s%s", self, rel[i]);
        if (access(cand, X_OK) == 0) {
            *path = strdup(cand);
            return *path ? 0 : -1;
        }
    }
    return -1;
}

/* In the child: descriptor 3 is the socket, 0 and 1 are /dev/null, 2 is
 * kept, everything else is closed. */
static void child_exec(const char *path, int sock)
{
    /* Move the socket out of the way of 0..3 first. */
    int s = fcntl(sock, F_DUPFD, 10);
    int null = open("/dev/null", O_RDWR);
    if (s < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(s, 3) < 0)
        _exit(127);
    close_range(4, ~0u, 0);
    execl(path, "jett-profd", "--fd", "3", (char *)NULL);
    _exit(127);
}

int profd_spawn(const char *path, int *sock, pid_t *pid, char *err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return -1;
    }
    pid_t child = fork();
    if (child < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(sv[0]), close(sv[1]);
        return -1;
    }
    if (child == 0) {
        /* dup2 clears CLOEXEC on descriptor 3; the launcher's end closes. */
        child_exec(path, sv[1]);
    }
    close(sv[1]);
    *sock = sv[0], *pid = child;
    return 0;
}
