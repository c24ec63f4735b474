/*
 * bench_wire: hot-event throughput, side by side in one run.
 *
 *   ours:     appending fixed-layout ALLOC entries (agent side) and
 *             decoding + validating them from EVENTS frames (daemon side);
 *   baseline: msgpack-c's generic packer and unpacker with one msgpack
 *             array per record, the way every other record travels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "proto/wire.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct wire_alloc make_alloc(uint64_t i)
{
    struct wire_alloc a = {i + 1,           WIRE_OP_ALLOCATE, i, WIRE_NONE64,
                           64 + (i & 1023), {0, 0, 0},        0, {10, 20}};
    return a;
}

/* Entries per second appended into a 64 KiB batch reused as the ring. */
static double bench_append(uint64_t n, uint64_t *sink)
{
    static uint8_t buf[65536];
    struct wire_batch b = {buf, sizeof buf, 0, 0};
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        struct wire_alloc a = make_alloc(i);
        if (!wire_batch_alloc(&b, &a)) {
            *sink += b.buf[b.len - 1];
            b.len = 0, b.count = 0;
            wire_batch_alloc(&b, &a);
        }
    }
    double dt = now() - t0;
    *sink += b.len;
    return (double)n / dt;
}

static void pack_record(msgpack_packer *pk, const struct wire_alloc *a)
{
    msgpack_pack_array(pk, 11);
    msgpack_pack_uint8(pk, 3);
    msgpack_pack_uint64(pk, a->sequence);
    msgpack_pack_uint8(pk, a->op);
    msgpack_pack_uint64(pk, a->allocation_id);
    msgpack_pack_nil(pk);
    msgpack_pack_uint64(pk, a->new_size);
    msgpack_pack_uint32(pk, a->exec.task);
    msgpack_pack_uint32(pk, a->exec.actor);
    msgpack_pack_uint32(pk, a->exec.thread);
    msgpack_pack_uint32(pk, a->stack_id);
    msgpack_pack_array(pk, 2);
    msgpack_pack_uint32(pk, a->span.start);
    msgpack_pack_uint32(pk, a->span.end);
}

static double bench_msgpack_pack(uint64_t n, uint64_t *sink)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        struct wire_alloc a = make_alloc(i);
        pack_record(&pk, &a);
        if (sb.size > 65536) {
            *sink += (uint8_t)sb.data[sb.size - 1];
            msgpack_sbuffer_clear(&sb);
        }
    }
    double dt = now() - t0;
    msgpack_sbuffer_destroy(&sb);
    return (double)n / dt;
}

/* Unpacks n records, one object tree each, reading every field; like the
 * EVENTS decode below it works on a cache-resident 16384-record buffer,
 * as a daemon does on what a socket read just delivered. */
static double bench_msgpack_unpack(uint64_t n, uint64_t *sink)
{
    const uint64_t batch = 16384;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    for (uint64_t i = 0; i < batch; i++) {
        struct wire_alloc a = make_alloc(i);
        pack_record(&pk, &a);
    }
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    uint64_t got = 0;
    double t0 = now();
    while (got < n) {
        size_t off = 0;
        msgpack_unpack_return ret;
        while ((ret = msgpack_unpack_next(&u, sb.data, sb.size, &off)) == MSGPACK_UNPACK_SUCCESS ||
               ret == MSGPACK_UNPACK_EXTRA_BYTES) {
            const msgpack_object *f = u.data.via.array.ptr;
            if (u.data.type != MSGPACK_OBJECT_ARRAY || u.data.via.array.size != 11)
                abort();
            for (int k = 0; k < 10; k++)
                *sink += f[k].type == MSGPACK_OBJECT_POSITIVE_INTEGER ? f[k].via.u64 : 0;
            *sink += f[10].via.array.ptr[0].via.u64;
            got++;
        }
    }
    double dt = now() - t0;
    msgpack_unpacked_destroy(&u);
    msgpack_sbuffer_destroy(&sb);
    return (double)got / dt;
}

