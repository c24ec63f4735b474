/* run_stackwalk: see run_stackwalk.h. */
#include "cli/run_stackwalk.h"

#include <string.h>

static bool same(struct interp_frame_info a, struct interp_frame_info b)
{
    return a.func_id == b.func_id && a.span.start == b.span.start && a.span.end == b.span.end;
}

void run_stackwalk_event(void *ctx, const struct interp_state *s)
{
    struct run_stackwalk *w = ctx;
    uint32_t depth = interp_stack_depth(s);
    uint32_t n = depth < RUN_STACKWALK_FRAMES ? depth : RUN_STACKWALK_FRAMES, kept = 0;
    struct interp_frame_info now[RUN_STACKWALK_FRAMES];
    for (uint32_t i = 0; i < n; i++)
        now[i] = interp_stack_frame(s, i);
    while (kept < n && kept < w->n && same(now[kept], w->last[kept]))
        kept++;
    fprintf(w->f, "%u %u", kept, depth);
    for (uint32_t i = kept; i < n; i++)
        fprintf(w->f, " %u:%u:%u", now[i].func_id, now[i].span.start, now[i].span.end);
    fputc('\n', w->f);
    memcpy(w->last, now, n * sizeof *now);
    w->n = n;
}
