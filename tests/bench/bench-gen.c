/* bench-gen: the capture generators' shared output (see bench-gen.h). */
#include <stdlib.h>
#include <string.h>

#include "proto/capture.h"
#include "bench-gen.h"

static void fail(const struct bench_gen *g, const char *what)
{
    fprintf(stderr, "%s: %s\n", g->prog, what);
    exit(1);
}

void bench_gen_open(struct bench_gen *g, const char *prog, const char *path, const char *seed)
{
    memset(g, 0, sizeof *g);
    wire_compact_enc_init(&g->enc);
    g->prog = prog;
    g->out = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    g->b = (struct wire_batch){malloc(BENCH_BATCH_BYTES), BENCH_BATCH_BYTES, 0, 0};
    g->state = seed ? strtoull(seed, NULL, 10) | 1 : 88172645463325252ull;
    if (!g->out || !g->b.buf)
        fail(g, "cannot open the output or no memory");
    msgpack_sbuffer_init(&g->sb);
    if (fwrite(CAPTURE_MAGIC, 1, CAPTURE_MAGIC_LEN, g->out) != CAPTURE_MAGIC_LEN)
        fail(g, "write failed");
}

uint64_t bench_rand(struct bench_gen *g)
{
    g->state ^= g->state << 13;
    g->state ^= g->state >> 7;
    g->state ^= g->state << 17;
    return g->state;
}

void bench_flush_sb(struct bench_gen *g)
{
    if (fwrite(g->sb.data, 1, g->sb.size, g->out) != g->sb.size)
        fail(g, "write failed");
    msgpack_sbuffer_clear(&g->sb);
}

void bench_flush_batch(struct bench_gen *g)
{
    if (g->b.count == 0)
        return;
    wire_encode_events(&g->sb, g->b.count, g->b.buf, g->b.len);
    g->b.len = 0;
    g->b.count = 0;
    bench_flush_sb(g);
}

void bench_put_stack(struct bench_gen *g, const struct wire_stack *s)
{
    if (!wire_batch_stack(&g->b, s))
        bench_flush_batch(g), wire_batch_stack(&g->b, s);
}

void bench_put_sample(struct bench_gen *g, const struct wire_sample *s)
{
    if (!wire_batch_sample(&g->b, s))
        bench_flush_batch(g), wire_batch_sample(&g->b, s);
}

void bench_put_alloc(struct bench_gen *g, const struct wire_alloc *a)
{
    if (!g->compact) {
        if (!wire_batch_alloc(&g->b, a))
            bench_flush_batch(g), wire_batch_alloc(&g->b, a);
        return;
    }
    if (g->b.cap - g->b.len < WIRE_COMPACT_MAX)
        bench_flush_batch(g);
    g->b.len += wire_compact_put(&g->enc, g->b.buf + g->b.len, a);
    g->b.count++;
}

int bench_gen_close(struct bench_gen *g, const struct wire_finish *f)
{
    bench_flush_batch(g);
    wire_encode_finish(&g->sb, f);
    bench_flush_sb(g);
    msgpack_sbuffer_destroy(&g->sb);
    free(g->b.buf);
    return fclose(g->out) == 0 ? 0 : 1;
}
