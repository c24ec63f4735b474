/* runout_host: the interpreter host that fills a RunOutputV1 envelope. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/run_stdout.h"
#include "cli/runout.h"
#include "proto/capture.h"

/* Grows an array of `size`-byte items to hold one more; NULL on failure. */
static void *more(void *arr, size_t *cap, size_t len, size_t size)
{
    if (len < *cap)
        return arr;
    size_t n = *cap ? *cap * 2 : 16;
    void *p = realloc(arr, n * size);
    if (p)
        *cap = n;
    return p;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* A NUL-terminated copy of len bytes that may hold NUL themselves,
 * copied with the run's safe points between chunks (`st`: the run that
 * handed them over; NULL: none). */
static char *dup_bytes(const struct interp_state *st, const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (p && len) {
        if (st)
            interp_host_copy(st, p, s, len);
        else
            memcpy(p, s, len);
    }
    if (p)
        p[len] = 0;
    return p;
}

static void buf_append(struct runout_buf *b, const char *data, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return;
        b->data = p, b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

static void host_stdout(void *ctx, const char *data, size_t len)
{
    struct runout *r = ctx;
    if (r->capture)
        buf_append(&r->out, data, len);
    else
        run_stdout_write(data, len);
}

static void host_stderr(void *ctx, const char *data, size_t len)
{
    struct runout *r = ctx;
    if (r->capture) {
        buf_append(&r->err, data, len);
    } else {
        run_stdout_flush(); /* keep the program's interleaving on a terminal */
        capture_write_all(STDERR_FILENO, data, len);
    }
}

static void host_debug(void *ctx, const struct interp_debug_row *row)
{
    struct runout *r = ctx;
    struct runout_debug *d = more(r->debug, &r->cap_debug, r->n_debug, sizeof *d);
    if (!d)
        return;
    r->debug = d;
    char *value =
        dup_bytes(row->state, row->value ? row->value : "", row->value ? row->value_len : 0);
    d[r->n_debug++] = (struct runout_debug){++r->debug_seq, dup_or_empty(row->path),
                                            value,          value ? row->value_len : 0,
                                            row->line,      row->column};
}

/* The root->caller chain of functions at the log call, as "ns.fn" (the
 * stack of the task that logged). */
static void source_chain(const struct interp_state *st, struct runout_source *src)
{
    uint32_t depth = st ? interp_stack_depth(st) : 0;
    const struct interp_program *p = st ? interp_state_program(st) : NULL;
    src->chain = calloc(depth ? depth : 1, sizeof *src->chain);
    src->n_chain = 0;
    for (uint32_t i = 0; src->chain && i < depth; i++) {
        interp_host_poll(st); /* a deep stack is many segments */
        const struct interp_func_info *f = interp_func_get(p, interp_stack_frame(st, i).func_id);
        size_t n = strlen(f->ns) + strlen(f->name) + 2;
        char *seg = malloc(n);
        if (!seg)
            break;
        snprintf(seg, n, "%s.%s", f->ns, f->name);
        src->chain[src->n_chain++] = seg;
    }
}

static bool same_chain(const struct runout_source *a, const struct runout_source *b)
{
    if (a->n_chain != b->n_chain)
        return false;
    for (uint32_t i = 0; i < a->n_chain; i++)
        if (strcmp(a->chain[i], b->chain[i]) != 0)
            return false;
    return true;
}

static void source_free(struct runout_source *s)
{
    free(s->path), free(s->ns), free(s->function);
    for (uint32_t i = 0; i < s->n_chain; i++)
        free(s->chain[i]);
    free(s->chain);
}

/* The index of the record's source, adding it when new. */
static uint32_t source_of(struct runout *r, const struct interp_log_record *rec)
{
    struct runout_source s = {dup_or_empty(rec->path),
                              dup_or_empty(rec->ns),
                              dup_or_empty(rec->function),
                              rec->line,
                              rec->column,
                              NULL,
                              0};
    source_chain(rec->state ? rec->state : r->state, &s);
    for (size_t i = 0; i < r->n_sources; i++) {
        struct runout_source *o = &r->sources[i];
        if (o->line == s.line && o->column == s.column && strcmp(o->path, s.path) == 0 &&
            same_chain(o, &s)) {
            source_free(&s);
            return (uint32_t)i;
        }
    }
    struct runout_source *arr = more(r->sources, &r->cap_sources, r->n_sources, sizeof *arr);
    if (!arr) {
        source_free(&s);
        return 0;
    }
    r->sources = arr;
    arr[r->n_sources] = s;
    return (uint32_t)r->n_sources++;
}

static void host_log(void *ctx, const struct interp_log_record *rec)
{
    struct runout *r = ctx;
    uint64_t seq = ++r->log_seq; /* a rejected record still takes its number */
    if (!rec->accepted)
        return;
    struct runout_log *l = more(r->logs, &r->cap_logs, r->n_logs, sizeof *l);
    if (!l)
        return;
    r->logs = l;
    uint32_t src = source_of(r, rec);
    const struct interp_state *st = rec->state ? rec->state : r->state;
    char *message = dup_bytes(st, rec->message ? rec->message : "", rec->message_len);
    l[r->n_logs++] = (struct runout_log){seq, dup_or_empty(rec->level), message,
                                         message ? rec->message_len : 0, src};
    for (size_t i = 0; i < rec->n_fields; i++) {
        struct runout_field *f = more(r->fields, &r->cap_fields, r->n_fields, sizeof *f);
        if (!f)
            return;
        r->fields = f;
        const struct interp_log_field *in = &rec->fields[i];
        char *key = dup_bytes(st, in->key, in->key_len);
        char *value = dup_bytes(st, in->value, in->value_len);
        f[r->n_fields++] = (struct runout_field){seq, key, value, key ? in->key_len : 0,
                                                 value ? in->value_len : 0};
    }
}

struct interp_host runout_host(struct runout *r)
{
    struct interp_host h = {r, host_stdout, host_stderr, host_debug, host_log};
    return h;
}

void runout_init(struct runout *r, bool capture)
{
    memset(r, 0, sizeof *r);
    r->capture = capture;
    r->termination = "not_started";
}

void runout_add_diag(struct runout *r, const char *path, uint32_t line, uint32_t column,
                     const char *message)
{
    struct runout_diag *d = more(r->diags, &r->cap_diags, r->n_diags, sizeof *d);
    if (!d)
        return;
    r->diags = d;
    d[r->n_diags++] = (struct runout_diag){dup_or_empty(path), dup_or_empty(message), line, column};
}

void runout_set_error(struct runout *r, const char *kind, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(r->error);
    r->error_kind = kind;
    r->error = strdup(buf);
}

void runout_free(struct runout *r)
{
    free(r->out.data), free(r->err.data);
    for (size_t i = 0; i < r->n_debug; i++)
        free(r->debug[i].path), free(r->debug[i].value);
    for (size_t i = 0; i < r->n_logs; i++)
        free(r->logs[i].level), free(r->logs[i].message);
    for (size_t i = 0; i < r->n_sources; i++)
        source_free(&r->sources[i]);
    for (size_t i = 0; i < r->n_fields; i++)
        free(r->fields[i].key), free(r->fields[i].value);
    for (size_t i = 0; i < r->n_diags; i++)
        free(r->diags[i].path), free(r->diags[i].message);
    free(r->debug), free(r->logs), free(r->sources), free(r->fields), free(r->diags);
    free(r->error);
}
