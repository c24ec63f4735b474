/*
 * The CPU timer thread allocates nothing: every allocation made by a
 * thread named "jett-timer" is counted, through malloc interposition in a
 * plain build and through the sanitizer's allocation hooks under ASan
 * and TSan.
 * A control thread with the same name proves the counter sees
 * allocations.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/collector.h"
#include "agent/interp.h"
#include "agent/profiler.h"
#include "testutil.h"

static atomic_long timer_allocs;

static int on_timer_thread(void)
{
    char name[16] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    return strcmp(name, "jett-timer") == 0;
}

static void count(void)
{
    if (on_timer_thread())
        atomic_fetch_add(&timer_allocs, 1);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
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
    prctl(PR_SET_NAME, "jett-timer", 0, 0, 0);
    void *volatile q = malloc(32); /* volatile: not elided */
    free(q);
    return NULL;
}

START_TEST(counter_sees_a_named_thread)
{
    install_counter();
    atomic_store(&timer_allocs, 0);
    pthread_t t;
    pthread_create(&t, NULL, control_thread, NULL);
    pthread_join(t, NULL);
    ck_assert_int_ge(atomic_load(&timer_allocs), 1);
}
END_TEST

static void *drain(void *arg)
{
    char buf[65536];
    while (read(*(int *)arg, buf, sizeof buf) > 0)
        ;
    return NULL;
}

START_TEST(timer_thread_allocates_nothing)
{
    install_counter();
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/t.jett", dir);
    const char prog[] = "namespace t\n"
                        "fn main() {\n"
                        "    let t0 = now_ms()\n"
                        "    let xs = []\n"
                        "    while now_ms() - t0 < 300 {\n"
                        "        push(xs, str(len(xs)))\n"
                        "    }\n"
                        "    sleep(100)\n"
                        "}\n";
    ck_assert_int_eq(tu_write_file(path, prog, sizeof prog - 1), 0);
    struct interp_diags diags = {0};
    struct interp_program *p = interp_load(path, NULL, &diags);
    ck_assert_ptr_nonnull(p);
    struct interp_host host = {0};
    struct interp_options opts = {0};
    struct interp_state *s = interp_new(p, &host, &opts);
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pthread_t reader;
    pthread_create(&reader, NULL, drain, &sv[1]);
    struct collector *c = collector_new(sv[0], -1, COLLECTOR_RING, COLLECTOR_STALL_NS);
    struct profiler *prof =
        profiler_new(c, s, WIRE_MODE_CPU, 1000, 16u << 20, interp_func_count(p));
    ck_assert_int_eq(collector_start(c), 0);
    atomic_store(&timer_allocs, 0);
    ck_assert_int_eq(profiler_start(prof), 0);
    struct interp_result r;
    ck_assert_int_eq(interp_run(s, &r), 0);
    struct wire_finish fin = {0};
    profiler_stop(prof, &fin);
    long allocs = atomic_load(&timer_allocs);
    /* 400 ms at 1000 Hz: the timer really ran, busy and blocked. */
    ck_assert_uint_ge(fin.requested_ticks, 300);
    ck_assert_int_eq(allocs, 0);
    collector_free(c); /* closes sv[0]; the reader sees EOF */
    pthread_join(reader, NULL);
    close(sv[1]);
    profiler_free(prof);
    interp_result_free(&r);
    interp_free(s);
    interp_program_free(p);
    unlink(path);
    rmdir(dir);
    free(dir);
}
END_TEST

Suite *timer_alloc_suite(void)
{
    Suite *s = suite_create("timer_alloc");
    TCase *t = tcase_create("timer_alloc");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, counter_sees_a_named_thread);
    tcase_add_test(t, timer_thread_allocates_nothing);
    suite_add_tcase(s, t);
    return s;
}
