/*
 * fiber: a task's own stack and the switch between it and a worker
 * thread, so that a task that blocks gives its worker up and may resume
 * on another.
 *
 * A stack is one private anonymous mapping reserved without swap
 * (MAP_NORESERVE): a guard page at its low end (PROT_NONE, so running
 * off the stack faults instead of writing into a neighbour), the stack
 * above it, and above the stack an `extra` area for the task's frame
 * array.  Pages are committed only as they are touched, so a task that
 * stays shallow costs a few pages whatever the reservation.
 *
 * On x86-64 the switch is a few instructions of our own (the registers
 * the ABI says a callee keeps, MXCSR and the x87 control word); other
 * machines use ucontext.  Under AddressSanitizer and ThreadSanitizer the
 * switches are announced to the sanitizer (its fiber interface), which
 * otherwise takes a switched stack for corruption.
 */
#ifndef JETT_AGENT_FIBER_H
#define JETT_AGENT_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

struct fiber_stack {
    void *map;       /* the whole mapping, guard page included */
    size_t map_size; /* bytes */
    char *lo, *hi;   /* the stack: it grows down from hi */
    void *extra;     /* the area above the stack */
    size_t extra_size;
};

/* An execution context: a task's, or the worker thread's own (which
 * has no fiber_stack). */
struct fiber {
#if defined(__x86_64__)
    void *sp; /* the saved stack pointer */
#else
    ucontext_t uc;
#endif
    const void *stack_lo; /* the stack, for the sanitizers */
    size_t stack_size;
    void *asan_fake; /* AddressSanitizer's fake stack of this context */
    void *tsan;      /* ThreadSanitizer's fiber */
    void (*entry)(void *arg);
    void *arg;
};

/* Reserves a stack of `stack_bytes` (rounded up to pages) with `extra`
 * bytes above it.  0, or -1 when the mapping fails. */
int fiber_stack_new(struct fiber_stack *st, size_t stack_bytes, size_t extra);
void fiber_stack_free(struct fiber_stack *st);
/* Gives back the pages of the stack below its top `keep` bytes (a stack
 * kept for reuse after a deep recursion). */
void fiber_stack_trim(struct fiber_stack *st, size_t keep);

/* The calling thread's own context, before its first switch. */
void fiber_thread(struct fiber *self);
/* A context that runs entry(arg) on st when first switched to.  entry
 * must never return: it ends with fiber_exit. */
void fiber_make(struct fiber *f, struct fiber_stack *st, void (*entry)(void *arg), void *arg);
/* Saves the running context in `from` and runs `to`; returns when
 * something switches back to `from`. */
void fiber_switch(struct fiber *from, struct fiber *to);
/* Switches from `from` to `to` for the last time: `from` is never run
 * again and its sanitizer state is released. */
void fiber_exit(struct fiber *from, struct fiber *to) __attribute__((noreturn));
/* Releases what fiber_make and fiber_thread set up. */
void fiber_destroy(struct fiber *f);

#endif
