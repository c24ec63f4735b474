/*
 * capture: saved launcher->daemon streams (jett-capture(5)).
 *
 * A capture is the 8-byte magic "JETTCAP1" followed by the frames exactly
 * as they travelled, ending with FINISH.  Errors name the byte offset.
 */
#ifndef JETT_PROTO_CAPTURE_H
#define JETT_PROTO_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/wire.h"

#define CAPTURE_MAGIC "JETTCAP1"
#define CAPTURE_MAGIC_LEN 8

struct capture_reader;

/* Reads a capture from a descriptor (a file or a pipe; not closed). */
struct capture_reader *capture_reader_fd(int fd);
/* Follows a capture that another process is still writing: at the end of
 * a regular file the reader waits for it to grow, checking at most every
 * CAPTURE_FOLLOW_POLL_MS, until FINISH arrives; after timeout_ms without
 * growth it fails with a message naming the byte offset reached.  It also
 * fails, at the next check, when the file is truncated below what was
 * read or when `path` (the name fd was opened by; NULL: not checked) no
 * longer leads to it (the file was replaced or removed).  On a pipe or
 * terminal the end of input is final, as with capture_reader_fd. */
#define CAPTURE_FOLLOW_POLL_MS 50
struct capture_reader *capture_reader_follow(int fd, const char *path, uint32_t timeout_ms);
/* Reads a capture held in memory (not copied; must outlive the reader). */
struct capture_reader *capture_reader_mem(const void *data, size_t len);
void capture_reader_free(struct capture_reader *r);

/* 1: *rec holds the next record (valid until the next call); 0: the
 * capture ended cleanly after FINISH; -1: error (capture_reader_error).
 * Iterate an EVENTS record's entries with wire_events_next on
 * capture_reader_decoder(r) before calling again. */
int capture_reader_next(struct capture_reader *r, struct wire_record *rec);
struct wire_decoder *capture_reader_decoder(struct capture_reader *r);
/* "byte N: message", valid after -1. */
const char *capture_reader_error(const struct capture_reader *r);
/* "byte N: message" for a failure while decoding the record last
 * returned (its events): the decoder's error, or that the file was
 * truncated while being read. */
void capture_reader_decode_error(const struct capture_reader *r, char *err, size_t errlen);
/* Byte offset of the record last returned. */
uint64_t capture_reader_offset(const struct capture_reader *r);

/* Writes all of buf to fd, retrying short writes and EINTR.  0 or -1. */
int capture_write_all(int fd, const void *buf, size_t len);

#endif
