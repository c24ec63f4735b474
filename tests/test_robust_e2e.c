/*
 * End-to-end tests of what a hostile user or a careless script does to
 * the binaries (issue 20): captures that must replace their target only
 * when whole, write failures of the capture and of standard output,
 * closed standard descriptors, a capture reader that stops, signals while
 * loading and while finishing, and a stdout reader that goes away.
 *
 * Every wait is on state (a FIFO's reader, /proc, a pipe's fill level,
 * an exit status), bounded so that a hang fails the test instead of
 * stalling the suite.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* The tests write into pipes whose readers may be gone. */
static void ignore_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- processes ------------------------------------------------------------ */

#define CLOSED (-1)
#define INHERIT (-2)

/* How the child's descriptors 0..2 are set up: a descriptor to dup2 onto
 * the slot, CLOSED or INHERIT; and a file-size limit (0: none). */
struct child_io {
    int fd[3];
    rlim_t fsize;
};

static pid_t spawn(const char *const argv[], const struct child_io *io)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int moved[3];
        for (int i = 0; i < 3; i++) /* out of the way of 0..2 first */
            moved[i] = io->fd[i] >= 0 ? fcntl(io->fd[i], F_DUPFD_CLOEXEC, 10) : io->fd[i];
        for (int i = 0; i < 3; i++) {
            if (moved[i] == CLOSED)
                close(i);
            else if (moved[i] >= 0)
                dup2(moved[i], i);
        }
        if (io->fsize) {
            struct rlimit rl = {io->fsize, io->fsize};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Waits for pid for at most max_ms: its status (128 + signal when
 * killed), or -1 after killing a process that did not end in time. */
static int wait_bounded(pid_t pid, unsigned max_ms, unsigned *took_ms)
{
    uint64_t start = now_ms();
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            if (took_ms)
                *took_ms = (unsigned)(now_ms() - start);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (now_ms() - start > max_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        pause_ms(5);
    }
}

static int open_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    return fd;
}

/* Runs argv with stdin /dev/null and its outputs in files; status, and
 * the outputs in *o (as tu_run gives them). */
static int run_files(const char *const argv[], struct child_io io, struct tu_output *o)
{
    char *out = tu_tmp_path("run.out"), *err = tu_tmp_path("run.err");
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (io.fd[0] == INHERIT)
        io.fd[0] = null;
    int fo = io.fd[1] == INHERIT ? open_out(out) : -1;
    int fe = io.fd[2] == INHERIT ? open_out(err) : -1;
    if (fo >= 0)
        io.fd[1] = fo;
    if (fe >= 0)
        io.fd[2] = fe;
    pid_t pid = spawn(argv, &io);
    close(null);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    memset(o, 0, sizeof *o);
    o->status = wait_bounded(pid, 60000, NULL);
    o->out = fo >= 0 ? tu_read_file(out, &o->out_len) : strdup("");
    o->err = fe >= 0 ? tu_read_file(err, &o->err_len) : strdup("");
    ck_assert(o->out && o->err);
    tu_drop_sanitizer_noise(o);
    free(out), free(err);
    return o->status;
}

static const struct child_io plain_io = {{INHERIT, INHERIT, INHERIT}, 0};

static bool file_is(const char *path, const char *text)
{
    size_t len;
    char *got = tu_read_file(path, &len);
    bool same = got && len == strlen(text) && memcmp(got, text, len) == 0;
    free(got);
    return same;
}

