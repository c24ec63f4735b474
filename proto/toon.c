/*
 * toon: the value tree and the canonical TOON encoder.
 *
 * The encoder follows the TOON 4.x specification as the reference encoder
 * (@toon-format/toon 4.4.0) implements it, byte for byte:
 *
 *   root       primitive | array | keyed object | object fields
 *   field      key ": " primitive | array | keyed object | key ":" fields
 *   header     [key] "[" N [":"] [DELIM] "]" ["{" fields "}"] ":"
 *   array      "[]" or "key: []"                     (empty)
 *              header " " v1 DELIM v2 ...            (all primitives)
 *              header{fields}, one row a line        (tabular)
 *              header, then "- " items a level down  (anything else)
 *   keyed      key[N:]{fields}, then "entry: cells" lines, for an object
 *              of >= 2 non-empty objects of one tabular shape
 *   item       "- " primitive | "- " inline array | "- [N]:" items |
 *              "-" (empty object) | "- " first field, the rest a level
 *              down (a tabular or keyed first field keeps its rows two
 *              levels down)
 *
 * A tabular field is a primitive column or a nested field group
 * `name{a,b}` when every row holds a non-empty object of one tabular shape
 * there.  One delimiter governs a whole document: every header declares
 * it, so it is the active delimiter of every row, inline array and field.
 *
 * Everything that can fail because of the input (invalid UTF-8, duplicate
 * keys, failed nodes, nesting depth) is checked by a validation pass before
 * a byte is written, so the writer itself fails only when memory runs out.
 */
#include "proto/toon.h"
#include "proto/util/utf8.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum toon_kind {
    TOON_NULL,
    TOON_BOOL,
    TOON_INT,
    TOON_UINT,
    TOON_DOUBLE,
    TOON_STRING,
    TOON_ARRAY,
    TOON_OBJECT,
};

struct toon_member {
    char *key; /* NUL-terminated; key_len bytes may include NULs */
    size_t key_len;
    /* the key's value when it is an array index, else -1; and whether
     * key is the object's copy (not a caller's literal), in one word:
     * tables repeat members by the hundred thousand */
    int64_t index : 63;
    bool owned : 1;
    struct toon_value *value;
};
_Static_assert(sizeof(struct toon_member) == 32, "a member is four words");

/* A node of the tree.  Arrays and objects own their children; `failed`
 * records a construction error (a NULL child, no memory, a misuse) that
 * toon_encode reports. */
struct toon_value {
    enum toon_kind kind;
    bool failed;
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        struct {
            char *ptr;
            size_t len;
        } str;
        struct {
            struct toon_value **items;
            size_t len, cap;
        } arr;
        struct {
            struct toon_member *members;
            size_t len, cap;
            size_t nindex; /* members[0..nindex) have array-index keys */
        } obj;
    } as;
};

/* Deeper trees are rejected instead of risking the stack. */
#define TOON_MAX_DEPTH 512

/* ------------------------------------------------------------------ */
/* Construction                                                        */

static struct toon_value *toon_new(enum toon_kind kind)
{
    struct toon_value *v = calloc(1, sizeof *v);
    if (v != NULL)
        v->kind = kind;
    return v;
}

struct toon_value *toon_object(void)
{
    return toon_new(TOON_OBJECT);
}

struct toon_value *toon_array(void)
{
    return toon_new(TOON_ARRAY);
}

struct toon_value *toon_null(void)
{
    return toon_new(TOON_NULL);
}

struct toon_value *toon_bool(bool b)
{
    struct toon_value *v = toon_new(TOON_BOOL);
    if (v != NULL)
        v->as.b = b;
    return v;
}

struct toon_value *toon_int(int64_t i)
{
    struct toon_value *v = toon_new(TOON_INT);
    if (v != NULL)
        v->as.i = i;
    return v;
}

struct toon_value *toon_uint(uint64_t u)
{
    struct toon_value *v = toon_new(TOON_UINT);
    if (v != NULL)
        v->as.u = u;
    return v;
}

struct toon_value *toon_double(double d)
{
    struct toon_value *v = toon_new(TOON_DOUBLE);
    if (v != NULL)
        v->as.d = d;
    return v;
}

struct toon_value *toon_string(const char *s, size_t len)
{
    struct toon_value *v = toon_new(TOON_STRING);
    if (v == NULL)
        return NULL;
    v->as.str.ptr = malloc(len + 1);
    if (v->as.str.ptr == NULL) {
        free(v);
        return NULL;
    }
    if (len > 0)
        memcpy(v->as.str.ptr, s, len);
    v->as.str.ptr[len] = '\0';
    v->as.str.len = len;
    return v;
}

struct toon_value *toon_cstr(const char *s)
{
    return toon_string(s, strlen(s));
}

