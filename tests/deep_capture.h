/* deep_capture: a CPU capture whose last STACK is one frame deeper than
 * the wire allows, built from records directly (pack refuses it). */
#ifndef JETT_TESTS_DEEP_CAPTURE_H
#define JETT_TESTS_DEEP_CAPTURE_H

#include <stdlib.h>

#include "proto/capture.h"
#include "proto/wire.h"

/* depth STACK entries, each called from the one before, after a HELLO
 * and FUNC 0, then FINISH. */
static inline void deep_capture(msgpack_sbuffer *sb, unsigned depth)
{
    msgpack_sbuffer_write(sb, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
    struct wire_hello h = {
        WIRE_PROTOCOL_VERSION,
        WIRE_MODE_CPU,
        {1000, 500, 10, WIRE_CPU_BUDGET, WIRE_RETENTION_BUDGET, WIRE_STACK_BUDGET},
        {"interpreter_safe_point", 22},
        WIRE_CAP_CPU_TICK_SOURCE,
        false};
    wire_encode_hello(sb, &h);
    struct wire_func f = {0, {"m", 1}, {"f", 1}, WIRE_NONE32, WIRE_SPAN_NONE};
    wire_encode_func(sb, &f);
    uint8_t *bin = malloc((size_t)depth * WIRE_STACK_SIZE);
    size_t n = 0;
    for (unsigned i = 0; bin && i < depth; i++) {
        struct wire_stack s = {i, i ? i - 1 : WIRE_NONE32, 0, WIRE_SPAN_NONE};
        n += wire_put_stack(bin + n, &s);
    }
    wire_encode_events(sb, depth, bin, n);
    free(bin);
    struct wire_finish fin = {WIRE_TERM_RETURNED, 1, 1, 0, 0, 0, false, false};
    wire_encode_finish(sb, &fin);
}

#endif
