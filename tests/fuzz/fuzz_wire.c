/* libFuzzer target: the frame decoder in both directions, fed in pieces
 * whose sizes come from the input, iterating every EVENTS batch. */
#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const uint8_t *data, size_t size, enum wire_direction dir, size_t step)
{
    struct wire_decoder *d = wire_decoder_new(dir);
    size_t off = 0;
    int rc = 0;
    while (rc >= 0 && off < size) {
        size_t n = size - off < step ? size - off : step;
        size_t used = wire_decoder_push(d, data + off, n);
        off += used;
        struct wire_record rec;
        while ((rc = wire_decoder_next(d, &rec)) > 0) {
            if (rec.type != WIRE_EVENTS)
                continue;
            struct wire_events_iter it;
            struct wire_event ev;
            wire_events_begin(&it, &rec.u.events);
            while ((rc = wire_events_next(d, &it, &ev)) > 0)
                ;
            if (rc < 0)
                break;
        }
        if (used == 0)
            break;
    }
    if (rc >= 0)
        wire_decoder_end(d);
    wire_decoder_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t step = size ? (size_t)data[0] % 17 + 1 : 1;
    run(data, size, WIRE_TO_DAEMON, size);
    run(data, size, WIRE_TO_DAEMON, step);
    run(data, size, WIRE_TO_LAUNCHER, size);
    return 0;
}
