/*
 * A real out of memory: this suite is linked with --wrap for malloc,
 * calloc and realloc, and from the first request of OOM_AT bytes or more
 * every one of them fails, as when memory is exhausted and stays so.
 * The runtime error must still say where it happened; formatting it
 * cannot take memory.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tests/interp_harness.h"

#define OOM_AT ((size_t)64 << 20)

static atomic_bool exhausted;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static bool oom_refuses(size_t n)
{
    if (n >= OOM_AT)
        atomic_store(&exhausted, true);
    return atomic_load(&exhausted);
}

void *__wrap_malloc(size_t n)
{
    return oom_refuses(n) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return oom_refuses(n && k > SIZE_MAX / n ? SIZE_MAX : k * n) ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return oom_refuses(n) ? NULL : __real_realloc(p, n);
}

/* s doubles until the concatenation asks for 64 MiB (24 + 2^26 + 1
 * bytes): that allocation and every later one fails.  The concatenation
 * s + s on line 5 starts at column 9. */
START_TEST(concatenation_out_of_memory_names_its_place)
{
    struct harness_run r;
    harness_run(&r, "namespace oom.cat\nfn main() {\n  let s = \"x\"\n  while true {\n"
                    "    s = s + s\n  }\n}\n");
    bool ran_out = atomic_exchange(&exhausted, false);
    ck_assert(ran_out);
    ck_assert_int_eq(r.result.termination, INTERP_RUNTIME_ERROR);
    ck_assert_str_eq(r.result.message, "main.jett:5:9: runtime error: out of memory");
    ck_assert_str_eq(r.result.trace, "  at oom.cat.main (main.jett:5:9)\n");
    harness_free(&r);
}
END_TEST

Suite *oom_suite(void);
Suite *oom_suite(void)
{
    Suite *s = suite_create("oom");
    TCase *tc = tcase_create("oom");
    tcase_add_test(tc, concatenation_out_of_memory_names_its_place);
    suite_add_tcase(s, tc);
    return s;
}
