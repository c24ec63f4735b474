/*
 * interp_frame: one Jett frame as the interpreter keeps it, for the
 * profiler's per-event path, which reads the frames in place
 * (interp_frames) instead of one call per field.
 */
#ifndef JETT_AGENT_INTERP_FRAME_H
#define JETT_AGENT_INTERP_FRAME_H

#include <stdint.h>

struct value;

/* One active Jett call.  A sampler reads `stmt_*` of the leaf and
 * `call_*` of the others.  `stack_node` is the profiler's: the node it
 * interned for this frame, INTERP_NODE_UNKNOWN from the call until then. */
struct interp_frame {
    uint32_t func_id;
    uint32_t stmt_start, stmt_end;
    uint32_t call_start, call_end;
    uint32_t stack_node;
    struct value *slots;
};

#endif
