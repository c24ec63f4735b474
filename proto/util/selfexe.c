/* selfexe: the running executable's folder from /proc/self/exe. */
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "proto/util/selfexe.h"

int self_exe_dir(char *buf, size_t cap)
{
    if (cap < 2)
        return -1;
    /* The kernel's link is already a real path (no symlinks, no "..").  */
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1)
        return -1;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL)
        return -1;
    slash[slash == buf] = '\0'; /* "/jett" is in "/" */
    return 0;
}
