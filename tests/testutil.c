/* testutil: process and file helpers shared by the Check suites. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

static char *join(const char *env, const char *rel)
{
    const char *root = getenv(env);
    if (!root)
        root = ".";
    size_t n = strlen(root) + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", root, rel);
    return p;
}

char *tu_source_path(const char *rel)
{
    return join("JETT_SOURCE_ROOT", rel);
}

char *tu_build_path(const char *rel)
{
    return join("JETT_BUILD_ROOT", rel);
}

/* Appends to a buffer of *cap bytes, doubling it when full: growing it by
 * each chunk copies all read so far once per chunk where realloc cannot
 * remap pages (the sanitizers' allocator), quadratic in a dump of
 * hundreds of megabytes. */
static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        while (*len + n + 1 > *cap)
            *cap = *cap ? *cap * 2 : 4096;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = 0;
}

/* Pumps stdin, stdout and stderr of the child until both outputs close. */
static void pump(int in, int out, int err, const char *input, size_t input_len, struct tu_output *o)
{
    size_t sent = 0;
    struct pollfd fds[3] = {{out, POLLIN, 0}, {err, POLLIN, 0}, {in, POLLOUT, 0}};
    int open_outputs = 2;
    size_t cap[2] = {1, 1}; /* o->out and o->err start as calloc(1, 1) */
    if (input_len == 0)
        close(in), fds[2].fd = -1;
    while (open_outputs > 0) {
        if (poll(fds, 3, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            char buf[65536];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0) {
                close(fds[i].fd), fds[i].fd = -1, open_outputs--;
                continue;
            }
            if (i == 0)
                append(&o->out, &o->out_len, &cap[0], buf, (size_t)n);
            else
                append(&o->err, &o->err_len, &cap[1], buf, (size_t)n);
        }
        if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t n = write(in, input + sent, input_len - sent);
            if (n > 0)
                sent += (size_t)n;
            if (n < 0 || sent == input_len)
                close(in), fds[2].fd = -1;
        }
    }
    if (fds[2].fd >= 0)
        close(fds[2].fd);
}

int tu_run(const char *const argv[], const char *input, size_t input_len, struct tu_output *o)
{
    int pin[2], pout[2], perr[2];
    memset(o, 0, sizeof *o);
    o->out = calloc(1, 1), o->err = calloc(1, 1);
    if (pipe(pin) || pipe(pout) || pipe(perr))
        return -1;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pin[0], 0), dup2(pout[1], 1), dup2(perr[1], 2);
        close(pin[0]), close(pin[1]), close(pout[0]), close(pout[1]);
        close(perr[0]), close(perr[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pin[0]), close(pout[1]), close(perr[1]);
    pump(pin[1], pout[0], perr[0], input, input_len, o);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

void tu_output_free(struct tu_output *o)
{
    free(o->out);
    free(o->err);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    char chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0)
        append(&buf, &n, &cap, chunk, r);
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    *len = n;
    return buf;
}

void tu_drop_sanitizer_noise(struct tu_output *o)
{
    static const char noise[] = "==Unable to get registers from thread ";
    char *w = o->err;
    for (char *line = o->err; *line;) {
        char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line + 1) : strlen(line);
        char *mark = strstr(line, noise);
        bool drop = line[0] == '=' && line[1] == '=' && mark && (!eol || mark < eol) &&
                    strspn(line + 2, "0123456789") == (size_t)(mark - line - 2);
        if (!drop) {
            memmove(w, line, n);
            w += n;
        }
        line += n;
    }
    *w = 0;
    o->err_len = (size_t)(w - o->err);
}

long long tu_profile_total(const char *doc, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n    %s: ", key);
    const char *p = strstr(doc, pat);
    if (!p || strncmp(p + strlen(pat), "unavailable", 11) == 0)
        return -1;
    return atoll(p + strlen(pat));
}

const char *const tu_heap_total_keys[6] = {"allocation_count", "resize_count",    "allocated_bytes",
                                           "freed_bytes",      "peak_live_bytes", "retained_bytes"};

void tu_expect_heap_totals(const char *doc, const char *path)
{
    size_t len;
    char *heap = tu_read_file(path, &len);
    ck_assert_msg(heap != NULL, "no heap totals at %s", path);
    for (size_t i = 0; i < 6; i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "%s ", tu_heap_total_keys[i]);
        const char *h = strstr(heap, pat);
        ck_assert_msg(h != NULL, "%s: not in the heap totals", tu_heap_total_keys[i]);
        long long want = atoll(h + strlen(pat)), got = tu_profile_total(doc, tu_heap_total_keys[i]);
        ck_assert_msg(got == want, "%s: profile %lld, heap observer %lld\n%s",
                      tu_heap_total_keys[i], got, want, doc);
    }
    free(heap);
}

