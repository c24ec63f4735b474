/* usage: what every subcommand says about its own words. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "proto/util/suggest_option.h"

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_unknown_word(const char *cmd, const char *what, const char *word, const char *const *known,
                     size_t n)
{
    char hint[96];
    return cli_usage_error("%s: unknown %s '%s'%s", cmd, what, word,
                           suggest_option_hint(word, known, n, hint, sizeof hint));
}
