/* test_toon: the TOON writer against hand-written cases and the official
 * encode fixtures (fixtures/toon-conformance). */
#include <check.h>
#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/toon.h"
#include "tests/toon_json.h"

Suite *toon_suite(void);

/* Encodes v (freeing it) and returns the text; fails the test on error. */
static char *enc_opt(struct toon_value *v, char delim, int indent)
{
    struct toon_options opt = {delim, indent};
    char *out, err[256];
    size_t len;
    int rc = toon_encode(v, &opt, &out, &len, err, sizeof err);
    toon_free(v);
    ck_assert_msg(rc == 0, "toon_encode failed: %s", err);
    ck_assert_uint_eq(strlen(out), len);
    return out;
}

static void expect_opt(struct toon_value *v, char delim, int indent, const char *want)
{
    char *got = enc_opt(v, delim, indent);
    ck_assert_msg(strcmp(got, want) == 0, "got\n[%s]\nwant\n[%s]", got, want);
    free(got);
}

static void expect(struct toon_value *v, const char *want)
{
    expect_opt(v, 0, 0, want);
}

/* Encodes v (freeing it) expecting failure with `msg` in the error. */
static void expect_error(struct toon_value *v, const char *msg)
{
    char *out = NULL, err[256] = "";
    size_t len;
    int rc = toon_encode(v, NULL, &out, &len, err, sizeof err);
    toon_free(v);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err, msg) != NULL, "error [%s] lacks [%s]", err, msg);
}

static struct toon_value *obj1(const char *k, struct toon_value *v)
{
    struct toon_value *o = toon_object();
    toon_set(o, k, v);
    return o;
}

static struct toon_value *strs(const char *const *s, size_t n)
{
    struct toon_value *a = toon_array();
    for (size_t i = 0; i < n; i++)
        toon_push(a, toon_cstr(s[i]));
    return a;
}

START_TEST(string_quoting)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"hello", "hello"},
        {"", "\"\""},
        {" a", "\" a\""},
        {"a ", "\"a \""},
        {"\ta", "\"\\ta\""},
        {"a b", "a b"},
        {"true", "\"true\""},
        {"false", "\"false\""},
        {"null", "\"null\""},
        {"True", "True"},
        {"42", "\"42\""},
        {"-3.14", "\"-3.14\""},
        {"+1", "\"+1\""},
        {"1e-6", "\"1e-6\""},
        {"1E+9", "\"1E+9\""},
        {"05", "\"05\""},
        {"1.", "1."},
        {".5", ".5"},
        {"NaN", "NaN"},
        {"-", "\"-\""},
        {"-x", "\"-x\""},
        {"a-b", "a-b"},
        {"#", "\"#\""},
        {"#x", "\"#x\""},
        {"a#", "a#"},
        {"a:b", "\"a:b\""},
        {"q\"q", "\"q\\\"q\""},
        {"b\\s", "\"b\\\\s\""},
        {"[x", "\"[x\""},
        {"x]", "\"x]\""},
        {"{", "\"{\""},
        {"}", "\"}\""},
        {"a,b", "\"a,b\""},
        {"a|b", "a|b"},
        {"l\nb", "\"l\\nb\""},
        {"c\r", "\"c\\r\""},
        {"\x01", "\"\\u0001\""},
        {"\x1f", "\"\\u001f\""},
        {"\x7f", "\x7f"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"\xf0\x9f\x98\x80 x", "\xf0\x9f\x98\x80 x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "k: %s", cases[i].out);
        expect(obj1("k", toon_cstr(cases[i].in)), want);
    }
    /* NUL inside a string */
    expect(obj1("k", toon_string("a\0b", 3)), "k: \"a\\u0000b\"");
}
END_TEST

