/* diskpath: a source's logical path as its file lies on disk (diskpath.h). */
#include <string.h>

#include "daemon/export/diskpath.h"
#include "proto/wire.h"

struct diskpath diskpath_of(uint8_t origin, const char *path, size_t len)
{
    static const char stdlib[] = "stdlib/";
    const size_t n = sizeof stdlib - 1;
    if (origin == WIRE_ORIGIN_DEPENDENCY)
        return (struct diskpath){"deps/", 0};
    /* the standard library's namespaces are std.X, its files std/X.jett */
    if (origin == WIRE_ORIGIN_STDLIB && len > n && memcmp(path, stdlib, n) == 0)
        return (struct diskpath){"stdlib/std/", n};
    return (struct diskpath){"", 0};
}
