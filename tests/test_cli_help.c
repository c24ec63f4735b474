/* The command line's own words, on the real binaries: -h and --help on
 * every command and subcommand listing every option, suggestions for
 * misspelt options, and the reason a program file cannot be opened. */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/util/suggest_option.h"
#include "testutil.h"

#define MAX_WORDS 8

/* A command (words after the binary) and every option its help must
 * list, as DESIGN section 3 and the man pages name them. */
struct help_case {
    bool daemon; /* jett-profd rather than jett */
    const char *words[4];
    const char *usage; /* how the help begins */
    const char *options[12];
};

static const struct help_case helps[] = {
    {false,
     {NULL},
     "usage: jett COMMAND",
     {"run FILE.jett", "profile replay", "profile export", "profile diff", "profile dump",
      "profile pack", "callgrind check", "callgrind normalize", "-h, --help", "--version"}},
    {false,
     {"run"},
     "usage: jett run FILE.jett",
     {"--profile ", "--profile-memory", "--profile-threshold", "--profile-limit", "--profile-rate",
      "--profile-capture", "--agent", "-h, --help", "-- ARGS"}},
    {false,
     {"profile"},
     "usage: jett profile dump",
     {"profile dump", "profile pack", "profile replay", "profile export", "profile diff"}},
    {false,
     {"profile", "replay"},
     "usage: jett profile replay CAPTURE|-",
     {"--profile-threshold", "--profile-limit", "--agent", "--follow", "--timeout", "-h, --help"}},
    {false,
     {"profile", "export"},
     "usage: jett profile export CAPTURE|-",
     {"--format collapsed", "--format svg", "--format callgrind", "--format pprof",
      "--format timeline", "--format speedscope", "--weight", "-o PATH", "-h, --help"}},
    {false,
     {"profile", "diff"},
     "usage: jett profile diff BASE NEW",
     {"--agent", "--format svg", "-o PATH", "-h, --help"}},
    {false,
     {"profile", "dump"},
     "usage: jett profile dump CAPTURE|-",
     {"--follow", "--timeout", "-h, --help"}},
    {false, {"profile", "pack"}, "usage: jett profile pack TEXT|-", {"-o CAPTURE", "-h, --help"}},
    {false,
     {"callgrind"},
     "usage: jett callgrind check FILE",
     {"callgrind check", "callgrind normalize"}},
    {false, {"callgrind", "check"}, "usage: jett callgrind check FILE", {"-h, --help"}},
    {false,
     {"callgrind", "normalize"},
     "usage: jett callgrind normalize FILE",
     {"-o OUT", "-h, --help"}},
    {true,
     {NULL},
     "usage: jett-profd replay",
     {"--profile-threshold", "--profile-limit", "--agent", "--fd N", "-h, --help", "--version"}},
    {true,
     {"replay"},
     "usage: jett-profd replay",
     {"--profile-threshold", "--profile-limit", "--agent", "-h, --help"}},
};

