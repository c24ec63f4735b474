/* Tests of the launcher's connection to a real jett-profd: handshake,
 * streaming, RESULT, capture copy, and every way the daemon can fail. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/collector.h"
#include "cli/profd_spawn.h"
#include "proto/capture.h"
#include "testutil.h"

#define S(lit) ((struct wire_str){lit, (uint32_t)(sizeof lit - 1)})

static struct wire_hello cpu_hello(uint32_t caps)
{
    struct wire_hello h = {WIRE_PROTOCOL_VERSION,
                           WIRE_MODE_CPU,
                           {1000, 500, 10, 32u << 20, 64u << 20, 16u << 20},
                           S("interpreter_safe_point"),
                           caps,
                           false};
    return h;
}

static struct collector *connect_daemon(const char *path, pid_t *pid, int capture_fd, size_t ring,
                                        uint64_t stall)
{
    int sock;
    char err[200];
    ck_assert_msg(profd_spawn(path, &sock, pid, err, sizeof err) == 0, "%s", err);
    struct collector *c = collector_new(sock, capture_fd, ring, stall);
    ck_assert_ptr_nonnull(c);
    return c;
}

static int reap(pid_t pid)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One function, one root stack, two jett samples. */
static void stream_two_samples(struct collector *c)
{
    struct wire_func f = {0, S("app"), S("main"), WIRE_NONE32, WIRE_SPAN_NONE};
    ck_assert_int_eq(collector_send_func(c, &f), 0);
    ck_assert_int_eq(collector_start(c), 0);
    uint8_t e[WIRE_SAMPLE_SIZE];
    struct wire_stack st = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    ck_assert(collector_put(c, e, wire_put_stack(e, &st), true));
    for (uint64_t i = 1; i <= 2; i++) {
        struct wire_sample sm = {
            i, i, {WIRE_NONE32, WIRE_NONE32, 0}, WIRE_STATE_JETT, 0, WIRE_SPAN_NONE};
        ck_assert(collector_put(c, e, wire_put_sample(e, &sm), false));
    }
}

START_TEST(session_returns_result)
{
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64] = "";
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    stream_two_samples(c);
    struct wire_finish fin = {WIRE_TERM_RETURNED, 2000000, 1500000, 3, 1, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 10000, &res), 0);
    /* 3 requested ticks = 2 recorded + 1 coalesced; both samples in
     * app.main, so it is the one bottleneck with 100%. */
    static const char head[] = "profile:\n  schema: jett.profile.v1\n  mode: cpu\n"
                               "  status: complete\n";
    ck_assert_msg(strncmp(res.profile, head, sizeof head - 1) == 0, "%s", res.profile);
    ck_assert_ptr_nonnull(strstr(res.profile, "    recorded_samples: 2\n"));
    ck_assert_ptr_nonnull(strstr(res.profile, "    coalesced_ticks: 1\n"));
    ck_assert_ptr_nonnull(strstr(res.profile, "      function: main\n"));
    ck_assert_ptr_nonnull(strstr(res.human, "CPU profile"));
    collector_result_free(&res);
    collector_free(c);
    ck_assert_int_eq(reap(pid), 0);
}
END_TEST

START_TEST(unsupported_capability_named)
{
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL & ~WIRE_CAP_SAFE_STACK_CAPTURE);
    char missing[64] = "";
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing),
                     COLLECTOR_UNSUPPORTED);
    ck_assert_str_eq(missing, "safe_stack_capture");
    collector_free(c);
    ck_assert_int_eq(reap(pid), 0);
    /* Memory mode needs the heap hooks and free/resize events. */
    c = connect_daemon(tu_profd, &pid, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    h = cpu_hello(WIRE_CAP_ALL & ~WIRE_CAP_FREE_AND_RESIZE_EVENTS);
    h.mode = WIRE_MODE_MEMORY, h.config.rate_hz = 0;
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing),
                     COLLECTOR_UNSUPPORTED);
    ck_assert_str_eq(missing, "free_and_resize_events");
    collector_free(c);
    ck_assert_int_eq(reap(pid), 0);
}
END_TEST

