/* run_testenv: reads the test-only knobs of jett run once. */
#include <stdlib.h>
#include <string.h>

#include "agent/interp.h"
#include "cli/run_testenv.h"
#include "proto/wire.h"

static uint64_t number(const char *name)
{
    const char *v = getenv(name);
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && *end == 0 ? n : 0;
}

/* Capability names separated by commas; unknown names are ignored. */
static uint32_t withdrawn(const char *list)
{
    uint32_t bits = 0;
    for (const char *s = list; s && *s;) {
        size_t n = strcspn(s, ",");
        for (int i = 0; i < WIRE_CAP_COUNT; i++)
            if (strlen(wire_capability_names[i]) == n &&
                memcmp(wire_capability_names[i], s, n) == 0)
                bits |= 1u << i;
        s += n + (s[n] == ',');
    }
    return bits;
}

void run_testenv_read(struct run_testenv *t)
{
    t->withdrawn = withdrawn(getenv("JETT_TEST_WITHDRAW_CAPABILITY"));
    t->cpu_budget = number("JETT_TEST_CPU_BUDGET");
    t->retention_budget = number("JETT_TEST_RETENTION_BUDGET");
    t->stack_budget = number("JETT_TEST_STACK_BUDGET");
    t->agent_stack_budget = number("JETT_TEST_AGENT_STACK_BUDGET");
    t->walk_budget = number("JETT_TEST_WALK_BUDGET");
    t->skip_walk = number("JETT_TEST_SKIP_WALK") != 0;
    t->heap_totals = getenv("JETT_TEST_HEAP_TOTALS");
    t->stack_walk = getenv("JETT_TEST_STACK_WALK");
    t->thread_cpu = getenv("JETT_TEST_THREAD_CPU");
    t->fail_alloc = interp_fail_alloc_from_env(); /* the one parser jett-interp-run uses too */
    t->fail_profiler_start = number("JETT_TEST_FAIL_PROFILER_START") != 0;
    t->skew_finish = number("JETT_TEST_SKEW_FINISH") != 0;
    t->no_fold = number("JETT_TEST_NO_FOLD") != 0;
    t->timer_asleep = number("JETT_TEST_TIMER_ASLEEP") != 0;
}

uint64_t run_testenv_budget(uint64_t test, uint64_t real)
{
    return test > 0 && test < real ? test : real;
}
