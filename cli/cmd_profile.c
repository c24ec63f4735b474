/* jett profile: subcommands over event captures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outfile.h"
#include "cli/profd.h"
#include "proto/util/readfile.h"
#include "proto/util/stdfd.h"
#include "daemon/feed.h"
#include "daemon/replay_args.h"
#include "proto/captext.h"

#define PACK_MAX_TEXT (1u << 30)

static const char profile_usage_text[] =
    "usage: jett profile dump CAPTURE|- [--follow [--timeout SECONDS]]\n"
    "       jett profile pack TEXT|- -o CAPTURE\n"
    "       jett profile replay CAPTURE|- [--profile-threshold PERCENT]\n"
    "                           [--profile-limit COUNT] [--agent]\n"
    "                           [--follow [--timeout SECONDS]]\n"
    "       jett profile export CAPTURE|- --format FORMAT [--weight W]\n"
    "                           [-o PATH]\n"
    "       jett profile diff BASE NEW [--agent | --format svg [-o PATH]]\n"
    "\n"
    "  dump   print a capture as text, one record a line; --follow waits for\n"
    "         a capture still being written (default timeout 30 s)\n"
    "  pack   turn that text back into a capture\n"
    "  replay run jett-profd on a capture and print its profile\n"
    "  export write folded stacks, a flame graph, a Callgrind, pprof or\n"
    "         speedscope profile, or a memory timeline\n"
    "  diff   per-function change between two captures of one mode\n"
    "\n"
    "Run 'jett profile SUBCOMMAND --help' for a subcommand's options.\n";

static const char dump_usage_text[] =
    "usage: jett profile dump CAPTURE|- [--follow [--timeout SECONDS]]\n"
    "\n"
    "Print a capture as text, one record a line (see jett-capture(5)).\n"
    "\n"
    "  --follow            read a capture still being written, until its FINISH\n"
    "  --timeout SECONDS   with --follow: give up after SECONDS, 1..86400 (default 30)\n"
    "  -h, --help          print this help\n";

static const char pack_usage_text[] = "usage: jett profile pack TEXT|- -o CAPTURE\n"
                                      "\n"
                                      "Turn the text of 'jett profile dump' back into a capture.\n"
                                      "\n"
                                      "  -o CAPTURE          the capture to write (required)\n"
                                      "  -h, --help          print this help\n";

static const char replay_usage_text[] =
    "usage: jett profile replay CAPTURE|- [--profile-threshold PERCENT]\n"
    "                           [--profile-limit COUNT] [--agent]\n"
    "                           [--follow [--timeout SECONDS]]\n"
    "\n"
    "Run jett-profd on a capture and print its profile.\n"
    "\n"
    "  --profile-threshold P  minimum impact in percent, 0..100, at most two\n"
    "                         decimals (default: the capture's)\n"
    "  --profile-limit N      at most N bottlenecks, 1..100 (default: the capture's)\n"
    "  --agent                the profile as a TOON document\n"
    "  --follow               read a capture still being written, until its FINISH\n"
    "  --timeout SECONDS      with --follow: give up after SECONDS, 1..86400\n"
    "                         (default 30; the profile is then partial)\n"
    "  -h, --help             print this help\n";

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
        if (cli_is_help(a))
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
            static const char *const known[] = {"--follow", "--timeout", "--help", "-h"};
            return cli_unknown_word("profile dump", "option", a, known, 4), -1;
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
        return prc > 0 ? (fputs(dump_usage_text, stdout), CLI_EXIT_OK) : CLI_EXIT_USAGE;
    uint32_t seconds = DUMP_TIMEOUT_DEFAULT;
    if (o.timeout && parse_seconds(o.timeout, &seconds) != 0)
        return cli_usage_error("profile dump: --timeout must be a whole number of seconds, "
                               "1 to %d, not '%s'",
                               DUMP_TIMEOUT_MAX, o.timeout);
    char err[320];
    struct cli_capture c;
    if (cli_capture_open(&c, o.capture, o.follow ? seconds * 1000 : 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o.capture, err);
    if (!c.r) {
        cli_capture_close(&c);
        return cli_usage_error("out of memory");
    }
    if (o.follow) /* show each record as soon as it is complete */
        setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = captext_dump(stdout, c.r, err, sizeof err);
    cli_capture_close(&c);
    char werr[128];
    if (stdfd_flush_stdout(werr, sizeof werr) != 0)
        return cli_usage_error("cannot write standard output: %s", werr);
    if (rc != 0) {
        fprintf(stderr, "jett: %s: %s\n", o.capture, err);
        return CLI_EXIT_BAD_INPUT;
    }
    return CLI_EXIT_OK;
}

