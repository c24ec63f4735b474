/* source: building per-source metadata (internal; the public view is
 * struct interp_source in agent/interp.h). */
#ifndef JETT_AGENT_SOURCE_H
#define JETT_AGENT_SOURCE_H

#include "agent/interp.h"

void source_add_span(struct interp_source *src, enum interp_span_kind kind, uint32_t start,
                     uint32_t end);
/* Computes line starts; 0 or -1 on allocation failure. */
int source_index_lines(struct interp_source *src);
void source_sort_spans(struct interp_source *src);
/* Checks what the run manifest will carry of src -- its logical path and
 * spans -- against the wire's rules (proto/wire_rules.h), so the daemon
 * never refuses a record after user code ran: a diagnostic when not. */
void source_check_wire(const struct interp_source *src, struct interp_diags *d);
void source_free(struct interp_source *src);

#endif
