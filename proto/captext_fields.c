/*
 * captext_fields: the tokenizer and value parsers of the text form.
 *
 * Each line is tokenised into KEYWORD KEY=VALUE...; values are bare tokens
 * or double-quoted strings with \" \\ \n \t \r \xHH escapes.  Fields must
 * appear in the order dump writes them.  Every frame is pushed through a
 * wire decoder as soon as it is built, so an invalid record is reported
 * with the line that wrote it.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>

#include "proto/captext-internal.h"
#include "proto/captext.h"

const char *const captext_modes[2] = {"cpu", "memory"};
const char *const captext_origins[3] = {"project", "dependency", "stdlib"};
const char *const captext_span_kinds[3] = {"comment", "literal", "secret"};
const char *const captext_states[4] = {"jett", "runtime", "waiting", "unavailable"};
const char *const captext_ops[3] = {"allocate", "resize", "free"};
const char *const captext_terminations[3] = {"returned", "runtime_error", "interrupted"};

int pack_err(struct packer *p, const char *fmt, ...)
{
    int n = snprintf(p->err, p->errlen, "%u: ", p->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < p->errlen)
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Decodes a quoted value starting after the opening quote. */
static int unquote(struct packer *p, const char **s, const char *end, char *dst, size_t *dlen)
{
    const char *q = *s;
    size_t n = 0;
    while (q < end && *q != '"') {
        char c = *q++;
        if (c != '\\') {
            dst[n++] = c;
            continue;
        }
        if (q >= end)
            return pack_err(p, "string ends inside an escape");
        c = *q++;
        static const char from[] = "\"\\ntr", to[] = "\"\\\n\t\r";
        const char *hit = c ? strchr(from, c) : NULL;
        if (hit) {
            dst[n++] = to[hit - from];
        } else if (c == 'x' && end - q >= 2 && isxdigit((unsigned char)q[0]) &&
                   isxdigit((unsigned char)q[1])) {
            char hex[3] = {q[0], q[1], 0};
            dst[n++] = (char)strtoul(hex, NULL, 16);
            q += 2;
        } else
            return pack_err(p, "unknown escape '\\%c' in a string", c);
    }
    if (q >= end)
        return pack_err(p, "string is not closed by '\"'");
    *s = q + 1, *dlen = n;
    return 0;
}

/* Splits a line into its keyword and KEY=VALUE fields. */
int pack_tokenize(struct packer *p, const char *s, const char *end)
{
    if ((size_t)(end - s) >= p->strcap) {
        char *nb = realloc(p->strbuf, (size_t)(end - s) + 1);
        if (!nb)
            return pack_err(p, "out of memory");
        p->strbuf = nb, p->strcap = (size_t)(end - s) + 1;
    }
    size_t used = 0;
    p->kw = s;
    while (s < end && *s != ' ')
        s++;
    p->kw_len = (size_t)(s - p->kw);
    p->nf = 0;
    for (;;) {
        while (s < end && *s == ' ')
            s++;
        if (s >= end)
            return 0;
        if (p->nf == PACK_MAX_FIELDS)
            return pack_err(p, "too many fields");
        struct pack_field *f = &p->f[p->nf++];
        f->key = s;
        while (s < end && *s != '=' && *s != ' ')
            s++;
        if (s >= end || *s != '=')
            return pack_err(p, "expected KEY=VALUE, found '%.*s'", (int)(s - f->key), f->key);
        f->key_len = (size_t)(s - f->key);
        s++;
        f->quoted = s < end && *s == '"';
        if (f->quoted) {
            s++;
            f->val = p->strbuf + used;
            if (unquote(p, &s, end, p->strbuf + used, &f->val_len) != 0)
                return -1;
            used += f->val_len;
            if (s < end && *s != ' ')
                return pack_err(p, "expected a space after the string of '%.*s'", (int)f->key_len,
                                f->key);
        } else {
            f->val = s;
            while (s < end && *s != ' ')
                s++;
            f->val_len = (size_t)(s - f->val);
        }
    }
}

bool pack_kw_is(const struct packer *p, const char *kw)
{
    return strlen(kw) == p->kw_len && memcmp(kw, p->kw, p->kw_len) == 0;
}

/* The i-th field, which must be named `key`. */
const struct pack_field *pack_field(struct packer *p, int i, const char *key)
{
    if (i >= p->nf) {
        pack_err(p, "%.*s: missing field '%s'", (int)p->kw_len, p->kw, key);
        return NULL;
    }
    const struct pack_field *f = &p->f[i];
    if (strlen(key) != f->key_len || memcmp(key, f->key, f->key_len) != 0) {
        pack_err(p, "%.*s: expected field '%s', found '%.*s'", (int)p->kw_len, p->kw, key,
                 (int)f->key_len, f->key);
        return NULL;
    }
    return f;
}

