/* server: jett-profd as the launcher starts it, on one inherited socket. */
#ifndef JETT_DAEMON_SERVER_H
#define JETT_DAEMON_SERVER_H

/* Serves one profiling session on `fd`: HELLO -> READY or UNSUPPORTED,
 * the stream into the aggregation, FINISH -> RESULT.  Returns the exit
 * status (0 after RESULT or UNSUPPORTED, 1 when the launcher went away or
 * the stream was bad). */
int server_run(int fd);

#endif
