/* interp_harness: runs Jett source text in a temporary project and
 * captures everything the program and the interpreter report. */
#ifndef JETT_TESTS_INTERP_HARNESS_H
#define JETT_TESTS_INTERP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/interp.h"
#include "testutil.h" /* tu_tmpdir for the projects */

struct harness_run {
    bool loaded;
    char *diags; /* every diagnostic line, '\n'-terminated */
    char *out, *err;
    size_t out_len, err_len;
    char *debug; /* "path:line:column value\n" per row */
    char *logs;  /* "accepted level message path:line:col ns.fn k=v...\n" per record */
    struct interp_result result;
};

/* Writes text to dir/rel, creating folders. */
void harness_write(const char *dir, const char *rel, const char *text);
void harness_rmtree(const char *dir);

/* Loads and runs `path` (fail_alloc: 0 = never). */
void harness_run_file(struct harness_run *r, const char *path, unsigned long fail_alloc);
/* The same with main's args. */
void harness_run_args(struct harness_run *r, const char *path, unsigned long fail_alloc,
                      const char *const *args, size_t n_args);
/* Writes text as main.jett in a fresh project and runs it. */
void harness_run(struct harness_run *r, const char *text);
void harness_free(struct harness_run *r);

/* Just loads: returns diagnostics text ("" when it loaded). */
char *harness_load_diags(const char *text);

#endif
