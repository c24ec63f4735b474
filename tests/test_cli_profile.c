/* End-to-end tests of `jett profile dump/pack` and `jett-profd replay`:
 * exit statuses, messages and outputs of the real binaries. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static int run(const char *const argv[], struct tu_output *o)
{
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    return o->status;
}

START_TEST(usage_errors_exit_2)
{
    struct tu_output o;
    const char *none[] = {tu_jett, NULL};
    ck_assert_int_eq(run(none, &o), 2);
    tu_output_free(&o);
    const char *unknown[] = {tu_jett, "frobnicate", NULL};
    ck_assert_int_eq(run(unknown, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "unknown command 'frobnicate'"));
    tu_output_free(&o);
    const char *sub[] = {tu_jett, "profile", "explode", NULL};
    ck_assert_int_eq(run(sub, &o), 2);
    tu_output_free(&o);
    const char *dump2[] = {tu_jett, "profile", "dump", "a", "b", NULL};
    ck_assert_int_eq(run(dump2, &o), 2);
    tu_output_free(&o);
    const char *packo[] = {tu_jett, "profile", "pack", "a", NULL};
    ck_assert_int_eq(run(packo, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "jett profile pack TEXT -o CAPTURE"));
    tu_output_free(&o);
    const char *packopt[] = {tu_jett, "profile", "pack", "a", "-o", "b", "--bogus", NULL};
    ck_assert_int_eq(run(packopt, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "unknown option '--bogus'"));
    tu_output_free(&o);
    const char *missing[] = {tu_jett, "profile", "dump", "/nonexistent/x.jcap", NULL};
    ck_assert_int_eq(run(missing, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "cannot open"));
    tu_output_free(&o);
}
END_TEST

START_TEST(help_and_version)
{
    struct tu_output o;
    const char *v[] = {tu_jett, "--version", NULL};
    ck_assert_int_eq(run(v, &o), 0);
    ck_assert_int_eq(strncmp(o.out, "jett ", 5), 0);
    tu_output_free(&o);
    const char *h[] = {tu_jett, "profile", "--help", NULL};
    ck_assert_int_eq(run(h, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "jett profile dump"));
    tu_output_free(&o);
    const char *pv[] = {tu_profd, "--version", NULL};
    ck_assert_int_eq(run(pv, &o), 0);
    ck_assert_int_eq(strncmp(o.out, "jett-profd ", 11), 0);
    tu_output_free(&o);
}
END_TEST

/* pack then dump reproduces the fixture's records; options in any order. */
START_TEST(pack_dump_roundtrip)
{
    char *txt = tu_source_path("fixtures/captures/tiny-memory.jcap.txt");
    char *cap = tu_tmp_path("m.jcap"), *back = tu_tmp_path("back.txt"),
         *cap2 = tu_tmp_path("m2.jcap");
    struct tu_output o;
    const char *pack[] = {tu_jett, "profile", "pack", "-o", cap, txt, NULL};
    ck_assert_int_eq(run(pack, &o), 0);
    tu_output_free(&o);
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    ck_assert_int_eq(run(dump, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.out, "  ALLOC seq=7 op=free id=4 old=31 new=-"));
    ck_assert_int_eq(tu_write_file(back, o.out, o.out_len), 0);
    tu_output_free(&o);
    const char *repack[] = {tu_jett, "profile", "pack", back, "-o", cap2, NULL};
    ck_assert_int_eq(run(repack, &o), 0);
    tu_output_free(&o);
    size_t l1, l2;
    char *a = tu_read_file(cap, &l1), *b = tu_read_file(cap2, &l2);
    ck_assert_uint_eq(l1, l2);
    ck_assert_int_eq(memcmp(a, b, l1), 0);
    free(a), free(b), free(txt), free(cap), free(back), free(cap2);
}
END_TEST

/* pack's failed write reads `cannot write PATH: REASON`, exit 2; -o naming
 * the text being packed is refused and the text keeps its bytes. */
START_TEST(pack_write_failures)
{
    char *txt = tu_source_path("fixtures/captures/tiny-cpu.jcap.txt");
    struct tu_output o;
    const char *full[] = {tu_jett, "profile", "pack", txt, "-o", "/dev/full", NULL};
    ck_assert_int_eq(run(full, &o), 2);
    ck_assert_str_eq(o.err, "jett: cannot write /dev/full: No space left on device\n");
    tu_output_free(&o);
    char *copy = tu_tmp_path("self.txt"), *link = tu_tmp_path("self-link.txt");
    size_t len, after;
    char *text = tu_read_file(txt, &len);
    ck_assert_int_eq(tu_write_file(copy, text, len), 0);
    ck_assert_int_eq(symlink(copy, link), 0);
    const char *self[] = {tu_jett, "profile", "pack", copy, "-o", link, NULL};
    ck_assert_int_eq(run(self, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "is the text being packed"));
    tu_output_free(&o);
    char *kept = tu_read_file(copy, &after);
    ck_assert_uint_eq(after, len);
    ck_assert_int_eq(memcmp(kept, text, len), 0);
    unlink(link), unlink(copy);
    free(kept), free(text), free(copy), free(link), free(txt);
}
END_TEST

