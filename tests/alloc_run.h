/*
 * alloc_run: a run of ALLOC entries taken the way the daemon's
 * aggregation takes them (wire_events_alloc_open, wire_alloc_entry_take
 * per entry, wire_events_alloc_close; see agg_mem_run), without the
 * aggregation, for the tests and the fuzz target of the decoder's runs.
 */
#ifndef JETT_TESTS_ALLOC_RUN_H
#define JETT_TESTS_ALLOC_RUN_H

#include "proto/wire.h"
#include "proto/wire_alloc_entry.h"

/* Takes up to `max` entries at the iterator; returns where the run
 * starts and its length in *n. */
static inline const uint8_t *take_alloc_run(struct wire_decoder *d, struct wire_events_iter *it,
                                            size_t max, size_t *n)
{
    struct wire_alloc_rule r;
    struct wire_alloc a;
    size_t room, k = 0;
    const uint8_t *run = wire_events_alloc_open(d, it, max, &room, &r);
    while (k < room && wire_alloc_entry_take(run + k * WIRE_ALLOC_SIZE, &a, &r))
        k++;
    wire_events_alloc_close(d, it, &r, k);
    *n = k;
    return run;
}

#endif
