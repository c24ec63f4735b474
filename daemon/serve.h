/*
 * serve: jett-profd on the launcher's socket (`jett-profd --fd N`).
 *
 * A libevent loop reads frames, answers HELLO with READY (or UNSUPPORTED
 * naming the first missing capability of the mode), feeds every record to
 * the aggregation and, at FINISH, answers RESULT with the TOON profile
 * and the human report, then exits once it is written.  A stream that
 * breaks (a decode error, or EOF before FINISH) still gets its RESULT,
 * with the collector failure in the profile, if the peer can read it.
 */
#ifndef JETT_DAEMON_SERVE_H
#define JETT_DAEMON_SERVE_H

/* Serves one launcher on `fd`; returns the process exit status. */
int serve_fd(int fd);

#endif