/* The aggregation's own rules (an allocation freed before it exists, ticks
 * that do not add up, an event of the other mode...) are not the wire's:
 * a replay reports them as collector errors and still profiles, so pack
 * writes the capture and says what the replay will report, with its
 * message. */
static void pack_warn_replay(const char *in, const msgpack_sbuffer *sb)
{
    struct agg *g = agg_new();
    struct capture_reader *r = capture_reader_mem(sb->data, sb->size);
    char err[320];
    if (g && r)
        feed_capture(g, r, err, sizeof err);
    uint64_t n = g ? agg_error_count(g) : 0;
    if (n > 0)
        fprintf(stderr,
                "jett: %s: warning: a replay reports %llu collector error%s, the first: %s\n", in,
                (unsigned long long)n, n == 1 ? "" : "s", agg_error(g));
    capture_reader_free(r);
    agg_free(g);
}

/* jett profile pack TEXT -o CAPTURE (options in any order) */
static int cmd_pack(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i]))
            return fputs(pack_usage_text, stdout), CLI_EXIT_OK;
        if (strcmp(argv[i], "-o") == 0) {
            if (out || i + 1 == argc)
                return cli_usage_error("profile pack: -o takes one CAPTURE path, once");
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != 0) {
            static const char *const known[] = {"-o", "--help", "-h"};
            return cli_unknown_word("profile pack", "option", argv[i], known, 3);
        } else if (in)
            return cli_usage_error("profile pack: expected one TEXT argument");
        else
            in = argv[i];
    }
    if (!in || !out)
        return cli_usage_error("profile pack: usage: jett profile pack TEXT -o CAPTURE");
    if (cli_out_is_input(out, in))
        return cli_usage_error("profile pack: -o '%s' is the text being packed", out);
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
    pack_warn_replay(in, &sb);
    rc = cli_out_write_buffer(out, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

/* CAPTURE|- and the options (daemon/replay_args.h); a usage error's status. */
static int replay_parse(int argc, char **argv, struct replay_args *o)
{
    char err[200];
    if (replay_args_parse(argc, argv, "profile replay", REPLAY_ARGS_FOLLOW, o, err, sizeof err) !=
        0)
        return cli_usage_error("%s", err);
    return CLI_EXIT_OK;
}

/* Encodes one capture record for the daemon, with the replay overrides
 * in HELLO and every EVENTS entry checked first.  0 or -1. */
static int replay_encode(struct capture_reader *r, struct wire_record *rec,
                         const struct replay_args *o, msgpack_sbuffer *sb)
{
    if (rec->type == WIRE_HELLO) {
        if (o->rank.set_threshold)
            rec->u.hello.config.threshold_bp = o->rank.threshold_bp;
        if (o->rank.set_limit)
            rec->u.hello.config.limit = o->rank.limit;
    }
    if (rec->type == WIRE_EVENTS) {
        struct wire_events_iter it;
        struct wire_event ev;
        int rc;
        wire_events_begin(&it, &rec->u.events);
        while ((rc = wire_events_next(capture_reader_decoder(r), &it, &ev)) > 0)
            ;
        if (rc < 0)
            return -1;
    }
    return wire_encode_record(sb, rec);
}

/* After HELLO: READY lets the stream go on; UNSUPPORTED ends the run. */
static int replay_handshake(struct cli_profd *p)
{
    struct wire_record ans;
    char err[320];
    int rc = cli_profd_recv(p, &ans, err, sizeof err);
    if (rc > 0 && ans.type == WIRE_READY)
        return CLI_EXIT_OK;
    if (rc > 0 && ans.type == WIRE_UNSUPPORTED) {
        fprintf(stderr, "jett: profiler unsupported: the backend lacks %.*s\n",
                (int)ans.u.unsupported.capability.len, ans.u.unsupported.capability.ptr);
        return 4;
    }
    fprintf(stderr, "jett: %s\n", rc < 0 ? err : "jett-profd did not answer HELLO");
    return CLI_EXIT_BAD_INPUT;
}

/* Streams the capture to the daemon; a bad capture is reported and the
 * stream ends there (the daemon reports it as a collector failure).
 * *opened: the daemon accepted HELLO, so a RESULT will follow. */
static int replay_stream(struct cli_profd *p, struct capture_reader *r, const struct replay_args *o,
                         bool *opened)
{
    struct wire_record rec;
    int rc, status = CLI_EXIT_OK;
    while (status == CLI_EXIT_OK && (rc = capture_reader_next(r, &rec)) > 0) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        bool hello = rec.type == WIRE_HELLO;
        if (replay_encode(r, &rec, o, &sb) != 0) {
            char err[400];
            capture_reader_decode_error(r, err, sizeof err);
            fprintf(stderr, "jett: %s: %s\n", o->path, err);
            status = CLI_EXIT_BAD_INPUT;
        } else if (cli_profd_send(p, sb.data, sb.size) != 0) {
            status = CLI_EXIT_BAD_INPUT; /* the daemon answered early or died */
        } else if (hello) {
            status = replay_handshake(p);
            *opened = status == CLI_EXIT_OK;
        }
        msgpack_sbuffer_destroy(&sb);
    }
    if (status == CLI_EXIT_OK && rc < 0) {
        fprintf(stderr, "jett: %s: %s\n", o->path, capture_reader_error(r));
        status = CLI_EXIT_BAD_INPUT;
    }
    cli_profd_close_write(p);
    return status;
}

