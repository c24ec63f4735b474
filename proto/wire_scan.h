/* wire_scan: bounds a frame's msgpack structure before msgpack-c sees it. */
#ifndef JETT_PROTO_WIRE_SCAN_H
#define JETT_PROTO_WIRE_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* No record has more than this many msgpack objects (SOURCE's tables and
 * EVENTS' entries travel as bins). */
#define WIRE_MAX_OBJECTS 64

/* Checks that buf[0..len) holds exactly one msgpack object with at most
 * WIRE_MAX_OBJECTS objects in all and no length that runs past the end.
 * msgpack-c's unpacker allocates a container's elements from the header's
 * count before it reads them, so a 10-byte frame claiming 2^31 elements
 * must be refused here.  Returns 0, or -1 with a message. */
int wire_scan_frame(const uint8_t *buf, size_t len, char *msg, size_t msglen);

#endif
