/*
 * toon-corpus: writes TOON documents for the reference check.
 *
 *   toon-corpus OUTDIR COUNT [SEED [FIXTURE_DIR]]
 *
 * OUTDIR/random/DELIM-INDENT/NNNNN.toon holds COUNT documents encoded from
 * random trees (seeded, so a failure can be replayed); with FIXTURE_DIR,
 * OUTDIR/fixtures/DELIM-INDENT/ also holds our encoding of every encode
 * fixture input.  DELIM is comma, tab or pipe: the folder name carries
 * the options toon-check must use.
 *
 * The trees aim at every hazard of the format: keys and strings built
 * from quoting hazards, numbers of every magnitude, and shapes that are
 * tabular, nested field groups, keyed objects, or one mutation away from
 * them, some of the tabular ones held as tables (toon_table).  Integers
 * stay within 2^53: the reference library holds numbers
 * as doubles and cannot judge larger ones.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/toon.h"
#include "tests/toon_json.h"

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rng_below(struct rng *r, unsigned n)
{
    return (unsigned)(rng_next(r) % n);
}

static bool rng_chance(struct rng *r, unsigned percent)
{
    return rng_below(r, 100) < percent;
}

/* Whole strings that are hazards on their own. */
static const char *const hazards[] = {
    "",
    " ",
    "  ",
    "a b",
    " lead",
    "trail ",
    "\tx",
    "x\t",
    "true",
    "false",
    "null",
    "True",
    "NULL",
    "42",
    "-3.14",
    "+1",
    "1e-6",
    "1E+9",
    "-1e5",
    "05",
    "0",
    "-0",
    "0.0",
    "1.",
    ".5",
    "1.5.2",
    "0x1F",
    "1_000",
    "NaN",
    "Infinity",
    "-",
    "--",
    "-x",
    "- item",
    "#",
    "#x",
    "a#b",
    "a:b",
    ":",
    "x:",
    "\"",
    "q\"q",
    "\\",
    "back\\slash",
    "[1]",
    "[",
    "]",
    "{x}",
    "{",
    "}",
    "a,b",
    ",",
    "a|b",
    "|",
    "line\nbreak",
    "cr\r",
    "\x01",
    "\x1f",
    "\x7f",
    "caf\xc3\xa9",
    "\xe6\x97\xa5\xe6\x9c\xac",
    "\xf0\x9f\x98\x80 emoji",
    "\xef\xbb\xbf\x62om", /* BOM then "bom" */
    "\xc2\xa0nbsp",
    "\xe2\x80\xa8",
    "a.b",
    "__proto__",
    "constructor",
    "x y z",
    "\\n",
    "[2]: a,b",
    "k: v",
    "- [0]:",
    "items[1]{a}:",
    "0.5e+3",
};
#define NHAZARDS (sizeof hazards / sizeof hazards[0])

/* Pieces that random strings are glued from. */
static const char *const pieces[] = {
    "a",
    "Z",
    "_",
    "x1",
    "7",
    "0",
    "-",
    "+",
    ".",
    "e",
    "E",
    " ",
    "\t",
    "\n",
    "\r",
    ",",
    "|",
    ":",
    "\"",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "#",
    "\x02",
    "\x1b",
    "\xc3\xa9",
    "\xf0\x9f\x98\x80",
    "\xe2\x80\xa8",
    "\xc2\xa0",
    "true",
    "null",
    "12",
    "3.5",
};
#define NPIECES (sizeof pieces / sizeof pieces[0])

static size_t random_text(struct rng *r, char *buf, size_t cap, bool key)
{
    if (rng_chance(r, key ? 50 : 35)) { /* a plain identifier-like token */
        static const char *const names[] = {"id",  "name",      "value", "a",     "b",     "x",
                                            "k_1", "user.name", "_",     "Total", "count", "tags"};
        return (size_t)snprintf(buf, cap, "%s%u", names[rng_below(r, 12)], rng_below(r, 4));
    }
    if (rng_chance(r, 40))
        return (size_t)snprintf(buf, cap, "%s", hazards[rng_below(r, NHAZARDS)]);
    size_t len = 0;
    unsigned n = 1 + rng_below(r, 6);
    for (unsigned i = 0; i < n; i++) {
        const char *p = pieces[rng_below(r, NPIECES)];
        size_t pl = strlen(p);
        if (len + pl >= cap)
            break;
        memcpy(buf + len, p, pl);
        len += pl;
    }
    if (rng_chance(r, 3) && len + 1 < cap) /* a NUL byte now and then */
        buf[len++] = '\0';
    buf[len] = '\0';
    return len;
}