/* No PATH.partial-* file is left in tu_dir. */
static void assert_no_partial(void)
{
    DIR *d = opendir(tu_dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        ck_assert_msg(strstr(e->d_name, ".partial-") == NULL, "left behind: %s", e->d_name);
    closedir(d);
}

/* `jett profile dump PATH` reads the whole capture, up to FINISH. */
static void assert_capture_whole(const char *path)
{
    const char *argv[] = {tu_jett, "profile", "dump", path, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "dump: %s", o.err);
    ck_assert_msg(strncmp(o.out, "HELLO version=3 ", 16) == 0, "%.100s", o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\nFINISH termination="));
    tu_output_free(&o);
}

static const char hello_src[] = "namespace hi\n"
                                "fn main() {\n"
                                "    print(\"MARKER-OUT\")\n"
                                "    eprint(\"MARKER-ERR\")\n"
                                "}\n";

/* Some 20,000 allocations: a memory capture of several hundred KiB. */
static const char churn_src[] = "namespace churn\n"
                                "fn main() {\n"
                                "    let keep = []\n"
                                "    for i in 0..20000 {\n"
                                "        push(keep, str(i) + \"-item\")\n"
                                "    }\n"
                                "    print(len(keep))\n"
                                "}\n";

/* A burst at the very end: some 100 KiB of capture (three compact
 * entries of 4 to 5 bytes an item), more than a pipe holds and far less
 * than the collector's ring, so that a stalled capture holds the
 * launcher only after the program has ended. */
static const char burst_src[] = "namespace burst\n"
                                "fn main() {\n"
                                "    let keep = []\n"
                                "    for i in 0..8000 {\n"
                                "        push(keep, str(i) + \"-item\")\n"
                                "    }\n"
                                "    print(len(keep))\n"
                                "}\n";

/* ---- 1: the capture replaces its target only when whole ----------------- */

START_TEST(capture_kept_on_compile_error)
{
    char *p = tu_program("bad.jett", "namespace bad\nfn main() {\n    nothing_here\n}\n");
    char *cap = tu_tmp_path("run.jcap");
    ck_assert_int_eq(tu_write_file(cap, "previous", 8), 0);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-capture", cap, NULL};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, plain_io, &o), 3);
    ck_assert_msg(file_is(cap, "previous"), "the previous capture was replaced");
    assert_no_partial();
    tu_output_free(&o);
    free(p), free(cap);
}
END_TEST

/* The example: the program file itself is refused before
 * anything is loaded, and stays as it was. */
START_TEST(capture_onto_the_program_is_refused)
{
    char *p = tu_program("victim.jett", hello_src);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-capture", p, NULL};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, plain_io, &o), 2);
    ck_assert_ptr_nonnull(strstr(o.err, "' is the program file"));
    ck_assert_msg(file_is(p, hello_src), "the program was overwritten");
    assert_no_partial();
    tu_output_free(&o);
    free(p);
}
END_TEST

START_TEST(capture_replaces_when_whole)
{
    char *p = tu_program("hi.jett", hello_src);
    char *cap = tu_tmp_path("run.jcap");
    ck_assert_int_eq(tu_write_file(cap, "previous", 8), 0);
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--profile-capture", cap, NULL};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, plain_io, &o), 0);
    assert_capture_whole(cap);
    assert_no_partial();
    tu_output_free(&o);
    free(p), free(cap);
}
END_TEST

/* ---- 2: a write failure of the capture fails the run --------------------- */

/* A file-size limit makes the capture's writes fail part way (EFBIG), a
 * real kernel write failure that needs no privileges. */
START_TEST(capture_write_failure_mid_run)
{
    char *p = tu_program("churn.jett", churn_src);
    char *cap = tu_tmp_path("run.jcap");
    ck_assert_int_eq(tu_write_file(cap, "previous", 8), 0);
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--profile-capture", cap, NULL};
    struct child_io io = {{INHERIT, INHERIT, INHERIT}, 64 * 1024};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, io, &o), 4);
    ck_assert_str_eq(o.out, "20000\n");
    ck_assert_msg(strstr(o.err, "jett: --profile-capture: cannot write '") &&
                      strstr(o.err, "run.jcap': File too large\n"),
                  "%s", o.err);
    ck_assert_msg(strstr(o.err, "Memory profile\nmemory: ") && strstr(o.err, "\nstatus: complete"),
                  "no report: %s", o.err);
    ck_assert_msg(file_is(cap, "previous"), "the previous capture was replaced");
    assert_no_partial();
    tu_output_free(&o);

    const char *agent[] = {tu_jett, "run",     p,   "--profile-memory", "--profile-capture",
                           cap,     "--agent", NULL};
    ck_assert_int_eq(run_files(agent, io, &o), 4);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    ck_assert_ptr_nonnull(strstr(o.out, "\nexit_code: 4\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nprofile:\n  schema: jett.profile.v1\n  mode: memory\n"
                                        "  status: complete\n"));
    ck_assert_msg(strstr(o.out, "\nerror_kind: profiler_failure\n"
                                "error: \"profiler: cannot write the capture: File too large\"\n"),
                  "%s", o.out);
    ck_assert_msg(file_is(cap, "previous"), "the previous capture was replaced");
    tu_output_free(&o);
    free(p), free(cap);
}
END_TEST

