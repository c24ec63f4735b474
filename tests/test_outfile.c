/* Tests of cli/outfile through the real `jett profile export` and `jett
 * profile diff --format svg`: a failed write of every format, to a full
 * device (/dev/full) and past a file size limit (RLIMIT_FSIZE, which
 * fails a write with EFBIG as a full disk fails it with ENOSPC), reads
 * `cannot write PATH: REASON`, exits 2 and leaves nothing behind; -o
 * naming a capture being read, in any spelling, is refused and the
 * capture kept. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Runs argv with stdin from `in` and stdout to `out` (NULL: /dev/null
 * for both), at most `limit` bytes a file (0: no limit); its stderr in
 * *err (malloc'd).  The exit status, or 128 + signal. */
static int run_redirected(const char *const argv[], const char *in, const char *out, rlim_t limit,
                          char **err)
{
    char *errp = tu_tmp_path("stderr.txt");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int i = open(in ? in : "/dev/null", O_RDONLY);
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        struct rlimit rl = {limit, limit};
        if (limit && setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = tu_wait(pid);
    size_t len;
    *err = tu_read_file(errp, &len);
    ck_assert_ptr_nonnull(*err);
    unlink(errp);
    free(errp);
    return status;
}

/* Packs capture text written to tu_dir/NAME.txt into tu_dir/NAME.jcap
 * (malloc'd path). */
static char *pack(const char *name, const char *text, size_t len)
{
    char txt[128];
    snprintf(txt, sizeof txt, "%s.txt", name);
    char *t = tu_tmp_path(txt);
    snprintf(txt, sizeof txt, "%s.jcap", name);
    char *cap = tu_tmp_path(txt);
    ck_assert_int_eq(tu_write_file(t, text, len), 0);
    const char *argv[] = {tu_jett, "profile", "pack", t, "-o", cap, NULL};
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_output_free(&o);
    unlink(t);
    free(t);
    return cap;
}

/* Appends printf output to a growing buffer. */
struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    if (!t->p) {
        t->cap = 1 << 16;
        t->p = malloc(t->cap);
        ck_assert_ptr_nonnull(t->p);
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap *= 2;
        t->p = realloc(t->p, t->cap);
        ck_assert_ptr_nonnull(t->p);
    }
}

/* A name with 48 hex digits that compress badly, so that the pprof export
 * is large too. */
static void add_name(struct text *t, const char *prefix, unsigned k, uint64_t *seed)
{
    add(t, "%s%04u_", prefix, k);
    for (int i = 0; i < 3; i++) {
        *seed = *seed * 6364136223846793005u + 1442695040888963407u;
        add(t, "%016llx", (unsigned long long)*seed);
    }
}

/* A CPU capture whose every export is far larger than the 64 KiB an
 * output gathers before it writes: 36 call chains 100 deep, each frame a
 * function of its own, wide enough in the flame graph to be drawn, with a
 * sample on every tenth frame. */
static char *big_cpu(void)
{
    struct text t = {0};
    uint64_t seed = 1;
    add(&t, "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "
            "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_safe_point\" "
            "capabilities=cpu_tick_source,safe_stack_capture,source_spans colour=false\n");
    for (unsigned k = 0; k < 3600; k++) {
        add(&t, "FUNC id=%u namespace=\"busy\" function=\"", k);
        add_name(&t, "f", k, &seed);
        add(&t, "\" source=- decl=-\n");
    }
    add(&t, "EVENTS\n");
    unsigned seq = 0;
    for (unsigned k = 0; k < 3600; k++) {
        if (k % 100)
            add(&t, "  STACK id=%u parent=%u func=%u site=-\n", k, k - 1, k);
        else
            add(&t, "  STACK id=%u parent=- func=%u site=-\n", k, k);
        if (k % 10 == 9)
            seq++, add(&t,
                       "  CPU_SAMPLE seq=%u tick=%u task=- actor=- thread=0 state=jett stack=%u "
                       "span=-\n",
                       seq, seq, k);
    }
    add(&t,
        "END\nFINISH termination=returned wall_ns=%u000000 cpu_ns=- requested=%u coalesced=0 "
        "dropped=0 collector_failure=false stack_limit=false\n",
        seq, seq);
    char *cap = pack("big-cpu", t.p, t.len);
    free(t.p);
    return cap;
}

/* A memory capture with a timeline of 2000 points: 2400 allocations over
 * 60 sites under main, every third freeing the one before. */
