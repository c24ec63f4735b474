/*
 * capture_map: a regular capture file read through windows mapped
 * read-only, so the decoder works on the page cache in place: copying
 * every byte out with read() was a sixth of a memory replay's time.
 *
 * Windows are small (CAPTURE_MAP_WINDOW) and unmapped once consumed, so
 * the mapping adds a few MiB to the resident set however large the file.
 * A file that shrinks while a window is mapped would raise SIGBUS; a
 * handler maps zero pages over the lost part instead and marks the map,
 * and the reader then fails with a clear error.
 */
#ifndef JETT_PROTO_CAPTURE_MAP_H
#define JETT_PROTO_CAPTURE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAPTURE_MAP_WINDOW ((size_t)2 << 20)

struct capture_map {
    int fd;
    uint64_t next; /* file offset where the next window starts */
    uint64_t size; /* file size when opened: the mapped part ends there */
    uint8_t *base; /* the current mapping, or NULL */
    size_t maplen;
    volatile int shrank;            /* set by the SIGBUS handler */
    struct capture_map *guard_next; /* this thread's other mapped windows */
};

/* Prepares to map fd from its current offset: true when fd is a regular,
 * non-empty file that can be mapped; false leaves m unused. */
bool capture_map_open(struct capture_map *m, int fd);
/* Unmaps the current window and maps the next: its bytes and their count,
 * or NULL once the file size seen at open is reached or mapping fails;
 * the caller then reads on with read() from m->next. */
const uint8_t *capture_map_next(struct capture_map *m, size_t *len);
/* Unmaps the current window. */
void capture_map_close(struct capture_map *m);
/* Whether a window lost pages because the file shrank. */
bool capture_map_shrank(const struct capture_map *m);

#endif