/* A device that is full from the first byte: written directly (a rename
 * would replace /dev/full), so the magic already fails, a usage error. */
START_TEST(capture_to_a_full_device)
{
    char *p = tu_program("hi.jett", hello_src);
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-capture", "/dev/full", NULL};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, plain_io, &o), 2);
    ck_assert_str_eq(
        o.err, "jett: --profile-capture: cannot write '/dev/full': No space left on device\n");
    ck_assert_str_eq(o.out, "");
    struct stat st;
    ck_assert_int_eq(stat("/dev/full", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    tu_output_free(&o);
    free(p);
}
END_TEST

/* ---- 3: closed standard descriptors ---------------------------------------- */

static void assert_no_marker(const char *path)
{
    size_t len;
    char *bytes = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_msg(!memmem(bytes, len, "MARKER", 6), "program output inside %s", path);
    free(bytes);
}

START_TEST(stdout_closed)
{
    char *p = tu_program("hi.jett", hello_src);
    char *cap = tu_tmp_path("run.jcap");
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-capture", cap, NULL};
    struct child_io io = {{INHERIT, CLOSED, INHERIT}, 0};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, io, &o), 0);
    ck_assert_ptr_nonnull(strstr(o.err, "MARKER-ERR\n"));
    assert_capture_whole(cap);
    assert_no_marker(cap);
    tu_output_free(&o);
    free(p), free(cap);
}
END_TEST

START_TEST(all_three_closed)
{
    char *p = tu_program("hi.jett", hello_src);
    char *cap = tu_tmp_path("run.jcap");
    const char *argv[] = {tu_jett, "run", p, "--profile", "--profile-capture", cap, NULL};
    struct child_io io = {{CLOSED, CLOSED, CLOSED}, 0};
    struct tu_output o;
    /* exit 4 if the output went into the daemon's stream */
    ck_assert_int_eq(run_files(argv, io, &o), 0);
    assert_capture_whole(cap);
    assert_no_marker(cap);
    tu_output_free(&o);
    free(p), free(cap);
}
END_TEST

/* `replay -` with stdin closed read its own daemon socket and hung; now
 * standard input is empty, which is a bad capture. */
START_TEST(replay_stdin_closed)
{
    const char *argv[] = {tu_jett, "profile", "replay", "-", NULL};
    struct child_io io = {{CLOSED, INHERIT, INHERIT}, 0};
    struct tu_output o;
    ck_assert_int_eq(run_files(argv, io, &o), 1);
    ck_assert_msg(strstr(o.err, "jett: -: byte 0: "), "%s", o.err);
    tu_output_free(&o);
}
END_TEST

/* ---- 4: output write errors -------------------------------------------------- */

/* argv with stdout on /dev/full: its status and stderr. */
static int to_full(const char *const argv[], struct tu_output *o)
{
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(full, 0);
    struct child_io io = {{INHERIT, full, INHERIT}, 0};
    int st = run_files(argv, io, o);
    close(full);
    return st;
}

START_TEST(outputs_to_a_full_device)
{
    char *cap = tu_build_path("fixtures/cpu-simple.jcap");
    char *cg = tu_source_path("fixtures/callgrind/example.callgrind");
    const char *replay[] = {tu_jett, "profile", "replay", cap, NULL};
    const char *replay_agent[] = {tu_jett, "profile", "replay", cap, "--agent", NULL};
    const char *profd_replay[] = {tu_profd, "replay", cap, NULL};
    const char *diff[] = {tu_jett, "profile", "diff", cap, cap, NULL};
    const char *check[] = {tu_jett, "callgrind", "check", cg, NULL};
    const char *version[] = {tu_jett, "--version", NULL};
    const char *const *cmds[] = {replay, replay_agent, profd_replay, diff, check, version};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        struct tu_output o;
        ck_assert_msg(to_full(cmds[i], &o) == 1, "%s %s: status %d", cmds[i][1], cmds[i][2],
                      o.status);
        ck_assert_msg(strstr(o.err, ": cannot write standard output: ") != NULL, "%s %s: %s",
                      cmds[i][1], cmds[i][2], o.err);
        tu_output_free(&o);
    }
    /* dump and export: of the usage class, as an unwritable -o file */
    const char *dump[] = {tu_jett, "profile", "dump", cap, NULL};
    const char *export[] = {tu_jett, "profile", "export", cap, "--format", "collapsed", NULL};
    const char *const *usage_class[] = {dump, export};
    for (size_t i = 0; i < 2; i++) {
        struct tu_output o;
        ck_assert_msg(to_full(usage_class[i], &o) == 2, "%s: status %d", usage_class[i][2],
                      o.status);
        ck_assert_msg(strstr(o.err, "jett: cannot write standard output: ") == o.err, "%s: %s",
                      usage_class[i][2], o.err);
        tu_output_free(&o);
    }
    free(cap), free(cg);
}
END_TEST