/* Reads RESULT and prints the report (or the TOON with --agent). */
static int replay_result(struct cli_profd *p, bool agent)
{
    struct wire_record rec;
    char err[320];
    int rc;
    while ((rc = cli_profd_recv(p, &rec, err, sizeof err)) > 0 && rec.type != WIRE_RESULT)
        ;
    if (rc <= 0) {
        fprintf(stderr, "jett: %s\n", rc < 0 ? err : "jett-profd ended without a profile");
        return CLI_EXIT_BAD_INPUT;
    }
    struct wire_str s = agent ? rec.u.result.profile : rec.u.result.human;
    fwrite(s.ptr, 1, s.len, stdout);
    if (agent)
        fputc('\n', stdout);
    return CLI_EXIT_OK; /* main flushes and reports a failed write */
}

/* jett profile replay CAPTURE|- [options]: the daemon on a saved stream,
 * over a socketpair exactly as `jett run` drives it. */
static int cmd_replay(int argc, char **argv)
{
    struct replay_args o;
    int status = replay_parse(argc, argv, &o);
    if (status != CLI_EXIT_OK)
        return status;
    if (o.help)
        return fputs(replay_usage_text, stdout), CLI_EXIT_OK;
    uint32_t seconds = DUMP_TIMEOUT_DEFAULT;
    if (o.timeout && parse_seconds(o.timeout, &seconds) != 0)
        return cli_usage_error("profile replay: --timeout must be a whole number of seconds, "
                               "1 to %u, not '%s'",
                               DUMP_TIMEOUT_MAX, o.timeout);
    char err[320];
    /* --follow: a capture that `jett run --profile-capture` is still
     * writing; the profile comes when FINISH arrives, or partial on
     * timeout. */
    struct cli_capture c;
    if (cli_capture_open(&c, o.path, o.follow ? seconds * 1000 : 0, err, sizeof err) != 0)
        return cli_usage_error("%s: %s", o.path, err);
    struct cli_profd p;
    if (!c.r || cli_profd_start(&p, err, sizeof err) != 0) {
        fprintf(stderr, "jett: %s\n", c.r ? err : "out of memory");
        cli_capture_close(&c);
        return 4;
    }
    bool opened = false;
    status = replay_stream(&p, c.r, &o, &opened);
    cli_capture_close(&c);
    /* a capture damaged before its HELLO reached the daemon has no
     * profile: what is wrong with it was said, and that is the outcome */
    if (status != 4 && opened) {
        int res = replay_result(&p, o.agent);
        status = status != CLI_EXIT_OK ? status : res;
    }
    int daemon = cli_profd_finish(&p);
    return status == CLI_EXIT_OK && daemon != 0 ? CLI_EXIT_BAD_INPUT : status;
}

int cli_profile_main(int argc, char **argv)
{
    if (argc < 2)
        return profile_usage(stderr, CLI_EXIT_USAGE);
    if (cli_is_help(argv[1]))
        return profile_usage(stdout, CLI_EXIT_OK);
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 1, argv + 1);
    if (strcmp(argv[1], "pack") == 0)
        return cmd_pack(argc - 1, argv + 1);
    if (strcmp(argv[1], "export") == 0)
        return cli_profile_export(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return cli_profile_diff(argc - 1, argv + 1);
    if (strcmp(argv[1], "replay") == 0)
        return cmd_replay(argc - 1, argv + 1);
    static const char *const known[] = {"dump", "pack", "export", "diff", "replay"};
    return cli_unknown_word("profile", "subcommand", argv[1], known, 5);
}
