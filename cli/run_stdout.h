/*
 * run_stdout: the program's standard output in `jett run` without
 * --agent.  When its reader goes away (a closed pipe, as with `| head`),
 * the rest of the program's output is dropped: descriptor 1 becomes
 * /dev/null, print() goes on without an error, and the run ends as it
 * would have, with its report on stderr.  Any other failed write stays
 * recorded in stdout, and the launcher reports it at exit (status 2).
 */
#ifndef JETT_CLI_RUN_STDOUT_H
#define JETT_CLI_RUN_STDOUT_H

#include <stddef.h>

void run_stdout_write(const char *data, size_t len);
void run_stdout_flush(void);

#endif
