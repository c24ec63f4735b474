/*
 * captext: the readable, line-per-record text form of a capture
 * (jett-capture(5)).  dump and pack are exact inverses for every capture
 * this project writes: pack(dump(x)) == x byte for byte.
 *
 *   # comment                      blank lines and comments are ignored
 *   HELLO version=1 mode=cpu ...   one line per record, fields in order
 *   EVENTS                         an EVENTS frame: its entries, then END
 *     STACK id=0 parent=- ...
 *     CPU_SAMPLE seq=1 ...
 *   END
 *
 * Entry lines outside EVENTS ... END (handy in hand-written fixtures) are
 * grouped into one frame per run of consecutive entries.
 */
#ifndef JETT_PROTO_CAPTEXT_H
#define JETT_PROTO_CAPTEXT_H

#include <stdio.h>

#include "proto/capture.h"
#include "proto/wire.h"

/* Writes a record (an EVENTS record with all its entries, read through the
 * decoder d, which validates them).  0, or -1 when an entry is invalid
 * (the decoder holds the error). */
int captext_dump_record(FILE *out, struct wire_decoder *d, const struct wire_record *rec);

/* Dumps every record of a capture.  0 when the whole capture is valid;
 * -1 with "byte N: message" in err after printing every valid record. */
int captext_dump(FILE *out, struct capture_reader *r, char *err, size_t errlen);

/* Packs text into a capture (magic + frames) appended to out, checking it
 * with the decoder as it goes.  0, or -1 with "LINE: message" in err. */
int captext_pack(const char *text, size_t len, msgpack_sbuffer *out, char *err, size_t errlen);

#endif
