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
void source_free(struct interp_source *src);

#endif