START_TEST(delimiter_quoting)
{
    static const char *const v[] = {"a,b", "a|b", "a\tb", "c"};
    expect(obj1("x", strs(v, 4)), "x[4]: \"a,b\",a|b,\"a\\tb\",c");
    expect_opt(obj1("x", strs(v, 4)), '|', 0, "x[4|]: a,b|\"a|b\"|\"a\\tb\"|c");
    expect_opt(obj1("x", strs(v, 4)), '\t', 0, "x[4\t]: a,b\ta|b\t\"a\\tb\"\tc");
    /* object fields use the document delimiter too */
    expect_opt(obj1("x", toon_cstr("a|b")), '|', 0, "x: \"a|b\"");
    expect_opt(obj1("x", toon_cstr("a,b")), '|', 0, "x: a,b");
}
END_TEST

START_TEST(key_quoting)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a", "a"},
        {"_x.y9", "_x.y9"},
        {"9a", "\"9a\""},
        {"", "\"\""},
        {"a b", "\"a b\""},
        {"a-b", "\"a-b\""},
        {"-a", "\"-a\""},
        {".a", "\".a\""},
        {"a:b", "\"a:b\""},
        {"[x]", "\"[x]\""},
        {"{", "\"{\""},
        {"a,b", "\"a,b\""},
        {"q\"", "\"q\\\"\""},
        {"t\t", "\"t\\t\""},
        {"\x04", "\"\\u0004\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "%s: 1", cases[i].out);
        expect(obj1(cases[i].in, toon_int(1)), want);
    }
    struct toon_value *o = toon_object();
    toon_setn(o, "a\0b", 3, toon_int(1));
    expect(o, "\"a\\u0000b\": 1");
}
END_TEST

/* Literal keys encode as copied ones, in a table too, index keys first;
 * freeing the tree frees no literal (the sanitizers would say), and a
 * repeated literal key is still an error. */
START_TEST(literal_keys)
{
    struct toon_value *rows = toon_array();
    for (int i = 0; i < 2; i++) {
        struct toon_value *r = toon_object();
        toon_set_literal(r, "name", toon_cstr(i ? "b" : "a"));
        toon_set_literal(r, "n", toon_int(i));
        toon_push(rows, r);
    }
    struct toon_value *o = toon_object();
    toon_set_literal(o, "rows", rows);
    toon_set_literal(o, "7", toon_int(7));
    expect(o, "\"7\": 7\nrows[2]{name,n}:\n  a,0\n  b,1");
    struct toon_value *dup = toon_object();
    toon_set_literal(dup, "k", toon_int(1));
    toon_set(dup, "k", toon_int(2));
    expect_error(dup, "duplicate key");
}
END_TEST

static void expect_double(double d, const char *want)
{
    expect(toon_double(d), want);
}

START_TEST(numbers)
{
    expect_double(0.0, "0");
    expect_double(-0.0, "0");
    expect_double(NAN, "null");
    expect_double(INFINITY, "null");
    expect_double(-INFINITY, "null");
    expect_double(1.0, "1");
    expect_double(-7.0, "-7");
    expect_double(3.14, "3.14");
    expect_double(0.1, "0.1");
    expect_double(0.1 + 0.2, "0.30000000000000004");
    expect_double(1.0 / 3, "0.3333333333333333");
    expect_double(1e6, "1000000");
    expect_double(1e20, "100000000000000000000");
    expect_double(123456789012345680000.0, "123456789012345680000");
    expect_double(1e21, "1e+21");
    expect_double(1.5e300, "1.5e+300");
    expect_double(-2.5e-7, "-2.5e-7");
    expect_double(1e-6, "0.000001");
    expect_double(1.25e-6, "0.00000125");
    expect_double(1e-7, "1e-7");
    expect_double(5e-324, "5e-324");
    expect_double(1.7976931348623157e308, "1.7976931348623157e+308");
    expect_double(9007199254740993.0, "9007199254740992");
    expect_double(2.2250738585072014e-308, "2.2250738585072014e-308");
    expect_double(34.1, "34.1");
    expect_double(50.0, "50");
    expect(toon_int(INT64_MIN), "-9223372036854775808");
    expect(toon_int(INT64_MAX), "9223372036854775807");
    expect(toon_uint(UINT64_MAX), "18446744073709551615");
    expect(toon_int(0), "0");
}
END_TEST

