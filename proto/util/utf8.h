/* utf8: validation of UTF-8 text that crosses a boundary. */
#ifndef JETT_PROTO_UTF8_H
#define JETT_PROTO_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, surrogates or
 * code points above U+10FFFF).  On failure *bad (if given) is the offset
 * of the first byte of the offending sequence. */
bool utf8_valid(const char *s, size_t len, size_t *bad);

#endif
