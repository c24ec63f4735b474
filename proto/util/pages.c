/* pages: huge-page-friendly blocks for big tables read at random. */
#include <stdint.h>
#include <sys/mman.h>

#include "proto/util/pages.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* Whole pages only: mmap and munmap work in pages. */
static size_t page_round(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

void *pages_alloc(size_t n)
{
    size_t len = page_round(n), extra = len >= HUGE_PAGE ? HUGE_PAGE : 0;
    if (len < n || len + extra < len)
        return NULL;
    unsigned char *p =
        mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (extra == 0)
        return p;
    /* keep the 2 MiB-aligned part and give the rest back */
    size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (head)
        munmap(p, head);
    if (extra - head)
        munmap(p + head + len, extra - head);
    return p + head;
}

void pages_in_use(void *p, size_t n, size_t before, size_t after)
{
    if (p == NULL || before >= HUGE_PAGE || after < HUGE_PAGE || page_round(n) < HUGE_PAGE)
        return;
#ifdef MADV_HUGEPAGE
    madvise(p, page_round(n), MADV_HUGEPAGE); /* only advice: failure leaves 4 KiB pages */
#endif
}

void pages_free(void *p, size_t n)
{
    if (p)
        munmap(p, page_round(n));
}