/* Builds a comma-decimal locale with localedef into a private folder
 * (LOCPATH), so the test needs no root and no system locale. */
static bool make_comma_locale(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/toon-locale-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return false;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    if (system(cmd) != 0)
        return false;
    setenv("LOCPATH", dir, 1);
    return setlocale(LC_ALL, "de_DE.UTF-8") != NULL;
}

START_TEST(numbers_ignore_locale)
{
    char dir[64], cmd[128];
    if (!make_comma_locale(dir, sizeof dir)) {
        /* .ci/run installs Debian's locales package; a bare machine may
         * lack localedef, and then only CI insists. */
        ck_assert_msg(getenv("CI") == NULL, "localedef could not build de_DE.UTF-8");
        fprintf(stderr, "toon: localedef unavailable, comma-decimal locale not tested\n");
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%.2f", 3.25);
    ck_assert_str_eq(buf, "3,25"); /* the locale really is in effect */
    struct toon_value *a = toon_array();
    toon_push(a, toon_double(3.25));
    toon_push(a, toon_double(-0.5e-3));
    toon_push(a, toon_double(1.5e22));
    expect(obj1("x", a), "x[3]: 3.25,-0.0005,1.5e+22");
    setlocale(LC_ALL, "C");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(objects_and_empties)
{
    expect(toon_object(), "");
    expect(toon_array(), "[]");
    expect(toon_cstr(""), "\"\"");
    expect(toon_cstr("\xEF\xBB\xBFx"), "\"\xEF\xBB\xBFx\"");
    expect(obj1("k", toon_cstr("\xEF\xBB\xBFx")), "k: \xEF\xBB\xBFx");
    struct toon_value *o = toon_object();
    toon_set(o, "a", obj1("b", obj1("c", toon_null())));
    toon_set(o, "e", toon_object());
    toon_set(o, "f", toon_array());
    toon_set(o, "g", toon_bool(false));
    expect(o, "a:\n  b:\n    c: null\ne:\nf: []\ng: false");
    o = obj1("a", obj1("b", toon_int(1)));
    expect_opt(o, 0, 4, "a:\n    b: 1");
}
END_TEST

static struct toon_value *row2(const char *k1, struct toon_value *v1, const char *k2,
                               struct toon_value *v2)
{
    struct toon_value *o = toon_object();
    toon_set(o, k1, v1);
    toon_set(o, k2, v2);
    return o;
}

/* Array-index keys go first, ascending, as a JavaScript object lists them. */
START_TEST(index_keys_first)
{
    static const char *const keys[] = {"b", "10", "a", "2", "02", "4294967295", "4294967294", "-1"};
    struct toon_value *o = toon_object();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        toon_set(o, keys[i], toon_int((int64_t)i));
    expect(o, "\"2\": 3\n\"10\": 1\n\"4294967294\": 6\nb: 0\na: 2\n\"02\": 4\n"
              "\"4294967295\": 5\n\"-1\": 7");
}
END_TEST

START_TEST(tabular_and_groups)
{
    struct toon_value *a = toon_array();
    toon_push(a, row2("id", toon_int(1), "name", toon_cstr("a,b")));
    toon_push(a, row2("name", toon_cstr(""), "id", toon_int(2)));
    expect(obj1("rows", a), "rows[2]{id,name}:\n  1,\"a,b\"\n  2,\"\"");

    a = toon_array();
    toon_push(a, row2("p", obj1("x", toon_int(1)), "q", toon_int(3)));
    toon_push(a, row2("p", obj1("x", toon_int(2)), "q", toon_int(4)));
    expect_opt(a, '|', 0, "[2|]{p{x}|q}:\n  1|3\n  2|4");

    /* an empty nested object breaks the group: expanded list */
    a = toon_array();
    toon_push(a, obj1("p", obj1("x", toon_int(1))));
    toon_push(a, obj1("p", toon_object()));
    expect(a, "[2]:\n  - p:\n      x: 1\n  - p:");
}
END_TEST

START_TEST(keyed_objects)
{
    struct toon_value *o = toon_object();
    toon_set(o, "a", row2("x", toon_int(1), "y", toon_cstr("s")));
    toon_set(o, "b c", row2("y", toon_cstr("t"), "x", toon_int(2)));
    expect(obj1("m", o), "m[2:]{x,y}:\n  a: 1,s\n  \"b c\": 2,t");

    o = toon_object();
    toon_set(o, "a", obj1("x", toon_int(1)));
    toon_set(o, "b", obj1("x", toon_int(2)));
    expect_opt(o, '\t', 0, "[2:\t]{x}:\n  a: 1\n  b: 2");

    /* a single entry stays nested */
    expect(obj1("m", obj1("a", obj1("x", toon_int(1)))), "m:\n  a:\n    x: 1");
}
END_TEST

START_TEST(list_items)
{
    /* object item whose first field is a tabular array */
    struct toon_value *rows = toon_array();
    toon_push(rows, obj1("a", toon_int(1)));
    toon_push(rows, obj1("a", toon_int(2)));
    struct toon_value *item = row2("t", rows, "z", toon_cstr("-"));
    struct toon_value *list = toon_array();
    toon_push(list, item);
    toon_push(list, toon_object());
    toon_push(list, toon_int(5));
    struct toon_value *inner = toon_array();
    toon_push(inner, toon_array());
    toon_push(list, inner);
    expect(obj1("l", list),
           "l[4]:\n  - t[2]{a}:\n      1\n      2\n    z: \"-\"\n  -\n  - 5\n  - [1]:\n"
           "    - [0]:");
}
END_TEST

START_TEST(errors)
{
    static const char *const bad[] = {
        "\xc0\xaf",         /* overlong */
        "\xed\xa0\x80",     /* surrogate */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\xe2\x82",         /* truncated */
        "\x80",             /* stray continuation */
        "\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_error(obj1("k", toon_cstr(bad[i])), "invalid UTF-8 in a string");
        expect_error(obj1(bad[i], toon_int(1)), "invalid UTF-8 in a key");
    }
    struct toon_value *o = toon_object();
    toon_set(o, "a", toon_int(1));
    toon_set(o, "b", toon_int(1));
    toon_set(o, "a", toon_int(2));
    expect_error(o, "duplicate key \"a\"");
    struct toon_value *a = toon_array();
    ck_assert_int_eq(toon_push(a, NULL), -1);
    expect_error(obj1("x", a), "failed");
    struct toon_value *n = toon_null(); /* pushing to a non-array frees the child */
    ck_assert_int_eq(toon_push(n, toon_int(1)), -1);
    ck_assert_int_eq(toon_set(n, "k", toon_int(1)), -1);
    toon_free(n);
}
END_TEST

/* A row of the tables below: every kind of cell, strings that need
 * quotes under one delimiter or another, keys in the order given. */
static struct toon_value *mixed_row(int i, bool reorder)
{
    struct toon_value *o = toon_object();
    static const char *const words[] = {"plain", "a,b", "tab\there", "pi|pe", "", "true", "-3"};
    if (reorder)
        toon_set(o, "n", toon_int(-i));
    toon_set(o, "name", toon_cstr(words[i % 7]));
    if (!reorder)
        toon_set(o, "n", toon_int(-i));
    toon_set(o, "big", toon_uint(18446744073709551615u - (uint64_t)i));
    toon_set(o, "ratio", toon_double(i / 8.0));
    toon_set(o, "flag", toon_bool(i % 2));
    toon_set(o, "none", toon_null());
    toon_set(o, "7", toon_int(i)); /* an index key: JavaScript lists it first */
    return o;
}

/* The same rows as an array of objects and as a table. */
static struct toon_value *mixed(int n, bool table)
{
    struct toon_value *a = table ? toon_table() : toon_array();
    for (int i = 0; i < n; i++) {
        struct toon_value *row = mixed_row(i, i % 3 == 2);
        ck_assert_int_eq(table ? toon_table_push(a, row) : toon_push(a, row), 0);
    }
    return a;
}

/* Wraps rows where a table may sit: an object's field, the root, and
 * the first field of an object that is a list item. */
static struct toon_value *placed(int where, struct toon_value *rows)
{
    if (where == 0)
        return row2("rows", rows, "after", toon_cstr("x"));
    if (where == 1)
        return rows;
    struct toon_value *list = toon_array();
    toon_push(list, row2("rows", rows, "z", toon_int(1)));
    toon_push(list, toon_int(2));
    return obj1("l", list);
}

/* A table writes exactly what the array of its rows writes, in every
 * place, with every delimiter and indent, with and without rows. */
START_TEST(table_is_the_array_it_holds)
{
    static const char delims[] = {',', '\t', '|'};
    for (int where = 0; where < 3; where++)
        for (size_t d = 0; d < sizeof delims; d++)
            for (int n = 0; n < 9; n += 4) {
                char *want = enc_opt(placed(where, mixed(n, false)), delims[d], 1 + where);
                char *got = enc_opt(placed(where, mixed(n, true)), delims[d], 1 + where);
                ck_assert_msg(strcmp(got, want) == 0, "table\n[%s]\narray\n[%s]", got, want);
                free(got), free(want);
            }
    /* and by hand: the index key first, quotes where the delimiter needs them */
    struct toon_value *t = toon_table();
    toon_table_push(t, mixed_row(1, false));
    toon_table_push(t, mixed_row(2, true));
    expect(obj1("t", t), "t[2]{\"7\",name,n,big,ratio,flag,none}:\n"
                         "  1,\"a,b\",-1,18446744073709551614,0.125,true,null\n"
                         "  2,\"tab\\there\",-2,18446744073709551613,0.25,false,null");
    expect(obj1("t", toon_table()), "t: []");
}
END_TEST

/* Rows that do not fit fail the table, and a table in a list is
 * refused: each reported by toon_encode. */
START_TEST(table_errors)
{
    struct toon_value *t = toon_table();
    ck_assert_int_eq(toon_table_push(t, obj1("a", toon_int(1))), 0);
    ck_assert_int_eq(toon_table_push(t, obj1("b", toon_int(1))), -1); /* other keys */
    expect_error(obj1("t", t), "failed");
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, row2("a", toon_int(1), "b", toon_int(2))), 0);
    ck_assert_int_eq(toon_table_push(t, obj1("a", toon_int(1))), -1); /* fewer keys */
    expect_error(obj1("t", t), "failed");
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, obj1("a", toon_array())), -1); /* not a primitive */
    expect_error(obj1("t", t), "failed");
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, obj1("a", toon_cstr("\xff"))), -1);
    expect_error(obj1("t", t), "failed");
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, toon_object()), -1); /* no keys */
    expect_error(obj1("t", t), "failed");
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, toon_int(3)), -1); /* not an object */
    expect_error(obj1("t", t), "failed");
    struct toon_value *o = toon_object();
    toon_set(o, "a", toon_int(1));
    toon_set(o, "a", toon_int(2));
    t = toon_table();
    ck_assert_int_eq(toon_table_push(t, o), -1); /* a duplicate key */
    expect_error(obj1("t", t), "failed");
    struct toon_value *list = toon_array();
    t = toon_table();
    toon_table_push(t, obj1("a", toon_int(1)));
    toon_push(list, t);
    expect_error(obj1("l", list), "a table cannot be an item of an array");
    ck_assert_int_eq(toon_table_push(NULL, toon_int(1)), -1); /* frees the row */
    t = toon_table();                                         /* a table takes rows, not items */
    ck_assert_int_eq(toon_push(t, toon_int(1)), -1);
    toon_free(t);
}
END_TEST

