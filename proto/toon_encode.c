/*
 * toon: the canonical TOON encoder.
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
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/toon-internal.h"

/* A message in err; returns -1. */
static int toon_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int toon_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
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

static void toon_put_primitive(struct toon_enc *e, const struct toon_value *v)
{
    char tmp[TOON_NUMBER_MAX];
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
        toon_put(e, tmp, toon_format_double(v->as.d, tmp));
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

/* An array, or a table (an array of objects written from its cells). */
static bool toon_is_array(const struct toon_value *v)
{
    return v->kind == TOON_ARRAY || v->kind == TOON_TABLE;
}

static bool toon_is_full_object(const struct toon_value *v)
{
    return v->kind == TOON_OBJECT && v->as.obj.len > 0;
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

/* An empty array under `key` (NULL at the root), its line started. */
static void toon_put_empty(struct toon_enc *e, const struct toon_member *key)
{
    if (key != NULL) {
        toon_put_key(e, key->key, key->key_len);
        toon_put(e, ": []", 4);
    } else {
        toon_put(e, "[]", 2);
    }
}

/* A table after its line is started: what the array of its rows would
 * write, `key: []` when it has none, else its header and a line of cells
 * a row, the rows at `depth`. */
static void toon_put_table(struct toon_enc *e, const struct toon_member *key,
                           const struct toon_value *t, size_t depth)
{
    size_t nf = t->as.tab->nfields;
    if (t->as.tab->nrows == 0) {
        toon_put_empty(e, key);
        return;
    }
    struct toon_field *f = calloc(nf, sizeof *f);
    if (f == NULL) {
        e->oom = true;
        return;
    }
    for (size_t i = 0; i < nf; i++)
        f[i].name = &t->as.tab->fields[i];
    toon_put_header(e, key, t->as.tab->nrows, false, f, nf);
    free(f);
    const unsigned char *p = t->as.tab->cells;
    for (size_t r = 0; r < t->as.tab->nrows; r++) {
        toon_line(e, depth);
        for (size_t i = 0; i < nf; i++) {
            struct toon_value cell;
            p = toon_table_cell(p, &cell);
            if (i > 0)
                toon_putc(e, e->delim);
            toon_put_primitive(e, &cell);
        }
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
    if (arr->kind == TOON_TABLE) {
        toon_put_table(e, key, arr, depth + 1);
    } else if (arr->as.arr.len == 0) {
        toon_put_empty(e, key);
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
    if (toon_is_array(v)) {
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
    if (arr->kind == TOON_TABLE) {
        toon_put_table(e, m, arr, depth + 2);
    } else if (arr->as.arr.len == 0) {
        toon_put_empty(e, m);
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
    if (toon_is_array(v)) {
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
    if (toon_is_array(v)) {
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
    struct toon_enc e = {.delim = ',', .indent = 2};
    *out = NULL;
    *out_len = 0;
    if (opt != NULL && opt->delimiter != 0)
        e.delim = opt->delimiter;
    if (opt != NULL && opt->indent != 0)
        e.indent = (size_t)opt->indent;
    if (e.delim != ',' && e.delim != '\t' && e.delim != '|')
        return toon_fail(err, errlen, "toon: the delimiter must be ',', tab or '|'");
    if (opt != NULL && (opt->indent < 0 || opt->indent > 64))
        return toon_fail(err, errlen, "toon: indent must be 1..64 spaces");
    if (toon_validate_tree(v, err, errlen) < 0)
        return -1;
    /* Numbers are formatted and read back with printf/strtod: pin the C
     * locale for this thread whatever the environment says. */
    locale_t cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (cloc == (locale_t)0)
        return toon_fail(err, errlen, "toon: cannot create the C locale");
    locale_t prev = uselocale(cloc);
    toon_enc_root(&e, v);
    uselocale(prev);
    freelocale(cloc);
    if (!toon_reserve(&e, 1)) {
        free(e.buf);
        return toon_fail(err, errlen, "toon: out of memory");
    }
    e.buf[e.len] = '\0';
    *out = e.buf;
    *out_len = e.len;
    return 0;
}
