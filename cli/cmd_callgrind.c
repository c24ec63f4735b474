/* jett callgrind: check and normalize Callgrind 1 profiles. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "proto/callgrind/callgrind.h"

static void callgrind_usage(FILE *f)
{
    fprintf(f, "usage: jett callgrind check FILE\n"
               "       jett callgrind normalize FILE [-o OUT]\n"
               "\n"
               "  check      check a Callgrind profile and summarize it\n"
               "  normalize  print a Callgrind profile in canonical form\n"
               "\n"
               "Run 'jett callgrind SUBCOMMAND --help' for a subcommand's options.\n");
}

static const char check_usage_text[] =
    "usage: jett callgrind check FILE\n"
    "\n"
    "Check that FILE is a Callgrind profile and summarize it; a rejected one is\n"
    "named by FILE:LINE (exit 1).  Name a file called '-h' as './-h'.\n"
    "\n"
    "  -h, --help   print this help\n";

static const char normalize_usage_text[] =
    "usage: jett callgrind normalize FILE [-o OUT]\n"
    "\n"
    "Print a Callgrind profile in the canonical form jett-callgrind(1) describes.\n"
    "\n"
    "  -o OUT       write to OUT instead of standard output\n"
    "  -h, --help   print this help\n";

/* Prints a rejected profile as FILE:LINE: Kind: message. */
static int report(const char *path, const struct cg_error *err)
{
    fprintf(stderr, "%s:%llu: %s: %s\n", path, (unsigned long long)err->line,
            cg_status_name(err->kind), err->message);
    return CLI_EXIT_BAD_INPUT;
}

/* Reads FILE as the seed says (cg_read_file): an exit status, the text
 * in *buf (the caller frees it) on success. */
static int read_input(const char *path, char **buf, size_t *len)
{
    struct cg_error err;
    enum cg_read_status st = cg_read_file(path, buf, len, &err);
    if (st == CG_READ_UNREADABLE) {
        fprintf(stderr, "jett: %s: %s\n", path, err.message);
        return CLI_EXIT_USAGE;
    }
    return st == CG_READ_REJECTED ? report(path, &err) : CLI_EXIT_OK;
}

/* Reads and parses FILE; returns an exit status, *m set on success. */
static int load(const char *path, struct cg_model **m)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_input(path, &text, &len);
    if (rc == CLI_EXIT_OK) {
        struct cg_error err;
        *m = cg_parse_read(text, len, NULL, &err);
        rc = *m ? CLI_EXIT_OK : report(path, &err);
    }
    free(text);
    return rc;
}

/* One line per part: events, positions, record counts. */
static void print_summary(const char *path, const struct cg_model *m)
{
    static const char *const kinds[] = {"instr", "bb", "line"};
    printf("%s: %zu part%s, %zu record%s\n", path, m->nparts, m->nparts == 1 ? "" : "s",
           m->nrecords, m->nrecords == 1 ? "" : "s");
    for (size_t i = 0; i < m->nparts; i++) {
        const struct cg_part *p = &m->parts[i];
        size_t calls = 0;
        for (size_t k = 0; k < p->nrecords; k++)
            calls += m->records[p->first_record + k].call != CG_NONE;
        printf("part %zu: events", i + 1);
        for (uint32_t j = 0; j < p->nevents; j++)
            printf(" %s", cg_part_event(m, p, j)->ptr);
        printf("; positions");
        for (unsigned k = 0; k < 3; k++)
            if (p->positions & (1u << k))
                printf(" %s", kinds[k]);
        printf("; %zu records (%zu cost, %zu call)\n", p->nrecords, p->nrecords - calls, calls);
    }
}

static int cmd_check(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i]))
            return fputs(check_usage_text, stdout), CLI_EXIT_OK;
    if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0') {
        static const char *const known[] = {"--help", "-h"};
        return cli_unknown_word("callgrind check", "option", argv[1], known, 2);
    }
    if (argc != 2)
        return cli_usage_error("callgrind check: expected exactly one FILE");
    struct cg_model *m = NULL;
    int rc = load(argv[1], &m);
    if (rc == CLI_EXIT_OK)
        print_summary(argv[1], m);
    cg_model_free(m);
    return rc;
}

/* FILE [-o OUT], in any order, each once: a status, or -1 when the help
 * was printed. */
static int normalize_args(int argc, char **argv, const char **in, const char **out)
{
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i]))
            return fputs(normalize_usage_text, stdout), -1;
        if (strcmp(argv[i], "-o") == 0) {
            if (*out || i + 1 == argc)
                return cli_usage_error("callgrind normalize: -o needs one OUT");
            *out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            static const char *const known[] = {"-o", "--help", "-h"};
            return cli_unknown_word("callgrind normalize", "option", argv[i], known, 3);
        } else if (*in) {
            return cli_usage_error("callgrind normalize: expected exactly one FILE");
        } else {
            *in = argv[i];
        }
    }
    if (*in == NULL)
        return cli_usage_error("callgrind normalize: expected a FILE");
    return CLI_EXIT_OK;
}

static int cmd_normalize(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int rc = normalize_args(argc, argv, &in, &out);
    if (rc != CLI_EXIT_OK)
        return rc < 0 ? CLI_EXIT_OK : rc; /* -1: the help was asked for */
    char *text = NULL, *norm = NULL;
    size_t len = 0, nlen = 0;
    struct cg_error err;
    rc = read_input(in, &text, &len);
    /* parsed and printed in one pass: the records never fill memory */
    if (rc == CLI_EXIT_OK && cg_parse_normalize(text, len, true, NULL, &norm, &nlen, &err) < 0)
        rc = report(in, &err);
    free(text);
    /* whole or not at all, so that normalizing a file in place (-o naming
     * FILE, read whole before this) never leaves it cut short */
    if (rc == CLI_EXIT_OK)
        rc = cli_out_write_buffer(out, norm, nlen);
    free(norm);
    return rc;
}

int cli_callgrind_main(int argc, char **argv)
{
    if (argc < 2)
        return callgrind_usage(stderr), CLI_EXIT_USAGE;
    if (cli_is_help(argv[1]))
        return callgrind_usage(stdout), CLI_EXIT_OK;
    if (strcmp(argv[1], "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(argv[1], "normalize") == 0)
        return cmd_normalize(argc - 1, argv + 1);
    static const char *const known[] = {"check", "normalize"};
    return cli_unknown_word("callgrind", "subcommand", argv[1], known, 2);
}
