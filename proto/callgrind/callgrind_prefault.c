/* callgrind_prefault: mapping the pages of large buffers in batches. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/callgrind/callgrind-internal.h"

/* A first write to a fresh page traps into the kernel; for a profile of a
 * few megabytes those traps are a large share of the time.  One madvise
 * maps a whole range instead (about half the cost per page).  Only whole
 * pages inside the range are mapped, contents never change, and where the
 * kernel lacks MADV_POPULATE_WRITE (before Linux 5.14) it is a no-op. */
void cg_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(page - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}
