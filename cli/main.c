/* jett: dispatches `jett GROUP ...` to the group's entry point. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "jett-config.h"
#include "proto/util/stdfd.h"

static const struct {
    const char *name;
    cli_group_fn fn;
    const char *summary;
} groups[] = {
    {"run", cli_run_main, "run a Jett program, optionally profiled"},
    {"profile", cli_profile_main, "dump, pack and replay event captures"},
    {"callgrind", cli_callgrind_main, "check and normalize Callgrind profiles"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: jett COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        fprintf(f, "  %-10s %s\n", groups[i].name, groups[i].summary);
    fprintf(f, "\nRun 'jett COMMAND --help' for a command's options.\n");
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("jett: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

/* A command whose output did not all reach stdout failed, whatever it
 * computed: exit 1, or 2 for `jett run` (whose 1 is a runtime error and
 * which never reports a failed write itself).  A command that already
 * failed has said why (dump and export report their own output). */
static int output_checked(int status, bool run)
{
    char err[128];
    if ((status != CLI_EXIT_OK && !run) || stdfd_flush_stdout(err, sizeof err) == 0)
        return status;
    fprintf(stderr, "jett: cannot write standard output: %s\n", err);
    return run ? CLI_EXIT_USAGE : CLI_EXIT_BAD_INPUT;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr), CLI_EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout), CLI_EXIT_OK;
    if (strcmp(argv[1], "--version") == 0)
        return printf("jett %s\n", JETT_VERSION), CLI_EXIT_OK;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(argv[1], groups[i].name) == 0)
            return groups[i].fn(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s' (try 'jett --help')", argv[1]);
}

int main(int argc, char **argv)
{
    if (stdfd_ensure_open() != 0)
        return fputs("jett: cannot open /dev/null\n", stderr), CLI_EXIT_USAGE;
    bool run = argc >= 2 && strcmp(argv[1], "run") == 0;
    return output_checked(dispatch(argc, argv), run);
}
