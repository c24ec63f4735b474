/*
 * cli: the jett launcher's subcommand groups.  Each group lives in its own
 * file (cli/cmd_GROUP.c) and is listed in cli/main.c's table.
 *
 * Exit statuses shared by every subcommand: 0 success, 1 bad input (a
 * rejected file or record), 2 usage error or unreadable file; `jett run`
 * adds the statuses of DESIGN section 3.
 */
#ifndef JETT_CLI_CLI_H
#define JETT_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_BAD_INPUT 1
#define CLI_EXIT_USAGE 2

/* A group's entry point: argv[0] is the group name ("profile", ...). */
typedef int (*cli_group_fn)(int argc, char **argv);

int cli_profile_main(int argc, char **argv);
int cli_callgrind_main(int argc, char **argv);
int cli_profile_export(int argc, char **argv); /* cli/cmd_export.c */
int cli_run_main(int argc, char **argv);
/* jett profile diff (argv[0] is "diff"). */
int cli_profile_diff(int argc, char **argv);

/* --help or -h. */
bool cli_is_help(const char *arg);
/* "jett: CMD: unknown WHAT 'WORD' (did you mean KNOWN?)", the hint only
 * when one of known[0..n) is close; returns CLI_EXIT_USAGE. */
int cli_unknown_word(const char *cmd, const char *what, const char *word, const char *const *known,
                     size_t n);

/* Prints "jett: " + message + newline on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The path as shown to the user: never absolute when it can be avoided
 * (callers pass what the user typed, which is already theirs to see). */
#endif