static char *big_memory(void)
{
    struct text t = {0};
    uint64_t seed = 2;
    add(&t, "HELLO version=1 mode=memory rate_hz=0 threshold_bp=500 limit=10 cpu_budget=33554432 "
            "retention_budget=67108864 stack_budget=16777216 backend=\"interpreter_alloc_hooks\" "
            "capabilities=jett_runtime_thread_registration,source_spans,"
            "jett_heap_allocation_hooks,free_and_resize_events colour=false\n"
            "FUNC id=0 namespace=\"mem\" function=\"main\" source=- decl=-\n");
    for (unsigned k = 1; k <= 60; k++) {
        add(&t, "FUNC id=%u namespace=\"mem\" function=\"", k);
        add_name(&t, "site", k, &seed);
        add(&t, "\" source=- decl=-\n");
    }
    add(&t, "EVENTS\n  STACK id=0 parent=- func=0 site=-\n");
    for (unsigned k = 1; k <= 60; k++)
        add(&t, "  STACK id=%u parent=0 func=%u site=-\n", k, k);
    unsigned seq = 0;
    for (unsigned i = 1; i <= 2400; i++) {
        add(&t,
            "  ALLOC seq=%u op=allocate id=%u old=- new=%u task=- actor=- thread=0 stack=%u "
            "span=-\n",
            ++seq, i, i % 97 + 1, 1 + i % 60);
        if (i % 3 == 0)
            add(&t,
                "  ALLOC seq=%u op=free id=%u old=%u new=- task=- actor=- thread=0 stack=%u "
                "span=-\n",
                ++seq, i - 1, (i - 1) % 97 + 1, 1 + (i - 1) % 60);
    }
    add(&t, "END\nFINISH termination=returned wall_ns=1000000 cpu_ns=900000 requested=0 "
            "coalesced=0 dropped=0 collector_failure=false stack_limit=false\n");
    char *cap = pack("big-memory", t.p, t.len);
    free(t.p);
    return cap;
}

static const char *const formats[] = {"collapsed", "svg",        "callgrind",
                                      "pprof",     "speedscope", "timeline"};
#define N_FORMATS 6

/* The command that writes `format` of the CPU or memory capture (the
 * timeline needs memory) to `out` (NULL: standard output); a diff for
 * the format "diff", NEW the capture.  argv holds 12. */
static void command(const char **argv, const char *format, const char *base, const char *cap,
                    const char *out)
{
    int n = 0;
    argv[n++] = tu_jett, argv[n++] = "profile";
    if (strcmp(format, "diff") == 0)
        argv[n++] = "diff", argv[n++] = base, argv[n++] = cap;
    else
        argv[n++] = "export", argv[n++] = cap;
    argv[n++] = "--format", argv[n++] = strcmp(format, "diff") == 0 ? "svg" : format;
    if (out)
        argv[n++] = "-o", argv[n++] = out;
    argv[n] = NULL;
}

/* The same with what it writes: exit 0 and the bytes in *len. */
static char *written(const char *format, const char *base, const char *cap, size_t *len)
{
    char *out = tu_tmp_path("whole.out");
    const char *argv[12];
    command(argv, format, base, cap, out);
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_msg(o.status == 0, "%s: %s", format, o.err);
    tu_output_free(&o);
    char *bytes = tu_read_file(out, len);
    ck_assert_ptr_nonnull(bytes);
    unlink(out);
    free(out);
    return bytes;
}

/* To /dev/full through -o and as standard output, for a small capture
 * (the write fails when the output is flushed at its end) and a large
 * one (it fails in the middle of the writer's work): exit 2 and exactly
 * the reason, nothing on standard output. */
static void expect_full(const char *format, const char *base, const char *cap)
{
    for (int as_stdout = 0; as_stdout < 2; as_stdout++) {
        const char *argv[12];
        command(argv, format, base, cap, as_stdout ? NULL : "/dev/full");
        char *err;
        int status = run_redirected(argv, NULL, as_stdout ? "/dev/full" : NULL, 0, &err);
        ck_assert_msg(status == 2, "%s %s: exit %d: %s", format, cap, status, err);
        ck_assert_str_eq(err, as_stdout
                                  ? "jett: cannot write standard output: No space left on device\n"
                                  : "jett: cannot write /dev/full: No space left on device\n");
        free(err);
    }
}

START_TEST(full_device_every_format)
{
    char *cpu = big_cpu(), *mem = big_memory();
    char *tiny_cpu = tu_capture_path("tiny-cpu"), *tiny_mem = tu_capture_path("tiny-memory");
    for (size_t i = 0; i < N_FORMATS; i++) {
        bool timeline = strcmp(formats[i], "timeline") == 0;
        expect_full(formats[i], NULL, timeline ? tiny_mem : tiny_cpu);
        expect_full(formats[i], NULL, timeline ? mem : cpu);
    }
    expect_full("diff", tiny_cpu, tiny_cpu);
    expect_full("diff", tiny_cpu, cpu);
    free(cpu), free(mem), free(tiny_cpu), free(tiny_mem);
}
END_TEST

/* The entries of a folder, "name,name,..." sorted. */
static void listing(const char *dir, char *buf, size_t cap)
{
    struct dirent **e;
    int n = scandir(dir, &e, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    buf[0] = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(e[k]->d_name, ".") && strcmp(e[k]->d_name, ".."))
            snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? "," : "", e[k]->d_name);
        free(e[k]);
    }
    free(e);
}

/* A file that can hold only half of the output, as a disk that fills up
 * would: exit 2 with the reason, the PATH that was there unchanged and
 * no temporary file left beside it. */
