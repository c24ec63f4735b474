/* diag: building diagnostics (internal). */
#ifndef JETT_AGENT_DIAG_H
#define JETT_AGENT_DIAG_H

#include "agent/interp.h"
#include "agent/source.h"

/* Adds "message" at `offset` of src (or line/column 1:1 when src is NULL
 * and path is given).  printf-style. */
void diag_add(struct interp_diags *d, const struct interp_source *src, uint32_t offset,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_add_path(struct interp_diags *d, const char *path, uint32_t line, uint32_t column,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
