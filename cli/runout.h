/*
 * runout: the RunOutputV1 envelope that `jett run --agent` prints, and the
 * interpreter host that fills it (the program's output, debug rows and
 * structured logs).
 *
 * Field order (DESIGN section 8): schema, status, termination, exit_code,
 * stdout, stderr, debug, logs, log_sources, log_source_graph_path_segments,
 * log_fields, [diagnostics], [profile], [error_kind, error].  Nothing the
 * program prints can add or change a field: its output is only ever the
 * value of the stdout and stderr strings.
 */
#ifndef JETT_CLI_RUNOUT_H
#define JETT_CLI_RUNOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/interp.h"

struct runout_buf {
    char *data;
    size_t len, cap;
};

struct runout_debug {
    uint64_t seq;
    char *path, *value;
    size_t value_len; /* the value may hold NUL */
    uint32_t line, column;
};

struct runout_log {
    uint64_t seq;
    char *level, *message;
    size_t message_len; /* the message may hold NUL */
    uint32_t source;
};

struct runout_field {
    uint64_t seq;
    char *key, *value;
    size_t key_len, value_len; /* both may hold NUL */
};

/* A log call site with the root->caller chain of functions that reached it. */
struct runout_source {
    char *path, *ns, *function;
    uint32_t line, column;
    char **chain;
    uint32_t n_chain;
};

struct runout_diag {
    char *path, *message;
    uint32_t line, column;
};

struct runout {
    bool capture;               /* --agent: keep the program's output */
    struct interp_state *state; /* for the call chain of log sources */
    const char *termination;    /* returned, runtime_error, interrupted, not_started */
    int exit_code;
    struct runout_buf out, err;
    struct runout_debug *debug;
    size_t n_debug, cap_debug;
    uint64_t debug_seq, log_seq;
    struct runout_log *logs;
    size_t n_logs, cap_logs;
    struct runout_source *sources;
    size_t n_sources, cap_sources;
    struct runout_field *fields;
    size_t n_fields, cap_fields;
    struct runout_diag *diags;
    size_t n_diags, cap_diags;
    const char *profile; /* "profile:\n..." TOON, spliced verbatim */
    size_t profile_len;
    const char *error_kind;
    char *error;
};

void runout_init(struct runout *r, bool capture);
void runout_free(struct runout *r);

/* The interpreter host writing into r (and through to fds 1 and 2 when
 * not capturing). */
struct interp_host runout_host(struct runout *r);

void runout_add_diag(struct runout *r, const char *path, uint32_t line, uint32_t column,
                     const char *message);
void runout_set_error(struct runout *r, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The whole document, malloc'd, without a trailing newline.  0 or -1. */
int runout_render(const struct runout *r, char **out, size_t *len, char *err, size_t errlen);

#endif