static double random_double(struct rng *r)
{
    switch (rng_below(r, 9)) {
    case 0: { /* any finite bit pattern */
        uint64_t bits;
        double d;
        do {
            bits = rng_next(r);
            memcpy(&d, &bits, sizeof d);
        } while (!isfinite(d));
        return d;
    }
    case 1:
        return (double)((int64_t)rng_below(r, 2000000) - 1000000) / 100.0;
    case 2:
        return (double)rng_below(r, 100000) / pow(10, rng_below(r, 12));
    case 3:
        return (double)(int64_t)(rng_next(r) >> 11) * (rng_chance(r, 50) ? 1 : -1);
    case 4:
        return ldexp(1.0, (int)rng_below(r, 2000) - 1000);
    case 5:
        return pow(10, (int)rng_below(r, 60) - 30) * (1 + rng_below(r, 9));
    case 6:
        return rng_chance(r, 50) ? -0.0 : 0.0;
    case 7:
        return rng_chance(r, 50) ? NAN : (rng_chance(r, 50) ? INFINITY : -INFINITY);
    default:
        return (double)rng_below(r, 10000) / 7.0;
    }
}

static struct toon_value *random_primitive(struct rng *r)
{
    char buf[96];
    switch (rng_below(r, 8)) {
    case 0:
        return toon_null();
    case 1:
        return toon_bool(rng_chance(r, 50));
    case 2: {
        int64_t v = (int64_t)(rng_next(r) >> (11 + rng_below(r, 50)));
        return toon_int(rng_chance(r, 30) ? -v : v);
    }
    case 3:
        return toon_uint(rng_next(r) >> (11 + rng_below(r, 50)));
    case 4:
        return toon_double(random_double(r));
    default: {
        size_t len = random_text(r, buf, sizeof buf, false);
        return toon_string(buf, len);
    }
    }
}

/* A key not yet among the first n of `used` (keys compared as C strings;
 * NUL bytes are left out of keys to keep that simple). */
static size_t fresh_key(struct rng *r, char used[][96], size_t n, char *out)
{
    for (;;) {
        size_t len = random_text(r, out, 96, true);
        len = strlen(out);
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = strcmp(used[i], out) == 0;
        if (!dup)
            return len;
    }
}

/* A shape for uniform objects: keys, each a primitive column or a group. */
struct shape {
    size_t n;
    char keys[6][96];
    struct shape *group[6];
};

static struct shape *random_shape(struct rng *r, int depth)
{
    struct shape *s = calloc(1, sizeof *s);
    s->n = 1 + rng_below(r, 4);
    for (size_t i = 0; i < s->n; i++) {
        fresh_key(r, s->keys, i, s->keys[i]);
        if (depth < 2 && rng_chance(r, 20))
            s->group[i] = random_shape(r, depth + 1);
    }
    return s;
}

static void shape_free(struct shape *s)
{
    for (size_t i = 0; s != NULL && i < s->n; i++)
        shape_free(s->group[i]);
    free(s);
}

static struct toon_value *random_value(struct rng *r, int depth);

/* An object of shape s; now and then one change that breaks uniformity
 * (a missing key, an extra key, a complex or empty value). */
static struct toon_value *shape_row(struct rng *r, const struct shape *s, bool mutate)
{
    struct toon_value *o = toon_object();
    size_t skip = mutate && rng_chance(r, 30) ? rng_below(r, (unsigned)s->n) : SIZE_MAX;
    size_t start = rng_chance(r, 20) ? rng_below(r, (unsigned)s->n) : 0; /* rotate order */
    for (size_t k = 0; k < s->n; k++) {
        size_t i = (start + k) % s->n;
        if (i == skip)
            continue;
        struct toon_value *v;
        if (s->group[i] != NULL)
            v = shape_row(r, s->group[i], mutate && rng_chance(r, 50));
        else if (mutate && rng_chance(r, 15))
            v = rng_chance(r, 50) ? toon_object() : random_value(r, 3);
        else
            v = random_primitive(r);
        toon_set(o, s->keys[i], v);
    }
    if (mutate && rng_chance(r, 20))
        toon_set(o, "extra_key", random_primitive(r));
    return o;
}

