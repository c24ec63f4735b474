/* one_frame_stacks: the text of a CPU capture whose stack budget (4096
 * bytes) is far too small for its stacks: n stacks of one frame of
 * function `ns.fn`, sample i on stack i, so that a consumer keeps the
 * first few stacks and must say what it did with the samples of the
 * rest.  The caller ends the EVENTS section and writes FINISH. */
#ifndef JETT_TESTS_ONE_FRAME_STACKS_H
#define JETT_TESTS_ONE_FRAME_STACKS_H

#include <stdio.h>

static inline size_t one_frame_stacks(char *t, size_t cap, const char *ns, const char *fn, int n)
{
    size_t len = (size_t)snprintf(
        t, cap,
        "HELLO version=1 mode=cpu rate_hz=1000 threshold_bp=500 limit=10 cpu_budget=33554432 "
        "retention_budget=67108864 stack_budget=4096 backend=\"interpreter_safe_point\" "
        "capabilities=cpu_tick_source,safe_stack_capture colour=false\n"
        "FUNC id=0 namespace=\"%s\" function=\"%s\" source=- decl=-\nEVENTS\n",
        ns, fn);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "  STACK id=%d parent=- func=0 site=-\n", i);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "  CPU_SAMPLE seq=%d tick=%d task=- actor=- thread=0 state=jett "
                                "stack=%d span=-\n",
                                i + 1, i + 1, i);
    return len;
}

#endif
