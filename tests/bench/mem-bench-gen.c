/*
 * mem-bench-gen: writes a large synthetic memory capture to stdout (or a
 * file) for the aggregator benchmark: NEVENTS ALLOC events over NSITES
 * allocation sites, first growing to NLIVE live ids, then churning
 * (allocate, resize, free of a random live id) around that level.
 *
 *   mem-bench-gen [--compact] OUT|- [NEVENTS [NLIVE [NSITES [SEED]]]]
 *
 * Defaults: 20000000 events, 1200000 live ids, 50000 sites, seed 1.
 * The events are 58-byte ALLOC entries, which every version reads, or
 * with --compact the compact entries of version 3 (jett-capture(5)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-gen.h"

/* HELLO, one source, a function and a root stack per site. */
static void header(struct bench_gen *g, uint32_t nsites)
{
    struct wire_hello h = {0};
    h.version = WIRE_PROTOCOL_VERSION;
    h.mode = WIRE_MODE_MEMORY;
    h.config = (struct wire_config){0, 0, 100, 32u << 20, 64u << 20, 16u << 20};
    h.backend = (struct wire_str){"interpreter_alloc_hooks", 23};
    h.capabilities = WIRE_CAP_HEAP_ALLOCATION_HOOKS | WIRE_CAP_FREE_AND_RESIZE_EVENTS;
    wire_encode_hello(&g->sb, &h);
    static const char text[] = "fn site() {}\n";
    uint32_t lines[2] = {0, 13};
    struct wire_source s = {
        0, WIRE_ORIGIN_PROJECT, {"src/bench.jett", 14}, {text, 13}, NULL, 0, lines, 2};
    wire_encode_source(&g->sb, &s);
    for (uint32_t i = 0; i < nsites; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "s%u", i);
        struct wire_func f = {i, {"bench", 5}, {name, (uint32_t)len}, 0, {0, 12}};
        wire_encode_func(&g->sb, &f);
        if (g->sb.size > BENCH_BATCH_BYTES)
            bench_flush_sb(g);
    }
    bench_flush_sb(g);
    for (uint32_t i = 0; i < nsites; i++) {
        struct wire_stack st = {i, WIRE_NONE32, i, WIRE_SPAN_NONE};
        bench_put_stack(g, &st);
    }
    bench_flush_batch(g);
}

static void put(struct bench_gen *g, uint8_t op, uint64_t id, uint64_t old, uint64_t new_size,
                uint32_t site)
{
    static uint64_t seq;
    struct wire_alloc a = {
        ++seq, op, id, old, new_size, {WIRE_NONE32, WIRE_NONE32, 0}, site, WIRE_SPAN_NONE};
    bench_put_alloc(g, &a);
}

int main(int argc, char **argv)
{
    bool compact = argc > 1 && strcmp(argv[1], "--compact") == 0;
    if (compact)
        argv++, argc--;
    if (argc < 2)
        return fputs("usage: mem-bench-gen [--compact] OUT|- [NEVENTS [NLIVE [NSITES [SEED]]]]\n",
                     stderr),
               2;
    uint64_t nevents = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000;
    uint64_t nlive = argc > 3 ? strtoull(argv[3], NULL, 10) : 1200000;
    uint32_t nsites = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 50000;
    uint64_t *ids = malloc((nlive + 2) * sizeof *ids), *sizes = malloc((nlive + 2) * sizeof *sizes);
    if (!ids || !sizes || nsites == 0)
        return fputs("mem-bench-gen: bad arguments or no memory\n", stderr), 1;
    struct bench_gen g;
    bench_gen_open(&g, "mem-bench-gen", argv[1], argc > 5 ? argv[5] : NULL);
    g.compact = compact;
    header(&g, nsites);
    uint64_t n = 0, next_id = 1;
    for (uint64_t e = 0; e < nevents; e++) {
        uint64_t r = bench_rand(&g), site = r % nsites;
        uint64_t pick = n ? (r >> 20) % n : 0;
        if (n < nlive && (e < nlive || r % 3 == 0)) {
            ids[n] = next_id++, sizes[n] = 16 + (r >> 40) % 256;
            put(&g, WIRE_OP_ALLOCATE, ids[n], WIRE_NONE64, sizes[n], (uint32_t)site), n++;
        } else if (r % 3 == 1) {
            uint64_t ns = 16 + (r >> 44) % 512;
            put(&g, WIRE_OP_RESIZE, ids[pick], sizes[pick], ns, (uint32_t)site);
            sizes[pick] = ns;
        } else {
            put(&g, WIRE_OP_FREE, ids[pick], sizes[pick], WIRE_NONE64, (uint32_t)site);
            ids[pick] = ids[--n], sizes[pick] = sizes[n];
        }
    }
    struct wire_finish f = {WIRE_TERM_RETURNED, 1000000000, WIRE_NONE64, 0, 0, 0, false, false};
    free(ids), free(sizes);
    return bench_gen_close(&g, &f);
}