static bool shape_flat(const struct shape *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->group[i] != NULL)
            return false;
    return true;
}

/* Rows of one shape: an array (tabular) or an object (keyed).  Where a
 * table may sit (`table_ok`: an object's field), flat rows that all
 * keep the shape go into a table half the time, which must write what
 * the array would. */
static struct toon_value *random_uniform(struct rng *r, bool keyed, bool table_ok)
{
    struct shape *s = random_shape(r, 0);
    unsigned n = rng_below(r, 5) + (keyed ? 1 : 0);
    size_t bad = rng_chance(r, 30) ? rng_below(r, n + 1) : SIZE_MAX;
    bool table = !keyed && table_ok && bad >= n && shape_flat(s) && rng_chance(r, 50);
    struct toon_value *v = keyed ? toon_object() : table ? toon_table() : toon_array();
    char used[8][96];
    for (size_t i = 0; i < n; i++) {
        struct toon_value *row = shape_row(r, s, i == bad);
        if (table) {
            toon_table_push(v, row);
            continue;
        }
        if (!keyed) {
            toon_push(v, row);
            continue;
        }
        fresh_key(r, used, i, used[i]);
        toon_set(v, used[i], row);
    }
    shape_free(s);
    return v;
}

static struct toon_value *random_object(struct rng *r, int depth)
{
    struct toon_value *o = toon_object();
    char used[8][96];
    size_t n = rng_below(r, 6);
    for (size_t i = 0; i < n; i++) {
        fresh_key(r, used, i, used[i]);
        toon_set(o, used[i],
                 rng_chance(r, 10) ? random_uniform(r, false, true) : random_value(r, depth + 1));
    }
    return o;
}

static struct toon_value *random_array(struct rng *r, int depth, bool primitives)
{
    struct toon_value *a = toon_array();
    size_t n = rng_below(r, 6);
    for (size_t i = 0; i < n; i++)
        toon_push(a, primitives ? random_primitive(r) : random_value(r, depth + 1));
    return a;
}

/* An object whose first member is an array, a keyed object or an
 * object: the forms that sit on a list item's hyphen line. */
static struct toon_value *random_item_object(struct rng *r, int depth)
{
    struct toon_value *o = toon_object();
    struct toon_value *first;
    switch (rng_below(r, 4)) {
    case 0:
        first = random_uniform(r, false, true);
        break;
    case 1:
        first = random_uniform(r, true, false);
        break;
    case 2:
        first = random_array(r, depth + 1, rng_chance(r, 50));
        break;
    default:
        first = random_object(r, depth + 1);
        break;
    }
    toon_set(o, "first", first);
    if (rng_chance(r, 60))
        toon_set(o, "second", random_value(r, depth + 1));
    if (rng_chance(r, 30))
        toon_set(o, "third", random_uniform(r, rng_chance(r, 50), true));
    return o;
}

static struct toon_value *random_list(struct rng *r, int depth)
{
    struct toon_value *a = toon_array();
    size_t n = 1 + rng_below(r, 4);
    for (size_t i = 0; i < n; i++) {
        switch (rng_below(r, 4)) {
        case 0:
            toon_push(a, random_item_object(r, depth + 1));
            break;
        case 1:
            toon_push(a, random_array(r, depth + 1, rng_chance(r, 60)));
            break;
        default:
            toon_push(a, random_value(r, depth + 1));
            break;
        }
    }
    return a;
}

