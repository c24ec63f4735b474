/* testutil: running the project's binaries and finding its files in tests. */
#ifndef JETT_TESTS_TESTUTIL_H
#define JETT_TESTS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

struct tu_output {
    int status; /* exit status, or 128 + signal */
    char *out, *err;
    size_t out_len, err_len;
};

/* Runs argv[0] (a path) with `input` on stdin; captures stdout and stderr. */
int tu_run(const char *const argv[], const char *input, size_t input_len, struct tu_output *o);
void tu_output_free(struct tu_output *o);

/* $JETT_SOURCE_ROOT/rel or $JETT_BUILD_ROOT/rel in a static buffer of the
 * caller (returned pointer is malloc'd; free it). */
char *tu_source_path(const char *rel);
char *tu_build_path(const char *rel);

/* Drops LeakSanitizer's "==PID==Unable to get registers from thread TID."
 * lines from o->err: in sanitizer builds LSan sometimes prints it at exit
 * for a thread that has just been joined (a known LSan false alarm, made
 * a verbose-only report in LLVM's pull request 116555); it is not output
 * of jett.  Any other sanitizer report stays. */
void tu_drop_sanitizer_noise(struct tu_output *o);
/* Reads a whole file into a malloc'd buffer (NULL on error). */
char *tu_read_file(const char *path, size_t *len);
/* A memory profile's total `key` (the TOON line "    key: N" of doc);
 * -1 when absent or unavailable. */
long long tu_profile_total(const char *doc, const char *key);
/* The six totals the heap observer wrote (JETT_TEST_HEAP_TOTALS, a file
 * of "key N" lines), in its order. */
extern const char *const tu_heap_total_keys[6];
/* Asserts each of the six totals of doc equals the heap observer's, as
 * the file at `path` gives them. */
void tu_expect_heap_totals(const char *doc, const char *path);
/* Writes a file; 0 or -1. */
int tu_write_file(const char *path, const void *buf, size_t len);
/* A fresh temporary directory (malloc'd path). */
char *tu_tmpdir(void);
/* Removes a temporary folder and all it holds (`rm -rf`); 0 on success. */
int tu_rmtree(const char *dir);
/* Removes the file at `path`, then its folder (a tu_tmpdir holding only
 * it), and frees `path`. */
void tu_remove_in_tmpdir(char *path);
/* Capture text of n STACK lines, each a call of FUNC 0 from the one
 * before (ids 0..n-1); the length written (cap must hold it all). */
size_t tu_stack_chain(char *buf, size_t cap, unsigned n);

/* Writes `text` to DIR/NAME; returns the malloc'd path (asserts nothing:
 * NULL when the write fails). */
char *tu_write_program(const char *dir, const char *name, const char *text);

/* Starts argv in the background with its stdout in `out` and its stderr
 * discarded; returns the child's pid. */
pid_t tu_spawn(const char *const argv[], const char *out);

/* The pid of the child of `parent` whose command is `comm`, waiting up to
 * four seconds for it to appear; -1 when there is none. */
pid_t tu_child_named(pid_t parent, const char *comm);

/* Runs a profiled jett (argv) in the background with its stdout in `out`;
 * once its jett-profd exists and user code runs (the jett-runtime thread
 * exists) sends the daemon `daemon_signal`, then, once the daemon is
 * stopped (SIGSTOP) or dead, sends jett `jett_signal` (0: none).  Returns
 * jett's exit status (a stopped daemon is killed afterwards), or -1 when
 * no daemon or no runtime thread appeared. */
int tu_disturb_daemon(const char *const argv[], const char *out, int daemon_signal,
                      int jett_signal);
/* The same for a program with tasks, once its `workers` worker threads
 * all sleep: every task is blocked or sleeping. */
int tu_disturb_daemon_idle(const char *const argv[], const char *out, unsigned workers,
                           int daemon_signal, int jett_signal);

/* Waits (up to 60 s) until pid's threads jett-worker-1..N all sleep, at
 * three looks in a row; 0, or -1 on timeout. */
int tu_wait_idle_workers(pid_t pid, unsigned workers);

/* Waits (up to 60 s) until process pid has a thread named `comm` whose
 * state letter (/proc/PID/task/TID/stat) is one of `states` (NULL: any);
 * 0, or -1 on timeout. */
int tu_wait_thread(pid_t pid, const char *comm, const char *states);

/* Waits (up to 60 s) until process pid runs `comm` (has exec'd) and has
 * installed a handler for signo; 0, or -1 on timeout. */
int tu_wait_handler(pid_t pid, const char *comm, int signo);

/* Waits for `pid`: its exit status, or 128 + signal. */
int tu_wait(pid_t pid);

/* The checked fixture of the end-to-end suites: tu_e2e_setup sets the
 * built jett and jett-profd and a fresh temporary folder (asserting it
 * was made); tu_e2e_teardown removes the folder (asserting it could) and
 * frees all three. */
extern char *tu_jett, *tu_profd, *tu_dir;
void tu_e2e_setup(void);
void tu_e2e_teardown(void);
/* tu_dir/name (malloc'd). */
char *tu_tmp_path(const char *name);
/* Writes `text` to tu_dir/name, asserting it could; the malloc'd path. */
char *tu_program(const char *name, const char *text);
/* Runs `tu_jett ARGS...` (at most 16, then NULL) with nothing on stdin,
 * the outputs in *o; the exit status. */
int tu_run_jett(struct tu_output *o, ...);
int tu_run_jettv(struct tu_output *o, va_list ap);
/* The built capture fixtures/NAME.jcap (malloc'd). */
char *tu_capture_path(const char *name);

/* The gzip member `gz` inflated with zlib (malloc'd, its length in
 * *out_len); NULL unless its `len` bytes are exactly one whole member. */
unsigned char *tu_gunzip(const void *gz, size_t len, size_t *out_len);

/* How many of a capture's `len` bytes come before its last frame, its
 * FINISH (jett-capture(5): the 8-byte magic, then frames of a 4-byte
 * big-endian length and a payload): the capture cut short there. */
size_t tu_before_last_frame(const void *cap, size_t len);

#endif
