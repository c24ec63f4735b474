/*
 * gzsink: a protobuf-c output buffer that gzips what is packed into it
 * straight into a file, so that a large message is never held whole.
 */
#ifndef JETT_DAEMON_GZSINK_H
#define JETT_DAEMON_GZSINK_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdio.h>
#include <zlib.h>

struct gzsink {
    ProtobufCBuffer base; /* first: protobuf-c appends through it */
    z_stream z;
    FILE *out;
    bool failed; /* out of memory or a write error: the output is unusable */
    unsigned char buf[1 << 16];
};

/* Starts a gzip member at `level` (zlib's 1..9); 0, or -1 when out of
 * memory. */
int gzsink_open(struct gzsink *s, FILE *out, int level);
/* Ends the member and releases zlib's state: 0, or -1 when anything
 * failed (then call it anyway, to release). */
int gzsink_close(struct gzsink *s);

#endif