static struct toon_value *random_value(struct rng *r, int depth)
{
    if (depth >= 4)
        return random_primitive(r);
    switch (rng_below(r, 10)) {
    case 0:
    case 1:
        return random_primitive(r);
    case 2:
    case 3:
        return random_object(r, depth);
    case 4:
        return random_array(r, depth, true);
    case 5:
        return random_uniform(r, false, false);
    case 6:
        return random_uniform(r, true, false);
    case 7:
        return random_list(r, depth);
    case 8:
        return random_item_object(r, depth);
    default:
        return random_array(r, depth, false);
    }
}

static const char *delim_name(char d)
{
    return d == '\t' ? "tab" : d == '|' ? "pipe" : "comma";
}

/* Encodes v (freed) into DIR/SUB/DELIM-INDENT/NAME.toon. */
static int write_doc(const char *dir, const char *sub, struct toon_value *v,
                     const struct toon_options *opt, const char *name)
{
    char path[4096], err[256], *out;
    size_t len;
    int rc = toon_encode(v, opt, &out, &len, err, sizeof err);
    toon_free(v);
    if (rc < 0) {
        fprintf(stderr, "toon-corpus: %s: %s\n", name, err);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s/%s-%d", dir, sub, delim_name(opt->delimiter),
             opt->indent == 0 ? 2 : opt->indent);
    if (mkdir(path, 0777) < 0 && errno != EEXIST) {
        perror(path);
        free(out);
        return -1;
    }
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s.toon", name);
    FILE *f = fopen(path, "wb");
    rc = f != NULL && fwrite(out, 1, len, f) == len && fclose(f) == 0 ? 0 : -1;
    if (rc < 0)
        perror(path);
    free(out);
    return rc;
}

static int write_random(const char *dir, unsigned long count, uint64_t seed)
{
    struct rng r = {seed};
    static const char delims[] = {',', ',', '\t', '|'};
    for (unsigned long i = 0; i < count; i++) {
        struct toon_options opt = {delims[rng_below(&r, 4)], rng_chance(&r, 80) ? 2 : 4};
        char name[32];
        snprintf(name, sizeof name, "%05lu", i);
        if (write_doc(dir, "random", random_value(&r, 0), &opt, name) < 0)
            return -1;
    }
    return 0;
}

static int write_fixture_file(const char *dir, const char *path, const char *base)
{
    char err[512], name[512];
    json_t *doc = toon_json_load(path, err, sizeof err);
    if (doc == NULL) {
        fprintf(stderr, "toon-corpus: %s\n", err);
        return -1;
    }
    json_t *tests = json_object_get(doc, "tests");
    int rc = 0;
    for (size_t k = 0; k < json_array_size(tests) && rc == 0; k++) {
        json_t *t = json_array_get(tests, k);
        struct toon_options opt;
        if (json_is_true(json_object_get(t, "shouldError")) || toon_json_options(t, &opt) < 0)
            continue;
        snprintf(name, sizeof name, "%.*s-%03zu", (int)strlen(base) - 5, base, k);
        rc = write_doc(dir, "fixtures", toon_from_json(json_object_get(t, "input")), &opt, name);
    }
    json_decref(doc);
    return rc;
}

static int write_fixtures(const char *dir, const char *fixtures)
{
    DIR *d = opendir(fixtures);
    if (d == NULL) {
        perror(fixtures);
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", fixtures, de->d_name);
        rc = write_fixture_file(dir, path, de->d_name);
    }
    closedir(d);
    return rc;
}

static int make_dir(const char *dir, const char *sub)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", dir, sub[0] ? "/" : "", sub);
    if (mkdir(path, 0777) < 0 && errno != EEXIST) {
        perror(path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: toon-corpus OUTDIR COUNT [SEED [FIXTURE_DIR]]\n");
        return 2;
    }
    const char *dir = argv[1];
    unsigned long count = strtoul(argv[2], NULL, 10);
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    if (make_dir(dir, "") < 0 || make_dir(dir, "random") < 0 || make_dir(dir, "fixtures") < 0)
        return 1;
    if (write_random(dir, count, seed) < 0)
        return 1;
    if (argc > 4 && write_fixtures(dir, argv[4]) < 0)
        return 1;
    printf("toon-corpus: %lu random documents (seed %" PRIu64 ")%s in %s\n", count, seed,
           argc > 4 ? " and the fixtures" : "", dir);
    return 0;
}
