/* Callgrind limits: every limit at exactly N (accepted) and N+1 (Resource),
 * and normalizing while parsing across its flushes (every input here is
 * also checked to give the same text or error in one pass). */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/callgrind_util.h"

/* A growable text buffer for building large inputs. */
struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_(struct text *t, const char *s)
{
    put(t, s, strlen(s));
}

static void putf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct text *t, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    put(t, b, (size_t)n);
}

static void repeat(struct text *t, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(t, &c, 1);
}

static void accepted(const struct text *t)
{
    struct cg_error err;
    cgt_same_in_one_pass(t->p, t->len);
    struct cg_model *m = cg_parse(t->p, t->len, NULL, &err);
    ck_assert_msg(m != NULL, "rejected at %llu: %s", (unsigned long long)err.line, err.message);
    cg_model_free(m);
}

/* Comment lines up to `units` in total after "events: A\n". */
static void fill_input(struct text *t, size_t units)
{
    puts_(t, "events: A\n");
    while (t->len + 65536 <= units) {
        puts_(t, "#");
        repeat(t, 'x', 65534);
        puts_(t, "\n");
    }
    puts_(t, "#");
    repeat(t, 'x', units - t->len);
}

START_TEST(input_units)
{
    struct text t = {0};
    fill_input(&t, CG_MAX_INPUT_UNITS);
    accepted(&t);
    /* a character above U+FFFF is 4 bytes but 2 units: still exactly N */
    t.len -= 2;
    puts_(&t, "\xf0\x9f\x98\x80");
    ck_assert_uint_eq(t.len, CG_MAX_INPUT_UNITS + 2);
    accepted(&t);
    puts_(&t, "x");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 0, "input exceeds");
    free(t.p);
}
END_TEST

START_TEST(line_units)
{
    struct text t = {0};
    puts_(&t, "events: A\n#");
    repeat(&t, 'x', CG_MAX_LINE_UNITS - 1);
    puts_(&t, "\nfn=f\n1 1\n");
    accepted(&t);
    t.len = 0;
    puts_(&t, "events: A\n#");
    for (size_t i = 0; i < (CG_MAX_LINE_UNITS - 2) / 2; i++)
        puts_(&t, "\xf0\x9f\x98\x80");
    puts_(&t, "x\n");
    accepted(&t); /* 1 + (N - 2) + 1 units in about 2N bytes */
    t.len -= 1;
    puts_(&t, "y\n");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 2, "line exceeds");
    free(t.p);
}
END_TEST

START_TEST(parts)
{
    struct text t = {0};
    for (unsigned i = 1; i <= CG_MAX_PARTS; i++)
        putf(&t, "part: %u\nevents: A\n", i);
    accepted(&t);
    putf(&t, "part: %u\nevents: A\n", CG_MAX_PARTS + 1);
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 2 * CG_MAX_PARTS + 1, "parts");
    free(t.p);
}
END_TEST

START_TEST(records)
{
    struct text t = {0};
    puts_(&t, "events: A\nfn=f\n");
    for (unsigned i = 0; i < CG_MAX_RECORDS; i++)
        puts_(&t, "1 1\n");
    accepted(&t);
    /* the normal form of the largest model reads back the same */
    struct cg_model *m = cgt_parse_ok(t.p);
    cgt_round_trip(m);
    cg_model_free(m);
    puts_(&t, "1 1\n");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 2 + CG_MAX_RECORDS + 1, "records");
    free(t.p);
}
END_TEST

START_TEST(headers_per_part)
{
    struct text t = {0};
    puts_(&t, "events: A\n");
    for (unsigned i = 1; i < CG_MAX_HEADERS; i++)
        puts_(&t, "desc: x\n");
    accepted(&t);
    puts_(&t, "desc: x\n");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, CG_MAX_HEADERS + 1, "headers");
    free(t.p);
}
END_TEST

START_TEST(events)
{
    struct text t = {0};
    puts_(&t, "events:");
    for (unsigned i = 0; i < CG_MAX_EVENTS; i++)
        putf(&t, " E%u", i);
    struct text u = t;
    u.p = strdup(t.p);
    u.cap = u.len + 1;
    puts_(&t, "\n");
    accepted(&t);
    puts_(&u, " E64\n");
    cgt_parse_err(u.p, u.len, CG_RESOURCE, 1, "events");
    free(t.p);
    free(u.p);
}
END_TEST

START_TEST(ids_per_namespace)
{
    struct text t = {0};
    puts_(&t, "events: A\n");
    for (unsigned i = 1; i <= CG_MAX_IDS; i++)
        putf(&t, "fn=(%u) f\n", i);
    puts_(&t, "fn=(1) g\nob=(1) o\nfl=(1) a\n"); /* redefinition and other namespaces */
    accepted(&t);
    putf(&t, "fn=(%u) f\n", CG_MAX_IDS + 1);
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 1 + CG_MAX_IDS + 3 + 1, "IDs");
    free(t.p);
}
END_TEST

