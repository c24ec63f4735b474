/* jett-profd: the aggregator process.  `replay` reads a saved capture,
 * aggregates it and prints the profile. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/util/readfile.h"
#include "daemon/agg.h"
#include "daemon/feed.h"
#include "daemon/rank.h"
#include "daemon/render.h"
#include "daemon/replay_args.h"
#include "daemon/serve.h"
#include "jett-config.h"
#include "proto/capture.h"

static const char usage_text[] =
    "usage: jett-profd replay CAPTURE|- [--profile-threshold PERCENT] [--profile-limit COUNT]\n"
    "                         [--agent]\n"
    "       jett-profd --fd N\n"
    "       jett-profd --help | --version\n";

static int usage_error(const char *msg, const char *opt)
{
    fprintf(stderr, "jett-profd: %s%s\n", opt ? opt : "", msg);
    return 2;
}

/* Reads the whole capture into `g`; a decode error is a collector error of
 * the profile, also reported on stderr.  1 then, else 0. */
static int replay_feed(struct agg *g, struct capture_reader *r, const char *path)
{
    char err[400];
    int rc = feed_capture(g, r, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "jett-profd: %s: %s\n", path, err);
    return rc;
}

/* Renders the report in the requested form on stdout. */
static int replay_print(const struct rank_report *rep, bool agent)
{
    char *text = NULL, err[256] = "";
    size_t len = 0;
    int rc =
        agent ? render_toon(rep, &text, &len, err, sizeof err) : render_human(rep, &text, &len);
    if (rc != 0) {
        fprintf(stderr, "jett-profd: cannot render the profile: %s\n", err[0] ? err : "no memory");
        free(text);
        return 1;
    }
    fwrite(text, 1, len, stdout);
    if (agent)
        fputc('\n', stdout);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int replay(const struct replay_args *a)
{
    char err[320];
    int fd = cli_open_input(a->path, err, sizeof err);
    if (fd < 0)
        return fprintf(stderr, "jett-profd: %s: %s\n", a->path, err), 2;
    struct capture_reader *r = capture_reader_fd(fd);
    struct agg *g = agg_new();
    if (!r || !g) {
        capture_reader_free(r);
        agg_free(g);
        return fprintf(stderr, "jett-profd: out of memory\n"), 1;
    }
    int status = replay_feed(g, r, a->path);
    capture_reader_free(r);
    if (fd != STDIN_FILENO)
        close(fd);
    agg_end(g);
    agg_release_records(g); /* ranking does not read them */
    struct rank_report rep;
    if (rank_build(g, &a->rank, &rep) != 0)
        status = 1, fprintf(stderr, "jett-profd: out of memory\n");
    else if (replay_print(&rep, a->agent) != 0)
        status = 1;
    rank_free(&rep);
    agg_free(g);
    return status;
}

int main(int argc, char **argv)
{
    /* Large tables live in their own mappings, so a doubling realloc
     * moves pages instead of copying and freed blocks leave the process:
     * what the budgets count is what the process holds. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return fputs(usage_text, stdout), 0;
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return printf("jett-profd %s\n", JETT_VERSION), 0;
    if (argc == 3 && strcmp(argv[1], "--fd") == 0) {
        char *end;
        long fd = strtol(argv[2], &end, 10);
        if (*argv[2] == '\0' || *end != '\0' || fd < 0 || fd > 65535)
            return usage_error(": expects a descriptor number", "--fd");
        return serve_fd((int)fd);
    }
    if (argc >= 2 && strcmp(argv[1], "replay") == 0) {
        struct replay_args a;
        char err[200];
        if (replay_args_parse(argc - 1, argv + 1, "replay", 0, &a, err, sizeof err) != 0)
            return usage_error(err, NULL);
        return replay(&a);
    }
    fputs(usage_text, stderr);
    return 2;
}
