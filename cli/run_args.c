/* run_args: every rule of `jett run`'s options, in any order. */
#include <stdio.h>
#include <string.h>

#include "cli/run_args.h"
#include "daemon/rank.h"
#include "proto/util/suggest_option.h"

enum opt_id {
    O_PROFILE,
    O_MEMORY,
    O_THRESHOLD,
    O_LIMIT,
    O_RATE,
    O_CAPTURE,
    O_AGENT,
    O_WORKERS,
    O_COUNT
};

static const struct {
    const char *name;
    bool takes_value;
    const char *accepts; /* for the message when the value is bad */
} opts[O_COUNT] = {
    [O_PROFILE] = {"--profile", false, NULL},
    [O_MEMORY] = {"--profile-memory", false, NULL},
    [O_THRESHOLD] = {"--profile-threshold", true,
                     "a PERCENT from 0 to 100 with at most two decimals (e.g. 5 or 2.5)"},
    [O_LIMIT] = {"--profile-limit", true, "a COUNT from 1 to 100"},
    [O_RATE] = {"--profile-rate", true, "a rate in HZ from 1 to 1000"},
    [O_CAPTURE] = {"--profile-capture", true, "a PATH to write the event capture to"},
    [O_AGENT] = {"--agent", false, NULL},
    [O_WORKERS] = {"--workers", true, "a number of worker threads from 1 to 64"},
};

static int err_out(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    snprintf(err, errlen, fmt, a, b);
    return -1;
}

/* A plain decimal integer in [lo, hi]. */
static int parse_range(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        if (v <= hi)
            v = v * 10 + (uint64_t)(s[i] - '0');
    if (i == 0 || s[i] != '\0' || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int set_value(struct run_args *a, enum opt_id id, const char *v)
{
    switch (id) {
    case O_THRESHOLD:
        return rank_parse_percent(v, &a->threshold_bp);
    case O_LIMIT:
        return parse_range(v, 1, 100, &a->limit);
    case O_RATE:
        return parse_range(v, 1, 1000, &a->rate_hz);
    case O_WORKERS:
        return parse_range(v, 1, 64, &a->workers);
    default: /* O_CAPTURE */
        a->capture = v;
        return *v ? 0 : -1;
    }
}

/* Cross-option rules, once every option is known. */
static int check_combination(const struct run_args *a, const bool *seen, char *err, size_t errlen)
{
    if (seen[O_PROFILE] && seen[O_MEMORY])
        return err_out(err, errlen, "%s and %s cannot be used together", "--profile",
                       "--profile-memory");
    for (int id = O_THRESHOLD; id <= O_CAPTURE; id++)
        if (seen[id] && a->mode == RUN_MODE_NONE)
            return err_out(err, errlen, "%s needs %s", opts[id].name,
                           id == O_RATE ? "--profile" : "--profile or --profile-memory");
    if (seen[O_RATE] && a->mode == RUN_MODE_MEMORY)
        return err_out(err, errlen, "%s applies to %s only", "--profile-rate", "--profile");
    if (!a->file)
        return err_out(err, errlen, "%s%s", "run: expected a program FILE.jett", "");
    if (!*a->file) /* it would read as a missing file: a compile error */
        return err_out(err, errlen, "%s%s", "run: the program FILE.jett is an empty string", "");
    return 0;
}

int run_args_parse(int argc, char **argv, struct run_args *a, char *err, size_t errlen)
{
    bool seen[O_COUNT] = {false};
    memset(a, 0, sizeof *a);
    a->threshold_bp = RUN_DEFAULT_THRESHOLD_BP;
    a->limit = RUN_DEFAULT_LIMIT;
    a->rate_hz = RUN_DEFAULT_RATE_HZ;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            a->prog_argc = argc - i - 1, a->prog_argv = argv + i + 1;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->file)
                return err_out(err, errlen,
                               "run: unexpected argument '%s' (program arguments go after --)%s",
                               arg, "");
            a->file = arg;
            continue;
        }
        int id = 0;
        while (id < O_COUNT && strcmp(arg, opts[id].name) != 0)
            id++;
        if (id == O_COUNT) {
            const char *names[O_COUNT + 2] = {[O_COUNT] = "--help", [O_COUNT + 1] = "-h"};
            for (int k = 0; k < O_COUNT; k++)
                names[k] = opts[k].name;
            char hint[96];
            return err_out(err, errlen, "run: unknown option '%s'%s", arg,
                           suggest_option_hint(arg, names, O_COUNT + 2, hint, sizeof hint));
        }
        if (seen[id])
            return err_out(err, errlen, "%s is given more than once%s", arg, "");
        seen[id] = true;
        if (id == O_PROFILE || id == O_MEMORY)
            a->mode = id == O_PROFILE ? RUN_MODE_CPU : RUN_MODE_MEMORY;
        else if (id == O_AGENT)
            a->agent = true;
        else if (i + 1 == argc)
            return err_out(err, errlen, "%s expects %s", arg, opts[id].accepts);
        else if (set_value(a, (enum opt_id)id, argv[++i]) != 0) {
            snprintf(err, errlen, "%s expects %s, not '%s'", arg, opts[id].accepts, argv[i]);
            return -1;
        }
    }
    return check_combination(a, seen, err, errlen);
}
