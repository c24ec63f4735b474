/* jett profile: subcommands over event captures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/readfile.h"
#include "proto/captext.h"

#define PACK_MAX_TEXT (1u << 30)

static const char profile_usage_text[] =
    "usage: jett profile dump CAPTURE|- [--follow [--timeout SECONDS]]\n"
    "       jett profile pack TEXT|- -o CAPTURE\n"
    "       jett profile export CAPTURE|- --format collapsed|svg [--weight W] [-o PATH]\n"
    "\n"
    "  dump   print a capture as text, one record a line; --follow waits for\n"
    "         a capture still being written (default timeout 30 s)\n"
    "  pack   turn that text back into a capture\n"
    "  export write folded stacks or an SVG flame graph\n";

static int profile_usage(FILE *f, int status)
{
    fputs(profile_usage_text, f);
    return status;
}

struct dump_opts {
    const char *capture, *timeout;
    bool follow;
};

#define DUMP_TIMEOUT_DEFAULT 30
#define DUMP_TIMEOUT_MAX 86400

/* Reads dump's arguments in any order: 0, 1 for --help, -1 (reported). */
static int parse_dump(int argc, char **argv, struct dump_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0)
            return 1;
        if (strcmp(a, "--follow") == 0) {
            if (o->follow)
                return cli_usage_error("profile dump: --follow given twice"), -1;
            o->follow = true;
        } else if (strcmp(a, "--timeout") == 0) {
            if (o->timeout || i + 1 == argc)
                return cli_usage_error("profile dump: --timeout takes SECONDS, once"), -1;
            o->timeout = argv[++i];
        } else if (a[0] == '-' && a[1] != 0) {
            return cli_usage_error("profile dump: unknown option '%s'", a), -1;
        } else if (o->capture) {
            return cli_usage_error("profile dump: expected one CAPTURE argument"), -1;
        } else {
            o->capture = a;
        }
    }
    if (!o->capture)
        return cli_usage_error("profile dump: expected one CAPTURE argument"), -1;
    if (o->timeout && !o->follow)
        return cli_usage_error("profile dump: --timeout needs --follow"), -1;
    return 0;
}

/* SECONDS: a plain decimal integer, 1..DUMP_TIMEOUT_MAX. */
static int parse_seconds(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > DUMP_TIMEOUT_MAX)
            return -1;
        v = v * 10 + (uint32_t)(*s - '0');
    }
    if (v < 1 || v > DUMP_TIMEOUT_MAX)
        return -1;
    *out = v;
    return 0;
}

/* jett profile dump CAPTURE|- [--follow [--timeout SECONDS]] */
static int cmd_dump(int argc, char **argv)
{
    struct dump_opts o = {0};
    int prc = parse_dump(argc, argv, &o);
    if (prc != 0)
        return prc > 0 ? profile_usage(stdout, CLI_EXIT_OK) : CLI_EXIT_USAGE;
    uint32_t seconds = DUMP_TIMEOUT_DEFAULT;
    if (o.timeout && parse_seconds(o.timeout, &seconds) != 0)
        return cli_usage_error("profile dump: --timeout must be a whole number of seconds, "
                               "1 to %d, not '%s'",
                               DUMP_TIMEOUT_MAX, o.timeout);
    char err[320];
    int fd = cli_open_input(o.capture, err, sizeof err);
    if (fd < 0)
        return cli_usage_error("%s: %s", o.capture, err);
    struct capture_reader *r =
        o.follow ? capture_reader_follow(fd, seconds * 1000) : capture_reader_fd(fd);
    if (!r)
        return cli_usage_error("out of memory");
    if (o.follow) /* show each record as soon as it is complete */
        setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = captext_dump(stdout, r, err, sizeof err);
    capture_reader_free(r);
    if (fd != STDIN_FILENO)
        close(fd);
    if (fflush(stdout) != 0)
        return cli_usage_error("profile dump: cannot write the output");
    if (rc != 0) {
        fprintf(stderr, "jett: %s: %s\n", o.capture, err);
        return CLI_EXIT_BAD_INPUT;
    }
    return CLI_EXIT_OK;
}

/* jett profile pack TEXT -o CAPTURE (options in any order) */
static int cmd_pack(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0)
            return profile_usage(stdout, CLI_EXIT_OK);
        if (strcmp(argv[i], "-o") == 0) {
            if (out || i + 1 == argc)
                return cli_usage_error("profile pack: -o takes one CAPTURE path, once");
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != 0)
            return cli_usage_error("profile pack: unknown option '%s'", argv[i]);
        else if (in)
            return cli_usage_error("profile pack: expected one TEXT argument");
        else
            in = argv[i];
    }
    if (!in || !out)
        return cli_usage_error("profile pack: usage: jett profile pack TEXT -o CAPTURE");
    char err[320];
    char *text;
    size_t len;
    if (cli_read_file(in, PACK_MAX_TEXT, &text, &len, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", in, err);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    int rc = captext_pack(text, len, &sb, err, sizeof err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "jett: %s:%s\n", in, err);
        msgpack_sbuffer_destroy(&sb);
        return CLI_EXIT_BAD_INPUT;
    }
    rc = cli_write_file_atomic(out, sb.data, sb.size, err, sizeof err);
    msgpack_sbuffer_destroy(&sb);
    if (rc != 0)
        return cli_usage_error("%s: %s", out, err);
    return CLI_EXIT_OK;
}

int cli_profile_main(int argc, char **argv)
{
    if (argc < 2)
        return profile_usage(stderr, CLI_EXIT_USAGE);
    if (strcmp(argv[1], "--help") == 0)
        return profile_usage(stdout, CLI_EXIT_OK);
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 1, argv + 1);
    if (strcmp(argv[1], "pack") == 0)
        return cmd_pack(argc - 1, argv + 1);
    if (strcmp(argv[1], "export") == 0)
        return cli_profile_export(argc - 1, argv + 1);
    return cli_usage_error("profile: unknown subcommand '%s' (try 'jett profile --help')", argv[1]);
}