/* A stream with `frames` EVENTS frames of `per` ALLOC entries each. */
static void build_stream(msgpack_sbuffer *sb, int frames, uint32_t per)
{
    struct wire_hello h = {WIRE_PROTOCOL_VERSION, WIRE_MODE_MEMORY,
                           {0, 500, 10, 1, 1, 1}, {"b", 1},
                           WIRE_CAP_ALL,          false};
    wire_encode_hello(sb, &h);
    uint32_t lines[1];
    struct wire_source src = {0,    0, {"a.jett", 6}, {"0123456789012345678901234", 25},
                              NULL, 0, lines,         wire_line_starts("x", 0, lines, 1)};
    wire_encode_source(sb, &src);
    struct wire_func f = {0, {"ns", 2}, {"fn", 2}, 0, WIRE_SPAN_NONE};
    wire_encode_func(sb, &f);
    uint8_t st[WIRE_STACK_SIZE];
    struct wire_stack s = {0, WIRE_NONE32, 0, WIRE_SPAN_NONE};
    wire_put_stack(st, &s);
    wire_encode_events(sb, 1, st, sizeof st);
    uint8_t *bin = malloc((size_t)per * WIRE_ALLOC_SIZE);
    uint64_t seq = 0;
    for (int k = 0; k < frames; k++) {
        struct wire_batch b = {bin, (size_t)per * WIRE_ALLOC_SIZE, 0, 0};
        for (uint32_t i = 0; i < per; i++) {
            struct wire_alloc a = make_alloc(seq++);
            wire_batch_alloc(&b, &a);
        }
        wire_encode_events(sb, b.count, b.buf, b.len);
    }
    free(bin);
}

static double bench_decode(const msgpack_sbuffer *sb, int passes, uint64_t *sink)
{
    uint64_t entries = 0;
    double total = 0;
    for (int p = 0; p < passes; p++) {
        struct wire_decoder *d = wire_decoder_new(WIRE_TO_DAEMON);
        double t0 = now();
        size_t off = 0;
        while (off < sb->size) {
            off += wire_decoder_push(d, sb->data + off, sb->size - off);
            struct wire_record rec;
            while (wire_decoder_next(d, &rec) > 0) {
                if (rec.type != WIRE_EVENTS)
                    continue;
                struct wire_events_iter it;
                struct wire_event ev;
                wire_events_begin(&it, &rec.u.events);
                while (wire_events_next(d, &it, &ev) > 0) {
                    entries++;
                    *sink += ev.u.alloc.new_size;
                }
            }
        }
        total += now() - t0;
        if (wire_decoder_error(d)->code != WIRE_OK)
            abort();
        wire_decoder_free(d);
    }
    return (double)(entries - (uint64_t)passes) / total; /* minus the STACK entry */
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    uint64_t sink = 0;
    uint64_t n_append = (uint64_t)(200e6 * scale), n_generic = (uint64_t)(10e6 * scale);
    /* 16 frames of 1024 entries (58 KiB each, as the agent's writer ships
     * them): about 1 MiB, decoded again with a fresh decoder each pass so
     * that the bytes are cache-resident as after a socket read. */
    int frames = 16, passes = (int)(6000 * scale) > 0 ? (int)(6000 * scale) : 1;
    uint32_t per = 1024;

    double ours_append = bench_append(n_append, &sink);
    double generic_pack = bench_msgpack_pack(n_generic, &sink);
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    build_stream(&sb, frames, per);
    double ours_decode = bench_decode(&sb, passes, &sink);
    msgpack_sbuffer_destroy(&sb);
    double generic_unpack = bench_msgpack_unpack(n_generic, &sink);

    printf("hot-event throughput on one core, million records per second\n");
    printf("%-34s %12s %18s %8s\n", "", "EVENTS entries", "msgpack-c generic", "ratio");
    printf("%-34s %12.1f %18.1f %7.1fx\n", "agent: append ALLOC", ours_append / 1e6,
           generic_pack / 1e6, ours_append / generic_pack);
    printf("%-34s %12.1f %18.1f %7.1fx\n", "daemon: decode + validate ALLOC", ours_decode / 1e6,
           generic_unpack / 1e6, ours_decode / generic_unpack);
    printf("(entries: %llu appended, %llu decoded; generic: %llu each; checksum %llu)\n",
           (unsigned long long)n_append, (unsigned long long)frames * per * (unsigned)passes,
           (unsigned long long)n_generic, (unsigned long long)(sink & 0xffff));
    return 0;
}
