/* jett profile diff BASE NEW [--agent | --format svg [-o PATH]]:
 * per-function change between two captures of the same mode, as a table,
 * a TOON document or a differential flame graph. */
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/diff_pace.h"
#include "cli/outfile.h"
#include "proto/util/readfile.h"
#include "daemon/diff.h"
#include "daemon/export/flame_diff.h"
#include "daemon/export/fold.h"
#include "daemon/feed.h"

/* BASE's end, which NEW may wait for (diff_pace.h). */
struct base_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
};

/* One capture of the diff, read on its own thread: what it yields, or
 * the message to print once both are done (so that errors come out in
 * argument order whichever side fails first). */
struct side {
    const char *path;
    struct base_gate *gate; /* NEW read beside BASE: the gate it may wait at */
    struct diff_pace pace;
    struct rank_report rep;
    struct diff_sides sides;
    bool want_fold;    /* NEW of a differential flame graph */
    struct fold *fold; /* its stacks, taken before the aggregation goes */
    int rc;            /* 0, 1 for a bad capture, 2 for an unreadable file */
    char msg[600];
};

static int side_fail(struct side *s, int rc, const char *what)
{
    snprintf(s->msg, sizeof s->msg, "jett: %s: %s", s->path, what);
    return s->rc = rc;
}

/* After each record of a capture: NEW waits for BASE when its pace says
 * so. */
static void pace(void *ctx, const struct agg *g, uint64_t offset)
{
    struct side *s = ctx;
    if (!s->gate)
        return;
    size_t held = agg_stack_bytes(g) + agg_cpu_bytes(g) + agg_retention_bytes(g);
    if (!diff_pace_wait(&s->pace, offset, held))
        return;
    pthread_mutex_lock(&s->gate->mu);
    while (!s->gate->done)
        pthread_cond_wait(&s->gate->cv, &s->gate->mu);
    pthread_mutex_unlock(&s->gate->mu);
}

/* The bytes of a regular file, else 0. */
static uint64_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

static int aggregate(struct side *s, struct agg **g)
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, s->path, 0, err, sizeof err) != 0)
        return side_fail(s, CLI_EXIT_USAGE, err);
    *g = agg_new();
    bool ready = c.r && *g;
    if (ready && s->want_fold)
        agg_keep_node_self(*g); /* the fold's default weight, nothing more */
    diff_pace_init(&s->pace, file_size(c.fd));
    int rc = ready ? feed_capture_paced(*g, c.r, pace, s, err, sizeof err) : 1;
    cli_capture_close(&c);
    if (rc != 0)
        return side_fail(s, CLI_EXIT_BAD_INPUT, ready ? err : "out of memory");
    agg_end(*g);
    agg_release_records(*g);
    if (s->want_fold && fold_of_agg(*g, FOLD_WEIGHT_DEFAULT, FOLD_NAMES_EXACT, &s->fold, err,
                                    sizeof err) != FOLD_OK)
        return side_fail(s, CLI_EXIT_BAD_INPUT, err);
    struct rank_options opt = diff_rank_options();
    if (rank_build(*g, &opt, &s->rep) != 0 || rank_detach(&s->rep) != 0)
        return side_fail(s, CLI_EXIT_BAD_INPUT, "out of memory");
    return 0;
}

/* Aggregates one capture into its functions, which own their strings:
 * the aggregator is freed, and its pages returned to the system, as soon
 * as they are taken, so that rendering the diff adds to two function
 * tables, not to two aggregations. */
/* AddressSanitizer replaces malloc; glibc's malloc_trim would walk a heap
 * it does not own. */
#if defined(__SANITIZE_ADDRESS__)
#define JETT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JETT_ASAN 1
#endif
#endif

static void *load(void *arg)
{
    struct side *s = arg;
    struct agg *g = NULL;
    int rc = aggregate(s, &g);
    agg_free(g);
    if (rc == 0 && diff_sides_take(&s->rep, &s->sides) != 0)
        side_fail(s, CLI_EXIT_BAD_INPUT, "out of memory");
#ifndef JETT_ASAN
    malloc_trim(0); /* glibc's trim on ASan's heap would crash */
#endif
    return NULL;
}

/* Whether the process may run on more than one CPU. */
static bool several_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) > 1;
}

/* Reads both captures at once: a diff costs the time of its larger
 * input rather than of both (each side has its own aggregator, and
 * nothing is shared but the allocator), NEW paced as diff_pace.h says.
 * With one CPU that would gain nothing and hold two aggregations at
 * once, so they take turns. */
