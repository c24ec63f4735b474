/* capture_map: mapped windows of a regular capture file. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/capture_map.h"

static struct sigaction previous;
static uintptr_t page_size = 4096;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
/* The windows this thread has mapped: a SIGBUS is delivered to the thread
 * whose access raised it, so each thread only looks at its own. */
static _Thread_local struct capture_map *guarded;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    uintptr_t at = (uintptr_t)info->si_addr;
    for (struct capture_map *m = guarded; m; m = m->guard_next) {
        uintptr_t lo = (uintptr_t)m->base, hi = lo + m->maplen;
        if (at < lo || at >= hi)
            continue;
        /* The pages past the new end read as zeros from now on; the
         * access is retried on them when this returns. */
        uintptr_t page = at & ~(page_size - 1);
        if (mmap((void *)page, hi - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                 0) == MAP_FAILED)
            break;
        m->shrank = 1;
        return;
    }
    /* Not a window's: what would have happened without this handler. */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, info, context);
        return;
    }
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL &&
        previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL); /* the retried access then ends the process */
}

static void install(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0)
        page_size = (uintptr_t)ps;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &previous);
}

bool capture_map_open(struct capture_map *m, int fd)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= at)
        return false;
    pthread_once(&installed, install);
    m->fd = fd, m->next = (uint64_t)at, m->size = (uint64_t)st.st_size;
    posix_fadvise(fd, at, 0, POSIX_FADV_SEQUENTIAL);
    return true;
}

void capture_map_close(struct capture_map *m)
{
    if (!m->base)
        return;
    for (struct capture_map **p = &guarded; *p; p = &(*p)->guard_next)
        if (*p == m) {
            *p = m->guard_next;
            break;
        }
    munmap(m->base, m->maplen);
    m->base = NULL, m->maplen = 0, m->guard_next = NULL;
}

const uint8_t *capture_map_next(struct capture_map *m, size_t *len)
{
    capture_map_close(m);
    if (m->next >= m->size)
        return NULL;
    uint64_t start = m->next & ~(uint64_t)(page_size - 1);
    uint64_t left = m->size - start;
    size_t maplen = left < CAPTURE_MAP_WINDOW ? (size_t)left : CAPTURE_MAP_WINDOW;
    /* populated now: one call instead of a fault every few pages */
    void *p = mmap(NULL, maplen, PROT_READ, MAP_SHARED | MAP_POPULATE, m->fd, (off_t)start);
    if (p == MAP_FAILED)
        return NULL;
    m->base = p, m->maplen = maplen;
    m->guard_next = guarded, guarded = m;
    size_t skip = (size_t)(m->next - start);
    m->next = start + maplen;
    *len = maplen - skip;
    return m->base + skip;
}

bool capture_map_shrank(const struct capture_map *m)
{
    return m->shrank != 0;
}