START_TEST(bad_options_and_depth)
{
    struct toon_options opt = {';', 0};
    char *out, err[128];
    size_t len;
    struct toon_value *v = toon_null();
    ck_assert_int_eq(toon_encode(v, &opt, &out, &len, err, sizeof err), -1);
    toon_free(v);
    v = toon_array();
    for (int i = 0; i < 600; i++) {
        struct toon_value *outer = toon_array();
        toon_push(outer, v);
        v = outer;
    }
    expect_error(v, "nesting deeper");
}
END_TEST

/* Runs one fixture test; returns true when our bytes equal `expected`. */
static bool run_fixture(const char *file, const json_t *t)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    struct toon_options opt;
    if (toon_json_options(t, &opt) < 0) {
        fprintf(stderr, "FAIL %s: %s: unknown option\n", file, name);
        return false;
    }
    struct toon_value *v = toon_from_json(json_object_get(t, "input"));
    char *out = NULL, err[256] = "";
    size_t len = 0;
    int rc = toon_encode(v, &opt, &out, &len, err, sizeof err);
    toon_free(v);
    bool should_error = json_is_true(json_object_get(t, "shouldError"));
    const json_t *want = json_object_get(t, "expected");
    bool ok = should_error ? rc != 0
                           : rc == 0 && json_is_string(want) && len == json_string_length(want) &&
                                 memcmp(out, json_string_value(want), len) == 0;
    if (!ok)
        fprintf(stderr, "FAIL %s: %s\n  got:  %s\n  want: %s\n", file, name, rc == 0 ? out : err,
                json_is_string(want) ? json_string_value(want) : "error");
    free(out);
    return ok;
}

