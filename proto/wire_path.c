/* wire_path: the rules a logical source path must follow. */
#include "proto/wire-internal.h"

/* Relative, '/'-separated, no empty, "." or ".." segment, no control
 * bytes.  The message never repeats the path: it may be absolute. */
int wire_path_check(const char *s, uint32_t len, const char **why)
{
    if (len == 0)
        return *why = "empty path", -1;
    if (s[0] == '/')
        return *why = "absolute paths are not allowed", -1;
    uint32_t seg = 0;
    for (uint32_t i = 0; i <= len; i++) {
        if (i < len && (unsigned char)s[i] < 0x20)
            return *why = "control character in path", -1;
        if (i < len && s[i] != '/')
            continue;
        uint32_t n = i - seg;
        if (n == 0)
            return *why = "empty path segment", -1;
        if (n == 2 && s[seg] == '.' && s[seg + 1] == '.')
            return *why = "'..' segments are not allowed", -1;
        if (n == 1 && s[seg] == '.')
            return *why = "'.' segments are not allowed", -1;
        seg = i + 1;
    }
    return 0;
}