int pack_no_more(struct packer *p, int n)
{
    if (p->nf > n)
        return pack_err(p, "%.*s: unexpected field '%.*s'", (int)p->kw_len, p->kw,
                        (int)p->f[n].key_len, p->f[n].key);
    return 0;
}

static bool is_none(const struct pack_field *f)
{
    return !f->quoted && f->val_len == 1 && f->val[0] == '-';
}

/* Parses a decimal u64 from s[0..n). */
bool pack_parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 20)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* A number field; "-" gives `none` when allowed (none != 0). */
static int pack_num(struct packer *p, int i, const char *key, uint64_t max, uint64_t none,
                    uint64_t *out)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    if (none && is_none(f)) {
        *out = none;
        return 0;
    }
    if (f->quoted || !pack_parse_u64(f->val, f->val_len, out) || *out > max)
        return pack_err(p, "%s: '%.*s' is not a number from 0 to %llu%s", key, (int)f->val_len,
                        f->val, (unsigned long long)max, none ? " or '-'" : "");
    return 0;
}

int pack_num32(struct packer *p, int i, const char *key, bool opt, uint32_t *out)
{
    uint64_t v;
    if (pack_num(p, i, key, WIRE_NONE32 - 1, opt ? WIRE_NONE32 : 0, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int pack_num64(struct packer *p, int i, const char *key, bool opt, uint64_t *out)
{
    return pack_num(p, i, key, WIRE_NONE64 - 1, opt ? WIRE_NONE64 : 0, out);
}

int pack_u64(struct packer *p, int i, const char *key, uint64_t *out)
{
    return pack_num(p, i, key, UINT64_MAX, 0, out);
}

int pack_size(struct packer *p, int i, const char *key, bool present, const char *why,
              uint64_t *out)
{
    if (present)
        return pack_u64(p, i, key, out);
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    if (!is_none(f))
        return pack_err(p, "%s: '%.*s', but %s (write '-')", key, (int)f->val_len, f->val, why);
    *out = WIRE_NONE64;
    return 0;
}

int pack_enum(struct packer *p, int i, const char *key, const char *const *names, int n,
              uint8_t *out)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    for (int k = 0; k < n; k++)
        if (!f->quoted && strlen(names[k]) == f->val_len &&
            memcmp(names[k], f->val, f->val_len) == 0) {
            *out = (uint8_t)k;
            return 0;
        }
    return pack_err(p, "%s: unknown value '%.*s'", key, (int)f->val_len, f->val);
}

int pack_bool(struct packer *p, int i, const char *key, bool *out)
{
    static const char *const names[2] = {"false", "true"};
    uint8_t v;
    if (pack_enum(p, i, key, names, 2, &v) != 0)
        return -1;
    *out = v;
    return 0;
}

int pack_str(struct packer *p, int i, const char *key, struct wire_str *out)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    if (!f->quoted)
        return pack_err(p, "%s: expected a double-quoted string", key);
    if (f->val_len > WIRE_MAX_FRAME)
        return pack_err(p, "%s: string longer than a frame", key);
    out->ptr = f->val, out->len = (uint32_t)f->val_len;
    return 0;
}

int pack_opt_str(struct packer *p, int i, const char *key, struct wire_str *out)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    if (is_none(f)) {
        *out = (struct wire_str){NULL, 0};
        return 0;
    }
    return pack_str(p, i, key, out);
}

/* "A-B" or "-". */
int pack_span_text(struct packer *p, const char *key, const char *s, size_t n,
                   struct wire_span *out)
{
    if (n == 1 && s[0] == '-') {
        *out = WIRE_SPAN_NONE;
        return 0;
    }
    const char *dash = memchr(s, '-', n);
    uint64_t a, b;
    if (!dash || !pack_parse_u64(s, (size_t)(dash - s), &a) ||
        !pack_parse_u64(dash + 1, n - (size_t)(dash - s) - 1, &b) || a >= WIRE_NONE32 ||
        b >= WIRE_NONE32)
        return pack_err(p, "%s: '%.*s' is not START-END or '-'", key, (int)n, s);
    out->start = (uint32_t)a, out->end = (uint32_t)b;
    return 0;
}

int pack_span(struct packer *p, int i, const char *key, struct wire_span *out)
{
    const struct pack_field *f = pack_field(p, i, key);
    if (!f)
        return -1;
    return pack_span_text(p, key, f->val, f->val_len, out);
}