static int fixture_filter(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Every official encode fixture must pass; none is exempt. */
START_TEST(conformance)
{
    char dir[1024], path[1536], err[512];
    toon_json_fixture_dir(dir, sizeof dir);
    struct dirent **names;
    int n = scandir(dir, &names, fixture_filter, alphasort);
    ck_assert_msg(n > 0, "no encode fixtures in %s", dir);
    int passed = 0, total = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        json_t *doc = toon_json_load(path, err, sizeof err);
        ck_assert_msg(doc != NULL, "%s", err);
        json_t *tests = json_object_get(doc, "tests");
        for (size_t k = 0; k < json_array_size(tests); k++, total++)
            passed += run_fixture(names[i]->d_name, json_array_get(tests, k));
        json_decref(doc);
        free(names[i]);
    }
    free(names);
    printf("toon conformance: %d/%d encode fixtures passed\n", passed, total);
    fflush(stdout);
    ck_assert_int_eq(passed, total);
}
END_TEST

Suite *toon_suite(void)
{
    Suite *s = suite_create("toon");
    TCase *tc = tcase_create("writer");
    tcase_add_test(tc, string_quoting);
    tcase_add_test(tc, delimiter_quoting);
    tcase_add_test(tc, key_quoting);
    tcase_add_test(tc, literal_keys);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, numbers_ignore_locale);
    tcase_add_test(tc, objects_and_empties);
    tcase_add_test(tc, index_keys_first);
    tcase_add_test(tc, tabular_and_groups);
    tcase_add_test(tc, keyed_objects);
    tcase_add_test(tc, list_items);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, bad_options_and_depth);
    tcase_add_test(tc, table_is_the_array_it_holds);
    tcase_add_test(tc, table_errors);
    suite_add_tcase(s, tc);
    TCase *conf = tcase_create("conformance");
    tcase_add_test(conf, conformance);
    suite_add_tcase(s, conf);
    return s;
}
