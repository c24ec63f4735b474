/* jett profile export: a capture as folded stacks, an SVG flame graph, a
 * Callgrind profile or a pprof profile. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "proto/util/readfile.h"
#include "daemon/export/cgexport.h"
#include "daemon/export/flame.h"
#include "daemon/export/fold.h"
#include "daemon/export/pprof.h"
#include "daemon/export/speedscope.h"
#include "daemon/export/ticks.h"
#include "daemon/export/timeline.h"

static const char export_usage_text[] =
    "usage: jett profile export CAPTURE|- --format FORMAT [--weight W] [--by-task] [-o PATH]\n"
    "\n"
    "  --format collapsed  folded stacks, one 'root;caller;leaf VALUE' line each\n"
    "  --format svg        a self-contained, interactive flame graph\n"
    "  --format callgrind  a Callgrind profile for KCachegrind and callgrind_annotate\n"
    "  --format pprof      a gzipped profile.proto for go tool pprof\n"
    "  --format timeline   memory captures: live bytes over time, an SVG (and a\n"
    "                      summary on standard error)\n"
    "  --format speedscope the samples in time order, a speedscope JSON file\n"
    "  --weight W          memory captures: allocated (default), count, retained\n"
    "                      or live-at-peak (collapsed, svg); CPU captures:\n"
    "                      samples (default) or wall, every requested tick\n"
    "                      (collapsed, svg, pprof, speedscope; callgrind: samples)\n"
    "  --by-task           collapsed and svg: a frame per task at the top\n"
    "  -o PATH             write to PATH instead of standard output\n"
    "  -h, --help          print this help\n";

enum export_format {
    EXPORT_NONE,
    EXPORT_COLLAPSED,
    EXPORT_SVG,
    EXPORT_CALLGRIND,
    EXPORT_PPROF,
    EXPORT_TIMELINE,
    EXPORT_SPEEDSCOPE
};

/* The --format names, in the order the messages list them. */
static const struct {
    const char *name;
    enum export_format format;
} export_formats[] = {
    {"collapsed", EXPORT_COLLAPSED}, {"svg", EXPORT_SVG},
    {"callgrind", EXPORT_CALLGRIND}, {"pprof", EXPORT_PPROF},
    {"timeline", EXPORT_TIMELINE},   {"speedscope", EXPORT_SPEEDSCOPE},
};

struct export_opts {
    const char *capture, *out;
    const char *format_arg, *weight_arg;
    enum export_format format;
    enum fold_weight weight;
    bool by_task;
};

static int parse_weight(const char *s, enum fold_weight *w)
{
    static const enum fold_weight all[] = {FOLD_WEIGHT_ALLOCATED, FOLD_WEIGHT_COUNT,
                                           FOLD_WEIGHT_RETAINED,  FOLD_WEIGHT_LIVE_AT_PEAK,
                                           FOLD_WEIGHT_SAMPLES,   FOLD_WEIGHT_WALL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, fold_weight_name(all[i])) == 0)
            return *w = all[i], 0;
    return -1;
}

/* Takes the value of option argv[*i]; NULL (after the message) if it is
 * missing or the option was given before. */
