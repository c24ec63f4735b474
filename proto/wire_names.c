/* wire_names: the stable names of record types, capabilities and errors. */
#include "proto/wire.h"

const char *const wire_capability_names[WIRE_CAP_COUNT] = {
    "cpu_tick_source",
    "safe_stack_capture",
    "jett_runtime_thread_registration",
    "task_attribution",
    "source_spans",
    "process_cpu_time",
    "jett_heap_allocation_hooks",
    "free_and_resize_events",
};

const char *const wire_type_names[WIRE_TYPE_MAX + 1] = {
    [0] = "?",
    [WIRE_HELLO] = "HELLO",
    [WIRE_READY] = "READY",
    [WIRE_UNSUPPORTED] = "UNSUPPORTED",
    [WIRE_SOURCE] = "SOURCE",
    [WIRE_FUNC] = "FUNC",
    [WIRE_EVENTS] = "EVENTS",
    [WIRE_FINISH] = "FINISH",
    [WIRE_RESULT] = "RESULT",
    [WIRE_CALLS] = "CALLS",
    [WIRE_RETAINED] = "RETAINED",
};

const char *wire_errcode_name(enum wire_errcode code)
{
    switch (code) {
    case WIRE_OK:
        return "ok";
    case WIRE_E_FRAME_SIZE:
        return "frame-size";
    case WIRE_E_TRUNCATED:
        return "truncated";
    case WIRE_E_MSGPACK:
        return "msgpack";
    case WIRE_E_TYPE:
        return "type";
    case WIRE_E_ARITY:
        return "arity";
    case WIRE_E_FIELD_TYPE:
        return "field-type";
    case WIRE_E_RANGE:
        return "range";
    case WIRE_E_REF:
        return "reference";
    case WIRE_E_PATH:
        return "path";
    case WIRE_E_SEQUENCE:
        return "sequence";
    case WIRE_E_ORDER:
        return "order";
    case WIRE_E_UTF8:
        return "utf8";
    case WIRE_E_LIMIT:
        return "limit";
    case WIRE_E_NOMEM:
        return "nomem";
    }
    return "?";
}

uint32_t wire_line_starts(const char *text, uint32_t len, uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    if (cap > 0)
        out[0] = 0;
    n = 1;
    for (uint32_t i = 0; i < len; i++) {
        if (text[i] != '\n')
            continue;
        if (n < cap)
            out[n] = i + 1;
        n++;
    }
    return n;
}

uint32_t wire_line_index(const uint32_t *starts, uint32_t n, uint32_t off)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
