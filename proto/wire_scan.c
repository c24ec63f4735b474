/* wire_scan: a length-only walk over msgpack type bytes (no values decoded). */
#include <stdio.h>

#include "proto/wire_scan.h"

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Classifies the object at p: sets *hdr (header bytes incl. type byte),
 * *body (payload bytes to skip) and *children (elements that follow).
 * Returns -1 for the never-used byte 0xc1. */
static int scan_one(const uint8_t *p, size_t left, uint64_t *hdr, uint64_t *body,
                    uint64_t *children)
{
    uint8_t c = p[0];
    *hdr = 1, *body = 0, *children = 0;
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return 0;
    if (c >= 0x80 && c <= 0x8f)
        return *children = 2u * (c & 0x0f), 0;
    if (c >= 0x90 && c <= 0x9f)
        return *children = c & 0x0f, 0;
    if (c >= 0xa0 && c <= 0xbf)
        return *body = c & 0x1f, 0;
    static const int fixed[] = {
        [0xca - 0xca] = 4, [0xcb - 0xca] = 8, [0xcc - 0xca] = 1,  [0xcd - 0xca] = 2,
        [0xce - 0xca] = 4, [0xcf - 0xca] = 8, [0xd0 - 0xca] = 1,  [0xd1 - 0xca] = 2,
        [0xd2 - 0xca] = 4, [0xd3 - 0xca] = 8, [0xd4 - 0xca] = 2,  [0xd5 - 0xca] = 3,
        [0xd6 - 0xca] = 5, [0xd7 - 0xca] = 9, [0xd8 - 0xca] = 17,
    };
    if (c >= 0xca && c <= 0xd8)
        return *body = (uint64_t)fixed[c - 0xca], 0;
    int lenbytes;
    switch (c) {
    case 0xc4:
    case 0xd9:
        lenbytes = 1;
        break; /* bin8, str8 */
    case 0xc5:
    case 0xda:
        lenbytes = 2;
        break;
    case 0xc6:
    case 0xdb:
        lenbytes = 4;
        break;
    case 0xc7:
        lenbytes = 1;
        break; /* ext: length then a type byte */
    case 0xc8:
        lenbytes = 2;
        break;
    case 0xc9:
        lenbytes = 4;
        break;
    case 0xdc:
    case 0xde:
        lenbytes = 2;
        break; /* array16, map16 */
    case 0xdd:
    case 0xdf:
        lenbytes = 4;
        break;
    default:
        return -1; /* 0xc1 */
    }
    if (left < 1u + (unsigned)lenbytes)
        return *hdr = 1u + (unsigned)lenbytes, 0; /* caller reports the cut */
    uint64_t n = be(p + 1, lenbytes);
    *hdr = 1u + (unsigned)lenbytes;
    if (c >= 0xc7 && c <= 0xc9)
        *body = n + 1;
    else if (c == 0xdc || c == 0xdd)
        *children = n;
    else if (c == 0xde || c == 0xdf)
        *children = 2 * n;
    else
        *body = n;
    return 0;
}

int wire_scan_frame(const uint8_t *buf, size_t len, char *msg, size_t msglen)
{
    size_t pos = 0;
    uint64_t pending = 1, objects = 0;
    while (pending > 0) {
        if (pos >= len) {
            snprintf(msg, msglen, "msgpack object ends past the frame");
            return -1;
        }
        if (++objects > WIRE_MAX_OBJECTS) {
            snprintf(msg, msglen, "more than %d msgpack objects in one frame", WIRE_MAX_OBJECTS);
            return -1;
        }
        pending--;
        uint64_t hdr, body, children;
        if (scan_one(buf + pos, len - pos, &hdr, &body, &children) != 0) {
            snprintf(msg, msglen, "invalid msgpack type byte 0xc1");
            return -1;
        }
        if (hdr > len - pos || body > len - pos - hdr) {
            snprintf(msg, msglen, "msgpack object ends past the frame");
            return -1;
        }
        pos += hdr + body;
        pending += children;
        /* Each promised element needs at least one byte. */
        if (pending > len - pos) {
            snprintf(msg, msglen, "msgpack container claims more elements than the frame holds");
            return -1;
        }
    }
    if (pos != len) {
        snprintf(msg, msglen, "%zu bytes after the record's msgpack object", len - pos);
        return -1;
    }
    return 0;
}
