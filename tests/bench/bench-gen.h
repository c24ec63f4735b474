/*
 * bench-gen: what the synthetic capture generators share: the output, the
 * EVENTS batch (frames kept near 64 KiB, so that the reader's buffer stays
 * small next to the budgets being measured), the random numbers.
 */
#ifndef JETT_TESTS_BENCH_GEN_H
#define JETT_TESTS_BENCH_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "proto/wire.h"
#include "proto/wire_compact.h"

#define BENCH_BATCH_BYTES 65536

struct bench_gen {
    const char *prog; /* for messages */
    FILE *out;
    msgpack_sbuffer sb;
    struct wire_batch b;
    uint64_t state;
    bool compact; /* ALLOC events as compact entries (version 3) */
    struct wire_compact_enc enc;
};

/* Opens `path` ("-": standard output), writes the capture magic and seeds
 * the generator from `seed` (NULL: the default seed); exits on failure. */
void bench_gen_open(struct bench_gen *g, const char *prog, const char *path, const char *seed);
uint64_t bench_rand(struct bench_gen *g);
/* Writes what the sbuffer holds and empties it. */
void bench_flush_sb(struct bench_gen *g);
/* Encodes the batch as an EVENTS frame (if it holds any) and writes it. */
void bench_flush_batch(struct bench_gen *g);
/* Appends an entry to the batch, writing the batch first when it is full. */
void bench_put_stack(struct bench_gen *g, const struct wire_stack *s);
void bench_put_sample(struct bench_gen *g, const struct wire_sample *s);
/* An ALLOC event: a 58-byte entry, or a compact one when g->compact. */
void bench_put_alloc(struct bench_gen *g, const struct wire_alloc *a);
/* Writes the last batch and FINISH, and closes the output: 0 or 1. */
int bench_gen_close(struct bench_gen *g, const struct wire_finish *f);

#endif
