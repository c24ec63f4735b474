/* value: type names, printing, equality and ordering of Jett values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtins.h"
#include "agent/heap.h"
#include "agent/interp-internal.h"
#include "agent/task.h"

const char *val_type_name(struct value v)
{
    static const char *const names[] = {"nil",    "bool",  "int",  "float", "fn",   "fn",
                                        "string", "bytes", "list", "map",   "task", "channel"};
    return names[v.tag];
}

const char *ast_type_name(struct ast_type t)
{
    static const char *const names[] = {"",     "any", "int", "float", "bool", "string", "bytes",
                                        "list", "map", "nil", "fn",    "task", "channel"};
    return names[t.base];
}

/* Whether v satisfies an annotation (secret<T> accepts a plain T too). */
bool val_matches(struct value v, struct ast_type t)
{
    if (v.secret && !t.secret && t.base != T_NONE)
        return false;
    switch (t.base) {
    case T_NONE:
    case T_ANY:
        return true;
    case T_INT:
        return v.tag == V_INT;
    case T_FLOAT:
        return v.tag == V_FLOAT;
    case T_BOOL:
        return v.tag == V_BOOL;
    case T_STRING:
        return v.tag == V_STR;
    case T_BYTES:
        return v.tag == V_BYTES;
    case T_LIST:
        return v.tag == V_LIST;
    case T_MAP:
        return v.tag == V_MAP;
    case T_NIL:
        return v.tag == V_NIL;
    case T_TASK:
        return v.tag == V_TASK;
    case T_CHANNEL:
        return v.tag == V_CHANNEL;
    default:
        return v.tag == V_FUNC || v.tag == V_BUILTIN;
    }
}

void sb_put(struct strbuf *b, const char *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = b->sp ? safepoint_realloc(b->sp, b->data, b->len, cap) : realloc(b->data, cap);
        if (d == NULL)
            abort();
        b->data = d;
        b->cap = cap;
    }
    if (b->sp && n > SAFEPOINT_CHUNK)
        safepoint_copy_all(b->sp, b->data + b->len, data, n);
    else
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sb_puts(struct strbuf *b, const char *str)
{
    sb_put(b, str, strlen(str));
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof tmp) {
        sb_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL)
        abort();
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
    free(big);
}