int tu_write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(buf, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

char *tu_tmpdir(void)
{
    char tmpl[] = "/tmp/jett-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

int tu_rmtree(const char *dir)
{
    size_t n = strlen(dir) + 16;
    char *cmd = malloc(n);
    if (!cmd)
        return -1;
    snprintf(cmd, n, "rm -rf '%s'", dir);
    int rc = system(cmd);
    free(cmd);
    return rc;
}

void tu_remove_in_tmpdir(char *path)
{
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = '\0';
        rmdir(path);
    }
    free(path);
}

char *tu_write_program(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    if (tu_write_file(path, text, strlen(text)) != 0) {
        free(path);
        return NULL;
    }
    return path;
}

pid_t tu_spawn(const char *const argv[], const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* One scan of /proc for a child of `parent` named `comm`. */
static pid_t scan_children(pid_t parent, const char *comm)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = -1;
    while (d && found < 0 && (e = readdir(d))) {
        char path[300], name[64] = "";
        int ppid = 0;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%*d (%63[^)]) %*c %d", name, &ppid) == 2 && ppid == parent &&
            strcmp(name, comm) == 0)
            found = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

pid_t tu_child_named(pid_t parent, const char *comm)
{
    for (int tries = 0; tries < 200; tries++) {
        pid_t pid = scan_children(parent, comm);
        if (pid > 0)
            return pid;
        usleep(20000);
    }
    return -1;
}

int tu_wait(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The state letter in a /proc/.../stat file (after the command's closing
 * parenthesis), 0 when the file cannot be read. */
static char stat_state(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : 0;
}

/* The state of pid's first thread named comm, 0 when there is none. */
static char thread_state(pid_t pid, const char *comm)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    char state = 0;
    for (struct dirent *e; d && !state && (e = readdir(d)) != NULL;) {
        char p[400], name[64] = "";
        snprintf(p, sizeof p, "%s/%s/comm", dir, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        bool named = fgets(name, sizeof name, f) && strcspn(name, "\n") == strlen(comm) &&
                     strncmp(name, comm, strlen(comm)) == 0;
        fclose(f);
        snprintf(p, sizeof p, "%s/%s/stat", dir, e->d_name);
        if (named)
            state = stat_state(p);
    }
    if (d)
        closedir(d);
    return state;
}

/* Polls `ready(pid, arg)` every 2 ms for up to 60 s. */
static int poll_state(bool (*ready)(pid_t, const void *), pid_t pid, const void *arg)
{
    const struct timespec pause = {0, 2 * 1000 * 1000};
    for (int tries = 0; tries < 30000; tries++) {
        if (ready(pid, arg))
            return 0;
        nanosleep(&pause, NULL);
    }
    return -1;
}

struct thread_want {
    const char *comm, *states;
};

static bool thread_ready(pid_t pid, const void *arg)
{
    const struct thread_want *w = arg;
    char state = thread_state(pid, w->comm);
    return state && (!w->states || strchr(w->states, state));
}

int tu_wait_thread(pid_t pid, const char *comm, const char *states)
{
    struct thread_want w = {comm, states};
    return poll_state(thread_ready, pid, &w);
}

/* Whether pid is stopped (T), or dead: a zombie or gone. */
static bool signal_taken(pid_t pid, const void *arg)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char state = stat_state(path);
    return *(const int *)arg == SIGSTOP ? state == 'T' || state == 't'
                                        : state == 0 || state == 'Z' || state == 'X';
}

struct handler_want {
    const char *comm;
    int signo;
};

/* Whether pid runs `comm` (it has exec'd: before that it is a copy of the
 * test, with the test's handlers) and has a handler for the signal (its
 * SigCgt mask in /proc/PID/status). */
static bool signal_caught(pid_t pid, const void *arg)
{
    const struct handler_want *w = arg;
    char path[64], line[128], name[64] = "";
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    unsigned long long mask = 0;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        if (sscanf(line, "Name: %63s", name) != 1)
            found = sscanf(line, "SigCgt: %llx", &mask) == 1;
    if (f)
        fclose(f);
    return found && strcmp(name, w->comm) == 0 && (mask >> (w->signo - 1) & 1);
}

int tu_wait_handler(pid_t pid, const char *comm, int signo)
{
    struct handler_want w = {comm, signo};
    return poll_state(signal_caught, pid, &w);
}

/* Whether the worker threads jett-worker-1..N of pid all sleep (state S)
 * at one look: *calm counts the looks in a row that said so. */
struct idle_want {
    unsigned workers;
    unsigned calm;
};

static bool workers_idle(pid_t pid, const void *arg)
{
    struct idle_want *w = (struct idle_want *)arg;
    bool idle = true;
    for (unsigned k = 1; idle && k <= w->workers; k++) {
        char name[32];
        snprintf(name, sizeof name, "jett-worker-%u", k);
        idle = thread_state(pid, name) == 'S';
    }
    w->calm = idle ? w->calm + 1 : 0;
    return w->calm >= 3;
}

int tu_wait_idle_workers(pid_t pid, unsigned workers)
{
    struct idle_want w = {workers, 0};
    return poll_state(workers_idle, pid, &w);
}

int tu_disturb_daemon(const char *const argv[], const char *out, int daemon_signal, int jett_signal)
{
    return tu_disturb_daemon_idle(argv, out, 0, daemon_signal, jett_signal);
}

int tu_disturb_daemon_idle(const char *const argv[], const char *out, unsigned workers,
                           int daemon_signal, int jett_signal)
{
    pid_t pid = tu_spawn(argv, out);
    pid_t d = tu_child_named(pid, "jett-profd");
    int ready =
        workers ? tu_wait_idle_workers(pid, workers) : tu_wait_thread(pid, "jett-runtime", NULL);
    if (d <= 0 || ready != 0) {
        kill(pid, SIGKILL);
        tu_wait(pid);
        return -1;
    }
    kill(d, daemon_signal);
    if (jett_signal) {
        poll_state(signal_taken, d, &daemon_signal);
        kill(pid, jett_signal);
    }
    int status = tu_wait(pid);
    if (daemon_signal == SIGSTOP)
        kill(d, SIGKILL), kill(d, SIGCONT);
    return status;
}

size_t tu_stack_chain(char *buf, size_t cap, unsigned n)
{
    size_t len = 0;
    for (unsigned i = 0; i < n && len < cap; i++) {
        char parent[16] = "-";
        if (i > 0)
            snprintf(parent, sizeof parent, "%u", i - 1);
        len += (size_t)snprintf(buf + len, cap - len, "STACK id=%u parent=%s func=0 site=-\n", i,
                                parent);
    }
    return len;
}

char *tu_jett, *tu_profd, *tu_dir;

void tu_e2e_setup(void)
{
    tu_jett = tu_build_path("cli/jett");
    tu_profd = tu_build_path("daemon/jett-profd");
    tu_dir = tu_tmpdir();
    ck_assert_ptr_nonnull(tu_dir);
}

void tu_e2e_teardown(void)
{
    ck_assert_int_eq(tu_rmtree(tu_dir), 0);
    free(tu_jett), free(tu_profd), free(tu_dir);
}

char *tu_tmp_path(const char *name)
{
    size_t n = strlen(tu_dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", tu_dir, name);
    return p;
}

char *tu_program(const char *name, const char *text)
{
    char *path = tu_write_program(tu_dir, name, text);
    ck_assert_ptr_nonnull(path);
    return path;
}

#define MAX_JETT_ARGS 16

int tu_run_jettv(struct tu_output *o, va_list ap)
{
    const char *argv[MAX_JETT_ARGS + 2] = {tu_jett};
    int n = 1;
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
        ck_assert_int_lt(n, MAX_JETT_ARGS);
        argv[n++] = a;
    }
    ck_assert_int_eq(tu_run(argv, NULL, 0, o), 0);
    return o->status;
}

int tu_run_jett(struct tu_output *o, ...)
{
    va_list ap;
    va_start(ap, o);
    int status = tu_run_jettv(o, ap);
    va_end(ap);
    return status;
}

char *tu_capture_path(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "fixtures/%s.jcap", name);
    return tu_build_path(rel);
}

unsigned char *tu_gunzip(const void *gz, size_t len, size_t *out_len)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)len;
    int rc = Z_MEM_ERROR;
    while (out) {
        z.next_out = out + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (rc != Z_OK)
            break;
        if (n == cap) {
            unsigned char *more = realloc(out, cap *= 2);
            if (!more)
                free(out);
            out = more;
        }
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || z.avail_in != 0) {
        free(out);
        return NULL;
    }
    *out_len = n;
    return out;
}

size_t tu_before_last_frame(const void *cap, size_t len)
{
    const unsigned char *p = cap;
    size_t at = 8, last = len;
    while (at + 4 <= len) {
        last = at;
        at += 4 +
              ((size_t)p[at] << 24 | (size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 | p[at + 3]);
    }
    ck_assert_uint_eq(at, len); /* whole frames */
    return last;
}
