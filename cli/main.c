/* jett: dispatches `jett GROUP ...` to the group's entry point. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "proto/util/suggest_option.h"
#include "jett-config.h"
#include "proto/util/stdfd.h"

static const struct {
    const char *name;
    cli_group_fn fn;
} groups[] = {
    {"run", cli_run_main},
    {"profile", cli_profile_main},
    {"callgrind", cli_callgrind_main},
};

static const char usage_text[] =
    "usage: jett COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  run FILE.jett              run a Jett program, optionally profiled\n"
    "  profile replay CAPTURE     print the profile of a saved event capture\n"
    "  profile export CAPTURE     folded stacks, a flame graph, a Callgrind, pprof\n"
    "                             or speedscope profile, or a memory timeline\n"
    "  profile diff BASE NEW      per-function change between two captures\n"
    "  profile dump CAPTURE       a capture as text, one record a line\n"
    "  profile pack TEXT          that text back into a capture\n"
    "  callgrind check FILE       check a Callgrind profile\n"
    "  callgrind normalize FILE   a Callgrind profile in canonical form\n"
    "\n"
    "options:\n"
    "  -h, --help                 print this help\n"
    "  --version                  print the version\n"
    "\n"
    "Run 'jett COMMAND --help' or 'jett COMMAND SUBCOMMAND --help' for the options.\n";

static void usage(FILE *f)
{
    fputs(usage_text, f);
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
    if (cli_is_help(argv[1]))
        return usage(stdout), CLI_EXIT_OK;
    if (strcmp(argv[1], "--version") == 0)
        return printf("jett %s\n", JETT_VERSION), CLI_EXIT_OK;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(argv[1], groups[i].name) == 0)
            return groups[i].fn(argc - 1, argv + 1);
    static const char *const known[] = {"run", "profile", "callgrind", "--help", "--version"};
    char hint[96];
    const char *h = suggest_option_hint(argv[1], known, 5, hint, sizeof hint);
    return cli_usage_error("unknown command '%s'%s", argv[1], *h ? h : " (try 'jett --help')");
}

int main(int argc, char **argv)
{
    if (stdfd_ensure_open() != 0)
        return fputs("jett: cannot open /dev/null\n", stderr), CLI_EXIT_USAGE;
    bool run = argc >= 2 && strcmp(argv[1], "run") == 0;
    return output_checked(dispatch(argc, argv), run);
}
