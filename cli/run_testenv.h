/*
 * run_testenv: the test-only knobs of `jett run`, read from the
 * environment in one place.  None of them makes a run do more than it
 * could do anyway: each withdraws something, shrinks a budget, fails an
 * operation or reports the launcher's own numbers, so that tests can
 * reach paths that a healthy machine never takes.
 *
 *   JETT_TEST_WITHDRAW_CAPABILITY=NAME[,NAME...]  capabilities the backend
 *                                   does not declare (as if unprobed)
 *   JETT_TEST_CPU_BUDGET, JETT_TEST_RETENTION_BUDGET, JETT_TEST_STACK_BUDGET
 *                                   smaller budgets in bytes
 *   JETT_TEST_AGENT_STACK_BUDGET   a smaller stack table in the agent (bytes)
 *   JETT_TEST_WALK_BUDGET           a smaller budget for the walk of
 *                                   retained holders (bytes)
 *   JETT_TEST_SKIP_WALK=1           no walk of retained holders
 *   JETT_TEST_HEAP_TOTALS=PATH      the heap observer's own totals
 *   JETT_TEST_STACK_WALK=PATH       the frames at every heap event
 *                                   (see run_stackwalk.h)
 *   JETT_TEST_THREAD_CPU=PATH       the CPU time of the profiler's threads
 *                                   and of the daemon (see run_threadcpu.h)
 *   JETT_TEST_FAIL_ALLOC=N          the Nth heap allocation fails
 *   JETT_TEST_FAIL_PROFILER_START=1 starting collection fails
 *   JETT_TEST_SKEW_FINISH=1         FINISH claims one requested tick more
 *                                   than happened (a record the daemon
 *                                   refuses, after the program ran)
 *   JETT_TEST_NO_FOLD=1             memory mode sends every free as its
 *                                   own entry (no FOLD), so that a test
 *                                   can compare a run folded and unfolded
 *   JETT_TEST_TIMER_ASLEEP=1        CPU mode with tasks: the timer thread
 *                                   never ticks by itself; only tasks that
 *                                   park or resume after a deadline do, as
 *                                   on a machine whose scheduler keeps the
 *                                   timer off the cores while workers run
 */
#ifndef JETT_CLI_RUN_TESTENV_H
#define JETT_CLI_RUN_TESTENV_H

#include <stdbool.h>
#include <stdint.h>

struct run_testenv {
    uint32_t withdrawn;                                  /* enum wire_capability bits */
    uint64_t cpu_budget, retention_budget, stack_budget; /* 0: the real one */
    uint64_t agent_stack_budget;                         /* 0: the real one */
    uint64_t walk_budget;                                /* 0: the retention budget */
    bool skip_walk;
    const char *heap_totals; /* NULL: none */
    const char *stack_walk;  /* NULL: none */
    const char *thread_cpu;  /* NULL: none */
    uint64_t fail_alloc;     /* 0: never */
    bool fail_profiler_start;
    bool skew_finish;
    bool no_fold;
    bool timer_asleep;
};

/* Reads the knobs from the environment. */
void run_testenv_read(struct run_testenv *t);

/* `real`, or the test budget when it is set and smaller. */
uint64_t run_testenv_budget(uint64_t test, uint64_t real);

#endif
