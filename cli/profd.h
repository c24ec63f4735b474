/*
 * profd: the launcher's side of the jett-profd socket.  Starts the daemon
 * with one end of a socketpair (`jett-profd --fd 3`, nothing else
 * inherited), writes frames to it and reads its answers (READY,
 * UNSUPPORTED, RESULT) with the wire decoder.
 *
 * The daemon binary is the jett-profd beside this executable (or in the
 * build tree's daemon/ folder): never one found elsewhere, which could be
 * another version.
 */
#ifndef JETT_CLI_PROFD_H
#define JETT_CLI_PROFD_H

#include <stddef.h>
#include <sys/types.h>

#include "proto/wire.h"

struct cli_profd {
    pid_t pid;
    int fd;
    struct wire_decoder *dec;
    unsigned char buf[65536];
    size_t pos, len;
};

/* Starts the daemon.  0, or -1 with a message in err. */
int cli_profd_start(struct cli_profd *p, char *err, size_t errlen);

/* Writes all of buf.  0, or -1 when the daemon is gone. */
int cli_profd_send(struct cli_profd *p, const void *buf, size_t len);

/* No more records will be sent (the daemon sees end of stream). */
void cli_profd_close_write(struct cli_profd *p);

/* Blocks for the daemon's next record: 1 with *rec (valid until the next
 * call), 0 at end of stream, -1 on a read or decode error (err set). */
int cli_profd_recv(struct cli_profd *p, struct wire_record *rec, char *err, size_t errlen);

/* Closes the socket and waits for the daemon; its exit status. */
int cli_profd_finish(struct cli_profd *p);

#endif