/* A "daemon" that holds the socket and never answers. */
START_TEST(silent_daemon_times_out)
{
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/silent", dir);
    const char script[] = "#!/bin/sh\nexec sleep 30\n";
    ck_assert_int_eq(tu_write_file(path, script, sizeof script - 1), 0);
    chmod(path, 0755);
    pid_t pid;
    struct collector *c = connect_daemon(path, &pid, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 300, missing, sizeof missing), COLLECTOR_NO_ANSWER);
    ck_assert(collector_failed(c));
    collector_free(c);
    kill(pid, SIGKILL);
    reap(pid);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(missing_binary_no_answer)
{
    pid_t pid;
    struct collector *c =
        connect_daemon("/nonexistent/jett-profd", &pid, -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing),
                     COLLECTOR_NO_ANSWER);
    collector_free(c);
    ck_assert_int_eq(reap(pid), 127);
}
END_TEST

/* A reservation says exactly whether the next entries fit: with no
 * writer draining a 4096-byte ring, 4096 / WIRE_SAMPLE_SIZE samples go in,
 * each after a granted reservation, and then none is granted or fits.  A
 * failed collector grants nothing. */
START_TEST(reserve_grants_what_fits)
{
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, -1, 4096, COLLECTOR_STALL_NS);
    ck_assert(collector_reserve(c, 4096));
    ck_assert(!collector_reserve(c, 4097));
    uint8_t e[WIRE_SAMPLE_SIZE];
    struct wire_sample sm = {1, 1, {0, 0, 0}, WIRE_STATE_JETT, 0, {0, 1}};
    size_t n = wire_put_sample(e, &sm), put = 0;
    ck_assert_uint_eq(n, WIRE_SAMPLE_SIZE);
    while (collector_reserve(c, n)) {
        ck_assert(collector_put(c, e, n, false));
        put++;
    }
    ck_assert_uint_eq(put, 4096 / WIRE_SAMPLE_SIZE);
    ck_assert(!collector_put(c, e, n, false));
    ck_assert(collector_reserve(c, 4096 - put * WIRE_SAMPLE_SIZE));
    kill(pid, SIGKILL);
    reap(pid);
    struct wire_finish fin = {0};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 1000, &res), -1); /* the daemon is gone */
    ck_assert(collector_failed(c));
    ck_assert(!collector_reserve(c, 0));
    collector_free(c);
}
END_TEST

/* SIGKILL mid-run: appends stop at once, finish reports the failure. */
START_TEST(killed_daemon_fails_collector)
{
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, -1, 4096, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    stream_two_samples(c);
    kill(pid, SIGKILL);
    ck_assert_int_eq(reap(pid), 128 + SIGKILL);
    uint8_t e[WIRE_ALLOC_SIZE];
    struct wire_alloc a = {1, 0, 1, WIRE_NONE64, 8, {0, 0, 0}, 0, WIRE_SPAN_NONE};
    size_t n = wire_put_alloc(e, &a);
    for (int i = 0; i < 100000 && !collector_failed(c); i++)
        collector_put(c, e, n, true);
    ck_assert(collector_failed(c));
    struct wire_finish fin = {0};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 1000, &res), -1);
    ck_assert(fin.collector_failure);
    collector_free(c);
}
END_TEST

/* SIGSTOP: the socket fills, no progress for the stall limit, the
 * collector gives up and the program is never blocked for longer. */
START_TEST(stopped_daemon_back_pressure_times_out)
{
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, -1, 4096, 300000000ull);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    stream_two_samples(c);
    kill(pid, SIGSTOP);
    uint8_t e[WIRE_ALLOC_SIZE];
    int put = 0;
    for (uint64_t i = 1; !collector_failed(c) && i < 10000000; i++) {
        struct wire_alloc a = {i, 0, i, WIRE_NONE64, 8, {0, 0, 0}, 0, WIRE_SPAN_NONE};
        put += collector_put(c, e, wire_put_alloc(e, &a), true);
    }
    ck_assert(collector_failed(c));
    ck_assert_ptr_nonnull(strstr(collector_error(c), "no progress"));
    ck_assert_int_gt(put, 0);
    struct wire_finish fin = {0};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 1000, &res), -1);
    collector_free(c);
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    reap(pid);
}
END_TEST

/* CALLS goes after the last EVENTS frame and before FINISH, in as many
 * records as its entries take: WIRE_CALLS_MAX_ENTRIES + 3 entries are
 * two records, the first full, the sites still in order. */
