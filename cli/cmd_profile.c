/* jett profile: subcommands over event captures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/readfile.h"
#include "proto/captext.h"

#define PACK_MAX_TEXT (1u << 30)

static const char profile_usage_text[] = "usage: jett profile dump CAPTURE|-\n"
                                         "       jett profile pack TEXT|- -o CAPTURE\n"
                                         "\n"
                                         "  dump   print a capture as text, one record a line\n"
                                         "  pack   turn that text back into a capture\n";

static int profile_usage(FILE *f, int status)
{
    fputs(profile_usage_text, f);
    return status;
}

/* jett profile dump CAPTURE */
static int cmd_dump(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return profile_usage(stdout, CLI_EXIT_OK);
    if (argc != 2)
        return cli_usage_error("profile dump: expected one CAPTURE argument");
    char err[320];
    int fd = cli_open_input(argv[1], err, sizeof err);
    if (fd < 0)
        return cli_usage_error("%s: %s", argv[1], err);
    struct capture_reader *r = capture_reader_fd(fd);
    if (!r)
        return cli_usage_error("out of memory");
    int rc = captext_dump(stdout, r, err, sizeof err);
    capture_reader_free(r);
    if (fd != STDIN_FILENO)
        close(fd);
    if (fflush(stdout) != 0)
        return cli_usage_error("profile dump: cannot write the output");
    if (rc != 0) {
        fprintf(stderr, "jett: %s: %s\n", argv[1], err);
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
    return cli_usage_error("profile: unknown subcommand '%s' (try 'jett profile --help')", argv[1]);
}