static const char *option_value(int argc, char **argv, int *i, const char *seen)
{
    const char *opt = argv[*i];
    if (seen) {
        cli_usage_error("profile export: %s given twice", opt);
        return NULL;
    }
    if (*i + 1 == argc) {
        cli_usage_error("profile export: %s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

/* One option or the CAPTURE operand: 0, 1 for --help, or -1 (reported). */
static int parse_arg(int argc, char **argv, int *i, struct export_opts *o)
{
    const char *a = argv[*i];
    const char **slot = strcmp(a, "--format") == 0   ? &o->format_arg
                        : strcmp(a, "--weight") == 0 ? &o->weight_arg
                        : strcmp(a, "-o") == 0       ? &o->out
                                                     : NULL;
    if (cli_is_help(a))
        return 1;
    if (strcmp(a, "--by-task") == 0) {
        if (o->by_task)
            return cli_usage_error("profile export: --by-task given twice"), -1;
        o->by_task = true;
        return 0;
    }
    if (slot)
        return (*slot = option_value(argc, argv, i, *slot)) ? 0 : -1;
    if (a[0] == '-' && a[1] != 0) {
        static const char *const known[] = {"--format", "--weight", "--by-task",
                                            "-o",       "--help",   "-h"};
        return cli_unknown_word("profile export", "option", a, known, 6), -1;
    }
    if (o->capture)
        return cli_usage_error("profile export: expected one CAPTURE argument"), -1;
    o->capture = a;
    return 0;
}

/* Checks the option values once all are known: 0, 1 for --help, -1. */
static int parse_opts(int argc, char **argv, struct export_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int rc = parse_arg(argc, argv, &i, o);
        if (rc != 0)
            return rc;
    }
    if (!o->capture)
        return cli_usage_error("profile export: expected a CAPTURE argument"), -1;
    if (!o->format_arg)
        return cli_usage_error("profile export: --format "
                               "collapsed|svg|callgrind|pprof|timeline|speedscope is required"),
               -1;
    for (size_t i = 0; i < sizeof export_formats / sizeof export_formats[0]; i++)
        if (strcmp(o->format_arg, export_formats[i].name) == 0)
            o->format = export_formats[i].format;
    if (o->format == EXPORT_NONE)
        return cli_usage_error("profile export: --format must be collapsed, svg, callgrind, "
                               "pprof, timeline or speedscope, not '%s'",
                               o->format_arg),
               -1;
    if (o->by_task && (o->format == EXPORT_PPROF || o->format == EXPORT_SPEEDSCOPE))
        return cli_usage_error("profile export: --by-task applies to collapsed and svg; %s",
                               o->format == EXPORT_PPROF
                                   ? "a pprof profile labels each sample with its task "
                                     "(-tagfocus task=N)"
                                   : "a speedscope file has a profile per task"),
               -1;
    if (o->by_task && o->format != EXPORT_COLLAPSED && o->format != EXPORT_SVG)
        return cli_usage_error("profile export: --by-task applies to collapsed and svg, not to "
                               "--format %s",
                               o->format_arg),
               -1;
    if (o->out && cli_out_is_input(o->out, o->capture))
        return cli_usage_error("profile export: -o '%s' is the capture being exported", o->out), -1;
    o->weight = FOLD_WEIGHT_DEFAULT;
    if (o->weight_arg && parse_weight(o->weight_arg, &o->weight) != 0)
        return cli_usage_error("profile export: --weight must be samples or wall (CPU), or "
                               "allocated, count, retained or live-at-peak (memory), not '%s'",
                               o->weight_arg),
               -1;
    if (o->format == EXPORT_TIMELINE && o->weight_arg)
        return cli_usage_error("profile export: --format timeline takes no --weight: it draws "
                               "the live bytes of a memory capture"),
               -1;
    /* a Callgrind profile writes the samples of a CPU capture, the
     * default weight, which may be named; a memory capture's weights
     * are its events, all of them */
    if (o->format == EXPORT_CALLGRIND && o->weight_arg && o->weight != FOLD_WEIGHT_SAMPLES)
        return cli_usage_error("profile export: --format callgrind takes --weight samples only "
                               "(CPU captures, the default); a Callgrind profile carries a "
                               "memory capture's allocated bytes and count both, as events"),
               -1;
    bool cpu_weight = o->weight == FOLD_WEIGHT_SAMPLES || o->weight == FOLD_WEIGHT_WALL;
    if ((o->format == EXPORT_PPROF || o->format == EXPORT_SPEEDSCOPE) && o->weight_arg &&
        !cpu_weight)
        return cli_usage_error("profile export: --format %s takes --weight samples or wall (CPU "
                               "captures); %s",
                               o->format_arg,
                               o->format == EXPORT_PPROF
                                   ? "a pprof profile carries every memory weight as a sample type"
                                   : "a memory capture's samples are its allocated bytes"),
               -1;
    return 0;
}

/* Folds the capture; a status, with the messages printed. */
static int read_fold(const struct export_opts *o, struct fold **out)
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, o->capture, 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o->capture, err);
    enum fold_names names = o->format == EXPORT_SVG ? FOLD_NAMES_EXACT : FOLD_NAMES_COLLAPSED;
    enum fold_status st = !c.r ? FOLD_E_NOMEM
                          : o->by_task
                              ? fold_read_by_task(c.r, o->weight, names, out, err, sizeof err)
                              : fold_read(c.r, o->weight, names, out, err, sizeof err);
    cli_capture_close(&c);
    if (st == FOLD_OK)
        return CLI_EXIT_OK;
    if (st == FOLD_E_WEIGHT || st == FOLD_E_TASKS)
        return cli_usage_error("profile export: %s", err);
    if (st == FOLD_E_NOMEM)
        return cli_usage_error("profile export: out of memory");
    fprintf(stderr, "jett: %s: %s\n", o->capture, err);
    return CLI_EXIT_BAD_INPUT;
}

