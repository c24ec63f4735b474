/* run_args: `jett run` command-line validation (DESIGN section 3), done
 * before anything is loaded. */
#ifndef JETT_CLI_RUN_ARGS_H
#define JETT_CLI_RUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUN_DEFAULT_THRESHOLD_BP 500
#define RUN_DEFAULT_LIMIT 10
#define RUN_DEFAULT_RATE_HZ 1000

enum run_mode { RUN_MODE_NONE, RUN_MODE_CPU, RUN_MODE_MEMORY };

struct run_args {
    const char *file;
    enum run_mode mode;
    bool agent;
    uint32_t threshold_bp, limit, rate_hz; /* defaults filled in */
    const char *capture;                   /* --profile-capture PATH or NULL */
    uint32_t workers;                      /* --workers N, 0 when not given */
    int prog_argc;                         /* arguments after "--" */
    char **prog_argv;
};

/* Parses argv[1..] of `jett run` (argv[0] is "run").  0, or -1 with one
 * line naming the option and what it accepts in err. */
int run_args_parse(int argc, char **argv, struct run_args *a, char *err, size_t errlen);

#endif
