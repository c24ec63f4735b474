/* Tests of the replay command line shared by `jett-profd replay` and
 * `jett profile replay` (daemon/replay_args.h). */
#include <check.h>
#include <stdarg.h>
#include <string.h>

#include "daemon/replay_args.h"

/* Parses a NULL-terminated word list after "replay"; 0 or -1, err set. */
static int parse(struct replay_args *a, unsigned flags, char *err, ...)
{
    static char *argv[32] = {"replay"};
    int argc = 1;
    va_list ap;
    va_start(ap, err);
    for (char *s; (s = va_arg(ap, char *)) != NULL;)
        argv[argc++] = s;
    va_end(ap);
    return replay_args_parse(argc, argv, "profile replay", flags, a, err, 200);
}

START_TEST(options_in_any_order)
{
    struct replay_args a;
    char err[200] = "";
    ck_assert_int_eq(parse(&a, 0, err, "--profile-limit", "3", "x.jcap", "--agent",
                           "--profile-threshold", "12.5", NULL),
                     0);
    ck_assert_str_eq(a.path, "x.jcap");
    ck_assert(a.agent && !a.follow && a.timeout == NULL);
    ck_assert(a.rank.set_limit && a.rank.set_threshold);
    ck_assert_uint_eq(a.rank.limit, 3);
    ck_assert_uint_eq(a.rank.threshold_bp, 1250);
    ck_assert_int_eq(parse(&a, 0, err, "-", NULL), 0);
    ck_assert_str_eq(a.path, "-");
    ck_assert(!a.agent && !a.rank.set_limit && !a.rank.set_threshold);
}
END_TEST

START_TEST(follow_only_where_allowed)
{
    struct replay_args a;
    char err[200] = "";
    ck_assert_int_eq(parse(&a, REPLAY_ARGS_FOLLOW, err, "x", "--follow", "--timeout", "9", NULL),
                     0);
    ck_assert(a.follow);
    ck_assert_str_eq(a.timeout, "9");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--follow", NULL), -1);
    ck_assert_str_eq(err, "--follow: unknown option");
    ck_assert_int_eq(parse(&a, REPLAY_ARGS_FOLLOW, err, "x", "--timeout", "9", NULL), -1);
    ck_assert_str_eq(err, "profile replay: --timeout needs --follow");
    ck_assert_int_eq(parse(&a, REPLAY_ARGS_FOLLOW, err, "x", "--follow", "--timeout", NULL), -1);
    ck_assert_str_eq(err, "profile replay: --timeout takes SECONDS, once");
}
END_TEST

START_TEST(refusals_name_the_option)
{
    struct replay_args a;
    char err[200] = "";
    ck_assert_int_eq(parse(&a, 0, err, "x", "--agent", "--agent", NULL), -1);
    ck_assert_str_eq(err, "--agent: repeated option");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--profile-limit", "2", "--profile-limit", "3", NULL),
                     -1);
    ck_assert_str_eq(err, "--profile-limit: repeated option");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--profile-limit", "0", NULL), -1);
    ck_assert_str_eq(err, "--profile-limit: expects a COUNT from 1 to 100");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--profile-threshold", "5.001", NULL), -1);
    ck_assert_str_eq(err, "--profile-threshold: expects a PERCENT from 0 to 100 (at most two "
                          "decimals)");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--profile-threshold", NULL), -1);
    ck_assert_str_eq(err, "--profile-threshold: expects a PERCENT from 0 to 100 (at most two "
                          "decimals)");
    ck_assert_int_eq(parse(&a, 0, err, "x", "--profile-rate", "5", NULL), -1);
    ck_assert_str_eq(err, "--profile-rate: unknown option");
    ck_assert_int_eq(parse(&a, 0, err, "x", "y", NULL), -1);
    ck_assert_str_eq(err, "profile replay: expected one CAPTURE argument");
    ck_assert_int_eq(parse(&a, 0, err, NULL), -1);
    ck_assert_str_eq(err, "profile replay: expected one CAPTURE argument");
}
END_TEST

Suite *replay_args_suite(void)
{
    Suite *s = suite_create("replay_args");
    TCase *t = tcase_create("replay_args");
    tcase_add_test(t, options_in_any_order);
    tcase_add_test(t, follow_only_where_allowed);
    tcase_add_test(t, refusals_name_the_option);
    suite_add_tcase(s, t);
    return s;
}