START_TEST(digits)
{
    cgt_expect_records("events: A\nfn=f\n00000000000000000001 0x0000000000000000000f\n",
                       "cost - - f | 1 | 15\n");
    const char *dec = "events: A\nfn=f\n000000000000000000001 1\n";
    const char *hex = "events: A\nfn=f\n1 0x00000000000000000000f\n";
    cgt_parse_err(dec, strlen(dec), CG_RESOURCE, 3, "digits");
    cgt_parse_err(hex, strlen(hex), CG_RESOURCE, 3, "digits");
}
END_TEST

/* Cost records of 1024 units each: 32 + 950-unit name + 21 x 2 columns. */
START_TEST(expansion_budget_costs)
{
    struct text t = {0};
    size_t n = CG_EXPANSION_BUDGET / 1024;
    puts_(&t, "events: A\nfn=(1) ");
    repeat(&t, 'f', 950);
    puts_(&t, "\n");
    for (size_t i = 0; i < n; i++)
        puts_(&t, "1 1\n");
    accepted(&t);
    t.len -= 4;
    puts_(&t, "fn=(2) ");
    repeat(&t, 'g', 951);
    puts_(&t, "\n1 1\n");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 2 + n + 1, "expansion budget");
    free(t.p);
}
END_TEST

/* Call records of 1024 units: 32 + 2 x 454-unit names + 21 x 4 columns. */
START_TEST(expansion_budget_calls)
{
    struct text t = {0};
    size_t n = CG_EXPANSION_BUDGET / 1024;
    puts_(&t, "events: A\nfn=(1) ");
    repeat(&t, 'f', 454);
    puts_(&t, "\ncfn=(1)\n");
    for (size_t i = 0; i < n; i++)
        puts_(&t, "calls=1 1\n1 1\n");
    accepted(&t);
    t.len -= 14;
    puts_(&t, "cfn=(2) ");
    repeat(&t, 'g', 455);
    puts_(&t, "\ncalls=1 1\n1 1\n");
    cgt_parse_err(t.p, t.len, CG_RESOURCE, 3 + 2 * n + 1, "expansion budget");
    free(t.p);
}
END_TEST

/* Normalizes t: returns 0 with the output length, or -1 with *err. */
static int normalize_text(const struct text *t, size_t *out_len, struct cg_error *err)
{
    cgt_same_in_one_pass(t->p, t->len);
    struct cg_model *m = cg_parse(t->p, t->len, NULL, err);
    ck_assert_msg(m != NULL, "rejected at %llu: %s", (unsigned long long)err->line, err->message);
    char *out = NULL;
    int rc = cg_normalize(m, &out, out_len, err);
    free(out);
    cg_model_free(m);
    return rc;
}

/* Output = "# callgrind format\n" "part: 1\n" "events: A\n" + the desc lines,
 * 37 bytes more than the input's own "events: A\n" + desc lines. */