/* After a CPU export was written: a line on standard error when a
 * noticeable share of the requested ticks has no stack (ticks.h). */
static void note_ticks(const struct export_opts *o, const struct ticks *t)
{
    ticks_note(t, o->weight == FOLD_WEIGHT_WALL, o->format != EXPORT_CALLGRIND, stderr);
}

/* After a fold was written: a damaged capture (exported as far as it was
 * read, as the profile reports it) exits 1 with where it stopped. */
static int report_damage(const struct export_opts *o, const struct fold *f, int rc)
{
    if (rc != CLI_EXIT_OK || !fold_damage(f))
        return rc;
    fprintf(stderr, "jett: %s: %s\n", o->capture, fold_damage(f));
    return CLI_EXIT_BAD_INPUT;
}

/* Renders the fold straight into the output: streaming keeps memory at
 * the size of the fold, not of the text. */
static int write_output(const struct export_opts *o, const struct fold *f)
{
    struct cli_out out;
    if (cli_out_open(&out, o->out) != 0)
        return CLI_EXIT_USAGE;
    int rc = cli_out_finish(&out, o->format == EXPORT_SVG ? flame_write_svg(f, out.f)
                                                          : fold_write_collapsed(f, out.f));
    return rc >= 0 ? rc : cli_usage_error("profile export: out of memory");
}

/* --format callgrind and pprof: the aggregation's stacks and lines. */
static int export_direct(const struct export_opts *o, int (*write)(struct capture_reader *, FILE *,
                                                                   struct ticks *, char *, size_t))
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, o->capture, 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o->capture, err);
    struct cli_out out;
    if (!c.r || cli_out_open(&out, o->out) != 0) {
        bool nomem = !c.r;
        cli_capture_close(&c);
        return nomem ? cli_usage_error("profile export: out of memory") : CLI_EXIT_USAGE;
    }
    struct ticks ticks = {0};
    int rc = write(c.r, out.f, &ticks, err, sizeof err);
    cli_capture_close(&c);
    int closed = cli_out_finish(&out, rc < 0 ? -1 : 0);
    if (rc == -2 && closed < 0) /* the weight does not apply to the capture's mode */
        return cli_usage_error("profile export: %s", err);
    if (closed == CLI_EXIT_OK)
        note_ticks(o, &ticks);
    if (closed >= 0 && (closed != CLI_EXIT_OK || rc == 0))
        return closed;
    fprintf(stderr, "jett: %s: %s\n", o->capture, err); /* damaged: exported as far as read */
    return CLI_EXIT_BAD_INPUT;
}

/* Writes a read export with `write` into the output. */
static int write_with(const struct export_opts *o, int (*write)(const void *, FILE *),
                      const void *what)
{
    struct cli_out out;
    if (cli_out_open(&out, o->out) != 0)
        return CLI_EXIT_USAGE;
    int rc = cli_out_finish(&out, write(what, out.f));
    return rc >= 0 ? rc : cli_usage_error("profile export: out of memory");
}

