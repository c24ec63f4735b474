/*
 * The CPU tick path allocates nothing: every allocation made while the
 * profiler's tick handler runs (it runs on the interrupted runtime
 * thread, wrapped by tickspy) is counted, through malloc interposition in
 * a plain build and through the sanitizer's allocation hooks under ASan.
 * A control allocation in a marked stretch proves the counter sees
 * allocations.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tickspy.h"

static atomic_long timer_allocs;
static _Thread_local volatile bool in_tick_path;

static void mark_tick_path(bool inside)
{
    in_tick_path = inside;
}

static void count(void)
{
    if (in_tick_path)
        atomic_fetch_add(&timer_allocs, 1);
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifdef SANITIZED
int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),
                                              void (*f)(const volatile void *));
static void malloc_hook(const volatile void *p, size_t n)
{
    (void)p, (void)n;
    count();
}
static void free_hook(const volatile void *p)
{
    (void)p;
}
/* The sanitizer runtime refuses a NULL hook: both are given. */
static void install_counter(void)
{
    ck_assert_int_ne(__sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook), 0);
}
#else
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
    count();
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    count();
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    count();
    return __libc_realloc(p, n);
}
void *aligned_alloc(size_t al, size_t n)
{
    count();
    return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
    count();
    *out = __libc_memalign(al, n);
    return *out ? 0 : 12;
}
static void install_counter(void)
{
}
#endif

static void *control_thread(void *arg)
{
    (void)arg;
    mark_tick_path(true);
    void *volatile q = malloc(32); /* volatile: not elided */
    mark_tick_path(false);
    free(q);
    return NULL;
}

START_TEST(counter_sees_the_marked_path)
{
    install_counter();
    atomic_store(&timer_allocs, 0);
    pthread_t t;
    pthread_create(&t, NULL, control_thread, NULL);
    pthread_join(t, NULL);
    ck_assert_int_ge(atomic_load(&timer_allocs), 1);
}
END_TEST

START_TEST(tick_handler_allocates_nothing)
{
    install_counter();
    atomic_store(&timer_allocs, 0);
    /* ticks while the runtime thread allocates, and while it sleeps */
    struct tickspy t = {.rate_hz = 1000, .in_handler = mark_tick_path};
    tickspy_run(&t, "namespace t\n"
                    "fn main() {\n"
                    "    let t0 = now_ms()\n"
                    "    let xs = []\n"
                    "    while now_ms() - t0 < 300 {\n"
                    "        push(xs, str(len(xs)))\n"
                    "    }\n"
                    "    sleep(100)\n"
                    "}\n");
    ck_assert_int_eq(t.run_rc, 0);
    /* 400 ms at 1000 Hz: the timer really ran, busy and blocked, and
     * its handler with it. */
    ck_assert_uint_ge(t.fin.requested_ticks, 300);
    ck_assert_int_ge(t.on_runtime, 100);
    ck_assert_int_eq(atomic_load(&timer_allocs), 0);
}
END_TEST

Suite *timer_alloc_suite(void)
{
    Suite *s = suite_create("timer_alloc");
    TCase *t = tcase_create("timer_alloc");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, counter_sees_the_marked_path);
    tcase_add_test(t, tick_handler_allocates_nothing);
    suite_add_tcase(s, t);
    return s;
}
