/*
 * End-to-end tests of `jett run` through the real binaries: the example
 * projects of fixtures/programs/ plain and profiled, every error class
 * with its exit status, RunOutputV1 envelopes (field order, values and
 * the reference TOON check), log sequence gaps, captures, interrupts,
 * and that no absolute path of the machine reaches any output.
 *
 * Expected outputs of the examples are fixtures/programs/NAME/expected.*
 * (computed by each project's model.py); expected texts of the small
 * programs below are worked out from their source by hand.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* The depth-0 keys every envelope starts with (DESIGN section 8). */
#define HEAD_KEYS                                                                                  \
    "schema,status,termination,exit_code,stdout,stderr,debug,logs,log_sources,"                    \
    "log_source_graph_path_segments,log_fields"

/* Writes tu_dir/rel, creating its folders. */
static void write_tmp(const char *rel, const char *text)
{
    char *p = tu_tmp_path(rel);
    for (char *s = p + strlen(tu_dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = 0;
        ck_assert(mkdir(p, 0755) == 0 || errno == EEXIST);
        *s = '/';
    }
    ck_assert_int_eq(tu_write_file(p, text, strlen(text)), 0);
    free(p);
}

/* Runs `jett ARGS...` (NULL-terminated); returns the exit status. */
static int run_jett(struct tu_output *o, ...)
{
    va_list ap;
    va_start(ap, o);
    tu_run_jettv(o, ap);
    va_end(ap);
    tu_drop_sanitizer_noise(o);
    return o->status;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

static bool contains(const struct tu_output *o, const char *needle)
{
    return strstr(o->out, needle) != NULL || strstr(o->err, needle) != NULL;
}

/* ---- envelopes ---------------------------------------------------------- */

/* The depth-0 keys of a TOON document, comma-separated (malloc'd). */
static char *top_keys(const char *doc)
{
    size_t cap = strlen(doc) + 1, n = 0;
    char *keys = calloc(1, cap);
    for (const char *line = doc; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
        if (*line == ' ' || *line == '\n')
            continue;
        size_t k = strcspn(line, ":[\n");
        if (n)
            keys[n++] = ',';
        memcpy(keys + n, line, k);
        n += k;
    }
    return keys;
}

/* The raw value text of depth-0 `key: value` (malloc'd), or NULL. */
static char *field(const char *doc, const char *key)
{
    size_t k = strlen(key);
    for (const char *line = doc; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "")
        if (strncmp(line, key, k) == 0 && line[k] == ':' && line[k + 1] == ' ') {
            const char *v = line + k + 2;
            return strndup(v, strcspn(v, "\n"));
        }
    return NULL;
}

/* A TOON string value as its text: quoted ones unescaped (malloc'd). */
static char *toon_text(const char *v)
{
    if (*v != '"')
        return strdup(v);
    char *out = malloc(strlen(v) + 1), *w = out;
    for (const char *r = v + 1; *r && *r != '"'; r++) {
        if (*r != '\\') {
            *w++ = *r;
            continue;
        }
        r++;
        *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r == 'r' ? '\r' : *r;
    }
    *w = 0;
    return out;
}

static void assert_field(const char *doc, const char *key, const char *want)
{
    char *v = field(doc, key);
    ck_assert_msg(v != NULL, "no field %s in:\n%s", key, doc);
    ck_assert_str_eq(v, want);
    free(v);
}

/* The decoded text of a string field equals want. */
static void assert_text_field(const char *doc, const char *key, const char *want)
{
    char *v = field(doc, key);
    ck_assert_msg(v != NULL, "no field %s", key);
    char *text = toon_text(v);
    ck_assert_str_eq(text, want);
    free(text), free(v);
}

static void assert_keys(const char *doc, const char *want)
{
    char *keys = top_keys(doc);
    ck_assert_str_eq(keys, want);
    free(keys);
}

/* One document plus its line end on stdout, proved canonical by the
 * reference checker (skipped without node unless CI is set). */
static void assert_canonical(const struct tu_output *o)
{
    ck_assert_msg(o->out_len > 1 && o->out[o->out_len - 1] == '\n' &&
                      o->out[o->out_len - 2] != '\n',
                  "stdout must be one document and one line end");
    char *file = tu_tmp_path("envelope.toon");
    ck_assert_int_eq(tu_write_file(file, o->out, o->out_len - 1), 0);
    char *checker = tu_source_path("tests/toon-check/toon-check");
    const char *argv[] = {checker, file, NULL};
    struct tu_output c;
    ck_assert_int_eq(tu_run(argv, NULL, 0, &c), 0);
    if (c.status == 2 && getenv("CI") == NULL) {
        fprintf(stderr, "run_e2e: toon-check unavailable, skipped: %s", c.err);
    } else {
        ck_assert_msg(c.status == 0, "not canonical:\n%s%s\n%s", c.out, c.err, o->out);
        ck_assert_ptr_nonnull(strstr(c.out, "toon-check: 1 passed, 0 failed"));
    }
    tu_output_free(&c);
    free(checker), free(file);
}

/* ---- the example projects ---------------------------------------------- */

static const char *const examples[] = {"textpipe",  "jsonish", "cache",
                                       "recursive", "sleeper", "pipeline"};
#define N_EXAMPLES (int)(sizeof examples / sizeof examples[0])

struct expected {
    char *main, *out, *err;
    size_t out_len, err_len;
    int status;
};

static char *example_file(const char *name, const char *file)
{
    char rel[256];
    snprintf(rel, sizeof rel, "fixtures/programs/%s/%s", name, file);
    return tu_source_path(rel);
}

static void expected_load(const char *name, struct expected *e)
{
    char *p;
    size_t n;
    e->main = example_file(name, "main.jett");
    p = example_file(name, "expected.stdout");
    e->out = tu_read_file(p, &e->out_len);
    ck_assert_msg(e->out != NULL, "cannot read %s", p);
    free(p);
    p = example_file(name, "expected.stderr");
    e->err = tu_read_file(p, &e->err_len);
    ck_assert_msg(e->err != NULL, "cannot read %s", p);
    free(p);
    p = example_file(name, "expected.status");
    char *st = tu_read_file(p, &n);
    ck_assert_msg(st != NULL, "cannot read %s", p);
    e->status = atoi(st);
    free(st), free(p);
}

static void expected_free(struct expected *e)
{
    free(e->main), free(e->out), free(e->err);
}

static void assert_bytes(const char *what, const char *got, size_t got_len, const char *want,
                         size_t want_len)
{
    ck_assert_msg(got_len == want_len && memcmp(got, want, want_len) == 0,
                  "%s differs:\n--- got (%zu bytes)\n%s\n--- want (%zu bytes)\n%s", what, got_len,
                  got, want_len, want);
}

/* No output names the source tree: paths are logical. */
static void assert_no_source_root(const struct tu_output *o)
{
    char *root = tu_source_path("fixtures");
    ck_assert_msg(!contains(o, root), "an absolute path leaked:\n%s\n%s", o->out, o->err);
    free(root);
}

START_TEST(example_plain)
{
    struct expected e;
    expected_load(examples[_i], &e);
    struct tu_output o;
    run_jett(&o, "run", e.main, NULL);
    ck_assert_int_eq(o.status, e.status);
    assert_bytes("stdout", o.out, o.out_len, e.out, e.out_len);
    assert_bytes("stderr", o.err, o.err_len, e.err, e.err_len);
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* Profiled: the same stdout and status; stderr is the program's own
 * stderr, then the human report. Returns the report (in o->err). */
static const char *run_profiled(struct tu_output *o, const struct expected *e, const char *mode,
                                const char *heading)
{
    run_jett(o, "run", mode, e->main, NULL);
    ck_assert_int_eq(o->status, e->status);
    assert_bytes("stdout", o->out, o->out_len, e->out, e->out_len);
    ck_assert_msg(has_prefix(o->err, o->err_len, e->err) || e->err_len == 0,
                  "stderr does not start with the program's stderr:\n%s", o->err);
    ck_assert(o->err_len >= e->err_len && memcmp(o->err, e->err, e->err_len) == 0);
    const char *report = o->err + e->err_len;
    ck_assert_msg(strncmp(report, heading, strlen(heading)) == 0, "no report heading:\n%s", report);
    assert_no_source_root(o);
    return report;
}

START_TEST(example_cpu_profile)
{
    struct expected e;
    expected_load(examples[_i], &e);
    struct tu_output o;
    const char *report = run_profiled(&o, &e, "--profile", "CPU profile\n");
    ck_assert_ptr_nonnull(strstr(report, "\nbottlenecks: "));
    if (strcmp(examples[_i], "textpipe") == 0) {
        /* The demo: under main, the tokenizer's character loop dominates. */
        const char *second = strstr(report, "\n#2 ");
        ck_assert_ptr_nonnull(second);
        ck_assert_ptr_nonnull(strstr(report, "\n#1 "));
        const char *eol = strchr(second + 1, '\n');
        char *line = strndup(second + 1, (size_t)(eol - second - 1));
        ck_assert_msg(strstr(line, "textpipe.tokenize.tokenize  src/tokenize.jett:5 (project)"),
                      "rank 2 is not the tokenizer: %s", line);
        free(line);
    }
    if (strcmp(examples[_i], "pipeline") == 0) {
        /* The concurrent demo: the scorer, task 4, runs; the tally
         * starves at its recv and the parser is held at its send. */
        const char *tasks = strstr(report, "\ntasks: 5 tasks by samples\n  task 4  ");
        ck_assert_msg(tasks != NULL, "the scorer does not lead the tasks:\n%s", report);
        const char *eol = strchr(tasks + 1, '\n');
        eol = strchr(eol + 1, '\n');
        char *line = strndup(tasks, (size_t)(eol - tasks));
        ck_assert_msg(
            strstr(line, "pipeline.score.run  src/score.jett:33  spawned at main.jett:30"), "%s",
            line);
        ck_assert_int_ge(atoi(strstr(line, "task 4  ") + 8), 50); /* of the running samples */
        free(line);
        /* the reader (2), the parser (3) and the tally (5) mostly wait */
        for (int task = 2; task <= 5; task += task == 3 ? 2 : 1) {
            char head[32];
            snprintf(head, sizeof head, "\n  task %d  ", task);
            const char *row = strstr(tasks, head);
            ck_assert_msg(row != NULL, "no row of task %d:\n%s", task, report);
            /* "P%  R sample(s) running, W waiting" */
            const char *p = strchr(row + strlen(head), ' ');
            const char *w = strstr(p, " running, ");
            ck_assert_ptr_nonnull(w);
            long running = atol(p), waiting = atol(w + strlen(" running, "));
            ck_assert_msg(waiting > running, "task %d: %ld running, %ld waiting", task, running,
                          waiting);
        }
        ck_assert_ptr_nonnull(strstr(report, "\nwaiting call sites:\n"));
    }
    if (strcmp(examples[_i], "recursive") == 0) {
        /* Samples inside the 600-frame walk keep 127 frames and a leaf. */
        const char *t = strstr(report, "\n  truncated stacks ");
        ck_assert_ptr_nonnull(t);
        ck_assert_int_gt(atoi(t + strlen("\n  truncated stacks ")), 0);
        ck_assert_ptr_nonnull(strstr(report, "  <runtime>.<truncated-stack>  "));
    }
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

START_TEST(example_memory_profile)
{
    struct expected e;
    expected_load(examples[_i], &e);
    struct tu_output o;
    run_profiled(&o, &e, "--profile-memory", "Memory profile\n");
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* --agent on an example: the envelope carries exactly its outputs. */
START_TEST(example_agent)
{
    struct expected e;
    expected_load(examples[_i], &e);
    struct tu_output o;
    run_jett(&o, "run", "--agent", e.main, NULL);
    ck_assert_int_eq(o.status, e.status);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS);
    assert_field(o.out, "status", "ok");
    assert_field(o.out, "termination", "returned");
    assert_text_field(o.out, "stdout", e.out);
    assert_text_field(o.out, "stderr", e.err);
    assert_no_source_root(&o);
    assert_canonical(&o);
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* --agent with each profiling mode: the profile follows the head, and
 * the whole document stays canonical. */
START_TEST(example_agent_profiled)
{
    static const char *const modes[] = {"--profile", "--profile-memory"};
    struct expected e;
    expected_load(examples[_i / 2], &e);
    struct tu_output o;
    run_jett(&o, "run", "--agent", modes[_i % 2], e.main, NULL);
    ck_assert_int_eq(o.status, e.status);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS ",profile");
    assert_text_field(o.out, "stdout", e.out);
    assert_text_field(o.out, "stderr", e.err);
    ck_assert_ptr_nonnull(
        strstr(o.out, _i % 2 ? "\nprofile:\n  schema: jett.profile.v1\n  mode: memory\n"
                             : "\nprofile:\n  schema: jett.profile.v1\n  mode: cpu\n"));
    if (strcmp(examples[_i / 2], "pipeline") == 0 && _i % 2 == 0) {
        /* the TOON tasks rows: the scorer first, the tally waiting */
        ck_assert_ptr_nonnull(strstr(o.out, "\n  tasks[5]{task,namespace,function,path,line,"
                                            "spawn_path,spawn_line,samples,waiting_samples}:\n"
                                            "    4,pipeline.score,run,src/score.jett,33,main.jett,"
                                            "30,"));
        static const char tally_row[] = "\n    5,pipeline.tally,run,src/tally.jett,4,main.jett,31,";
        const char *tally = strstr(o.out, tally_row);
        ck_assert_ptr_nonnull(tally);
        long samples = 0, waiting = 0;
        ck_assert_int_eq(sscanf(tally + strlen(tally_row), "%ld,%ld", &samples, &waiting), 2);
        ck_assert_msg(waiting > samples, "tally: %ld samples, %ld waiting", samples, waiting);
    }
    if (strcmp(examples[_i / 2], "pipeline") == 0 && _i % 2 == 1)
        ck_assert_ptr_nonnull(strstr(o.out, "\n  tasks[5]{task,namespace,function,path,line,"
                                            "spawn_path,spawn_line,allocated_bytes,"
                                            "retained_bytes}:\n"));
    assert_no_source_root(&o);
    assert_canonical(&o);
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* The sleeper's records: a rejected "verbose" record takes number 10. */
START_TEST(sleeper_logs_and_debug)
{
    struct expected e;
    expected_load("sleeper", &e);
    struct tu_output o;
    run_jett(&o, "run", e.main, "--agent", NULL);
    ck_assert_int_eq(o.status, 0);
    const char *want_debug =
        "debug[1]{seq,path,line,column,value}:\n"
        "  1,main.jett,24,5,\"{\\\"attempts\\\": 9, \\\"waited_ms\\\": 230}\"\n";
    ck_assert_msg(strstr(o.out, want_debug), "debug rows:\n%s", o.out);
    const char *want_logs = "logs[10]{seq,level,message,source}:\n"
                            "  1,info,job done,0\n"
                            "  2,warn,attempt failed,1\n"
                            "  3,warn,attempt failed,1\n"
                            "  4,info,job done,0\n"
                            "  5,warn,attempt failed,1\n"
                            "  6,warn,attempt failed,1\n"
                            "  7,warn,attempt failed,1\n"
                            "  8,warn,attempt failed,1\n"
                            "  9,info,job done,0\n"
                            "  11,info,all jobs done,2\n"
                            "log_sources[3]{source,path,line,column,namespace,function}:\n"
                            "  0,src/jobs.jett,18,5,sleeper.jobs,run\n"
                            "  1,src/jobs.jett,12,9,sleeper.jobs,run\n"
                            "  2,main.jett,25,5,sleeper.main,main\n"
                            "log_source_graph_path_segments[5]{source,index,segment}:\n"
                            "  0,0,sleeper.main.main\n"
                            "  0,1,sleeper.jobs.run\n"
                            "  1,0,sleeper.main.main\n"
                            "  1,1,sleeper.jobs.run\n"
                            "  2,0,sleeper.main.main\n"
                            "log_fields[26]{seq,key,value}:\n"
                            "  1,job,index\n"
                            "  1,attempts,\"1\"\n"
                            "  2,job,export\n"
                            "  2,attempt,\"1\"\n"
                            "  2,retry_in_ms,\"10\"\n";
    ck_assert_msg(strstr(o.out, want_logs), "log rows:\n%s", o.out);
    ck_assert_ptr_nonnull(
        strstr(o.out, "  9,attempts,\"5\"\n  11,jobs,\"3\"\n  11,attempts,\"9\"\n"));
    assert_canonical(&o);
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* ---- error classes ------------------------------------------------------- */

/* Several options rules, each one line naming the option, exit 2. */
START_TEST(usage_errors)
{
    char *main = example_file("textpipe", "main.jett");
    struct {
        const char *a, *b, *c, *d, *message;
    } cases[] = {
        {"--profile", "--profile-memory", NULL, NULL,
         "jett: --profile and --profile-memory cannot be used together\n"},
        {"--profile-limit", "5", NULL, NULL,
         "jett: --profile-limit needs --profile or --profile-memory\n"},
        {"--profile-memory", "--profile-rate", "100", NULL,
         "jett: --profile-rate applies to --profile only\n"},
        {"--profile", "--profile-threshold", "5.001", NULL,
         "jett: --profile-threshold expects a PERCENT from 0 to 100 with at most two decimals "
         "(e.g. 5 or 2.5), not '5.001'\n"},
        {"--profile", "--profile-limit", "0", NULL,
         "jett: --profile-limit expects a COUNT from 1 to 100, not '0'\n"},
        {"--profile", "--profile-rate", "1001", NULL,
         "jett: --profile-rate expects a rate in HZ from 1 to 1000, not '1001'\n"},
        {"--profile", "--profile", NULL, NULL, "jett: --profile is given more than once\n"},
        {"--fast", NULL, NULL, NULL, "jett: run: unknown option '--fast'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tu_output o;
        run_jett(&o, "run", main, cases[i].a, cases[i].b, cases[i].c, cases[i].d, NULL);
        ck_assert_int_eq(o.status, 2);
        ck_assert_str_eq(o.err, cases[i].message);
        ck_assert_uint_eq(o.out_len, 0); /* nothing ran */
        tu_output_free(&o);
    }
    struct tu_output o;
    run_jett(&o, "run", NULL);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: run: expected a program FILE.jett\n");
    tu_output_free(&o);
    /* A capture that cannot be written is refused before the run. */
    run_jett(&o, "run", main, "--profile", "--profile-capture", "/nonexistent/run.jcap", NULL);
    ck_assert_int_eq(o.status, 2);
    ck_assert_uint_eq(o.out_len, 0);
    ck_assert_str_eq(o.err, "jett: --profile-capture: cannot write '/nonexistent/run.jcap': No "
                            "such file or directory\n");
    tu_output_free(&o);
    free(main);
}
END_TEST

START_TEST(usage_error_envelope)
{
    char *main = example_file("textpipe", "main.jett");
    struct tu_output o;
    run_jett(&o, "run", "--agent", main, "--profile-limit", "101", "--profile", NULL);
    ck_assert_int_eq(o.status, 2);
    ck_assert_str_eq(o.err, "jett: --profile-limit expects a COUNT from 1 to 100, not '101'\n");
    assert_keys(o.out, HEAD_KEYS ",error_kind,error");
    assert_field(o.out, "status", "error");
    assert_field(o.out, "termination", "not_started");
    assert_field(o.out, "exit_code", "2");
    assert_field(o.out, "stdout", "\"\"");
    assert_field(o.out, "error_kind", "usage_error");
    assert_text_field(o.out, "error", "--profile-limit expects a COUNT from 1 to 100, not '101'");
    assert_canonical(&o);
    tu_output_free(&o);
    free(main);
}
END_TEST

static const char compile_src[] = "namespace e2e.bad\n"
                                  "\n"
                                  "fn main() {\n"
                                  "    print(\"never runs\")\n"
                                  "    let x = missing + 1\n"
                                  "    print(y)\n"
                                  "    let z: int = \"text\"\n"
                                  "}\n";

/* Every compile error, not just the first, with logical positions. */
START_TEST(compile_errors)
{
    write_tmp("bad/jett.toml", "");
    write_tmp("bad/main.jett", compile_src);
    char *main = tu_tmp_path("bad/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 3);
    ck_assert_uint_eq(o.out_len, 0);
    ck_assert_str_eq(o.err, "main.jett:5:13: error: unknown name 'missing'\n"
                            "main.jett:6:11: error: unknown name 'y'\n"
                            "main.jett:7:18: error: type mismatch: z is int but the value is "
                            "string\n");
    tu_output_free(&o);

    run_jett(&o, "run", main, "--agent", NULL);
    ck_assert_int_eq(o.status, 3);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS ",diagnostics,error_kind,error");
    assert_field(o.out, "status", "error");
    assert_field(o.out, "termination", "not_started");
    assert_field(o.out, "exit_code", "3");
    assert_field(o.out, "stdout", "\"\"");
    ck_assert_ptr_nonnull(
        strstr(o.out, "\ndiagnostics[3]{path,line,column,severity,message}:\n"
                      "  main.jett,5,13,error,unknown name 'missing'\n"
                      "  main.jett,6,11,error,unknown name 'y'\n"
                      "  main.jett,7,18,error,\"type mismatch: z is int but the value is string\"\n"
                      "error_kind: compile_error\n"));
    assert_text_field(o.out, "error", "compile error: 3 errors");
    assert_canonical(&o);
    tu_output_free(&o);
    free(main);
}
END_TEST

/* Errors in several files are all reported, in load order. */
START_TEST(compile_errors_across_files)
{
    write_tmp("two/jett.toml", "");
    write_tmp("two/main.jett", "namespace two.main\nimport two.util\n\nfn main() {\n"
                               "    util.helper(nope)\n}\n");
    write_tmp("two/src/util.jett",
              "namespace two.util\n\nfn helper(x) {\n    return x + missing\n}\n"
              "\nfn other() {\n    let a: string = 5\n}\n");
    char *main = tu_tmp_path("two/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 3);
    ck_assert_str_eq(o.err,
                     "main.jett:5:17: error: unknown name 'nope'\n"
                     "src/util.jett:4:16: error: unknown name 'missing'\n"
                     "src/util.jett:8:21: error: type mismatch: a is string but the value is "
                     "int\n");
    tu_output_free(&o);
    free(main);
}
END_TEST

static const char crash_main[] = "namespace e2e.crash\n"
                                 "import e2e.work\n"
                                 "\n"
                                 "fn main() {\n"
                                 "    print(\"started\")\n"
                                 "    eprint(\"about to divide\")\n"
                                 "    let r = work.ratio(10, 0)\n"
                                 "    print(\"unreachable\", r)\n"
                                 "}\n";
static const char crash_work[] = "namespace e2e.work\n"
                                 "\n"
                                 "fn ratio(a: int, b: int) -> int {\n"
                                 "    return scale(a) / b\n"
                                 "}\n"
                                 "\n"
                                 "fn scale(x: int) -> int {\n"
                                 "    return x * 10\n"
                                 "}\n";
#define CRASH_MESSAGE "src/work.jett:4:12: runtime error: division by zero"
#define CRASH_TRACE                                                                                \
    "  at e2e.work.ratio (src/work.jett:4:12)\n"                                                   \
    "  at e2e.crash.main (main.jett:7:13)\n"

/* An unhandled runtime error: the message, the Jett trace, exit 1. */
START_TEST(runtime_error)
{
    write_tmp("crash/jett.toml", "name = \"crash\"\n");
    write_tmp("crash/main.jett", crash_main);
    write_tmp("crash/src/work.jett", crash_work);
    char *main = tu_tmp_path("crash/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_str_eq(o.out, "started\n");
    ck_assert_str_eq(o.err, "about to divide\n" CRASH_MESSAGE "\n" CRASH_TRACE);
    tu_output_free(&o);

    run_jett(&o, "run", "--agent", main, NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS ",error_kind,error");
    assert_field(o.out, "status", "error");
    assert_field(o.out, "termination", "runtime_error");
    assert_field(o.out, "exit_code", "1");
    assert_text_field(o.out, "stdout", "started\n");
    assert_text_field(o.out, "stderr", "about to divide\n");
    assert_field(o.out, "error_kind", "runtime_error");
    assert_text_field(o.out, "error", CRASH_MESSAGE);
    assert_canonical(&o);
    tu_output_free(&o);

    /* Profiled, the error and trace come first, then the report. */
    run_jett(&o, "run", main, "--profile", NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_str_eq(o.out, "started\n");
    const char *want = "about to divide\n" CRASH_MESSAGE "\n" CRASH_TRACE "CPU profile\n";
    ck_assert_msg(has_prefix(o.err, o.err_len, want), "stderr:\n%s", o.err);
    ck_assert_ptr_nonnull(strstr(o.err, "termination: runtime_error"));
    tu_output_free(&o);
    free(main);
}
END_TEST

/* main's int is the status; outside 0..255 it is a runtime error. */
START_TEST(main_return_status)
{
    write_tmp("seven/main.jett", "namespace e2e.seven\n\nfn main() -> int {\n"
                                 "    print(\"seven\")\n    return 7\n}\n");
    write_tmp("big/main.jett", "namespace e2e.big\n\nfn main() -> int {\n    return 300\n}\n");
    char *seven = tu_tmp_path("seven/main.jett"), *big = tu_tmp_path("big/main.jett");
    struct tu_output o;
    run_jett(&o, "run", seven, NULL);
    ck_assert_int_eq(o.status, 7);
    ck_assert_str_eq(o.out, "seven\n");
    ck_assert_str_eq(o.err, "");
    tu_output_free(&o);

    run_jett(&o, "run", seven, "--agent", NULL);
    ck_assert_int_eq(o.status, 7);
    assert_keys(o.out, HEAD_KEYS);
    assert_field(o.out, "status", "ok");
    assert_field(o.out, "exit_code", "7");
    tu_output_free(&o);

    run_jett(&o, "run", big, NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_str_eq(o.out, "");
    ck_assert_str_eq(o.err, "main.jett:3:1: runtime error: main returned 300, outside 0..255\n");
    tu_output_free(&o);

    run_jett(&o, "run", "--agent", big, NULL);
    ck_assert_int_eq(o.status, 1);
    assert_keys(o.out, HEAD_KEYS ",error_kind,error");
    assert_field(o.out, "termination", "runtime_error");
    assert_field(o.out, "exit_code", "1");
    assert_text_field(o.out, "error",
                      "main.jett:3:1: runtime error: main returned 300, outside 0..255");
    assert_canonical(&o);
    tu_output_free(&o);
    free(seven), free(big);
}
END_TEST

/* The aggregator refuses a mode the launcher cannot serve: exit 4, no
 * user code runs, and the envelope carries a minimal profile. */
START_TEST(profiler_unsupported)
{
    write_tmp("hello/main.jett", "namespace e2e.hello\n\nfn main() {\n    print(\"ran\")\n}\n");
    char *main = tu_tmp_path("hello/main.jett");
    ck_assert_int_eq(setenv("JETT_TEST_WITHDRAW_CAPABILITY", "safe_stack_capture", 1), 0);
    struct tu_output o;
    run_jett(&o, "run", main, "--profile", NULL);
    ck_assert_int_eq(o.status, 4);
    ck_assert_str_eq(o.out, "");
    ck_assert_str_eq(o.err, "jett: profiler: unsupported: missing capability safe_stack_capture\n");
    tu_output_free(&o);

    run_jett(&o, "run", main, "--profile", "--agent", NULL);
    ck_assert_int_eq(o.status, 4);
    assert_keys(o.out, HEAD_KEYS ",profile,error_kind,error");
    assert_field(o.out, "termination", "not_started");
    assert_field(o.out, "exit_code", "4");
    assert_field(o.out, "stdout", "\"\"");
    ck_assert_ptr_nonnull(strstr(o.out,
                                 "\nprofile:\n  schema: jett.profile.v1\n  mode: cpu\n"
                                 "  status: unavailable\n  partial_reason: backend_unsupported\n"
                                 "  termination: not_started\n"));
    assert_field(o.out, "error_kind", "profiler_unsupported");
    assert_canonical(&o);
    tu_output_free(&o);

    /* A capability the CPU mode does not use changes nothing. */
    ck_assert_int_eq(setenv("JETT_TEST_WITHDRAW_CAPABILITY", "free_and_resize_events", 1), 0);
    run_jett(&o, "run", main, "--profile", NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.out, "ran\n");
    tu_output_free(&o);
    unsetenv("JETT_TEST_WITHDRAW_CAPABILITY");
    free(main);
}
END_TEST

/* A failed heap allocation is the runtime error "out of memory". */
START_TEST(failed_allocation)
{
    write_tmp("alloc/main.jett", "namespace e2e.alloc\n\nfn main() {\n    let parts = []\n"
                                 "    for i in 0..100 {\n        push(parts, str(i))\n    }\n"
                                 "    print(len(parts))\n}\n");
    char *main = tu_tmp_path("alloc/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.out, "100\n");
    tu_output_free(&o);
    ck_assert_int_eq(setenv("JETT_TEST_FAIL_ALLOC", "20", 1), 0);
    run_jett(&o, "run", main, NULL);
    unsetenv("JETT_TEST_FAIL_ALLOC");
    ck_assert_int_eq(o.status, 1);
    ck_assert_str_eq(o.out, "");
    ck_assert_msg(strstr(o.err, "runtime error: out of memory\n  at e2e.alloc.main (main.jett:"),
                  "stderr: %s", o.err);
    tu_output_free(&o);
    free(main);
}
END_TEST

/* ---- what the program prints cannot alter the envelope ----------------- */

#define NOISY_OUT                                                                                  \
    "profile:\n  status: error\nstatus: error\nerror_kind: injected\n"                             \
    "- item\n  - nested\n\"quoted\" and \\backslash\\ and\ttab\n"
#define NOISY_ERR                                                                                  \
    "exit_code: 99\nschema: evil\n[3]: a,b,c\r\nend\nlogs[1]{seq,level,message,source}:\n  "       \
    "1,info,x,0\n"

static const char noisy_src[] =
    "namespace e2e.noisy\n"
    "\n"
    "fn main() {\n"
    "    print(\"profile:\\n  status: error\\nstatus: error\\nerror_kind: injected\")\n"
    "    print(\"- item\\n  - nested\\n\\\"quoted\\\" and \\\\backslash\\\\ and\\ttab\")\n"
    "    eprint(\"exit_code: 99\\nschema: evil\\n[3]: a,b,c\\r\\nend\")\n"
    "    eprint(\"logs[1]{seq,level,message,source}:\\n  1,info,x,0\")\n"
    "    debug(\"status: error\\nx\")\n"
    "    log(\"info\", \"line\\nbreak: \\\"q\\\"\", {\"key: x\": \"v\\tw\"})\n"
    "}\n";

START_TEST(toon_looking_output)
{
    write_tmp("noisy/main.jett", noisy_src);
    char *main = tu_tmp_path("noisy/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.out, NOISY_OUT);
    ck_assert_str_eq(o.err, NOISY_ERR);
    tu_output_free(&o);

    run_jett(&o, "run", "--agent", main, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS);
    assert_field(o.out, "schema", "jett.run.v1");
    assert_field(o.out, "status", "ok");
    assert_field(o.out, "termination", "returned");
    assert_field(o.out, "exit_code", "0");
    assert_text_field(o.out, "stdout", NOISY_OUT);
    assert_text_field(o.out, "stderr", NOISY_ERR);
    ck_assert_ptr_nonnull(strstr(o.out, "\ndebug[1]{seq,path,line,column,value}:\n"
                                        "  1,main.jett,8,5,\"status: error\\nx\"\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nlogs[1]{seq,level,message,source}:\n"
                                        "  1,info,\"line\\nbreak: \\\"q\\\"\",0\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\nlog_fields[1]{seq,key,value}:\n"
                                        "  1,\"key: x\",\"v\\tw\"\n"));
    assert_canonical(&o);
    tu_output_free(&o);
    free(main);
}
END_TEST

/* ---- log sequence numbers ------------------------------------------------- */

static const char logs_src[] = "namespace e2e.logs\n"
                               "\n"
                               "fn main() {\n"
                               "    log(\"info\", \"first\")\n"
                               "    log(\"verbose\", \"not a level\")\n"
                               "    log(\"info\", 42)\n"
                               "    log(\"warn\", \"too long\", {\"v\": repeat(\"x\", 1025)})\n"
                               "    log(\"warn\", \"just fits\", {\"v\": repeat(\"y\", 1024)})\n"
                               "    let many = {}\n"
                               "    for i in 0..33 {\n"
                               "        many[\"k\" + str(i)] = i\n"
                               "    }\n"
                               "    log(\"error\", \"too many fields\", many)\n"
                               "    remove(many, \"k32\")\n"
                               "    log(\"error\", \"thirty-two fields\", many)\n"
                               "    log(\"debug\", \"last\")\n"
                               "}\n";

/* Rejected records (level, message type, value over 1 KiB, 33 fields)
 * are left out but consume their numbers: 2, 3, 4 and 6 are gaps. */
START_TEST(log_sequence_gaps)
{
    write_tmp("logs/main.jett", logs_src);
    char *main = tu_tmp_path("logs/main.jett");
    struct tu_output o;
    run_jett(&o, "run", main, "--agent", NULL);
    ck_assert_int_eq(o.status, 0);
    assert_keys(o.out, HEAD_KEYS);
    ck_assert_ptr_nonnull(strstr(o.out,
                                 "\nlogs[4]{seq,level,message,source}:\n"
                                 "  1,info,first,0\n"
                                 "  5,warn,just fits,1\n"
                                 "  7,error,thirty-two fields,2\n"
                                 "  8,debug,last,3\n"
                                 "log_sources[4]{source,path,line,column,namespace,function}:\n"
                                 "  0,main.jett,4,5,e2e.logs,main\n"
                                 "  1,main.jett,8,5,e2e.logs,main\n"
                                 "  2,main.jett,15,5,e2e.logs,main\n"
                                 "  3,main.jett,16,5,e2e.logs,main\n"
                                 "log_source_graph_path_segments[4]{source,index,segment}:\n"
                                 "  0,0,e2e.logs.main\n"
                                 "  1,0,e2e.logs.main\n"
                                 "  2,0,e2e.logs.main\n"
                                 "  3,0,e2e.logs.main\n"
                                 "log_fields[33]{seq,key,value}:\n"
                                 "  5,v,yyyy"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  7,k0,\"0\"\n"));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  7,k31,\"31\"\n"));
    ck_assert_ptr_null(strstr(o.out, "xxxx"));
    ck_assert_ptr_null(strstr(o.out, "k32"));
    assert_canonical(&o);
    tu_output_free(&o);
    free(main);
}
END_TEST

/* ---- interrupts ------------------------------------------------------------ */

static const char forever_src[] = "namespace e2e.forever\n"
                                  "\n"
                                  "fn main() {\n"
                                  "    print(\"ready\")\n"
                                  "    eprint(\"waiting\")\n"
                                  "    while true {\n"
                                  "        try {\n"
                                  "            sleep(20)\n"
                                  "        } catch e {\n"
                                  "            print(\"caught\", e)\n"
                                  "        }\n"
                                  "    }\n"
                                  "}\n";

/* Runs `jett run FILE [--agent]`, sends signo once main sleeps, and
 * collects the outputs (through files: the run is short). */
static void run_interrupted(const char *file, bool agent, int signo, struct tu_output *o)
{
    char *out = tu_tmp_path("sig.out"), *err = tu_tmp_path("sig.err");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1), dup2(fe, 2);
        execl(tu_jett, tu_jett, "run", file, agent ? "--agent" : NULL, (char *)NULL);
        _exit(127);
    }
    ck_assert_msg(tu_wait_thread(pid, "jett-runtime", "S") == 0,
                  "the program never reached sleep()");
    ck_assert_int_eq(kill(pid, signo), 0);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    memset(o, 0, sizeof *o);
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    o->out = tu_read_file(out, &o->out_len);
    o->err = tu_read_file(err, &o->err_len);
    ck_assert(o->out && o->err);
    tu_drop_sanitizer_noise(o);
    free(out), free(err);
}

START_TEST(interrupt_envelope)
{
    write_tmp("forever/main.jett", forever_src);
    char *main = tu_tmp_path("forever/main.jett");
    struct tu_output o;
    run_interrupted(main, true, SIGINT, &o);
    ck_assert_int_eq(o.status, 130);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS ",error_kind,error");
    assert_field(o.out, "status", "error");
    assert_field(o.out, "termination", "interrupted");
    assert_field(o.out, "exit_code", "130");
    assert_text_field(o.out, "stdout", "ready\n"); /* try cannot catch it */
    assert_text_field(o.out, "stderr", "waiting\n");
    assert_field(o.out, "error_kind", "interrupted");
    assert_text_field(o.out, "error", "interrupted by SIGINT");
    assert_canonical(&o);
    tu_output_free(&o);
    free(main);
}
END_TEST

/* Without --agent: the output so far is flushed, SIGTERM gives 143. */
START_TEST(interrupt_plain)
{
    write_tmp("forever/main.jett", forever_src);
    char *main = tu_tmp_path("forever/main.jett");
    struct tu_output o;
    run_interrupted(main, false, SIGTERM, &o);
    ck_assert_int_eq(o.status, 143);
    ck_assert_str_eq(o.out, "ready\n");
    ck_assert_str_eq(o.err, "waiting\n");
    tu_output_free(&o);
    run_interrupted(main, false, SIGINT, &o);
    ck_assert_int_eq(o.status, 130);
    ck_assert_str_eq(o.out, "ready\n");
    tu_output_free(&o);
    free(main);
}
END_TEST

/* ---- profiles in the envelope, captures -------------------------------- */

START_TEST(profile_in_envelope)
{
    struct expected e;
    expected_load("recursive", &e);
    struct tu_output o;
    run_jett(&o, "run", "--profile", "--agent", e.main, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_msg(o.err_len == 0, "stderr: %s", o.err);
    assert_keys(o.out, HEAD_KEYS ",profile");
    assert_text_field(o.out, "stdout", e.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\nprofile:\n  schema: jett.profile.v1\n  mode: cpu\n"));
    assert_canonical(&o);
    tu_output_free(&o);
    expected_free(&e);
}
END_TEST

/* --profile-capture saves the stream; `jett profile dump` reads it. */
START_TEST(capture_then_dump)
{
    struct expected e;
    expected_load("textpipe", &e);
    char *cap = tu_tmp_path("textpipe.jcap");
    struct tu_output o;
    run_jett(&o, "run", e.main, "--profile", "--profile-capture", cap, NULL);
    ck_assert_int_eq(o.status, 0);
    assert_bytes("stdout", o.out, o.out_len, e.out, e.out_len);
    tu_output_free(&o);

    run_jett(&o, "profile", "dump", cap, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_str_eq(o.err, "");
    ck_assert_msg(has_prefix(o.out, o.out_len, "HELLO version=3 mode=cpu "), "%.200s", o.out);
    ck_assert_ptr_nonnull(strstr(o.out, "\nSOURCE id=0 origin=project path=\"main.jett\" "));
    ck_assert_ptr_nonnull(strstr(o.out, " origin=project path=\"src/tokenize.jett\" "));
    ck_assert_ptr_nonnull(strstr(o.out, " origin=dependency path=\"strkit/text.jett\" "));
    ck_assert_ptr_nonnull(strstr(o.out, " origin=stdlib path=\"stdlib/math.jett\" "));
    ck_assert_ptr_nonnull(strstr(o.out, " function=\"tokenize\" "));
    ck_assert_ptr_nonnull(strstr(o.out, "\n  CPU_SAMPLE seq=1 "));
    ck_assert_ptr_nonnull(strstr(o.out, "\nFINISH termination=returned "));
    assert_no_source_root(&o);
    tu_output_free(&o);
    free(cap);
    expected_free(&e);
}
END_TEST

/* ---- no absolute path in any output ---------------------------------------- */

static const char leak_main[] = "namespace leak.main\n"
                                "import leak.util\n"
                                "\n"
                                "fn main() {\n"
                                "    debug(util.double(21))\n"
                                "    log(\"info\", \"start\", {\"n\": 1})\n"
                                "    util.explode()\n"
                                "}\n";
static const char leak_util[] = "namespace leak.util\n"
                                "\n"
                                "fn double(x: int) -> int {\n"
                                "    return x * 2\n"
                                "}\n"
                                "\n"
                                "fn explode() {\n"
                                "    let m = {}\n"
                                "    print(m[\"nothing\"])\n"
                                "}\n";

static void assert_no_tmp(const struct tu_output *o, const char *mode)
{
    ck_assert_msg(!contains(o, tu_dir) && !contains(o, "jett-test-"),
                  "%s: the temporary folder leaked:\n%s\n%s", mode, o->out, o->err);
}

START_TEST(no_absolute_paths)
{
    write_tmp("proj/jett.toml", "name = \"leak\"\n");
    write_tmp("proj/main.jett", leak_main);
    write_tmp("proj/src/util.jett", leak_util);
    write_tmp("proj/bad.jett", compile_src);
    write_tmp("elsewhere/.keep", "");
    char *main = tu_tmp_path("proj/main.jett"), *bad = tu_tmp_path("proj/bad.jett");
    char *cap = tu_tmp_path("proj.jcap"), *elsewhere = tu_tmp_path("elsewhere");
    ck_assert_int_eq(chdir(elsewhere), 0);
    struct tu_output o;
    const char *modes[] = {"--agent", "--profile", "--profile-memory", NULL};
    run_jett(&o, "run", main, NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.err, "src/util.jett:9:11: runtime error: missing map key "
                                        "\"nothing\"\n  at leak.util.explode (src/util.jett:9:11)\n"
                                        "  at leak.main.main (main.jett:7:5)\n"));
    assert_no_tmp(&o, "plain");
    tu_output_free(&o);
    for (int i = 0; modes[i]; i++) {
        run_jett(&o, "run", main, modes[i], NULL);
        ck_assert_int_eq(o.status, 1);
        assert_no_tmp(&o, modes[i]);
        tu_output_free(&o);
    }
    run_jett(&o, "run", "--agent", "--profile", main, NULL);
    ck_assert_int_eq(o.status, 1);
    ck_assert_ptr_nonnull(strstr(o.out, "  1,main.jett,5,5,\"42\"\n"));
    assert_no_tmp(&o, "--agent --profile");
    tu_output_free(&o);
    run_jett(&o, "run", bad, "--agent", NULL);
    ck_assert_int_eq(o.status, 3);
    ck_assert_ptr_nonnull(strstr(o.out, "  bad.jett,5,13,error,"));
    assert_no_tmp(&o, "compile error");
    tu_output_free(&o);
    run_jett(&o, "run", main, "--profile", "--profile-capture", cap, NULL);
    tu_output_free(&o);
    run_jett(&o, "profile", "dump", cap, NULL);
    ck_assert_int_eq(o.status, 0);
    ck_assert_ptr_nonnull(strstr(o.out, " path=\"src/util.jett\" "));
    assert_no_tmp(&o, "capture");
    tu_output_free(&o);
    free(main), free(bad), free(cap), free(elsewhere);
}
END_TEST

Suite *run_e2e_suite(void)
{
    Suite *s = suite_create("run_e2e");
    TCase *t = tcase_create("examples");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_loop_test(t, example_plain, 0, N_EXAMPLES);
    tcase_add_loop_test(t, example_cpu_profile, 0, N_EXAMPLES);
    tcase_add_loop_test(t, example_memory_profile, 0, N_EXAMPLES);
    tcase_add_loop_test(t, example_agent, 0, N_EXAMPLES);
    tcase_add_loop_test(t, example_agent_profiled, 0, 2 * N_EXAMPLES);
    tcase_add_test(t, sleeper_logs_and_debug);
    suite_add_tcase(s, t);

    t = tcase_create("errors");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, usage_errors);
    tcase_add_test(t, usage_error_envelope);
    tcase_add_test(t, compile_errors);
    tcase_add_test(t, compile_errors_across_files);
    tcase_add_test(t, runtime_error);
    tcase_add_test(t, main_return_status);
    tcase_add_test(t, profiler_unsupported);
    tcase_add_test(t, failed_allocation);
    suite_add_tcase(s, t);

    t = tcase_create("envelope");
    tcase_add_checked_fixture(t, tu_e2e_setup, tu_e2e_teardown);
    tcase_add_test(t, toon_looking_output);
    tcase_add_test(t, log_sequence_gaps);
    tcase_add_test(t, interrupt_envelope);
    tcase_add_test(t, interrupt_plain);
    tcase_add_test(t, profile_in_envelope);
    tcase_add_test(t, capture_then_dump);
    tcase_add_test(t, no_absolute_paths);
    suite_add_tcase(s, t);
    return s;
}
