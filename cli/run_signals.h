/*
 * run_signals: SIGINT and SIGTERM in each phase of `jett run`, each acted
 * on at once (DESIGN section 3: an interrupt ranks above a runtime error
 * and a collector failure).
 *
 *   loading    (arguments, load, check, the daemon's start): nothing has
 *              run, so the handler itself ends the process with 130/143,
 *              writing the envelope prepared in advance (--agent),
 *              removing the temporary capture and killing the daemon;
 *   running    the program stops at its next safe point;
 *   finishing  (the program ended; draining, FINISH, RESULT): every wait
 *              of the collector gives up, and the run reports the
 *              interrupt.
 *
 * SIGPIPE is ignored (a closed reader is an error return of the write)
 * and so is SIGXFSZ (a file-size limit is a failed write of the capture).
 */
#ifndef JETT_CLI_RUN_SIGNALS_H
#define JETT_CLI_RUN_SIGNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/collector.h"
#include "agent/interp.h"
#include "cli/runout.h"

/* Installs the handlers; the loading phase begins. */
void run_signals_install(void);

/* What ending during loading leaves behind: with `agent`, the envelope
 * of an interrupted, not started run (rendered now from ro); the
 * temporary capture to remove (NULL: none).  0, or -1 when the envelope
 * cannot be rendered. */
int run_signals_prepare_quit(struct runout *ro, bool agent, const char *partial_capture);

/* The daemon to kill should loading end (-1: none). */
void run_signals_daemon(pid_t pid);

/* The program starts running in s. */
void run_signals_running(struct interp_state *s);

/* The program ended; `c` (NULL without profiling) stops waiting when a
 * signal arrives from now on, or at once when one arrived that the
 * program did not act on (it came after its last safe point).  One that
 * stopped the program does not stop the collector: the profile of an
 * interrupted run is still wanted. */
void run_signals_finishing(struct collector *c, bool program_interrupted);

/* The signal that arrived while the program ran or after, or 0. */
int run_signals_received(void);

/* Frees what run_signals_prepare_quit made (after loading). */
void run_signals_free(void);

#endif
