/* Helpers shared by the callgrind suites. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/callgrind/callgrind-internal.h"
#include "tests/callgrind_util.h"

/* One pass with a window of `window` records against the two steps. */
static void same_with_window(const char *text, size_t len, size_t window, int rc1, const char *out1,
                             size_t len1, const struct cg_error *e1)
{
    struct cg_error e2;
    char *out2 = NULL;
    size_t len2 = 0;
    int rc2 = cg_parse_normalize_every(text, len, false, NULL, window, &out2, &len2, &e2);
    ck_assert_msg(rc1 == rc2, "window %zu: two steps: %d (%s), one pass: %d (%s)", window, rc1,
                  rc1 ? e1->message : "", rc2, rc2 ? e2.message : "");
    if (rc1 == 0) {
        ck_assert_msg(len1 == len2 && memcmp(out1, out2, len1) == 0,
                      "window %zu: one pass printed other text (%zu bytes, %zu in two steps)",
                      window, len2, len1);
    } else {
        ck_assert_msg(e1->kind == e2.kind && e1->line == e2.line,
                      "window %zu: errors differ: %s %llu, %s %llu", window,
                      cg_status_name(e1->kind), (unsigned long long)e1->line,
                      cg_status_name(e2.kind), (unsigned long long)e2.line);
        ck_assert_str_eq(e1->message, e2.message);
    }
    free(out2);
}

void cgt_same_in_one_pass(const char *text, size_t len)
{
    struct cg_error e1;
    char *out1 = NULL;
    size_t len1 = 0;
    struct cg_model *m = cg_parse(text, len, NULL, &e1);
    int rc1 = m ? cg_normalize(m, &out1, &len1, &e1) : -1;
    cg_model_free(m);
    /* the default window, and flushes after every one or three records */
    static const size_t windows[] = {4096, 1, 3};
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++)
        same_with_window(text, len, windows[i], rc1, out1, len1, &e1);
    free(out1);
}

struct cg_model *cgt_parse_ok(const char *text)
{
    struct cg_error err;
    cgt_same_in_one_pass(text, strlen(text));
    struct cg_model *m = cg_parse(text, strlen(text), NULL, &err);
    ck_assert_msg(m != NULL, "rejected at line %llu: %s: %s", (unsigned long long)err.line,
                  cg_status_name(err.kind), err.message);
    return m;
}

void cgt_parse_err(const char *text, size_t len, enum cg_status kind, uint64_t line,
                   const char *needle)
{
    struct cg_error err;
    cgt_same_in_one_pass(text, len);
    struct cg_model *m = cg_parse(text, len, NULL, &err);
    ck_assert_msg(m == NULL, "accepted input that must be rejected");
    ck_assert_msg(err.kind == kind && err.line == line, "got %s at line %llu (%s), want %s at %llu",
                  cg_status_name(err.kind), (unsigned long long)err.line, err.message,
                  cg_status_name(kind), (unsigned long long)line);
    if (needle)
        ck_assert_msg(strstr(err.message, needle), "message '%s' lacks '%s'", err.message, needle);
}

static const char *nm(const struct cg_model *m, enum cg_ns ns, uint32_t id)
{
    return id == CG_NONE ? "-" : m->names[ns][id].ptr;
}

/* Appends printf output to a growing string. */
static void cat(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = realloc(*s, *len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)n;
}

static void cat_values(char **s, size_t *len, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cat(s, len, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
}

char *cgt_render(const struct cg_model *m)
{
    char *s = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < m->nparts; i++) {
        const struct cg_part *p = &m->parts[i];
        for (size_t k = 0; k < p->nrecords; k++) {
            const struct cg_record *r = &m->records[p->first_record + k];
            const uint64_t *v = m->values + r->values;
            const struct cg_call *c = cg_record_call(m, r);
            cat(&s, &len, "%s %s %s %s", c ? "call" : "cost", nm(m, CG_NS_OBJECT, r->ob),
                nm(m, CG_NS_FILE, r->fl), nm(m, CG_NS_FUNCTION, r->fn));
            if (r->fn_fl != r->fl)
                cat(&s, &len, "[%s]", nm(m, CG_NS_FILE, r->fn_fl));
            if (c) {
                cat(&s, &len, " -> %s %s %s x%llu @", nm(m, CG_NS_OBJECT, c->cob),
                    nm(m, CG_NS_FILE, c->cfl), nm(m, CG_NS_FUNCTION, c->cfn),
                    (unsigned long long)c->count);
                cat_values(&s, &len, v, p->npos);
                v += p->npos;
            }
            cat(&s, &len, " | ");
            cat_values(&s, &len, v, p->npos);
            cat(&s, &len, " | ");
            cat_values(&s, &len, v + p->npos, p->nevents);
            cat(&s, &len, "\n");
        }
    }
    return s;
}

void cgt_round_trip(const struct cg_model *m)
{
    char *a = NULL, *b = NULL, why[256] = "";
    size_t alen, blen;
    struct cg_error err;
    ck_assert_msg(cg_normalize(m, &a, &alen, &err) == 0, "normalize: %s", err.message);
    struct cg_model *m2 = cg_parse(a, alen, NULL, &err);
    ck_assert_msg(m2 != NULL, "normalized text rejected at %llu: %s", (unsigned long long)err.line,
                  err.message);
    ck_assert_msg(cg_model_equal(m, m2, why, sizeof why), "round trip differs: %s", why);
    ck_assert_int_eq(cg_normalize(m2, &b, &blen, &err), 0);
    ck_assert_msg(alen == blen && memcmp(a, b, alen) == 0, "normalize is not a fixed point");
    free(a);
    free(b);
    cg_model_free(m2);
}

void cgt_expect_records(const char *text, const char *expected)
{
    struct cg_model *m = cgt_parse_ok(text);
    char *got = cgt_render(m);
    ck_assert_str_eq(got, expected);
    free(got);
    cgt_round_trip(m);
    cg_model_free(m);
}

char *cgt_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    b[*len] = '\0';
    fclose(f);
    return b;
}

static char *rooted(const char *var, const char *rel, char buf[CGT_PATH])
{
    const char *root = getenv(var);
    ck_assert_msg(root != NULL, "%s is not set", var);
    ck_assert_int_lt(snprintf(buf, CGT_PATH, "%s/%s", root, rel), CGT_PATH);
    return buf;
}

char *cgt_src(char buf[CGT_PATH], const char *rel)
{
    return rooted("JETT_SOURCE_ROOT", rel, buf);
}

char *cgt_build(char buf[CGT_PATH], const char *rel)
{
    return rooted("JETT_BUILD_ROOT", rel, buf);
}