/* jett run's own output failing is its usage class, 2: the envelope, and
 * the program's output when the device is full (not a closed reader). */
START_TEST(run_output_to_a_full_device)
{
    char *p = tu_program("hi.jett", hello_src);
    const char *agent[] = {tu_jett, "run", p, "--profile", "--agent", NULL};
    const char *plain[] = {tu_jett, "run", p, NULL};
    const char *const *cmds[] = {agent, plain};
    for (size_t i = 0; i < 2; i++) {
        struct tu_output o;
        ck_assert_int_eq(to_full(cmds[i], &o), 2);
        ck_assert_msg(
            strstr(o.err, "jett: cannot write standard output: No space left on device\n"), "%s",
            o.err);
        tu_output_free(&o);
    }
    free(p);
}
END_TEST

/* ---- 5: a capture reader that stops ------------------------------------------ */

/* A FIFO capture whose reader never reads: the launcher opens it (a
 * reader exists), fills the pipe, and must give the capture up. */
struct stalled {
    char *cap, *prog, *out, *err;
    int reader;
    pid_t pid;
};

static void stalled_start(struct stalled *s, const char *src)
{
    s->prog = tu_program("prog.jett", src);
    s->cap = tu_tmp_path("cap.fifo");
    s->out = tu_tmp_path("stalled.out");
    s->err = tu_tmp_path("stalled.err");
    ck_assert_int_eq(mkfifo(s->cap, 0644), 0);
    s->reader = open(s->cap, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ck_assert_int_ge(s->reader, 0);
    ck_assert_int_lt(fcntl(s->reader, F_GETPIPE_SZ), 100 * 1024); /* less than a burst */
    const char *argv[] = {tu_jett, "run", s->prog, "--profile-memory", "--profile-capture",
                          s->cap,  NULL};
    int out = open_out(s->out), err = open_out(s->err);
    struct child_io io = {{INHERIT, out, err}, 0};
    s->pid = spawn(argv, &io);
    close(out), close(err);
}

static void stalled_free(struct stalled *s)
{
    close(s->reader);
    free(s->cap), free(s->prog), free(s->out), free(s->err);
}

START_TEST(capture_reader_stops)
{
    struct stalled s;
    stalled_start(&s, churn_src);
    unsigned took;
    ck_assert_int_eq(wait_bounded(s.pid, 40000, &took), 4);
    size_t len;
    char *err = tu_read_file(s.err, &len);
    ck_assert_msg(strstr(err, "cap.fifo': no progress for 5 s\n"), "%s", err);
    ck_assert_msg(strstr(err, "Memory profile\nmemory: ") && strstr(err, "\nstatus: complete"),
                  "no report: %s", err);
    free(err);
    ck_assert_msg(file_is(s.out, "20000\n"), "the program did not finish");
    int avail = 0;
    ck_assert_int_eq(ioctl(s.reader, FIONREAD, &avail), 0);
    ck_assert_int_gt(avail, 0); /* it did write until the pipe was full */
    stalled_free(&s);
}
END_TEST

/* ---- 7: signals while loading and while finishing ---------------------------- */

/* Whether pid has a thread named `comm` (state `state`, or any if 0). */
static bool has_thread(pid_t pid, const char *comm, char state)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
        char p[400], buf[512] = "", want[80];
        snprintf(p, sizeof p, "%s/%s/stat", dir, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
        snprintf(want, sizeof want, "(%s) ", comm);
        char *at_comm = strstr(buf, want);
        found = at_comm && (!state || at_comm[strlen(want)] == state);
    }
    if (d)
        closedir(d);
    return found;
}