START_TEST(calls_sent_before_finish)
{
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/run.jcap", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_eq(capture_write_all(fd, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN), 0);
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, fd, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    stream_two_samples(c);
    uint32_t m = WIRE_CALLS_MAX_ENTRIES + 2;
    struct wire_site_calls *site = calloc(m, sizeof *site);
    for (uint32_t i = 0; i < m; i++)
        site[i] = (struct wire_site_calls){0, {i, i + 1}, i + 1};
    struct wire_fn_calls fn = {0, 7};
    collector_set_calls(c, &fn, 1, site, m);
    struct wire_finish fin = {WIRE_TERM_RETURNED, 2000000, 1500000, 3, 1, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 10000, &res), 0);
    collector_result_free(&res);
    collector_free(c);
    close(fd);
    reap(pid);
    size_t len;
    char *bytes = tu_read_file(path, &len);
    struct capture_reader *r = capture_reader_mem(bytes, len);
    struct wire_record rec;
    char order[16] = "";
    uint64_t entries = 0, next = 1;
    while (capture_reader_next(r, &rec) > 0 && strlen(order) < sizeof order - 1) {
        strcat(order, rec.type == WIRE_CALLS ? "C" : rec.type == WIRE_FINISH ? "F" : "-");
        if (rec.type == WIRE_EVENTS) {
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while (wire_events_next(capture_reader_decoder(r), &it, &ev) > 0)
                ;
        }
        if (rec.type != WIRE_CALLS)
            continue;
        entries += rec.u.calls.n_functions + rec.u.calls.n_sites;
        for (uint32_t i = 0; i < rec.u.calls.n_sites; i++)
            ck_assert_uint_eq(wire_calls_site(&rec.u.calls, i).calls, next++);
        if (order[strlen(order) - 2] != 'C') /* the first CALLS record */
            ck_assert_uint_eq(rec.u.calls.n_functions + rec.u.calls.n_sites,
                              WIRE_CALLS_MAX_ENTRIES);
    }
    /* HELLO, FUNC, the EVENTS frames, then the two CALLS and FINISH */
    size_t k = strlen(order);
    ck_assert_msg(k >= 6 && strcmp(order + k - 3, "CCF") == 0 &&
                      strchr(order, 'C') == order + k - 3,
                  "%s", order);
    ck_assert_uint_eq(entries, 1 + (uint64_t)m);
    capture_reader_free(r);
    free(bytes), free(site);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

/* The capture file gets every frame the daemon got, and replays. */
START_TEST(capture_copy_is_a_valid_capture)
{
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/run.jcap", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(capture_write_all(fd, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN), 0);
    pid_t pid;
    struct collector *c = connect_daemon(tu_profd, &pid, fd, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct wire_hello h = cpu_hello(WIRE_CAP_ALL);
    char missing[64];
    ck_assert_int_eq(collector_handshake(c, &h, 5000, missing, sizeof missing), COLLECTOR_READY);
    stream_two_samples(c);
    struct wire_finish fin = {WIRE_TERM_RETURNED, 2000000, 1500000, 3, 1, 0, false, false};
    struct collector_result res;
    ck_assert_int_eq(collector_finish(c, &fin, 10000, &res), 0);
    collector_free(c);
    close(fd);
    reap(pid);
    struct tu_output o;
    const char *argv[] = {tu_profd, "replay", path, "--agent", NULL};
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 0);
    /* Replay prints the same profile document as the live run. */
    ck_assert_uint_ge(o.out_len, res.profile_len);
    ck_assert_int_eq(memcmp(o.out, res.profile, res.profile_len), 0);
    tu_output_free(&o);
    collector_result_free(&res);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

Suite *collector_suite(void)
{
    Suite *s = suite_create("collector");
    TCase *t = tcase_create("collector");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, session_returns_result);
    tcase_add_test(t, unsupported_capability_named);
    tcase_add_test(t, silent_daemon_times_out);
    tcase_add_test(t, missing_binary_no_answer);
    tcase_add_test(t, reserve_grants_what_fits);
    tcase_add_test(t, killed_daemon_fails_collector);
    tcase_add_test(t, stopped_daemon_back_pressure_times_out);
    tcase_add_test(t, capture_copy_is_a_valid_capture);
    tcase_add_test(t, calls_sent_before_finish);
    suite_add_tcase(s, t);
    return s;
}