/* pack -o a FIFO writes into it, as into a device: the FIFO stays. */
START_TEST(pack_to_a_fifo)
{
    char *txt = tu_source_path("fixtures/captures/tiny-cpu.jcap.txt"), *out = tu_tmp_path("c.fifo");
    ck_assert_int_eq(mkfifo(out, 0600), 0);
    int rd = open(out, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(rd, 0);
    struct tu_output o;
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", out, NULL};
    ck_assert_msg(run(pack, &o) == 0, "%s", o.err);
    tu_output_free(&o);
    char magic[8];
    ck_assert_int_eq(read(rd, magic, sizeof magic), 8);
    ck_assert_int_eq(memcmp(magic, "JETTCAP1", 8), 0); /* a capture's magic */
    struct stat st;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    close(rd), unlink(out);
    free(txt), free(out);
}
END_TEST

START_TEST(dump_from_stdin)
{
    char *capfile = tu_build_path("fixtures/tiny-cpu.jcap");
    size_t len;
    char *cap = tu_read_file(capfile, &len);
    struct tu_output o;
    const char *dump[] = {tu_jett, "profile", "dump", "-", NULL};
    ck_assert_int_eq(tu_run(dump, cap, len, &o), 0);
    ck_assert_int_eq(o.status, 0);
    ck_assert_int_eq(strncmp(o.out, "HELLO version=1 mode=cpu", 24), 0);
    tu_output_free(&o);
    free(cap), free(capfile);
}
END_TEST

/* Bad input exits 1 with the byte offset, after printing what was valid. */
START_TEST(dump_bad_capture_exits_1)
{
    char *capfile = tu_build_path("fixtures/tiny-cpu.jcap");
    size_t len;
    char *cap = tu_read_file(capfile, &len);
    char *cut = tu_tmp_path("cut.jcap");
    ck_assert_int_eq(tu_write_file(cut, cap, len - 3), 0);
    struct tu_output o;
    const char *dump[] = {tu_jett, "profile", "dump", cut, NULL};
    ck_assert_int_eq(run(dump, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.out, "HELLO version=1"));
    ck_assert_ptr_nonnull(strstr(o.err, ": byte "));
    ck_assert_ptr_nonnull(strstr(o.err, "frame cut short"));
    tu_output_free(&o);
    const char *replay[] = {tu_profd, "replay", cut, NULL};
    ck_assert_int_eq(run(replay, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.err, "frame cut short"));
    tu_output_free(&o);
    free(cap), free(capfile), free(cut);
}
END_TEST

START_TEST(pack_bad_text_exits_1_with_line)
{
    char *txt = tu_tmp_path("bad.txt"), *out = tu_tmp_path("bad.jcap");
    const char text[] = "# first\nHELLO version=1 mode=cpu\n";
    ck_assert_int_eq(tu_write_file(txt, text, sizeof text - 1), 0);
    struct tu_output o;
    const char *pack[] = {tu_jett, "profile", "pack", txt, "-o", out, NULL};
    ck_assert_int_eq(run(pack, &o), 1);
    ck_assert_ptr_nonnull(strstr(o.err, "bad.txt:2: HELLO: missing field 'rate_hz'"));
    ck_assert_int_eq(access(out, F_OK), -1); /* no partial capture left behind */
    tu_output_free(&o);
    free(txt), free(out);
}
END_TEST

/* Replay aggregates the capture.  every-record.jcap.txt, by hand: 4
 * samples (jett, runtime, waiting, unavailable), requested 6 = 4 + 1
 * coalesced + 1 dropped; the jett sample's leaf span 0-5 lies outside
 * its leaf function's (empty) source and its three ALLOC entries do not
 * belong in a CPU capture (4 collector errors); its FINISH reports a collector
 * failure: partial / collector_failure; wall 18446744073709551614 ns
 * rounds to 18446744073710 ms. */
START_TEST(replay_profiles_capture)
{
    char *cap = tu_build_path("fixtures/every-record.jcap");
    struct tu_output o;
    const char *replay[] = {tu_profd, "replay", cap, NULL};
    ck_assert_int_eq(run(replay, &o), 0);
    ck_assert_ptr_nonnull(
        strstr(o.out, "status: partial (collector_failure), termination: runtime_error\n"));
    ck_assert_ptr_nonnull(strstr(
        o.out, "collector errors: 4, first: CPU_SAMPLE: leaf span [0, 5) outside its source\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "  requested ticks       6\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "  recorded samples      4\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "  wall time             18446744073710 ms\n"));
    tu_output_free(&o);
    const char *usage[] = {tu_profd, "bogus", NULL};
    ck_assert_int_eq(run(usage, &o), 2);
    tu_output_free(&o);
    free(cap);
}
END_TEST

/* `jett profile replay -` reads a pipe and prints what the file gives. */
START_TEST(replay_from_a_pipe_equals_the_file)
{
    static const char *const names[] = {"tiny-cpu", "tiny-memory", "cpu-recursion", "mem-churn"};
    for (size_t i = 0; i < 4; i++) {
        char *cap = tu_capture_path(names[i]);
        size_t len;
        char *bytes = tu_read_file(cap, &len);
        ck_assert_ptr_nonnull(bytes);
        struct tu_output a, b;
        const char *file[] = {tu_jett, "profile", "replay", cap, "--agent", NULL};
        const char *pipe_argv[] = {tu_jett, "profile", "replay", "-", "--agent", NULL};
        ck_assert_int_eq(run(file, &a), 0);
        ck_assert_int_eq(tu_run(pipe_argv, bytes, len, &b), 0);
        ck_assert_int_eq(b.status, 0);
        ck_assert_str_eq(a.out, b.out);
        ck_assert_ptr_nonnull(strstr(a.out, "profile:\n  schema: jett.profile.v1\n"));
        tu_output_free(&a), tu_output_free(&b);
        free(bytes), free(cap);
    }
}
END_TEST

/* --follow: a capture written in uneven chunks by another process gives
 * the profile of the finished file; a capture that stops growing gives a
 * partial profile after the timeout. */
START_TEST(replay_follow_equals_the_finished_file)
{
    char *cap = tu_build_path("fixtures/cpu-recursion.jcap"), *growing = tu_tmp_path("grow.jcap");
    size_t len;
    char *bytes = tu_read_file(cap, &len);
    ck_assert_int_eq(tu_write_file(growing, "", 0), 0);
    pid_t writer = fork();
    if (writer == 0) {
        FILE *f = fopen(growing, "ab");
        for (size_t off = 0; f && off < len;) {
            size_t n = 1 + off % 97;
            n = n > len - off ? len - off : n;
            fwrite(bytes + off, 1, n, f);
            fflush(f);
            off += n;
            usleep(2000);
        }
        _exit(0);
    }
    struct tu_output a, b;
    const char *follow[] = {tu_jett, "profile", "replay", growing, "--follow", "--agent", NULL};
    ck_assert_int_eq(run(follow, &b), 0);
    waitpid(writer, NULL, 0);
    const char *file[] = {tu_jett, "profile", "replay", cap, "--agent", NULL};
    ck_assert_int_eq(run(file, &a), 0);
    ck_assert_int_eq(b.status, 0);
    ck_assert_str_eq(a.out, b.out);
    tu_output_free(&a), tu_output_free(&b);
    /* Half a capture that never grows again: partial, exit 1. */
    ck_assert_int_eq(tu_write_file(growing, bytes, len / 2), 0);
    const char *stalled[] = {tu_jett,     "profile", "replay",  growing, "--follow",
                             "--timeout", "1",       "--agent", NULL};
    ck_assert_int_eq(run(stalled, &b), 1);
    ck_assert_ptr_nonnull(strstr(b.out, "\n  partial_reason: collector_failure\n"));
    ck_assert_ptr_nonnull(strstr(b.err, "no new data"));
    tu_output_free(&b);
    const char *badt[] = {tu_jett, "profile", "replay", cap, "--timeout", "5", NULL};
    ck_assert_int_eq(run(badt, &b), 2);
    ck_assert_ptr_nonnull(strstr(b.err, "--timeout needs --follow"));
    tu_output_free(&b);
    free(bytes), free(cap), free(growing);
}
END_TEST

Suite *cli_profile_suite(void)
{
    Suite *s = suite_create("cli_profile");
    TCase *t = tcase_create("cli");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, usage_errors_exit_2);
    tcase_add_test(t, help_and_version);
    tcase_add_test(t, pack_dump_roundtrip);
    tcase_add_test(t, pack_to_a_fifo);
    tcase_add_test(t, pack_write_failures);
    tcase_add_test(t, dump_from_stdin);
    tcase_add_test(t, dump_bad_capture_exits_1);
    tcase_add_test(t, pack_bad_text_exits_1_with_line);
    tcase_add_test(t, replay_profiles_capture);
    tcase_add_test(t, replay_from_a_pipe_equals_the_file);
    tcase_add_test(t, replay_follow_equals_the_finished_file);
    suite_add_tcase(s, t);
    return s;
}