static char proc_state(pid_t pid)
{
    char p[64], buf[512] = "";
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* Waits (bounded) for cond(pid, ...) to hold. */
#define WAIT_FOR(cond, what)                                                                       \
    do {                                                                                           \
        int tries_ = 0;                                                                            \
        while (!(cond)) {                                                                          \
            ck_assert_msg(tries_++ < 6000, "never: %s", what);                                     \
            pause_ms(5);                                                                           \
        }                                                                                          \
    } while (0)

/* The program file is a FIFO that never delivers a byte: loading blocks
 * in read() until the signal. */
static void interrupt_loading(int signo, bool agent)
{
    char *fifo = tu_tmp_path("slow.jett"), *cap = tu_tmp_path("run.jcap"),
         *out = tu_tmp_path("load.out");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    ck_assert_int_eq(tu_write_file(cap, "previous", 8), 0);
    const char *argv[] = {
        tu_jett, "run", fifo, "--profile", "--profile-capture", cap, agent ? "--agent" : NULL,
        NULL};
    int fo = open_out(out);
    struct child_io io = {{INHERIT, fo, INHERIT}, 0};
    pid_t pid = spawn(argv, &io);
    close(fo);
    /* a writer can open only once the loader holds the read end */
    int w = -1;
    WAIT_FOR((w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0, "the loader opened it");
    WAIT_FOR(proc_state(pid) == 'S', "the loader blocked");
    ck_assert_int_eq(kill(pid, signo), 0);
    unsigned took;
    int st = wait_bounded(pid, 10000, &took);
    close(w);
    ck_assert_int_eq(st, 128 + signo);
    ck_assert_msg(took < 1000, "the signal took %u ms", took);
    ck_assert_msg(file_is(cap, "previous"), "the previous capture was replaced");
    assert_no_partial();
    size_t len;
    char *doc = tu_read_file(out, &len);
    if (agent) {
        char want[200];
        snprintf(want, sizeof want, "\nexit_code: %d\n", 128 + signo);
        ck_assert_msg(
            strncmp(doc, "schema: jett.run.v1\nstatus: error\ntermination: not_started\n", 58) == 0,
            "%s", doc);
        ck_assert_ptr_nonnull(strstr(doc, want));
        snprintf(want, sizeof want, "\nerror_kind: interrupted\nerror: interrupted by %s\n",
                 signo == SIGINT ? "SIGINT" : "SIGTERM");
        ck_assert_msg(strstr(doc, want) && doc[len - 1] == '\n', "%s", doc);
        ck_assert_ptr_null(strstr(doc, "\nprofile:"));
    } else {
        ck_assert_uint_eq(len, 0);
    }
    free(doc);
    free(fifo), free(cap), free(out);
}

START_TEST(sigint_while_loading)
{
    interrupt_loading(SIGINT, true);
}
END_TEST

START_TEST(sigterm_while_loading)
{
    interrupt_loading(SIGTERM, false);
}
END_TEST

/* The program has returned and the daemon is stopped, so RESULT cannot
 * come: the signal ends the wait at once, and ranks above the collector
 * failure. */
static void interrupt_finishing(int signo)
{
    char *p = tu_program("nap.jett", "namespace nap\n"
                                     "fn main() {\n"
                                     "    print(\"napping\")\n"
                                     "    sleep(1500)\n"
                                     "}\n");
    char *out = tu_tmp_path("fin.out");
    const char *argv[] = {tu_jett, "run", p, "--profile-memory", "--agent", NULL};
    int fo = open_out(out);
    struct child_io io = {{INHERIT, fo, INHERIT}, 0};
    pid_t pid = spawn(argv, &io);
    close(fo);
    pid_t d = tu_child_named(pid, "jett-profd");
    ck_assert_int_gt(d, 0);
    WAIT_FOR(has_thread(pid, "jett-runtime", 'S'), "the program sleeps");
    ck_assert_int_eq(kill(d, SIGSTOP), 0);
    WAIT_FOR(proc_state(d) == 'T', "the daemon stopped");
    ck_assert_msg(has_thread(pid, "jett-runtime", 0), "the nap ended before the daemon stopped");
    WAIT_FOR(!has_thread(pid, "jett-runtime", 0), "the program returned");
    ck_assert_int_eq(kill(pid, signo), 0);
    unsigned took;
    int st = wait_bounded(pid, 70000, &took);
    kill(d, SIGKILL), kill(d, SIGCONT);
    ck_assert_int_eq(st, 128 + signo);
    ck_assert_msg(took < 1000, "the signal took %u ms", took);
    size_t len;
    char *doc = tu_read_file(out, &len);
    char want[200];
    snprintf(want, sizeof want, "\nerror_kind: interrupted\nerror: interrupted by %s\n",
             signo == SIGINT ? "SIGINT" : "SIGTERM");
    ck_assert_msg(strstr(doc, want), "%s", doc);
    ck_assert_ptr_nonnull(strstr(doc, "\ntermination: returned\n"));
    ck_assert_ptr_nonnull(strstr(doc, "\n  status: unavailable\n"));
    free(doc);
    free(p), free(out);
}

START_TEST(sigint_while_finishing)
{
    interrupt_finishing(SIGINT);
}
END_TEST

START_TEST(sigterm_while_finishing)
{
    interrupt_finishing(SIGTERM);
}
END_TEST

/* While the launcher is stalled on the capture after the program ended
 * (its last line printed, its thread gone), SIGINT ends the run at once. */
START_TEST(capture_reader_stops_then_sigint)
{
    struct stalled s;
    stalled_start(&s, burst_src);
    WAIT_FOR(file_is(s.out, "8000\n"), "the program's last line");
    WAIT_FOR(!has_thread(s.pid, "jett-runtime", 0), "the program ended");
    ck_assert_int_eq(kill(s.pid, SIGINT), 0);
    unsigned took;
    ck_assert_int_eq(wait_bounded(s.pid, 40000, &took), 130);
    ck_assert_msg(took < 1000, "SIGINT took %u ms", took);
    stalled_free(&s);
}
END_TEST

/* ---- 8: the reader of stdout goes away ----------------------------------------- */

START_TEST(stdout_reader_gone)
{
    char *p = tu_program("lines.jett", "namespace lines\n"
                                       "fn main() {\n"
                                       "    for i in 0..200000 {\n"
                                       "        print(\"line\", i)\n"
                                       "    }\n"
                                       "    eprint(\"done\")\n"
                                       "}\n");
    char *err = tu_tmp_path("pipe.err");
    int pfd[2];
    ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
    int fe = open_out(err);
    const char *argv[] = {tu_jett, "run", p, "--profile", NULL};
    struct child_io io = {{INHERIT, pfd[1], fe}, 0};
    pid_t pid = spawn(argv, &io);
    close(pfd[1]), close(fe);
    /* as `head -1`: one line, then the reader is gone */
    char c = 0;
    while (c != '\n')
        ck_assert_int_eq(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    ck_assert_int_eq(wait_bounded(pid, 60000, NULL), 0);
    size_t len;
    char *text = tu_read_file(err, &len);
    ck_assert_msg(strstr(text, "done\n") && strstr(text, "CPU profile\ntime: ") &&
                      strstr(text, "\nstatus: complete"),
                  "%s", text);
    free(text);
    free(p), free(err);
}
END_TEST

Suite *robust_e2e_suite(void)
{
    Suite *s = suite_create("robust_e2e");
    TCase *t = tcase_create("files");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_checked_fixture(t, ignore_sigpipe, NULL);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, capture_kept_on_compile_error);
    tcase_add_test(t, capture_onto_the_program_is_refused);
    tcase_add_test(t, capture_replaces_when_whole);
    tcase_add_test(t, capture_write_failure_mid_run);
    tcase_add_test(t, capture_to_a_full_device);
    tcase_add_test(t, stdout_closed);
    tcase_add_test(t, all_three_closed);
    tcase_add_test(t, replay_stdin_closed);
    tcase_add_test(t, outputs_to_a_full_device);
    tcase_add_test(t, run_output_to_a_full_device);
    suite_add_tcase(s, t);
    t = tcase_create("hangs");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_checked_fixture(t, ignore_sigpipe, NULL);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, capture_reader_stops);
    tcase_add_test(t, capture_reader_stops_then_sigint);
    tcase_add_test(t, sigint_while_loading);
    tcase_add_test(t, sigterm_while_loading);
    tcase_add_test(t, sigint_while_finishing);
    tcase_add_test(t, sigterm_while_finishing);
    tcase_add_test(t, stdout_reader_gone);
    suite_add_tcase(s, t);
    return s;
}
