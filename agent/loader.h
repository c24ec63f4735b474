/* loader: finding, reading and validating source files (internal). */
#ifndef JETT_AGENT_LOADER_H
#define JETT_AGENT_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Offset of the first byte that is not valid UTF-8, or -1 if all valid. */
long loader_utf8_invalid(const char *s, size_t len);
/* Reads the "namespace a.b" header of a text into out; false if none. */
bool loader_peek_namespace(const char *text, size_t len, char *out, size_t cap);

#endif
