/* jett profile diff BASE NEW [--agent]: per-function change between two
 * captures of the same mode. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/readfile.h"
#include "daemon/diff.h"
#include "daemon/feed.h"

static int aggregate(const char *path, struct agg **g, struct rank_report *rep)
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, path, 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", path, err);
    *g = agg_new();
    bool ready = c.r && *g;
    int rc = ready ? feed_capture(*g, c.r, err, sizeof err) : 1;
    cli_capture_close(&c);
    if (rc != 0) {
        fprintf(stderr, "jett: %s: %s\n", path, ready ? err : "out of memory");
        return CLI_EXIT_BAD_INPUT;
    }
    agg_end(*g);
    struct rank_options opt = diff_rank_options();
    if (rank_build(*g, &opt, rep) != 0 || rank_detach(rep) != 0) {
        fprintf(stderr, "jett: %s: out of memory\n", path);
        return CLI_EXIT_BAD_INPUT;
    }
    return 0;
}

/* Aggregates one capture into a report holding every function, which
 * owns its strings: the aggregator is freed before the next capture is
 * read, so a diff needs the memory of one aggregation, not two.  0, 1 for
 * a bad capture (message printed), 2 for an unreadable file. */
static int load(const char *path, struct rank_report *rep, struct diff_sides *sides)
{
    struct agg *g = NULL;
    int rc = aggregate(path, &g, rep);
    agg_free(g);
    if (rc == 0 && diff_sides_take(rep, sides) != 0) {
        fprintf(stderr, "jett: %s: out of memory\n", path);
        rc = CLI_EXIT_BAD_INPUT;
    }
    return rc;
}

static int print_diff(struct rank_report *b, struct diff_sides *bs, struct rank_report *n,
                      struct diff_sides *ns, bool agent)
{
    struct diff d;
    char err[256], *text = NULL;
    size_t len = 0;
    if (diff_build(b, bs, n, ns, &d, err, sizeof err) != 0) {
        fprintf(stderr, "jett: profile diff: %s\n", err);
        return CLI_EXIT_BAD_INPUT;
    }
    /* the rows hold what they need: the sides' memory goes to rendering */
    diff_sides_free(bs);
    diff_sides_free(ns);
    int rc;
    if (agent) {
        /* the tree holds copies: rows and reports (the caller's, freed
         * again harmlessly) go before the text */
        struct toon_value *tree = diff_toon(&d);
        diff_free(&d);
        rank_free(b), rank_free(n);
        rc = tree ? toon_encode(tree, NULL, &text, &len, err, sizeof err)
                  : (snprintf(err, sizeof err, "out of memory"), -1);
        toon_free(tree);
    } else {
        rc = diff_render_human(&d, &text, &len);
        diff_free(&d);
    }
    if (rc != 0) {
        fprintf(stderr, "jett: profile diff: cannot render: %s\n", agent ? err : "out of memory");
        free(text);
        return CLI_EXIT_BAD_INPUT;
    }
    fwrite(text, 1, len, stdout);
    if (agent)
        fputc('\n', stdout);
    free(text);
    return CLI_EXIT_OK;
}

int cli_profile_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    bool agent = false;
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--agent") == 0) {
            if (agent)
                return cli_usage_error("profile diff: --agent is given more than once");
            agent = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_usage_error("profile diff: unknown option '%s'", argv[i]);
        } else if (np == 2) {
            return cli_usage_error("profile diff: expected two captures, BASE and NEW");
        } else {
            paths[np++] = argv[i];
        }
    }
    if (np != 2)
        return cli_usage_error("profile diff: expected two captures, BASE and NEW");
    if (strcmp(paths[0], "-") == 0 && strcmp(paths[1], "-") == 0)
        return cli_usage_error("profile diff: only one capture can come from standard input");
    /* as in the daemon: large tables in their own mappings, so that the
     * first aggregator's memory leaves the process when it is freed */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    struct rank_report rep[2];
    struct diff_sides sides[2];
    memset(rep, 0, sizeof rep);
    memset(sides, 0, sizeof sides);
    int rc = load(paths[0], &rep[0], &sides[0]);
    if (rc == 0)
        rc = load(paths[1], &rep[1], &sides[1]);
    if (rc == 0)
        rc = print_diff(&rep[0], &sides[0], &rep[1], &sides[1], agent);
    for (int k = 0; k < 2; k++) {
        rank_free(&rep[k]);
        diff_sides_free(&sides[k]);
    }
    return rc;
}
