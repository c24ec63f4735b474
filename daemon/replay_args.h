/*
 * replay_args: the command line of a replay (`jett-profd replay` and
 * `jett profile replay`), parsed in one place so that both accept and
 * refuse the same words with the same messages.
 */
#ifndef JETT_DAEMON_REPLAY_ARGS_H
#define JETT_DAEMON_REPLAY_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/rank.h"

/* Also accept --follow and --timeout SECONDS (the launcher's replay). */
#define REPLAY_ARGS_FOLLOW 1u

struct replay_args {
    const char *path;    /* CAPTURE, or "-" for standard input */
    const char *timeout; /* --timeout's word, unchecked; NULL when absent */
    bool agent, follow;
    struct rank_options rank;
};

/* Parses argv[1..argc-1] in any order, each option at most once; values
 * are validated exactly as `jett run` validates them.  `cmd` names the
 * command in messages ("replay", "profile replay").  0, or -1 with one
 * line (no program name, no newline) in err. */
int replay_args_parse(int argc, char **argv, const char *cmd, unsigned flags, struct replay_args *a,
                      char *err, size_t errlen);

#endif
