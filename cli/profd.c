/* profd: starting jett-profd and talking to it over a socketpair. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/profd.h"
#include "cli/profd_spawn.h"
#include "proto/capture.h"

int cli_profd_start(struct cli_profd *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char *path;
    if (profd_find(&path) != 0)
        return snprintf(err, errlen, "jett-profd not found beside jett"), -1;
    p->dec = wire_decoder_new(WIRE_TO_LAUNCHER);
    int rc = p->dec ? profd_spawn(path, &p->fd, &p->pid, err, errlen) : -1;
    free(path);
    if (rc != 0) {
        wire_decoder_free(p->dec);
        p->dec = NULL;
        return -1;
    }
    signal(SIGPIPE, SIG_IGN); /* a dead daemon is an error return, not a signal */
    return 0;
}

int cli_profd_send(struct cli_profd *p, const void *buf, size_t len)
{
    return capture_write_all(p->fd, buf, len);
}

void cli_profd_close_write(struct cli_profd *p)
{
    shutdown(p->fd, SHUT_WR);
}

/* Refills the read buffer; 0, or -1 (err set).  len 0 means EOF. */
static int profd_fill(struct cli_profd *p, char *err, size_t errlen)
{
    for (;;) {
        ssize_t n = read(p->fd, p->buf, sizeof p->buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return snprintf(err, errlen, "jett-profd: %s", strerror(errno)), -1;
        p->pos = 0;
        p->len = (size_t)n;
        return 0;
    }
}

int cli_profd_recv(struct cli_profd *p, struct wire_record *rec, char *err, size_t errlen)
{
    for (;;) {
        int rc = wire_decoder_next(p->dec, rec);
        if (rc != 0) {
            if (rc < 0)
                snprintf(err, errlen, "jett-profd: %s", wire_decoder_error(p->dec)->msg);
            return rc;
        }
        if (p->pos == p->len && profd_fill(p, err, errlen) != 0)
            return -1;
        if (p->len == 0) {
            if (wire_decoder_end(p->dec) != 0)
                return snprintf(err, errlen, "jett-profd: answer cut short"), -1;
            return 0;
        }
        p->pos += wire_decoder_push(p->dec, p->buf + p->pos, p->len - p->pos);
    }
}

int cli_profd_finish(struct cli_profd *p)
{
    close(p->fd);
    wire_decoder_free(p->dec);
    int st;
    while (waitpid(p->pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