/* Runs the binary with words then extra (both NULL-terminated) into o. */
static void run(bool daemon, const char *const *words, const char *const *extra,
                struct tu_output *o)
{
    const char *argv[MAX_WORDS + 4] = {daemon ? tu_profd : tu_jett};
    size_t n = 1;
    for (size_t i = 0; words && words[i] && n < MAX_WORDS; i++)
        argv[n++] = words[i];
    for (size_t i = 0; extra && extra[i] && n < MAX_WORDS; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
}

START_TEST(every_command_has_help)
{
    for (size_t c = 0; c < sizeof helps / sizeof helps[0]; c++) {
        const struct help_case *h = &helps[c];
        for (int form = 0; form < 2; form++) {
            const char *flag[] = {form ? "-h" : "--help", NULL};
            struct tu_output o;
            run(h->daemon, h->words, flag, &o);
            const char *what = h->words[0] ? h->words[0] : "(none)";
            ck_assert_msg(o.status == 0, "%s %s %s: status %d, %s", what,
                          h->words[0] ? h->words[1] : "", flag[0], o.status, o.err);
            ck_assert_msg(strncmp(o.out, h->usage, strlen(h->usage)) == 0, "%s %s: %s", what,
                          flag[0], o.out);
            ck_assert_msg(o.err_len == 0, "%s %s wrote on stderr: %s", what, flag[0], o.err);
            for (size_t k = 0; k < 12 && h->options[k]; k++)
                ck_assert_msg(strstr(o.out, h->options[k]) != NULL, "%s %s lacks '%s':\n%s", what,
                              flag[0], h->options[k], o.out);
            tu_output_free(&o);
        }
    }
}
END_TEST

/* --help wins over the other words wherever it stands; after `jett run`'s
 * -- it belongs to the program. */
START_TEST(help_anywhere)
{
    static const char *const cases[][6] = {
        {"profile", "diff", "a.jcap", "b.jcap", "--help", NULL},
        {"profile", "diff", "--agent", "-h", NULL},
        {"run", "a.jett", "--profile", "-h", NULL},
        {"profile", "replay", "a.jcap", "--agent", "--help", NULL},
        {"profile", "dump", "a.jcap", "-h", NULL},
        {"profile", "export", "a.jcap", "-h", NULL},
        {"callgrind", "check", "--help", NULL},
        {"callgrind", "normalize", "a.out", "-h", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct tu_output o;
        run(false, cases[c], NULL, &o);
        ck_assert_msg(o.status == 0 && strncmp(o.out, "usage: jett ", 12) == 0, "%s %s: %d %s",
                      cases[c][0], cases[c][1], o.status, o.err);
        tu_output_free(&o);
    }
    /* the program's -h: the program is looked for (and here missing) */
    struct tu_output o;
    const char *const prog[] = {"run", "/nonexistent-dir/missing.jett", "--", "-h", NULL};
    run(false, prog, NULL, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_str_eq(o.out, "");
    tu_output_free(&o);
}
END_TEST

/* A misspelt option or subcommand: one line naming the nearest, exit 2. */
START_TEST(misspelt_words_get_a_suggestion)
{
    static const struct {
        bool daemon;
        const char *words[6];
        const char *err;
    } cases[] = {
        {false,
         {"run", "a.jett", "--proflie"},
         "jett: run: unknown option '--proflie' (did you mean --profile?)\n"},
        {false,
         {"run", "a.jett", "--profile", "--profile-limt", "3"},
         "jett: run: unknown option '--profile-limt' (did you mean --profile-limit?)\n"},
        {false,
         {"run", "a.jett", "--agnet"},
         "jett: run: unknown option '--agnet' (did you mean --agent?)\n"},
        {false, {"rnu", "a.jett"}, "jett: unknown command 'rnu' (did you mean run?)\n"},
        {false,
         {"profile", "dif", "a", "b"},
         "jett: profile: unknown subcommand 'dif' (did you mean diff?)\n"},
        {false,
         {"profile", "diff", "a", "b", "--agnet"},
         "jett: profile diff: unknown option '--agnet' (did you mean --agent?)\n"},
        {false,
         {"profile", "replay", "a.jcap", "--profile-treshold", "5"},
         "jett: --profile-treshold: unknown option (did you mean --profile-threshold?)\n"},
        {false,
         {"profile", "export", "a.jcap", "--fromat", "svg"},
         "jett: profile export: unknown option '--fromat' (did you mean --format?)\n"},
        {false,
         {"profile", "dump", "a.jcap", "--folow"},
         "jett: profile dump: unknown option '--folow' (did you mean --follow?)\n"},
        {false,
         {"profile", "pack", "a", "-o", "b", "--hlep"},
         "jett: profile pack: unknown option '--hlep' (did you mean --help?)\n"},
        {false,
         {"callgrind", "chek", "a"},
         "jett: callgrind: unknown subcommand 'chek' (did you mean check?)\n"},
        {false,
         {"callgrind", "check", "--hepl"},
         "jett: callgrind check: unknown option '--hepl' (did you mean --help?)\n"},
        {true,
         {"replay", "a.jcap", "--agnet"},
         "jett-profd: --agnet: unknown option (did you mean --agent?)\n"},
        {true, {"--hlep"}, "jett-profd: unknown option '--hlep' (did you mean --help?)\n"},
        /* not close to anything: no suggestion */
        {false, {"run", "a.jett", "--zzz"}, "jett: run: unknown option '--zzz'\n"},
        {false, {"profile", "pack", "a", "-x"}, "jett: profile pack: unknown option '-x'\n"},
        {false, {"frobnicate"}, "jett: unknown command 'frobnicate' (try 'jett --help')\n"},
        {false,
         {"callgrind", "normalize", "a", "--output"},
         "jett: callgrind normalize: unknown option '--output'\n"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct tu_output o;
        run(cases[c].daemon, cases[c].words, NULL, &o);
        ck_assert_msg(o.status == 2, "%s: status %d", cases[c].err, o.status);
        ck_assert_str_eq(o.err, cases[c].err);
        tu_output_free(&o);
    }
}
END_TEST

/* The reason comes from the system; the path is the one given, without
 * its folders when absolute.  A program that cannot be loaded is a
 * compile error (exit 3), with --agent too. */
START_TEST(missing_program_says_why)
{
    struct tu_output o;
    const char *const words[] = {"run", "/nonexistent-dir/missing.jett", NULL};
    run(false, words, NULL, &o);
    ck_assert_int_eq(o.status, 3);
    ck_assert_str_eq(
        o.err, "missing.jett:1:1: error: cannot open program file: No such file or directory\n");
    tu_output_free(&o);
    const char *const agent[] = {"--agent", NULL};
    run(false, words, agent, &o);
    ck_assert_int_eq(o.status, 3);
    /* quoted: the message holds a colon */
    ck_assert_ptr_nonnull(strstr(o.out, "  missing.jett,1,1,error,\"cannot open program file: No "
                                        "such file or directory\"\n"));
    tu_output_free(&o);
}
END_TEST

/* Edit distance with swaps, the closeness rule and the tie rule. */
START_TEST(suggestion_rule)
{
    static const char *const run_opts[] = {
        "--profile", "--profile-memory", "--profile-limit", "--agent", "-o", "--help", "-h"};
    const size_t n = sizeof run_opts / sizeof run_opts[0];
    ck_assert_str_eq(suggest_option("--proflie", run_opts, n), "--profile");  /* swap: 1 */
    ck_assert_str_eq(suggest_option("--profle", run_opts, n), "--profile");   /* delete: 1 */
    ck_assert_str_eq(suggest_option("--profiles", run_opts, n), "--profile"); /* insert: 1 */
    ck_assert_str_eq(suggest_option("--prafile", run_opts, n), "--profile");  /* substitute */
    ck_assert_str_eq(suggest_option("--profile-memroy", run_opts, n), "--profile-memory");
    /* 2 edits of the 5 letters of "agent" is more than a third */
    ck_assert_ptr_null(suggest_option("--aegnt-", run_opts, n));
    ck_assert_str_eq(suggest_option("--agen", run_opts, n), "--agent");
    /* one letter after the dash: never close enough */
    ck_assert_ptr_null(suggest_option("-x", run_opts, n));
    ck_assert_ptr_null(suggest_option("--zzz", run_opts, n));
    /* a known word is not misspelt */
    ck_assert_ptr_null(suggest_option("--agent", run_opts, n));
    /* a tie goes to the first listed: "abc" is 1 from both */
    static const char *const tie[] = {"abcd", "abce"};
    ck_assert_str_eq(suggest_option("abc", tie, 2), "abcd");
    char buf[64];
    ck_assert_str_eq(suggest_option_hint("--agnet", run_opts, n, buf, sizeof buf),
                     " (did you mean --agent?)");
    ck_assert_str_eq(suggest_option_hint("--zzz", run_opts, n, buf, sizeof buf), "");
}
END_TEST

Suite *cli_help_suite(void)
{
    Suite *s = suite_create("cli_help");
    TCase *t = tcase_create("cli_help");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, every_command_has_help);
    tcase_add_test(t, help_anywhere);
    tcase_add_test(t, misspelt_words_get_a_suggestion);
    tcase_add_test(t, missing_program_says_why);
    tcase_add_test(t, suggestion_rule);
    suite_add_tcase(s, t);
    return s;
}
