/*
 * agg-bench-gen: writes a large synthetic CPU capture for the aggregator
 * benchmark: NSAMPLES CPU samples over NSTACKS distinct call chains (a
 * trie of deep stacks, up to 128 frames) of NFUNCS functions.
 *
 *   agg-bench-gen OUT.jcap [NSAMPLES [NSTACKS [NFUNCS [SEED]]]]
 *
 * Defaults: 5000000 samples, 1000000 chains, 4096 functions, seed 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench-gen.h"

static void header(struct bench_gen *g, uint32_t nfuncs, const char *text, uint32_t text_len)
{
    struct wire_hello h = {0};
    h.version = WIRE_PROTOCOL_VERSION;
    h.mode = WIRE_MODE_CPU;
    h.config = (struct wire_config){1000, 0, 100, 32u << 20, 64u << 20, 16u << 20};
    h.backend = (struct wire_str){"interpreter_safe_point", 22};
    h.capabilities = WIRE_CAP_CPU_TICK_SOURCE | WIRE_CAP_SAFE_STACK_CAPTURE | WIRE_CAP_SOURCE_SPANS;
    wire_encode_hello(&g->sb, &h);
    static uint32_t lines[4100];
    uint32_t n = wire_line_starts(text, text_len, lines, 4100);
    struct wire_source s = {
        0, WIRE_ORIGIN_PROJECT, {"src/bench.jett", 14}, {text, text_len}, NULL, 0, lines, n};
    wire_encode_source(&g->sb, &s);
    bench_flush_sb(g);
    for (uint32_t i = 0; i < nfuncs; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "f%u", i);
        uint32_t line = i % (n - 1);
        struct wire_func f = {
            i, {"bench", 5}, {name, (uint32_t)len}, 0, {lines[line], lines[line] + 8}};
        wire_encode_func(&g->sb, &f);
        if (g->sb.size > BENCH_BATCH_BYTES)
            bench_flush_sb(g);
    }
    bench_flush_sb(g);
}

/* A trie of `n` nodes: mostly a child of the previous node (deep runs),
 * sometimes of a random earlier node; never deeper than 128 frames. */
static void stacks(struct bench_gen *g, uint32_t n, uint32_t nfuncs, uint8_t *depth)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t parent = WIRE_NONE32;
        if (i > 0) {
            parent = bench_rand(g) % 4 ? i - 1 : (uint32_t)(bench_rand(g) % i);
            if (depth[parent] >= WIRE_MAX_STACK_DEPTH)
                parent = (uint32_t)(bench_rand(g) % i);
            if (depth[parent] >= WIRE_MAX_STACK_DEPTH)
                parent = WIRE_NONE32;
        }
        depth[i] = parent == WIRE_NONE32 ? 1 : depth[parent] + 1;
        struct wire_stack s = {i, parent, (uint32_t)(bench_rand(g) % nfuncs), WIRE_SPAN_NONE};
        bench_put_stack(g, &s);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("usage: agg-bench-gen OUT.jcap [NSAMPLES [NSTACKS [NFUNCS [SEED]]]]\n", stderr);
        return 2;
    }
    uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 5000000;
    uint32_t nstacks = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1000000;
    uint32_t nfuncs = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 4096;
    struct bench_gen g;
    uint8_t *depth = malloc(nstacks ? nstacks : 1);
    if (!depth || nfuncs == 0 || nstacks == 0) {
        fputs("agg-bench-gen: bad arguments or no memory\n", stderr);
        return 1;
    }
    bench_gen_open(&g, "agg-bench-gen", argv[1], argc > 5 ? argv[5] : NULL);
    static char text[4096 * 16];
    uint32_t len = 0;
    for (int i = 0; i < 4096; i++)
        len += (uint32_t)snprintf(text + len, sizeof text - len, "  step(%6d)\n", i);
    header(&g, nfuncs, text, len);
    stacks(&g, nstacks, nfuncs, depth);
    for (uint64_t i = 0; i < nsamples; i++) {
        uint32_t line = (uint32_t)(bench_rand(&g) % 4095);
        struct wire_sample s = {i + 1,
                                i + 1,
                                {WIRE_NONE32, WIRE_NONE32, 0},
                                WIRE_STATE_JETT,
                                (uint32_t)(bench_rand(&g) % nstacks),
                                {line * 15 + 2, line * 15 + 14}};
        bench_put_sample(&g, &s);
    }
    struct wire_finish f = {
        WIRE_TERM_RETURNED, nsamples * 1000000, WIRE_NONE64, nsamples, 0, 0, false, false};
    free(depth);
    return bench_gen_close(&g, &f);
}
