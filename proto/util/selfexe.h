/* selfexe: where the running executable lives, for finding the files
 * installed beside it (the daemon, the standard library). */
#ifndef JETT_UTIL_SELFEXE_H
#define JETT_UTIL_SELFEXE_H

#include <stddef.h>

/* The real path of the folder holding the running executable (from
 * /proc/self/exe) in buf.  0, or -1 when it cannot be read or does not fit
 * in cap bytes. */
int self_exe_dir(char *buf, size_t cap);

#endif