START_TEST(normalize_budget)
{
    struct text t = {0};
    puts_(&t, "events: A\n");
    for (int i = 0; i < 16; i++) {
        puts_(&t, "desc: ");
        repeat(&t, 'd', 1000000 - 7);
        puts_(&t, "\n");
    }
    size_t rest = CG_NORMALIZE_BUDGET - 37 - 16000000;
    puts_(&t, "desc: ");
    repeat(&t, 'e', rest - 7);
    puts_(&t, "\n");
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(normalize_text(&t, &len, &err), 0);
    ck_assert_uint_eq(len, CG_NORMALIZE_BUDGET);
    t.len -= 1;
    puts_(&t, "e\n");
    ck_assert_int_eq(normalize_text(&t, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_RESOURCE);
    ck_assert_uint_eq(err.line, 0);
    free(t.p);
}
END_TEST

/* Normalizing while parsing prints complete function runs every 4,096
 * records and drops them: calls and runs across flush points, a run
 * longer than the window, an object set after unset records (the
 * normalizer looks ahead for a callee), totals in the middle of a part,
 * an empty part and several parts all give the text of the two steps. */
START_TEST(one_pass_across_flushes)
{
    struct text t = {0};
    puts_(&t, "version: 1\ncreator: test\nevents: A B\n");
    for (int f = 0; f < 3000; f++) {
        if (f == 10)
            puts_(&t, "ob=objects/main\n");
        putf(&t, "fl=src/f%d.c\nfn=f%d\n%d 1 2\n+1 3\n", f % 7, f, f + 1);
        if (f % 3 == 0)
            putf(&t, "cfn=f%d\ncalls=2 %d\n* 4 5\n", f + 1, f + 2);
        putf(&t, "-1 6\n");
    }
    puts_(&t, "fn=long\n");
    for (int i = 0; i < 10000; i++)
        putf(&t, "%d %d\n", i + 1, i % 5);
    puts_(&t, "totals: 5 6\nfn=after\n1 1\n");
    for (int f = 0; f < 5000; f++)
        putf(&t, "fn=g%d\n%d 1\n", f, f + 1);
    puts_(&t, "part: 2\nevents: A\npart: 3\nevents: A\n");
    for (int f = 0; f < 9000; f++)
        putf(&t, "fn=h%d\n%d 2\n%s", f % 50, f + 1,
             f % 4096 == 4095 ? "cfn=h1\ncalls=1 1\n7 3\n" : "");
    puts_(&t, "1 1\n");
    accepted(&t);
    free(t.p);
}
END_TEST

/* The first flush passes the normalization budget (the headers nearly
 * fill it, and each fn= line grows by its "(N) "); a later line is
 * malformed: the parse error wins, as after a whole parse.  Without that
 * line, the budget error is reported. */
START_TEST(one_pass_error_order)
{
    struct text recs = {0}, t = {0};
    for (int f = 0; f < 5000; f++)
        putf(&recs, "fn=f%d\n1 1\n", f); /* printed as fn=(N) fN: longer */
    puts_(&t, "events: A\n");
    size_t descs = CG_MAX_INPUT_UNITS - 1000 - recs.len - t.len;
    while (descs > 0) {
        size_t n = descs < 1000000 ? descs : 1000000;
        puts_(&t, "desc: ");
        repeat(&t, 'd', n - 7);
        puts_(&t, "\n");
        descs -= n;
    }
    put(&t, recs.p, recs.len);
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(normalize_text(&t, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_RESOURCE);
    ck_assert_uint_eq(err.line, 0);
    size_t lines = 1;
    for (size_t i = 0; i < t.len; i++)
        lines += t.p[i] == '\n';
    puts_(&t, "fn=last\n1 1 1\n"); /* one column too many */
    cgt_parse_err(t.p, t.len, CG_SYNTAX, lines + 1, NULL);
    free(t.p);
    free(recs.p);
}
END_TEST

/* A synthesized part: must not push a part past the header limit. */
START_TEST(normalize_header_limit)
{
    struct text t = {0};
    puts_(&t, "part: 1\nevents: A\n");
    for (unsigned i = 2; i < CG_MAX_HEADERS; i++)
        puts_(&t, "desc: x\n");
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(normalize_text(&t, &len, &err), 0);
    memcpy(t.p, "desc: 1", 7); /* the same count without a part: header */
    ck_assert_int_eq(normalize_text(&t, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_RESOURCE);
    ck_assert_ptr_nonnull(strstr(err.message, "headers"));
    free(t.p);
}
END_TEST

/* A name that fits a line as fn=NAME but not as fn=(1) NAME. */
START_TEST(normalize_line_limit)
{
    struct text t = {0};
    puts_(&t, "events: A\nfn=");
    repeat(&t, 'n', CG_MAX_LINE_UNITS - 3);
    puts_(&t, "\n1 1\n");
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(normalize_text(&t, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_RESOURCE);
    ck_assert_ptr_nonnull(strstr(err.message, "line"));
    t.len = 0;
    puts_(&t, "events: A\nfn=");
    repeat(&t, 'n', CG_MAX_LINE_UNITS - 7);
    puts_(&t, "\n1 1\n");
    ck_assert_int_eq(normalize_text(&t, &len, &err), 0);
    free(t.p);
}
END_TEST

/* Writes n bytes (pattern c, with `head` at the start) to a fresh file. */
static const char *write_file(char path[CGT_PATH], const char *name, const char *head, char c,
                              size_t n)
{
    cgt_build(path, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    size_t h = strlen(head);
    fwrite(head, 1, h, f);
    for (size_t i = h; i < n; i++)
        fputc(c, f);
    fclose(f);
    return path;
}

START_TEST(file_size_limit)
{
    char *buf;
    size_t len;
    struct cg_error err;
    char buf_path[CGT_PATH];
    const char *path = write_file(buf_path, "tests/cg-limit.bin", "#", 'x', CG_FILE_MAX_BYTES);
    ck_assert_int_eq(cg_read_file(path, &buf, &len, &err), CG_READ_OK);
    ck_assert_uint_eq(len, CG_FILE_MAX_BYTES);
    free(buf);
    /* one byte more: refused by size, before decoding (the bad UTF-8 at
     * the start is never reported) */
    path = write_file(buf_path, "tests/cg-limit.bin", "\xff", 'x', CG_FILE_MAX_BYTES + 1);
    ck_assert_int_eq(cg_read_file(path, &buf, &len, &err), CG_READ_REJECTED);
    ck_assert_int_eq(err.kind, CG_RESOURCE);
    ck_assert_uint_eq(err.line, 0);
    unlink(path);
}
END_TEST

/* A file whose size check passes but which yields more: /proc/self/pagemap
 * is a regular file of size 0 that reads as gigabytes.  Reading must stop
 * at the limit plus one byte; pagemap refuses that last 1-byte read (it
 * reads in 8-byte units), so the outcome is a refusal either way, never a
 * buffer of gigabytes. */
START_TEST(file_growing_past_size_check)
{
    struct stat st;
    if (stat("/proc/self/pagemap", &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
        ck_abort_msg("this test needs /proc/self/pagemap");
    char *buf;
    size_t len;
    struct cg_error err;
    enum cg_read_status rs = cg_read_file("/proc/self/pagemap", &buf, &len, &err);
    ck_assert_int_ne(rs, CG_READ_OK);
    ck_assert(rs == CG_READ_UNREADABLE || (err.kind == CG_RESOURCE && err.line == 0));
    ck_assert(err.message[0] != '\0');
}
END_TEST

START_TEST(file_kinds_refused)
{
    char *buf;
    size_t len;
    struct cg_error err;
    char fifo[CGT_PATH], p[CGT_PATH];
    cgt_build(fifo, "tests/cg-fifo");
    unlink(fifo);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(cg_read_file(fifo, &buf, &len, &err), CG_READ_UNREADABLE);
    unlink(fifo);
    ck_assert_int_eq(cg_read_file(cgt_build(p, "tests"), &buf, &len, &err), CG_READ_UNREADABLE);
    ck_assert_int_eq(cg_read_file("/dev/null", &buf, &len, &err), CG_READ_UNREADABLE);
    ck_assert_int_eq(cg_read_file(cgt_build(p, "tests/no-such-file"), &buf, &len, &err),
                     CG_READ_UNREADABLE);
}
END_TEST

/* UTF-8 sequences cut by the 64 KiB chunk boundary, and bad ones after it. */
START_TEST(file_utf8_across_chunks)
{
    struct text t = {0};
    puts_(&t, "events: A\nfn=");
    repeat(&t, 'a', CG_FILE_CHUNK - t.len - 1);
    puts_(&t, "\xf0\x9f\x98\x80\n1 1\n"); /* bytes 65535..65538 */
    char path[CGT_PATH];
    cgt_build(path, "tests/cg-chunks.txt");
    FILE *f = fopen(path, "wb");
    fwrite(t.p, 1, t.len, f);
    fclose(f);
    char *buf;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_read_file(path, &buf, &len, &err), CG_READ_OK);
    ck_assert_uint_eq(len, t.len);
    ck_assert_int_eq(memcmp(buf, t.p, len), 0);
    free(buf);
    f = fopen(path, "wb");
    fwrite(t.p, 1, t.len, f);
    fwrite("\n\xe2\x82", 1, 3, f); /* truncated at the end */
    fclose(f);
    ck_assert_int_eq(cg_read_file(path, &buf, &len, &err), CG_READ_REJECTED);
    ck_assert_int_eq(err.kind, CG_SYNTAX);
    ck_assert_uint_eq(err.line, 5);
    f = fopen(path, "wb");
    fwrite(t.p, 1, t.len, f);
    fwrite("\xc3\x28\n", 1, 3, f); /* malformed in the second chunk */
    fclose(f);
    ck_assert_int_eq(cg_read_file(path, &buf, &len, &err), CG_READ_REJECTED);
    ck_assert_int_eq(err.kind, CG_SYNTAX);
    ck_assert_uint_eq(err.line, 4);
    unlink(path);
    free(t.p);
}
END_TEST

Suite *callgrind_limits_suite(void)
{
    Suite *s = suite_create("callgrind_limits");
    TCase *t = tcase_create("parse");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, input_units);
    tcase_add_test(t, line_units);
    tcase_add_test(t, parts);
    tcase_add_test(t, records);
    tcase_add_test(t, headers_per_part);
    tcase_add_test(t, events);
    tcase_add_test(t, ids_per_namespace);
    tcase_add_test(t, digits);
    tcase_add_test(t, expansion_budget_costs);
    tcase_add_test(t, expansion_budget_calls);
    suite_add_tcase(s, t);
    t = tcase_create("normalize");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, normalize_budget);
    tcase_add_test(t, normalize_header_limit);
    tcase_add_test(t, normalize_line_limit);
    tcase_add_test(t, one_pass_across_flushes);
    tcase_add_test(t, one_pass_error_order);
    suite_add_tcase(s, t);
    t = tcase_create("file");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, file_size_limit);
    tcase_add_test(t, file_growing_past_size_check);
    tcase_add_test(t, file_kinds_refused);
    tcase_add_test(t, file_utf8_across_chunks);
    suite_add_tcase(s, t);
    return s;
}