void sb_free(struct strbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* Shortest text that reads back as the same double; "1.0" not "1". */
static void val_format_float(double f, struct strbuf *b)
{
    if (isnan(f)) {
        sb_puts(b, "nan");
        return;
    }
    if (isinf(f)) {
        sb_puts(b, f < 0 ? "-inf" : "inf");
        return;
    }
    char tmp[400];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    double mag = fabs(f);
    if (strchr(tmp, 'e') != NULL && mag >= 1e-4 && mag < 1e16) {
        int exp10 = (int)floor(log10(mag));
        int decimals = prec - 1 - exp10;
        snprintf(tmp, sizeof tmp, "%.*f", decimals > 0 ? decimals : 0, f);
    }
    sb_puts(b, tmp);
    if (strpbrk(tmp, ".en") == NULL)
        sb_puts(b, ".0");
}

static bool quoted_escape(unsigned char c, bool bytes)
{
    return c == '"' || c == '\\' || c < 0x20 || c == 0x7f || (bytes && c >= 0x80);
}

/* One character of a quoted string that needs an escape. */
static void put_escape(unsigned char c, bool bytes, struct strbuf *b)
{
    if (c == '"' || c == '\\') {
        char e[2] = {'\\', (char)c};
        sb_put(b, e, 2);
    } else if (c == '\n') {
        sb_puts(b, "\\n");
    } else if (c == '\t') {
        sb_puts(b, "\\t");
    } else {
        sb_printf(b, bytes ? "\\x%02x" : "\\u{%x}", c);
    }
}

/* A string inside a container: quoted, with escapes.  Each run of
 * characters that need none goes in one piece, and a poll comes after
 * each chunk of the string: a call per character made a chunk take
 * milliseconds where instrumentation slows calls down. */
static void val_format_quoted(struct safepoint *sp, const struct heap_str *s, bool bytes,
                              struct strbuf *b)
{
    sb_puts(b, bytes ? "b\"" : "\"");
    const unsigned char *d = (const unsigned char *)s->data;
    for (uint32_t i = 0, polled = 0; i < s->len;) {
        uint32_t end = s->len - i > SAFEPOINT_CHUNK ? i + (uint32_t)SAFEPOINT_CHUNK : s->len, j = i;
        while (j < end && !quoted_escape(d[j], bytes))
            j++;
        if (j > i)
            sb_put(b, (const char *)d + i, j - i);
        if (j < end)
            put_escape(d[j++], bytes, b);
        i = j;
        if (i - polled >= SAFEPOINT_CHUNK && i < s->len) {
            safepoint_poll(sp);
            polled = i;
        }
    }
    sb_puts(b, "\"");
}

static void val_format_depth(const struct interp_program *p, struct safepoint *sp, struct value v,
                             bool quoted, struct strbuf *b, int depth);

/* Unquoted text, a chunk at a time. */
static void val_format_raw(struct safepoint *sp, const struct heap_str *s, struct strbuf *b)
{
    for (size_t at = 0; at < s->len; at += SAFEPOINT_CHUNK) {
        size_t n = s->len - at < SAFEPOINT_CHUNK ? s->len - at : SAFEPOINT_CHUNK;
        sb_put(b, s->data + at, n);
        safepoint_poll(sp);
    }
}

static void val_format_container(const struct interp_program *p, struct safepoint *sp,
                                 struct value v, struct strbuf *b, int depth)
{
    if (depth > 64) {
        sb_puts(b, v.tag == V_LIST ? "[...]" : "{...}");
        return;
    }
    if (v.tag == V_LIST) {
        sb_puts(b, "[");
        for (uint32_t i = 0; i < v.u.l->len; i++) {
            if (i)
                sb_puts(b, ", ");
            safepoint_poll(sp);
            val_format_depth(p, sp, v.u.l->items[i], true, b, depth + 1);
        }
        sb_puts(b, "]");
        return;
    }
    sb_puts(b, "{");
    bool first = true;
    for (uint32_t i = 0; i < v.u.m->used; i++) {
        const struct heap_map_entry *e = &v.u.m->entries[i];
        if (e->key == NULL)
            continue;
        if (!first)
            sb_puts(b, ", ");
        first = false;
        safepoint_poll(sp);
        val_format_quoted(sp, e->key, false, b);
        sb_puts(b, ": ");
        val_format_depth(p, sp, e->val, true, b, depth + 1);
    }
    sb_puts(b, "}");
}

static void val_format_depth(const struct interp_program *p, struct safepoint *sp, struct value v,
                             bool quoted, struct strbuf *b, int depth)
{
    if (v.secret) {
        sb_puts(b, "<secret>");
        return;
    }
    switch (v.tag) {
    case V_NIL:
        sb_puts(b, "nil");
        break;
    case V_BOOL:
        sb_puts(b, v.u.b ? "true" : "false");
        break;
    case V_INT:
        sb_printf(b, "%lld", (long long)v.u.i);
        break;
    case V_FLOAT:
        val_format_float(v.u.f, b);
        break;
    case V_FUNC:
        sb_printf(b, "<fn %s>", p ? p->infos[v.u.fn].name : "?");
        break;
    case V_BUILTIN:
        sb_printf(b, "<fn %s>", builtin_table[v.u.fn].name);
        break;
    case V_STR:
        if (quoted)
            val_format_quoted(sp, v.u.s, false, b);
        else
            val_format_raw(sp, v.u.s, b);
        break;
    case V_BYTES:
        val_format_quoted(sp, v.u.s, true, b);
        break;
    case V_TASK:
        sb_printf(b, "<task %u>", ((const struct interp_task *)v.u.o)->number);
        break;
    case V_CHANNEL:
        sb_puts(b, "<channel>");
        break;
    default:
        val_format_container(p, sp, v, b, depth);
        break;
    }
}

void val_format(const struct interp_program *p, struct safepoint *sp, struct value v, bool quoted,
                struct strbuf *b)
{
    if (b->sp == NULL)
        b->sp = sp;
    val_format_depth(p, sp, v, quoted, b, 0);
}

static bool val_equal_depth(struct safepoint *sp, struct value a, struct value b, int depth);

static bool val_equal_map(struct safepoint *sp, const struct heap_map *a, const struct heap_map *b,
                          int depth)
{
    if (a->len != b->len)
        return false;
    for (uint32_t i = 0; i < a->used; i++) {
        const struct heap_map_entry *e = &a->entries[i];
        if (e->key == NULL)
            continue;
        safepoint_poll(sp);
        struct value *o = heap_map_get(sp, (struct heap_map *)b, e->key);
        if (o == NULL || !val_equal_depth(sp, e->val, *o, depth + 1))
            return false;
    }
    return true;
}

/* Structural equality; int and float compare by numeric value. */
static bool val_equal_depth(struct safepoint *sp, struct value a, struct value b, int depth)
{
    if (depth > 64)
        return false;
    if (a.tag != b.tag) {
        if (a.tag == V_INT && b.tag == V_FLOAT)
            return (double)a.u.i == b.u.f;
        if (a.tag == V_FLOAT && b.tag == V_INT)
            return a.u.f == (double)b.u.i;
        return false;
    }
    switch (a.tag) {
    case V_NIL:
        return true;
    case V_BOOL:
        return a.u.b == b.u.b;
    case V_INT:
        return a.u.i == b.u.i;
    case V_FLOAT:
        return a.u.f == b.u.f;
    case V_FUNC:
    case V_BUILTIN:
        return a.u.fn == b.u.fn;
    case V_TASK:
    case V_CHANNEL:
        return a.u.o == b.u.o;
    case V_STR:
    case V_BYTES:
        return a.u.s == b.u.s || (a.u.s->len == b.u.s->len &&
                                  safepoint_compare(sp, a.u.s->data, b.u.s->data, a.u.s->len) == 0);
    case V_LIST:
        if (a.u.l->len != b.u.l->len)
            return false;
        for (uint32_t i = 0; i < a.u.l->len; i++) {
            safepoint_poll(sp);
            if (!val_equal_depth(sp, a.u.l->items[i], b.u.l->items[i], depth + 1))
                return false;
        }
        return true;
    default:
        return val_equal_map(sp, a.u.m, b.u.m, depth);
    }
}

bool val_equal(struct safepoint *sp, struct value a, struct value b)
{
    return val_equal_depth(sp, a, b, 0);
}

int val_compare(struct safepoint *sp, struct value a, struct value b)
{
    if (a.tag == V_INT && b.tag == V_INT)
        return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
    if ((a.tag == V_INT || a.tag == V_FLOAT) && (b.tag == V_INT || b.tag == V_FLOAT)) {
        double x = a.tag == V_INT ? (double)a.u.i : a.u.f;
        double y = b.tag == V_INT ? (double)b.u.i : b.u.f;
        if (x != x || y != y)
            return -2;
        return x < y ? -1 : x > y;
    }
    if ((a.tag == V_STR && b.tag == V_STR) || (a.tag == V_BYTES && b.tag == V_BYTES)) {
        uint32_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
        int c = safepoint_compare(sp, a.u.s->data, b.u.s->data, n);
        if (c != 0)
            return c < 0 ? -1 : 1;
        return a.u.s->len < b.u.s->len ? -1 : a.u.s->len > b.u.s->len;
    }
    return -2;
}