static void expect_too_large(const char *format, const char *base, const char *cap)
{
    size_t whole;
    free(written(format, base, cap, &whole));
    ck_assert_uint_gt(whole, 2 * 65536); /* the limit falls inside the writer's work */
    char *dir = tu_tmp_path("out"), path[600], want[700], names[600];
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/profile.%s", dir, format);
    ck_assert_int_eq(tu_write_file(path, "previous\n", 9), 0);
    const char *argv[12];
    command(argv, format, base, cap, path);
    char *err;
    int status = run_redirected(argv, NULL, NULL, whole / 2, &err);
    ck_assert_msg(status == 2, "%s: exit %d: %s", format, status, err);
    snprintf(want, sizeof want, "jett: cannot write %s: File too large\n", path);
    ck_assert_str_eq(err, want);
    size_t len;
    char *kept = tu_read_file(path, &len);
    ck_assert_str_eq(kept, "previous\n");
    listing(dir, names, sizeof names);
    snprintf(want, sizeof want, "profile.%s", format);
    ck_assert_str_eq(names, want);
    free(kept), free(err);
    unlink(path), rmdir(dir);
    free(dir);
}

START_TEST(file_size_limit_every_format)
{
    char *cpu = big_cpu(), *mem = big_memory(), *tiny = tu_capture_path("tiny-cpu");
    for (size_t i = 0; i < N_FORMATS; i++)
        expect_too_large(formats[i], NULL, strcmp(formats[i], "timeline") == 0 ? mem : cpu);
    expect_too_large("diff", tiny, cpu);
    free(cpu), free(mem), free(tiny);
}
END_TEST

/* An output that cannot even be opened: its folder is missing. */
START_TEST(missing_folder)
{
    char *cap = tu_capture_path("tiny-cpu"), *out = tu_tmp_path("no/such.svg"), want[700];
    const char *argv[12];
    command(argv, "svg", NULL, cap, out);
    struct tu_output o;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &o), 0);
    ck_assert_int_eq(o.status, 2);
    snprintf(want, sizeof want, "jett: cannot write %s: No such file or directory\n", out);
    ck_assert_str_eq(o.err, want);
    tu_output_free(&o);
    free(cap), free(out);
}
END_TEST

/* -o naming the capture being read, directly, through a symbolic link, a
 * hard link, a `./` and `..` spelling, or as the file standard input
 * reads, is a usage error for every format (a memory capture, which
 * every format takes) and for either capture of a diff; the capture
 * keeps its bytes and nothing is added beside it. */
START_TEST(output_is_the_input)
{
    char *src = tu_capture_path("tiny-memory");
    char *dir = tu_tmp_path("in"), a[600], link_[600], hard[600], dotted[600];
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    size_t len;
    char *bytes = tu_read_file(src, &len);
    snprintf(a, sizeof a, "%s/a.jcap", dir);
    snprintf(link_, sizeof link_, "%s/link.jcap", dir);
    snprintf(hard, sizeof hard, "%s/hard.jcap", dir);
    snprintf(dotted, sizeof dotted, "%s/./../in/a.jcap", dir);
    ck_assert_int_eq(tu_write_file(a, bytes, len), 0);
    ck_assert_int_eq(symlink("a.jcap", link_), 0);
    ck_assert_int_eq(link(a, hard), 0);
    /* the output's spelling, and the input's: the last reads standard
     * input, redirected from the capture */
    const char *out[] = {a, link_, hard, dotted, a};
    const char *in[] = {a, a, a, a, "-"};
    for (size_t i = 0; i <= N_FORMATS; i++)
        for (size_t k = 0; k < 5; k++)
            for (int side = 0; side < (i < N_FORMATS ? 1 : 2); side++) {
                const char *argv[12];
                char *err, want[800];
                if (i < N_FORMATS) {
                    command(argv, formats[i], NULL, in[k], out[k]);
                    snprintf(want, sizeof want,
                             "jett: profile export: -o '%s' is the capture being exported\n",
                             out[k]);
                } else {
                    command(argv, "diff", side ? src : in[k], side ? in[k] : src, out[k]);
                    snprintf(want, sizeof want,
                             "jett: profile diff: -o '%s' is %s, a capture being compared\n",
                             out[k], side ? "NEW" : "BASE");
                }
                int status = run_redirected(argv, k == 4 ? a : NULL, NULL, 0, &err);
                ck_assert_msg(status == 2, "%s -o %s: exit %d: %s",
                              i < N_FORMATS ? formats[i] : "diff", out[k], status, err);
                ck_assert_str_eq(err, want);
                free(err);
            }
    size_t now;
    char *kept = tu_read_file(a, &now);
    ck_assert(now == len && memcmp(kept, bytes, len) == 0);
    char names[600];
    listing(dir, names, sizeof names);
    ck_assert_str_eq(names, "a.jcap,hard.jcap,link.jcap");
    free(kept), free(bytes), free(src), free(dir);
}
END_TEST

Suite *outfile_suite(void)
{
    Suite *s = suite_create("outfile");
    TCase *t = tcase_create("outfile");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, full_device_every_format);
    tcase_add_test(t, file_size_limit_every_format);
    tcase_add_test(t, missing_folder);
    tcase_add_test(t, output_is_the_input);
    suite_add_tcase(s, t);
    return s;
}
