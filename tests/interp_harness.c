/* interp_harness: see interp_harness.h. */
#include "tests/interp_harness.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct harness_buf {
    char *data;
    size_t len;
};

static void hb_put(struct harness_buf *b, const char *data, size_t len)
{
    b->data = realloc(b->data, b->len + len + 1);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

struct harness_host {
    struct harness_buf out, err, debug, logs;
};

static void hh_out(void *ctx, const char *data, size_t len)
{
    hb_put(&((struct harness_host *)ctx)->out, data, len);
}

static void hh_err(void *ctx, const char *data, size_t len)
{
    hb_put(&((struct harness_host *)ctx)->err, data, len);
}

static void hh_debug(void *ctx, const struct interp_debug_row *row)
{
    char line[2048];
    int n =
        snprintf(line, sizeof line, "%s:%u:%u %s\n", row->path, row->line, row->column, row->value);
    hb_put(&((struct harness_host *)ctx)->debug, line, (size_t)n);
}

static void hh_log(void *ctx, const struct interp_log_record *rec)
{
    struct harness_buf *b = &((struct harness_host *)ctx)->logs;
    char line[4096];
    int n =
        snprintf(line, sizeof line, "%s %s %s %s:%u:%u %s.%s", rec->accepted ? "ok" : "rejected",
                 rec->level ? rec->level : "-", rec->message ? rec->message : "-", rec->path,
                 rec->line, rec->column, rec->ns, rec->function);
    hb_put(b, line, (size_t)n);
    /* the caller chain, root first */
    const struct interp_program *p = interp_state_program(rec->state);
    for (uint32_t i = 0; i < interp_stack_depth(rec->state); i++) {
        struct interp_frame_info f = interp_stack_frame(rec->state, i);
        n = snprintf(line, sizeof line, "%s%s", i ? ">" : " [",
                     interp_func_get(p, f.func_id)->name);
        hb_put(b, line, (size_t)n);
    }
    hb_put(b, "]", 1);
    for (size_t i = 0; i < rec->n_fields; i++) {
        n = snprintf(line, sizeof line, " %s=%s", rec->fields[i].key, rec->fields[i].value);
        hb_put(b, line, (size_t)n);
    }
    hb_put(b, "\n", 1);
}

void harness_write(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

static int hr_unlink(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void harness_rmtree(const char *dir)
{
    nftw(dir, hr_unlink, 16, FTW_DEPTH | FTW_PHYS);
}

static void harness_diags(struct harness_run *r, struct interp_diags *d)
{
    struct harness_buf b = {0};
    hb_put(&b, "", 0);
    for (size_t i = 0; i < d->len; i++) {
        char line[2048];
        int n = interp_diag_format(&d->items[i], line, sizeof line);
        hb_put(&b, line, (size_t)n);
        hb_put(&b, "\n", 1);
    }
    r->diags = b.data;
    interp_diags_free(d);
}

void harness_run_file(struct harness_run *r, const char *path, unsigned long fail_alloc)
{
    harness_run_args(r, path, fail_alloc, NULL, 0);
}

void harness_run_args(struct harness_run *r, const char *path, unsigned long fail_alloc,
                      const char *const *args, size_t n_args)
{
    memset(r, 0, sizeof *r);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    harness_diags(r, &d);
    struct harness_host h = {0};
    hb_put(&h.out, "", 0);
    hb_put(&h.err, "", 0);
    hb_put(&h.debug, "", 0);
    hb_put(&h.logs, "", 0);
    if (p != NULL) {
        r->loaded = true;
        struct interp_host host = {&h, hh_out, hh_err, hh_debug, hh_log};
        struct interp_options opts = {args, n_args, fail_alloc, 0};
        struct interp_state *s = interp_new(p, &host, &opts);
        interp_run(s, &r->result);
        interp_free(s);
        interp_program_free(p);
    }
    r->out = h.out.data;
    r->out_len = h.out.len;
    r->err = h.err.data;
    r->err_len = h.err.len;
    r->debug = h.debug.data;
    r->logs = h.logs.data;
}

/* A fresh project holding `text` as main.jett (its path in `path`); the
 * project's folder (malloc'd). */
static char *main_project(const char *text, char path[4096])
{
    char *dir = tu_tmpdir();
    if (dir == NULL)
        abort();
    harness_write(dir, "main.jett", text);
    snprintf(path, 4096, "%s/main.jett", dir);
    return dir;
}

void harness_run(struct harness_run *r, const char *text)
{
    char path[4096];
    char *dir = main_project(text, path);
    harness_run_file(r, path, 0);
    harness_rmtree(dir);
    free(dir);
}

void harness_free(struct harness_run *r)
{
    free(r->diags);
    free(r->out);
    free(r->err);
    free(r->debug);
    free(r->logs);
    interp_result_free(&r->result);
}

char *harness_load_diags(const char *text)
{
    struct harness_run r;
    char path[4096];
    char *dir = main_project(text, path);
    memset(&r, 0, sizeof r);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    harness_diags(&r, &d);
    interp_program_free(p);
    harness_rmtree(dir);
    free(dir);
    return r.diags;
}