static void load_both(struct side *s)
{
    pthread_t t;
    struct base_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    /* only a NEW that keeps more than BASE is held back (diff_pace.h) */
    s[1].gate = s[1].want_fold ? &gate : NULL;
    bool apart = several_cpus() && pthread_create(&t, NULL, load, &s[1]) == 0;
    if (!apart)
        s[1].gate = NULL;
    load(&s[0]);
    pthread_mutex_lock(&gate.mu);
    gate.done = true;
    pthread_cond_signal(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    if (apart)
        pthread_join(t, NULL);
    else
        load(&s[1]);
}

/* The differential flame graph, to standard output or written whole to
 * `out` (a failure leaves no partial file): a failed write exits 2, as
 * an export's does. */
static int write_flame(const struct fold *neu, const struct diff *d, const char *out)
{
    struct cli_out o;
    if (cli_out_open(&o, out) != 0)
        return CLI_EXIT_USAGE;
    int rc = cli_out_finish(&o, flame_diff_write_svg(neu, d, o.f));
    if (rc >= 0)
        return rc;
    fprintf(stderr, "jett: profile diff: cannot render: out of memory\n");
    return CLI_EXIT_BAD_INPUT;
}

static int print_diff(struct rank_report *b, struct diff_sides *bs, struct rank_report *n,
                      struct diff_sides *ns, bool agent, const struct fold *neu, const char *out)
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
    if (neu) {
        rc = write_flame(neu, &d, out);
        diff_free(&d);
        return rc;
    }
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

static const char diff_usage_text[] =
    "usage: jett profile diff BASE NEW [--agent | --format svg [-o PATH]]\n"
    "\n"
    "Compare two captures of one mode function by function: rows ordered by the\n"
    "change in self samples (CPU) or allocated bytes (memory), totals compared,\n"
    "each CPU change tested against sampling noise (see jett-profile(7)).\n"
    "One of BASE and NEW may be '-' for standard input.\n"
    "\n"
    "  --agent       a jett.profile-diff.v2 TOON document instead of the table\n"
    "  --format svg  NEW's flame graph, each frame coloured by its change: red\n"
    "                grew, blue shrank, grey unchanged or within noise\n"
    "  -o PATH       write the flame graph to PATH instead of standard output\n"
    "  -h, --help    print this help\n";

struct diff_opts {
    const char *paths[2];
    int np;
    bool agent;
    const char *format, *out;
};

/* A value option (--format, -o): 0, or a usage status. */
static int value_opt(int argc, char **argv, int *i, const char **slot)
{
    if (*slot)
        return cli_usage_error("profile diff: %s is given more than once", argv[*i]);
    if (*i + 1 == argc)
        return cli_usage_error("profile diff: %s needs a value", argv[*i]);
    *slot = argv[++*i];
    return 0;
}

static int parse_diff(int argc, char **argv, struct diff_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int rc = 0;
        if (strcmp(argv[i], "--agent") == 0) {
            if (o->agent)
                return cli_usage_error("profile diff: --agent is given more than once");
            o->agent = true;
        } else if (strcmp(argv[i], "--format") == 0) {
            rc = value_opt(argc, argv, &i, &o->format);
        } else if (strcmp(argv[i], "-o") == 0) {
            rc = value_opt(argc, argv, &i, &o->out);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            static const char *const known[] = {"--agent", "--format", "-o", "--help", "-h"};
            return cli_unknown_word("profile diff", "option", argv[i], known, 5);
        } else if (o->np == 2) {
            return cli_usage_error("profile diff: expected two captures, BASE and NEW");
        } else {
            o->paths[o->np++] = argv[i];
        }
        if (rc != 0)
            return rc;
    }
    if (o->np != 2)
        return cli_usage_error("profile diff: expected two captures, BASE and NEW");
    if (o->format && strcmp(o->format, "svg") != 0)
        return cli_usage_error("profile diff: --format must be svg, not '%s'", o->format);
    if (o->format && o->agent)
        return cli_usage_error("profile diff: --agent and --format svg are two outputs: give one");
    if (o->out && !o->format)
        return cli_usage_error("profile diff: -o applies to --format svg");
    if (strcmp(o->paths[0], "-") == 0 && strcmp(o->paths[1], "-") == 0)
        return cli_usage_error("profile diff: only one capture can come from standard input");
    for (int k = 0; k < 2; k++)
        if (o->out && cli_out_is_input(o->out, o->paths[k]))
            return cli_usage_error("profile diff: -o '%s' is %s, a capture being compared", o->out,
                                   k ? "NEW" : "BASE");
    return 0;
}

int cli_profile_diff(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i]))
            return fputs(diff_usage_text, stdout), CLI_EXIT_OK;
    struct diff_opts o = {{NULL, NULL}, 0, false, NULL, NULL};
    int prc = parse_diff(argc, argv, &o);
    if (prc != 0)
        return prc;
    /* as in the daemon: large tables in their own mappings, which leave
     * the process as soon as an aggregator is freed */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    struct side s[2];
    memset(s, 0, sizeof s);
    s[0].path = o.paths[0], s[1].path = o.paths[1];
    s[1].want_fold = o.format != NULL;
    load_both(s);
    int rc = s[0].rc ? s[0].rc : s[1].rc;
    for (int k = 0; k < 2; k++)
        if (s[k].rc)
            fprintf(stderr, "%s\n", s[k].msg);
    if (rc == 0)
        rc = print_diff(&s[0].rep, &s[0].sides, &s[1].rep, &s[1].sides, o.agent, s[1].fold, o.out);
    for (int k = 0; k < 2; k++) {
        rank_free(&s[k].rep);
        diff_sides_free(&s[k].sides);
        fold_free(s[k].fold);
    }
    return rc;
}
