/*
 * run_stackwalk: the test-only JETT_TEST_STACK_WALK=PATH knob.  In memory
 * mode it writes, for every heap event in order, one line with the Jett
 * frames as the interpreter shows them at that moment, root first, each
 * "FUNC:START:END" where the span is the call being executed for every
 * frame but the leaf and the current statement for the leaf.  The line
 * is "KEPT DEPTH FRAME...": DEPTH frames in all, of which only the first
 * RUN_STACKWALK_FRAMES are shown (no stack records more), and the first
 * KEPT of those are the previous line's and not repeated.  A test derives
 * the expected stack of each ALLOC from it, independently of the
 * profiler's per-frame nodes.
 */
#ifndef JETT_CLI_RUN_STACKWALK_H
#define JETT_CLI_RUN_STACKWALK_H

#include <stdio.h>

#include "agent/interp.h"

#define RUN_STACKWALK_FRAMES 128

struct run_stackwalk {
    FILE *f;
    struct interp_frame_info last[RUN_STACKWALK_FRAMES];
    uint32_t n;
};

/* The profiler_event_hook; ctx is a struct run_stackwalk. */
void run_stackwalk_event(void *ctx, const struct interp_state *s);

#endif
