/* utf8: validation of UTF-8 text that crosses a boundary. */
#ifndef JETT_PROTO_UTF8_H
#define JETT_PROTO_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, surrogates or
 * code points above U+10FFFF).  On failure *bad (if given) is the offset
 * of the first byte of the offending sequence. */
bool utf8_valid(const char *s, size_t len, size_t *bad);

/* The length (1..4) of the well-formed sequence at p, `left` bytes
 * available (left >= 1), with its code point in *cp; 0 when it is not
 * one (*cp untouched). */
size_t utf8_char(const unsigned char *p, size_t left, uint32_t *cp);

#endif
