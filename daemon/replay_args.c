/* The replay command line; see replay_args.h. */
#include <stdio.h>
#include <string.h>

#include "daemon/replay_args.h"

static const char pct_range[] = "expects a PERCENT from 0 to 100 (at most two decimals)";
static const char count_range[] = "expects a COUNT from 1 to 100";

/* One --profile-threshold / --profile-limit value (NULL when missing). */
static int rank_value(struct replay_args *a, const char *opt, const char *v, char *err,
                      size_t errlen)
{
    bool thr = strcmp(opt, "--profile-threshold") == 0;
    if (thr ? a->rank.set_threshold : a->rank.set_limit) {
        snprintf(err, errlen, "%s: repeated option", opt);
        return -1;
    }
    if (!v || (thr ? rank_parse_percent(v, &a->rank.threshold_bp)
                   : rank_parse_limit(v, &a->rank.limit)) != 0) {
        snprintf(err, errlen, "%s: %s", opt, thr ? pct_range : count_range);
        return -1;
    }
    *(thr ? &a->rank.set_threshold : &a->rank.set_limit) = true;
    return 0;
}

/* A flag that may appear once. */
static int flag(bool *seen, const char *opt, char *err, size_t errlen)
{
    if (*seen) {
        snprintf(err, errlen, "%s: repeated option", opt);
        return -1;
    }
    *seen = true;
    return 0;
}

/* One word at argv[*i], consuming its value when it takes one. */
static int one_word(int argc, char **argv, int *i, const char *cmd, unsigned flags,
                    struct replay_args *a, char *err, size_t errlen)
{
    const char *w = argv[*i];
    bool follow = (flags & REPLAY_ARGS_FOLLOW) != 0;
    if (strcmp(w, "--agent") == 0)
        return flag(&a->agent, w, err, errlen);
    if (follow && strcmp(w, "--follow") == 0)
        return flag(&a->follow, w, err, errlen);
    if (follow && strcmp(w, "--timeout") == 0) {
        if (a->timeout || *i + 1 == argc) {
            snprintf(err, errlen, "%s: --timeout takes SECONDS, once", cmd);
            return -1;
        }
        a->timeout = argv[++*i];
        return 0;
    }
    if (strcmp(w, "--profile-threshold") == 0 || strcmp(w, "--profile-limit") == 0)
        return rank_value(a, w, *i + 1 < argc ? argv[++*i] : NULL, err, errlen);
    if (w[0] == '-' && w[1] != '\0') {
        snprintf(err, errlen, "%s: unknown option", w);
        return -1;
    }
    if (a->path) {
        snprintf(err, errlen, "%s: expected one CAPTURE argument", cmd);
        return -1;
    }
    a->path = w;
    return 0;
}

int replay_args_parse(int argc, char **argv, const char *cmd, unsigned flags, struct replay_args *a,
                      char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++)
        if (one_word(argc, argv, &i, cmd, flags, a, err, errlen) != 0)
            return -1;
    if (!a->path) {
        snprintf(err, errlen, "%s: expected one CAPTURE argument", cmd);
        return -1;
    }
    if (a->timeout && !a->follow) {
        snprintf(err, errlen, "%s: --timeout needs --follow", cmd);
        return -1;
    }
    return 0;
}
