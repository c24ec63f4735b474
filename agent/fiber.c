/* fiber: task stacks and the switch between contexts (see fiber.h). */
#include "agent/fiber.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define FIBER_TSAN 1
#endif

#ifdef FIBER_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#ifdef FIBER_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

int fiber_stack_new(struct fiber_stack *st, size_t stack_bytes, size_t extra)
{
    size_t page = page_size();
    stack_bytes = round_up(stack_bytes, page);
    extra = round_up(extra, page);
    size_t total = page + stack_bytes + extra;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    if (mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, total);
        return -1;
    }
    st->map = m;
    st->map_size = total;
    st->lo = (char *)m + page;
    st->hi = st->lo + stack_bytes;
    st->extra = st->hi;
    st->extra_size = extra;
    return 0;
}

void fiber_stack_free(struct fiber_stack *st)
{
    if (st->map)
        munmap(st->map, st->map_size);
    memset(st, 0, sizeof *st);
}

void fiber_stack_trim(struct fiber_stack *st, size_t keep)
{
    size_t page = page_size();
    size_t used = round_up(keep, page);
    if ((size_t)(st->hi - st->lo) <= used)
        return;
    madvise(st->lo, (size_t)(st->hi - st->lo) - used, MADV_DONTNEED);
}

/* The stack of the calling thread, for the sanitizers. */
static void thread_stack(const void **lo, size_t *size)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t n = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &addr, &n);
        pthread_attr_destroy(&attr);
    }
    *lo = addr;
    *size = n;
}

void fiber_thread(struct fiber *self)
{
    memset(self, 0, sizeof *self);
    thread_stack(&self->stack_lo, &self->stack_size);
#ifdef FIBER_TSAN
    self->tsan = __tsan_get_current_fiber();
#endif
}

/* Before a switch: tell the sanitizers where execution goes.  `dying`:
 * the current context never runs again.  Always inlined: a function
 * entered on one context and left on the other would unbalance
 * ThreadSanitizer's books of both. */
static inline __attribute__((always_inline)) void announce(struct fiber *from, struct fiber *to,
                                                           bool dying)
{
#ifdef FIBER_ASAN
    __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, to->stack_lo, to->stack_size);
#else
    (void)from;
    (void)dying;
#endif
#ifdef FIBER_TSAN
    __tsan_switch_to_fiber(to->tsan, 0);
#else
    (void)to;
#endif
}

/* After a switch, back in `self`. */
static inline __attribute__((always_inline)) void arrived(struct fiber *self)
{
#ifdef FIBER_ASAN
    __sanitizer_finish_switch_fiber(self ? self->asan_fake : NULL, NULL, NULL);
#else
    (void)self;
#endif
}

/* The first code a new context runs. */
static void fiber_boot(struct fiber *f)
{
    arrived(NULL);
    f->entry(f->arg);
    abort(); /* entry ends with fiber_exit */
}

#if defined(__x86_64__)

/* jett_fiber_swap(void **save, void *next): pushes the callee-saved
 * registers, MXCSR and the x87 control word on the current stack, saves
 * the stack pointer in *save, loads `next` and pops the same from it.
 * A new context's stack holds such a frame whose return address is
 * jett_fiber_start, which calls r13(r12). */
__asm__(".text\n"
        ".p2align 4\n"
        ".type jett_fiber_swap,@function\n"
        "jett_fiber_swap:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size jett_fiber_swap, .-jett_fiber_swap\n"
        ".p2align 4\n"
        ".type jett_fiber_start,@function\n"
        "jett_fiber_start:\n"
        "    movq %r12, %rdi\n"
        "    callq *%r13\n"
        "    ud2\n"
        ".size jett_fiber_start, .-jett_fiber_start\n");

void jett_fiber_swap(void **save, void *next) __asm__("jett_fiber_swap");
void jett_fiber_start(void) __asm__("jett_fiber_start");

void fiber_make(struct fiber *f, struct fiber_stack *st, void (*entry)(void *arg), void *arg)
{
    memset(f, 0, sizeof *f);
    f->entry = entry, f->arg = arg;
    f->stack_lo = st->lo, f->stack_size = (size_t)(st->hi - st->lo);
    /* After `ret` pops the start address the stack pointer is 16-byte
     * aligned, as a call instruction needs it. */
    uintptr_t top = ((uintptr_t)st->hi & ~(uintptr_t)15) - 16;
    uint64_t *frame = (uint64_t *)(top - 64);
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    memset(frame, 0, 64);
    memcpy(frame, &mxcsr, 4);
    memcpy((char *)frame + 4, &fpucw, 2);
    frame[3] = (uint64_t)(uintptr_t)fiber_boot; /* r13 */
    frame[4] = (uint64_t)(uintptr_t)f;          /* r12 */
    frame[7] = (uint64_t)(uintptr_t)jett_fiber_start;
    f->sp = frame;
#ifdef FIBER_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
}

void fiber_switch(struct fiber *from, struct fiber *to)
{
    announce(from, to, false);
    jett_fiber_swap(&from->sp, to->sp);
    /* Not a tail call: ThreadSanitizer's exit from this function must
     * come after the switch back, on this context's books. */
    __asm__ volatile("" ::: "memory");
    arrived(from);
}

void fiber_exit(struct fiber *from, struct fiber *to)
{
    announce(from, to, true);
    void *discard;
    jett_fiber_swap(&discard, to->sp);
    abort();
}

#else /* ucontext */

static void fiber_boot_ints(int hi, int lo)
{
    uintptr_t p = ((uintptr_t)(unsigned)hi << 32) | (uintptr_t)(unsigned)lo;
    fiber_boot((struct fiber *)p);
}

void fiber_make(struct fiber *f, struct fiber_stack *st, void (*entry)(void *arg), void *arg)
{
    memset(f, 0, sizeof *f);
    f->entry = entry, f->arg = arg;
    f->stack_lo = st->lo, f->stack_size = (size_t)(st->hi - st->lo);
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = st->lo;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = NULL;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->uc, (void (*)(void))fiber_boot_ints, 2, (int)(p >> 32), (int)(p & 0xffffffffu));
#ifdef FIBER_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
}

void fiber_switch(struct fiber *from, struct fiber *to)
{
    announce(from, to, false);
    swapcontext(&from->uc, &to->uc);
    arrived(from);
}

void fiber_exit(struct fiber *from, struct fiber *to)
{
    announce(from, to, true);
    setcontext(&to->uc);
    abort();
}

#endif

void fiber_destroy(struct fiber *f)
{
#ifdef FIBER_TSAN
    if (f->tsan && f->entry)
        __tsan_destroy_fiber(f->tsan);
#endif
    f->tsan = NULL;
}