/* Grows *items (of `size`-byte elements) so that one more fits. */
static int toon_grow(void *items, size_t *cap, size_t len, size_t size)
{
    if (len < *cap)
        return 0;
    size_t ncap = *cap == 0 ? 4 : *cap * 2;
    void *p = realloc(*(void **)items, ncap * size);
    if (p == NULL)
        return -1;
    *(void **)items = p;
    *cap = ncap;
    return 0;
}

/* An "array index" key in the ECMAScript sense: "0" or a decimal without
 * leading zeros up to 2^32 - 2.  Its value, or -1. */
static int64_t toon_array_index(const char *k, size_t len)
{
    if (len == 0 || len > 10 || (len > 1 && k[0] == '0'))
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (k[i] < '0' || k[i] > '9')
            return -1;
        v = v * 10 + (k[i] - '0');
    }
    return v <= 4294967294 ? v : -1;
}

/* Where a member with array-index value `index` goes: objects keep their
 * index keys first, ascending, and every other key in insertion order --
 * the order in which a JavaScript object (so the reference encoder) lists
 * them.  Any other order could never be written by the reference. */
static size_t toon_member_slot(const struct toon_value *obj, int64_t index)
{
    size_t lo = 0, hi = obj->as.obj.nindex;
    if (index < 0)
        return obj->as.obj.len;
    while (lo < hi) { /* the first index key above `index` */
        size_t mid = lo + (hi - lo) / 2;
        if (obj->as.obj.members[mid].index <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Appends key -> value: a copy of the key, or (literal) the caller's
 * NUL-terminated key itself. */
static int toon_add(struct toon_value *obj, const char *key, size_t key_len, bool literal,
                    struct toon_value *v)
{
    if (obj == NULL || obj->kind != TOON_OBJECT || v == NULL || key == NULL) {
        if (obj != NULL)
            obj->failed = true;
        toon_free(v);
        return -1;
    }
    char *k = literal ? (char *)key : malloc(key_len + 1);
    if (k == NULL || toon_grow(&obj->as.obj.members, &obj->as.obj.cap, obj->as.obj.len,
                               sizeof(struct toon_member)) < 0) {
        if (!literal)
            free(k);
        obj->failed = true;
        toon_free(v);
        return -1;
    }
    if (!literal) {
        if (key_len > 0)
            memcpy(k, key, key_len);
        k[key_len] = '\0';
    }
    int64_t index = toon_array_index(k, key_len);
    size_t at = toon_member_slot(obj, index);
    struct toon_member *m = obj->as.obj.members;
    memmove(m + at + 1, m + at, (obj->as.obj.len - at) * sizeof *m);
    m[at] = (struct toon_member){k, key_len, index, !literal, v};
    obj->as.obj.len++;
    obj->as.obj.nindex += index >= 0;
    return obj->failed ? -1 : 0;
}

int toon_setn(struct toon_value *obj, const char *key, size_t key_len, struct toon_value *v)
{
    return toon_add(obj, key, key_len, false, v);
}

int toon_set_literal(struct toon_value *obj, const char *key, struct toon_value *v)
{
    return toon_add(obj, key, key == NULL ? 0 : strlen(key), true, v);
}

int toon_set(struct toon_value *obj, const char *key, struct toon_value *v)
{
    return toon_setn(obj, key, key == NULL ? 0 : strlen(key), v);
}

int toon_push(struct toon_value *arr, struct toon_value *v)
{
    if (arr == NULL || arr->kind != TOON_ARRAY || v == NULL) {
        if (arr != NULL)
            arr->failed = true;
        toon_free(v);
        return -1;
    }
    if (toon_grow(&arr->as.arr.items, &arr->as.arr.cap, arr->as.arr.len,
                  sizeof(struct toon_value *)) < 0) {
        arr->failed = true;
        toon_free(v);
        return -1;
    }
    arr->as.arr.items[arr->as.arr.len++] = v;
    return arr->failed ? -1 : 0;
}

void toon_free(struct toon_value *v)
{
    if (v == NULL)
        return;
    switch (v->kind) {
    case TOON_STRING:
        free(v->as.str.ptr);
        break;
    case TOON_ARRAY:
        for (size_t i = 0; i < v->as.arr.len; i++)
            toon_free(v->as.arr.items[i]);
        free(v->as.arr.items);
        break;
    case TOON_OBJECT:
        for (size_t i = 0; i < v->as.obj.len; i++) {
            if (v->as.obj.members[i].owned)
                free(v->as.obj.members[i].key);
            toon_free(v->as.obj.members[i].value);
        }
        free(v->as.obj.members);
        break;
    default:
        break;
    }
    free(v);
}

/* ------------------------------------------------------------------ */
/* Validation: everything the input can get wrong, before any output.  */

struct toon_check {
    char *err;
    size_t errlen;
};

static int toon_fail(struct toon_check *c, const char *fmt, ...)
{
    if (c->err != NULL && c->errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int toon_check_utf8(struct toon_check *c, const char *s, size_t len, const char *what)
{
    size_t at;
    if (!utf8_valid(s, len, &at))
        return toon_fail(c, "toon: invalid UTF-8 in %s at byte %zu", what, at);
    return 0;
}

static int toon_member_cmp(const void *a, const void *b)
{
    const struct toon_member *x = *(const struct toon_member *const *)a;
    const struct toon_member *y = *(const struct toon_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int r = memcmp(x->key, y->key, n);
    if (r != 0)
        return r;
    return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* Reports a key that appears twice in `obj` (sorting a pointer copy when
 * the object is large, so the check stays O(n log n)). */
static int toon_check_duplicates(struct toon_check *c, const struct toon_value *obj)
{
    size_t n = obj->as.obj.len;
    if (n < 2)
        return 0;
    const struct toon_member **p = malloc(n * sizeof *p);
    if (p == NULL)
        return toon_fail(c, "toon: out of memory");
    for (size_t i = 0; i < n; i++)
        p[i] = &obj->as.obj.members[i];
    qsort(p, n, sizeof *p, toon_member_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (toon_member_cmp(&p[i - 1], &p[i]) == 0)
            rc = toon_fail(c, "toon: duplicate key \"%.64s\"", p[i]->key);
    free(p);
    return rc;
}

static int toon_validate(struct toon_check *c, const struct toon_value *v, int depth);

static int toon_validate_object(struct toon_check *c, const struct toon_value *v, int depth)
{
    for (size_t i = 0; i < v->as.obj.len; i++) {
        const struct toon_member *m = &v->as.obj.members[i];
        if (toon_check_utf8(c, m->key, m->key_len, "a key") < 0 ||
            toon_validate(c, m->value, depth + 1) < 0)
            return -1;
    }
    return toon_check_duplicates(c, v);
}

/* Checks a whole tree: node failures, UTF-8, duplicate keys, depth. */
static int toon_validate(struct toon_check *c, const struct toon_value *v, int depth)
{
    if (v == NULL)
        return toon_fail(c, "toon: no value");
    if (v->failed)
        return toon_fail(c, "toon: a node failed while the tree was built (out of memory, "
                            "a NULL child or a misuse)");
    if (depth > TOON_MAX_DEPTH)
        return toon_fail(c, "toon: nesting deeper than %d levels", TOON_MAX_DEPTH);
    switch (v->kind) {
    case TOON_STRING:
        return toon_check_utf8(c, v->as.str.ptr, v->as.str.len, "a string");
    case TOON_ARRAY:
        for (size_t i = 0; i < v->as.arr.len; i++)
            if (toon_validate(c, v->as.arr.items[i], depth + 1) < 0)
                return -1;
        return 0;
    case TOON_OBJECT:
        return toon_validate_object(c, v, depth);
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------ */
/* Output buffer                                                       */

struct toon_enc {
    char *buf;
    size_t len, cap;
    bool oom;
    char delim;    /* the document delimiter, active everywhere */
    size_t indent; /* spaces per level */
    size_t lines;  /* lines started so far */
};

static bool toon_reserve(struct toon_enc *e, size_t n)
{
    if (e->oom)
        return false;
    if (e->cap - e->len > n)
        return true;
    size_t ncap = e->cap == 0 ? 256 : e->cap;
    while (ncap - e->len <= n)
        ncap *= 2;
    char *p = realloc(e->buf, ncap);
    if (p == NULL) {
        e->oom = true;
        return false;
    }
    e->buf = p;
    e->cap = ncap;
    return true;
}

static void toon_put(struct toon_enc *e, const char *s, size_t n)
{
    if (toon_reserve(e, n)) {
        memcpy(e->buf + e->len, s, n);
        e->len += n;
    }
}

static void toon_puts(struct toon_enc *e, const char *s)
{
    toon_put(e, s, strlen(s));
}

static void toon_putc(struct toon_enc *e, char ch)
{
    if (toon_reserve(e, 1))
        e->buf[e->len++] = ch;
}

/* Starts a line at `depth`: a newline before every line but the first. */
static void toon_line(struct toon_enc *e, size_t depth)
{
    if (e->lines++ > 0)
        toon_putc(e, '\n');
    size_t n = depth * e->indent;
    if (toon_reserve(e, n)) {
        memset(e->buf + e->len, ' ', n);
        e->len += n;
    }
}

/* Starts a list item line: "- " at `depth`. */
static void toon_item_line(struct toon_enc *e, size_t depth)
{
    toon_line(e, depth);
    toon_put(e, "- ", 2);
}

/* ------------------------------------------------------------------ */
/* Strings and keys                                                    */

/* Writes s between quotes with the escapes of spec section 7.1; other
 * control characters become \u00XX (lower-case hex), as the reference
 * encoder writes them. */
static void toon_put_quoted(struct toon_enc *e, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    toon_putc(e, '"');
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        toon_put(e, s + run, i - run);
        run = i + 1;
        const char *named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                                        : NULL;
        char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        if (named != NULL)
            toon_put(e, named, 2);
        else
            toon_put(e, u, 6);
    }
    toon_put(e, s + run, len - run);
    toon_putc(e, '"');
}

static bool toon_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Skips a run of digits from *i; false when there is none. */
static bool toon_digits(const char *s, size_t len, size_t *i)
{
    size_t start = *i;
    while (*i < len && toon_is_digit(s[*i]))
        (*i)++;
    return *i > start;
}

/* numeric-like: /^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i */
static bool toon_numeric_like(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (!toon_digits(s, len, &i))
        return false;
    if (i < len && s[i] == '.') {
        i++;
        if (!toon_digits(s, len, &i))
            return false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!toon_digits(s, len, &i))
            return false;
    }
    return i == len;
}

static bool toon_equals(const char *s, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* Spec 7.2: may this string value go unquoted under delimiter `delim`? */
static bool toon_safe_unquoted(const char *s, size_t len, char delim)
{
    if (len == 0)
        return false;
    if (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t')
        return false;
    if (s[0] == '-' || s[0] == '#')
        return false;
    if (toon_equals(s, len, "true") || toon_equals(s, len, "false") ||
        toon_equals(s, len, "null") || toon_numeric_like(s, len))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == (unsigned char)delim || strchr(":\"\\[]{}", c) != NULL)
            return false;
    }
    return true;
}

static void toon_put_string(struct toon_enc *e, const char *s, size_t len)
{
    if (toon_safe_unquoted(s, len, e->delim))
        toon_put(e, s, len);
    else
        toon_put_quoted(e, s, len);
}

static bool toon_key_char(char c, bool first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && (toon_is_digit(c) || c == '.'));
}

/* Spec 7.3: keys matching ^[A-Za-z_][A-Za-z0-9_.]*$ go unquoted. */
static void toon_put_key(struct toon_enc *e, const char *k, size_t len)
{
    bool plain = len > 0;
    for (size_t i = 0; i < len && plain; i++)
        plain = toon_key_char(k[i], i == 0);
    if (plain)
        toon_put(e, k, len);
    else
        toon_put_quoted(e, k, len);
}

/* ------------------------------------------------------------------ */
/* Numbers                                                             */

/* Adds one unit in the last place to the decimal digit string d (ndig
 * digits, value 0.d * 10^*exp10); a carry out of the first digit becomes
 * "1" with *exp10 + 1. */
static void toon_digits_up(char *d, int ndig, int *exp10)
{
    int i = ndig - 1;
    while (i >= 0 && d[i] == '9')
        d[i--] = '0';
    if (i >= 0) {
        d[i]++;
        return;
    }
    d[0] = '1';
    (*exp10)++;
}

/* Subtracts one unit in the last place; false when the first digit would
 * become 0 (that candidate has fewer digits and was tried already). */
static bool toon_digits_down(char *d, int ndig)
{
    int i = ndig - 1;
    while (i >= 0 && d[i] == '0')
        d[i--] = '9';
    if (i < 0 || (i == 0 && d[0] == '1'))
        return false;
    d[i]--;
    return true;
}

/* Parses the decimal 0.d * 10^exp10 (ndig digits) back into a double. */
static double toon_digits_value(const char *d, int ndig, int exp10)
{
    char tmp[48];
    snprintf(tmp, sizeof tmp, "0.%.*se%d", ndig, d, exp10);
    return strtod(tmp, NULL);
}

/* Tries p significant digits: the correctly rounded p-digit decimal, or
 * failing that its neighbour on the other side of x (the rounding interval
 * of a double can be asymmetric).  Stores the digits that read back as x
 * in d with x ~ 0.d * 10^*exp10 and returns p, or returns 0.  Some p-digit
 * decimal reads back exactly when one of these two does, so the answer is
 * monotonic in p. */
static int toon_try_digits(double x, int p, char d[20], int *exp10)
{
    char tmp[40], alt[20];
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, x); /* D[.DDD]e[+-]XX */
    int n = 0;
    for (const char *s = tmp; *s != 'e'; s++)
        if (*s != '.')
            d[n++] = *s;
    *exp10 = atoi(strchr(tmp, 'e') + 1) + 1;
    double back = toon_digits_value(d, n, *exp10);
    if (back == x)
        return n;
    int alt_exp = *exp10;
    memcpy(alt, d, (size_t)n);
    if (back < x)
        toon_digits_up(alt, n, &alt_exp);
    else if (!toon_digits_down(alt, n))
        return 0;
    if (toon_digits_value(alt, n, alt_exp) != x)
        return 0;
    memcpy(d, alt, (size_t)n);
    *exp10 = alt_exp;
    return n;
}

/* Finds the shortest digit string that reads back as x (x finite, > 0),
 * picking the closest such string, as ECMAScript Number::toString does:
 * a binary search over 1..17 digits (17 always read back).  Returns the
 * digit count; d and *exp10 as toon_try_digits.  Expects the C locale. */
static int toon_shortest(double x, char d[20], int *exp10)
{
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (toon_try_digits(x, mid, d, exp10) > 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return toon_try_digits(x, lo, d, exp10);
}

/* Lays out k significant digits d of value 0.d * 10^n as ECMAScript's
 * Number::toString does (step 6 onwards); returns the length. */
static size_t toon_layout_number(char *out, size_t cap, const char *d, int k, int n)
{
    size_t o = 0;
    if (k <= n && n <= 21) { /* integer: digits then zeros */
        memcpy(out, d, (size_t)k);
        for (o = (size_t)k; o < (size_t)n; o++)
            out[o] = '0';
    } else if (n > 0 && n <= 21) { /* point inside the digits */
        memcpy(out, d, (size_t)n);
        out[n] = '.';
        memcpy(out + n + 1, d + n, (size_t)(k - n));
        o = (size_t)k + 1;
    } else if (n > -6 && n <= 0) { /* 0.000ddd */
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        memcpy(out + o, d, (size_t)k);
        o += (size_t)k;
    } else { /* d.ddde+X */
        out[o++] = d[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, d + 1, (size_t)(k - 1));
            o += (size_t)(k - 1);
        }
        o += (size_t)snprintf(out + o, cap - o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    return o;
}

/* Writes x like ECMAScript's Number::toString: plain decimals for
 * 1e-7 <= |x| < 1e21, exponent form outside; -0 as 0, NaN/Inf as null. */
static void toon_put_double(struct toon_enc *e, double x)
{
    if (isnan(x) || isinf(x)) {
        toon_puts(e, "null");
        return;
    }
    if (x == 0) {
        toon_putc(e, '0');
        return;
    }
    if (x < 0) {
        toon_putc(e, '-');
        x = -x;
    }
    char d[20], out[40];
    int n, k = toon_shortest(x, d, &n);
    while (k > 1 && d[k - 1] == '0')
        k--;
    toon_put(e, out, toon_layout_number(out, sizeof out, d, k, n));
}

static void toon_put_primitive(struct toon_enc *e, const struct toon_value *v)
{
    char tmp[32];
    switch (v->kind) {
    case TOON_NULL:
        toon_puts(e, "null");
        break;
    case TOON_BOOL:
        toon_puts(e, v->as.b ? "true" : "false");
        break;
    case TOON_INT:
        snprintf(tmp, sizeof tmp, "%" PRId64, v->as.i);
        toon_puts(e, tmp);
        break;
    case TOON_UINT:
        snprintf(tmp, sizeof tmp, "%" PRIu64, v->as.u);
        toon_puts(e, tmp);
        break;
    case TOON_DOUBLE:
        toon_put_double(e, v->as.d);
        break;
    case TOON_STRING:
        toon_put_string(e, v->as.str.ptr, v->as.str.len);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Tabular shapes                                                      */

/* A tabular field: a primitive column (no children) or a nested field
 * group whose children describe the object every row holds there. */
struct toon_field {
    const struct toon_member *name; /* the first row's member */
    struct toon_field *children;
    size_t nchildren;
};

static bool toon_is_primitive(const struct toon_value *v)
{
    return v->kind != TOON_ARRAY && v->kind != TOON_OBJECT;
}

static bool toon_is_full_object(const struct toon_value *v)
{
    return v->kind == TOON_OBJECT && v->as.obj.len > 0;
}

/* Looks key up in obj, trying position `hint` first: rows of one shape
 * usually list their keys in the same order. */
static const struct toon_value *toon_get(const struct toon_value *obj,
                                         const struct toon_member *key, size_t hint)
{
    const struct toon_member *m = obj->as.obj.members;
    size_t n = obj->as.obj.len;
    if (hint < n && m[hint].key_len == key->key_len &&
        memcmp(m[hint].key, key->key, key->key_len) == 0)
        return m[hint].value;
    for (size_t i = 0; i < n; i++)
        if (m[i].key_len == key->key_len && memcmp(m[i].key, key->key, key->key_len) == 0)
            return m[i].value;
    return NULL;
}

static void toon_fields_free(struct toon_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        toon_fields_free(f[i].children, f[i].nchildren);
    free(f);
}

static int toon_tabular(const struct toon_value *const *rows, size_t nrows, struct toon_field **out,
                        size_t *nout);

/* Classifies one column: all primitives, or all non-empty objects of one
 * tabular shape (a nested field group).  1 yes, 0 no, -1 no memory. */
static int toon_column(const struct toon_value *const *col, size_t nrows, struct toon_field *f)
{
    bool prim = true, objs = true;
    for (size_t r = 0; r < nrows; r++) {
        prim = prim && toon_is_primitive(col[r]);
        objs = objs && toon_is_full_object(col[r]);
    }
    if (prim)
        return 1;
    if (!objs)
        return 0;
    return toon_tabular(col, nrows, &f->children, &f->nchildren);
}

/* Do all rows (objects) have the first row's key set? */
static bool toon_same_keys(const struct toon_value *const *rows, size_t nrows)
{
    const struct toon_value *first = rows[0];
    for (size_t r = 1; r < nrows; r++) {
        if (rows[r]->as.obj.len != first->as.obj.len)
            return false;
        for (size_t j = 0; j < first->as.obj.len; j++)
            if (toon_get(rows[r], &first->as.obj.members[j], j) == NULL)
                return false;
    }
    return true;
}

/* Decides whether objects `rows` share one tabular shape and, if so,
 * builds its field list in the first row's key order.  1 yes (fields in
 * *out), 0 no, -1 no memory. */
static int toon_tabular(const struct toon_value *const *rows, size_t nrows, struct toon_field **out,
                        size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (nrows == 0 || rows[0]->as.obj.len == 0 || !toon_same_keys(rows, nrows))
        return 0;
    size_t nf = rows[0]->as.obj.len;
    struct toon_field *f = calloc(nf, sizeof *f);
    const struct toon_value **col = malloc(nrows * sizeof *col);
    int rc = f != NULL && col != NULL ? 1 : -1;
    for (size_t j = 0; j < nf && rc == 1; j++) {
        f[j].name = &rows[0]->as.obj.members[j];
        for (size_t r = 0; r < nrows; r++)
            col[r] = toon_get(rows[r], f[j].name, j);
        rc = toon_column(col, nrows, &f[j]);
    }
    free(col);
    if (rc != 1) {
        toon_fields_free(f, nf);
        return rc;
    }
    *out = f;
    *nout = nf;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Encoders                                                            */

static bool toon_all_primitive(const struct toon_value *arr)
{
    for (size_t i = 0; i < arr->as.arr.len; i++)
        if (!toon_is_primitive(arr->as.arr.items[i]))
            return false;
    return true;
}

static bool toon_all_objects(const struct toon_value *arr)
{
    for (size_t i = 0; i < arr->as.arr.len; i++)
        if (arr->as.arr.items[i]->kind != TOON_OBJECT)
            return false;
    return true;
}

/* Tabular fields of an array of objects; false when it is not tabular. */
static bool toon_array_fields(struct toon_enc *e, const struct toon_value *arr,
                              struct toon_field **f, size_t *nf)
{
    if (!toon_all_objects(arr))
        return false;
    int rc =
        toon_tabular((const struct toon_value *const *)arr->as.arr.items, arr->as.arr.len, f, nf);
    if (rc < 0)
        e->oom = true;
    return rc > 0;
}

/* Fields of a keyed object: at least two entries, every value a
 * non-empty object, all of one tabular shape. */
static bool toon_keyed_fields(struct toon_enc *e, const struct toon_value *obj,
                              struct toon_field **f, size_t *nf)
{
    size_t n = obj->as.obj.len;
    if (n < 2)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!toon_is_full_object(obj->as.obj.members[i].value))
            return false;
    const struct toon_value **vals = malloc(n * sizeof *vals);
    if (vals == NULL) {
        e->oom = true;
        return false;
    }
    for (size_t i = 0; i < n; i++)
        vals[i] = obj->as.obj.members[i].value;
    int rc = toon_tabular(vals, n, f, nf);
    free(vals);
    if (rc < 0)
        e->oom = true;
    return rc > 0;
}

static void toon_put_fields(struct toon_enc *e, const struct toon_field *f, size_t nf)
{
    for (size_t i = 0; i < nf; i++) {
        if (i > 0)
            toon_putc(e, e->delim);
        toon_put_key(e, f[i].name->key, f[i].name->key_len);
        if (f[i].nchildren > 0) {
            toon_putc(e, '{');
            toon_put_fields(e, f[i].children, f[i].nchildren);
            toon_putc(e, '}');
        }
    }
}

/* header -> [key] "[" N [":"] [delim] "]" ["{" fields "}"] ":" */
static void toon_put_header(struct toon_enc *e, const struct toon_member *key, size_t n, bool keyed,
                            const struct toon_field *f, size_t nf)
{
    char tmp[32];
    if (key != NULL)
        toon_put_key(e, key->key, key->key_len);
    snprintf(tmp, sizeof tmp, "[%zu", n);
    toon_puts(e, tmp);
    if (keyed)
        toon_putc(e, ':');
    if (e->delim != ',')
        toon_putc(e, e->delim);
    toon_putc(e, ']');
    if (nf > 0) {
        toon_putc(e, '{');
        toon_put_fields(e, f, nf);
        toon_putc(e, '}');
    }
    toon_putc(e, ':');
}

/* inline -> header [" " v1 DELIM v2 ...] */
static void toon_put_inline(struct toon_enc *e, const struct toon_member *key,
                            const struct toon_value *arr)
{
    toon_put_header(e, key, arr->as.arr.len, false, NULL, 0);
    for (size_t i = 0; i < arr->as.arr.len; i++) {
        toon_putc(e, i == 0 ? ' ' : e->delim);
        toon_put_primitive(e, arr->as.arr.items[i]);
    }
}

/* Writes one row's leaf cells in field order, descending into groups. */
static void toon_put_cells(struct toon_enc *e, const struct toon_value *row,
                           const struct toon_field *f, size_t nf, bool *first)
{
    for (size_t i = 0; i < nf; i++) {
        const struct toon_value *v = toon_get(row, f[i].name, i);
        if (f[i].nchildren > 0) {
            toon_put_cells(e, v, f[i].children, f[i].nchildren, first);
            continue;
        }
        if (!*first)
            toon_putc(e, e->delim);
        *first = false;
        toon_put_primitive(e, v);
    }
}

static void toon_put_rows(struct toon_enc *e, const struct toon_value *arr,
                          const struct toon_field *f, size_t nf, size_t depth)
{
    for (size_t i = 0; i < arr->as.arr.len; i++) {
        bool first = true;
        toon_line(e, depth);
        toon_put_cells(e, arr->as.arr.items[i], f, nf, &first);
    }
}

/* entry -> key ": " cells, one line per member of a keyed object */
static void toon_put_entries(struct toon_enc *e, const struct toon_value *obj,
                             const struct toon_field *f, size_t nf, size_t depth)
{
    for (size_t i = 0; i < obj->as.obj.len; i++) {
        const struct toon_member *m = &obj->as.obj.members[i];
        bool first = true;
        toon_line(e, depth);
        toon_put_key(e, m->key, m->key_len);
        toon_put(e, ": ", 2);
        toon_put_cells(e, m->value, f, nf, &first);
    }
}

static void toon_enc_fields(struct toon_enc *e, const struct toon_value *obj, size_t from,
                            size_t depth);
static void toon_enc_item(struct toon_enc *e, const struct toon_value *v, size_t depth);

/* Items of an expanded list at `depth`. */
static void toon_enc_items(struct toon_enc *e, const struct toon_value *arr, size_t depth)
{
    for (size_t i = 0; i < arr->as.arr.len; i++)
        toon_enc_item(e, arr->as.arr.items[i], depth);
}

/* An array under `key` (NULL at the root) whose header line is at depth. */
static void toon_enc_array(struct toon_enc *e, const struct toon_member *key,
                           const struct toon_value *arr, size_t depth)
{
    struct toon_field *f;
    size_t nf;
    toon_line(e, depth);
    if (arr->as.arr.len == 0) {
        if (key != NULL) {
            toon_put_key(e, key->key, key->key_len);
            toon_put(e, ": []", 4);
        } else {
            toon_put(e, "[]", 2);
        }
    } else if (toon_all_primitive(arr)) {
        toon_put_inline(e, key, arr);
    } else if (toon_array_fields(e, arr, &f, &nf)) {
        toon_put_header(e, key, arr->as.arr.len, false, f, nf);
        toon_put_rows(e, arr, f, nf, depth + 1);
        toon_fields_free(f, nf);
    } else {
        toon_put_header(e, key, arr->as.arr.len, false, NULL, 0);
        toon_enc_items(e, arr, depth + 1);
    }
}

/* A keyed object under `key` (NULL at the root), header line at depth. */
static void toon_enc_keyed(struct toon_enc *e, const struct toon_member *key,
                           const struct toon_value *obj, struct toon_field *f, size_t nf,
                           size_t depth)
{
    toon_line(e, depth);
    toon_put_header(e, key, obj->as.obj.len, true, f, nf);
    toon_put_entries(e, obj, f, nf, depth + 1);
    toon_fields_free(f, nf);
}

/* field -> key ": " primitive | array | keyed | key ":" fields */
static void toon_enc_member(struct toon_enc *e, const struct toon_member *m, size_t depth)
{
    const struct toon_value *v = m->value;
    struct toon_field *f;
    size_t nf;
    if (v->kind == TOON_ARRAY) {
        toon_enc_array(e, m, v, depth);
    } else if (v->kind == TOON_OBJECT && toon_keyed_fields(e, v, &f, &nf)) {
        toon_enc_keyed(e, m, v, f, nf, depth);
    } else {
        toon_line(e, depth);
        toon_put_key(e, m->key, m->key_len);
        if (v->kind == TOON_OBJECT) {
            toon_putc(e, ':');
            toon_enc_fields(e, v, 0, depth + 1);
        } else {
            toon_put(e, ": ", 2);
            toon_put_primitive(e, v);
        }
    }
}

static void toon_enc_fields(struct toon_enc *e, const struct toon_value *obj, size_t from,
                            size_t depth)
{
    for (size_t i = from; i < obj->as.obj.len; i++)
        toon_enc_member(e, &obj->as.obj.members[i], depth);
}

/* The hyphen line of an object item whose first member is an array:
 * tabular rows and list items sit at depth + 2, under the "- ". */
static void toon_enc_first_array(struct toon_enc *e, const struct toon_member *m, size_t depth)
{
    const struct toon_value *arr = m->value;
    struct toon_field *f;
    size_t nf;
    toon_item_line(e, depth);
    if (arr->as.arr.len == 0) {
        toon_put_key(e, m->key, m->key_len);
        toon_put(e, ": []", 4);
    } else if (toon_all_primitive(arr)) {
        toon_put_inline(e, m, arr);
    } else if (toon_array_fields(e, arr, &f, &nf)) {
        toon_put_header(e, m, arr->as.arr.len, false, f, nf);
        toon_put_rows(e, arr, f, nf, depth + 2);
        toon_fields_free(f, nf);
    } else {
        toon_put_header(e, m, arr->as.arr.len, false, NULL, 0);
        toon_enc_items(e, arr, depth + 2);
    }
}

/* object item -> "-" (empty) | "- " first-member, rest at depth + 1 */
static void toon_enc_object_item(struct toon_enc *e, const struct toon_value *obj, size_t depth)
{
    struct toon_field *f;
    size_t nf;
    if (obj->as.obj.len == 0) {
        toon_line(e, depth);
        toon_putc(e, '-');
        return;
    }
    const struct toon_member *m = &obj->as.obj.members[0];
    const struct toon_value *v = m->value;
    if (v->kind == TOON_ARRAY) {
        toon_enc_first_array(e, m, depth);
    } else if (v->kind == TOON_OBJECT && toon_keyed_fields(e, v, &f, &nf)) {
        toon_item_line(e, depth);
        toon_put_header(e, m, v->as.obj.len, true, f, nf);
        toon_put_entries(e, v, f, nf, depth + 2);
        toon_fields_free(f, nf);
    } else {
        toon_item_line(e, depth);
        toon_put_key(e, m->key, m->key_len);
        if (v->kind == TOON_OBJECT) {
            toon_putc(e, ':');
            toon_enc_fields(e, v, 0, depth + 2);
        } else {
            toon_put(e, ": ", 2);
            toon_put_primitive(e, v);
        }
    }
    toon_enc_fields(e, obj, 1, depth + 1);
}

/* item -> "- " primitive | "- " inline | "- " header items | object item.
 * Anonymous arrays in a list are never tabular. */
static void toon_enc_item(struct toon_enc *e, const struct toon_value *v, size_t depth)
{
    if (v->kind == TOON_OBJECT) {
        toon_enc_object_item(e, v, depth);
        return;
    }
    toon_item_line(e, depth);
    if (toon_is_primitive(v)) {
        toon_put_primitive(e, v);
    } else if (toon_all_primitive(v)) {
        toon_put_inline(e, NULL, v);
    } else {
        toon_put_header(e, NULL, v->as.arr.len, false, NULL, 0);
        toon_enc_items(e, v, depth + 1);
    }
}

/* root -> primitive | array | keyed object | fields.  A root string that
 * starts with a byte order mark is quoted so no decoder can strip it. */
static void toon_enc_root(struct toon_enc *e, const struct toon_value *v)
{
    struct toon_field *f;
    size_t nf;
    if (v->kind == TOON_ARRAY) {
        toon_enc_array(e, NULL, v, 0);
    } else if (v->kind == TOON_OBJECT) {
        if (toon_keyed_fields(e, v, &f, &nf))
            toon_enc_keyed(e, NULL, v, f, nf, 0);
        else
            toon_enc_fields(e, v, 0, 0);
    } else if (v->kind == TOON_STRING && v->as.str.len >= 3 &&
               memcmp(v->as.str.ptr, "\xEF\xBB\xBF", 3) == 0) {
        toon_line(e, 0);
        toon_put_quoted(e, v->as.str.ptr, v->as.str.len);
    } else {
        toon_line(e, 0);
        toon_put_primitive(e, v);
    }
}

int toon_encode(const struct toon_value *v, const struct toon_options *opt, char **out,
                size_t *out_len, char *err, size_t errlen)
{
    struct toon_check c = {err, errlen};
    struct toon_enc e = {.delim = ',', .indent = 2};
    *out = NULL;
    *out_len = 0;
    if (opt != NULL && opt->delimiter != 0)
        e.delim = opt->delimiter;
    if (opt != NULL && opt->indent != 0)
        e.indent = (size_t)opt->indent;
    if (e.delim != ',' && e.delim != '\t' && e.delim != '|')
        return toon_fail(&c, "toon: the delimiter must be ',', tab or '|'");
    if (opt != NULL && (opt->indent < 0 || opt->indent > 64))
        return toon_fail(&c, "toon: indent must be 1..64 spaces");
    if (toon_validate(&c, v, 0) < 0)
        return -1;
    /* Numbers are formatted and read back with printf/strtod: pin the C
     * locale for this thread whatever the environment says. */
    locale_t cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (cloc == (locale_t)0)
        return toon_fail(&c, "toon: cannot create the C locale");
    locale_t prev = uselocale(cloc);
    toon_enc_root(&e, v);
    uselocale(prev);
    freelocale(cloc);
    if (!toon_reserve(&e, 1)) {
        free(e.buf);
        return toon_fail(&c, "toon: out of memory");
    }
    e.buf[e.len] = '\0';
    *out = e.buf;
    *out_len = e.len;
    return 0;
}
