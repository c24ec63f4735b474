/* jett profile: subcommands over event captures. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void profile_usage(FILE *f)
{
    fprintf(f, "usage: jett profile SUBCOMMAND ...\n");
}

int cli_profile_main(int argc, char **argv)
{
    if (argc < 2)
        return profile_usage(stderr), CLI_EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0)
        return profile_usage(stdout), CLI_EXIT_OK;
    return cli_usage_error("profile: unknown subcommand '%s'", argv[1]);
}
