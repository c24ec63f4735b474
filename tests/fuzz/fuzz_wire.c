/* libFuzzer target: the frame decoder in both directions, fed in pieces
 * whose sizes come from the input, iterating every EVENTS batch; read
 * by runs of ALLOC entries as the daemon's aggregation takes them (open,
 * wire_alloc_entry_take per entry, close: tests/alloc_run.h), of a
 * length the input bounds, the daemon's stream must give the same
 * entries and the same error as one by one. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"
#include "tests/alloc_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct outcome {
    size_t entries;
    struct wire_error err;
};

/* The entries of one EVENTS record, by runs of at most `runs` entries
 * or (0) one by one: 1 more may follow, -1 error. */
static int take_events(struct wire_decoder *d, const struct wire_record *rec, size_t runs,
                       size_t *entries)
{
    struct wire_events_iter it;
    struct wire_event ev;
    int rc;
    wire_events_begin(&it, &rec->u.events);
    do {
        if (runs) {
            size_t n;
            take_alloc_run(d, &it, runs, &n);
            *entries += n;
        }
        rc = wire_events_next(d, &it, &ev);
        *entries += rc > 0;
    } while (rc > 0);
    return rc < 0 ? -1 : 1;
}

static struct outcome run(const uint8_t *data, size_t size, enum wire_direction dir, size_t step,
                          size_t runs)
{
    struct outcome out = {0};
    struct wire_decoder *d = wire_decoder_new(dir);
    size_t off = 0;
    int rc = 0;
    while (rc >= 0 && off < size) {
        size_t n = size - off < step ? size - off : step;
        size_t used = wire_decoder_push(d, data + off, n);
        off += used;
        struct wire_record rec;
        while ((rc = wire_decoder_next(d, &rec)) > 0)
            if (rec.type == WIRE_EVENTS && take_events(d, &rec, runs, &out.entries) < 0) {
                rc = -1;
                break;
            }
        if (used == 0)
            break;
    }
    if (rc >= 0)
        wire_decoder_end(d);
    out.err = *wire_decoder_error(d);
    wire_decoder_free(d);
    return out;
}

static void same(const struct outcome *a, const struct outcome *b)
{
    if (a->entries != b->entries || a->err.code != b->err.code || strcmp(a->err.msg, b->err.msg))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t step = size ? (size_t)data[0] % 17 + 1 : 1;
    /* runs cut short now and then, as the daemon's pieces are */
    size_t longest = size > 1 && data[1] % 4 == 0 ? (size_t)data[1] / 4 % 8 + 1 : SIZE_MAX;
    for (int pieces = 0; pieces < 2; pieces++) {
        size_t n = pieces ? step : size;
        struct outcome one = run(data, size, WIRE_TO_DAEMON, n, 0);
        struct outcome runs = run(data, size, WIRE_TO_DAEMON, n, longest);
        same(&one, &runs);
    }
    run(data, size, WIRE_TO_LAUNCHER, size, 0);
    return 0;
}