static int write_timeline(const void *t, FILE *f)
{
    return timeline_write_svg(t, f);
}

static int write_speedscope(const void *p, FILE *f)
{
    return speedscope_write(p, f);
}

/* --format timeline: the SVG, then the summary on standard error. */
static int export_timeline(const struct export_opts *o)
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, o->capture, 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o->capture, err);
    struct timeline *t = NULL;
    enum timeline_status st = c.r ? timeline_read(c.r, &t, err, sizeof err) : TIMELINE_E_NOMEM;
    cli_capture_close(&c);
    if (st == TIMELINE_E_NOMEM)
        return cli_usage_error("profile export: out of memory");
    if (st == TIMELINE_E_TEMP)
        return cli_usage_error("profile export: %s", err);
    if (st == TIMELINE_E_MODE || st == TIMELINE_E_UNAVAILABLE)
        return cli_usage_error("profile export: %s: %s", o->capture, err);
    if (st != TIMELINE_OK) {
        fprintf(stderr, "jett: %s: %s\n", o->capture, err);
        return CLI_EXIT_BAD_INPUT;
    }
    int rc = write_with(o, write_timeline, t);
    if (rc == CLI_EXIT_OK)
        timeline_write_summary(t, stderr);
    if (rc == CLI_EXIT_OK && t->damage) {
        fprintf(stderr, "jett: %s: %s\n", o->capture, t->damage);
        rc = CLI_EXIT_BAD_INPUT;
    }
    timeline_free(t);
    return rc;
}

/* --format speedscope: the samples (or allocation events) in order. */
static int export_speedscope(const struct export_opts *o)
{
    char err[400];
    struct cli_capture c;
    if (cli_capture_open(&c, o->capture, 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o->capture, err);
    struct speedscope *p = NULL;
    enum speedscope_status st =
        c.r ? speedscope_read_weighted(c.r, o->weight == FOLD_WEIGHT_WALL, &p, err, sizeof err)
            : SPEEDSCOPE_E_NOMEM;
    cli_capture_close(&c);
    if (st == SPEEDSCOPE_E_NOMEM)
        return cli_usage_error("profile export: out of memory");
    if (st == SPEEDSCOPE_E_WEIGHT)
        return cli_usage_error("profile export: %s", err);
    if (st != SPEEDSCOPE_OK) {
        fprintf(stderr, "jett: %s: %s\n", o->capture, err);
        return CLI_EXIT_BAD_INPUT;
    }
    int rc = write_with(o, write_speedscope, p);
    if (rc == CLI_EXIT_OK)
        note_ticks(o, speedscope_ticks(p));
    if (rc == CLI_EXIT_OK && speedscope_damage(p)) {
        fprintf(stderr, "jett: %s: %s\n", o->capture, speedscope_damage(p));
        rc = CLI_EXIT_BAD_INPUT;
    }
    speedscope_free(p);
    return rc;
}

/* jett profile export CAPTURE --format F [--weight W] [-o PATH] */
int cli_profile_export(int argc, char **argv)
{
    struct export_opts o = {0};
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0) {
        if (rc > 0)
            fputs(export_usage_text, stdout);
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    /* as in the daemon: a doubling table moves pages instead of copying,
     * and freed blocks leave the process */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    if (o.format == EXPORT_CALLGRIND)
        return export_direct(&o, o.weight == FOLD_WEIGHT_SAMPLES ? cgexport_write_samples
                                                                 : cgexport_write);
    if (o.format == EXPORT_PPROF)
        return export_direct(&o, o.weight == FOLD_WEIGHT_WALL ? pprof_write_wall : pprof_write);
    if (o.format == EXPORT_TIMELINE)
        return export_timeline(&o);
    if (o.format == EXPORT_SPEEDSCOPE)
        return export_speedscope(&o);
    struct fold *f = NULL;
    rc = read_fold(&o, &f);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = write_output(&o, f);
    if (rc == CLI_EXIT_OK)
        note_ticks(&o, &fold_totals(f)->ticks);
    rc = report_damage(&o, f, rc);
    fold_free(f);
    return rc;
}
