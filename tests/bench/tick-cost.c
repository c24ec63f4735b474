/*
 * tick-cost: what a CPU-profile tick costs on this machine,
 * each way the profiler could take it, while one thread keeps a core busy
 * with fixed work (as the runtime thread does):
 *
 *   thread  a timer thread sleeping to absolute 1 ms deadlines
 *           (clock_nanosleep) and counting (the profiler's jett-timer);
 *   signal  a periodic POSIX timer signalling the busy thread itself
 *           (SIGEV_THREAD_ID), its handler counting.
 *
 * Rounds alternate none / thread / signal; each prints the process's CPU
 * for the fixed work, and the end gives the median extra CPU per tick
 * each way against the round's `none`, plus the timer thread's own CPU
 * per tick and the bare cost of a signal sent by the thread to itself
 * (tgkill, less a plain system call): on a VM the timer interrupt that
 * raises a tick, paid either way, is most of it.
 *
 * At 1000 Hz the extra CPU is about 1% of the work, the size of the
 * run-to-run noise on a loaded VM: a shorter period (more ticks a
 * second) shows the cost per tick above the noise.
 *
 * usage: tick-cost [ROUNDS [PERIOD_US]]   (default 8 rounds of about 6 s,
 *                                          1000 us: 1000 Hz)
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WORK 1000000000ull /* about 2 s */
#define MAX_ROUNDS 64

static uint64_t period_ns = 1000000;
static _Atomic uint64_t ticks, coalesced;
static atomic_bool pending, stop;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The profiler's tick: a counter, a pending bit, a coalesced count. */
static void tick(uint64_t n)
{
    atomic_fetch_add(&ticks, n);
    if (atomic_exchange(&pending, true))
        atomic_fetch_add(&coalesced, n);
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    (void)sig, (void)uc;
    tick(1 + (uint64_t)(info->si_overrun > 0 ? info->si_overrun : 0));
}

static void *timer_thread(void *arg)
{
    uint64_t *cpu = arg, next = clock_ns(CLOCK_MONOTONIC) + period_ns;
    while (!atomic_load(&stop)) {
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            continue;
        for (uint64_t now = clock_ns(CLOCK_MONOTONIC); next <= now; next += period_ns)
            tick(1);
    }
    *cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

static volatile uint64_t sink;

/* Fixed work that acknowledges the pending bit now and then; the
 * process's CPU nanoseconds it took. */
static uint64_t busy(void)
{
    uint64_t t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), x = 1;
    for (uint64_t i = 0; i < WORK; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if ((i & 4095) == 0)
            atomic_store(&pending, false);
    }
    sink = x;
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
}

static uint64_t with_thread(uint64_t *thread_cpu)
{
    pthread_t t;
    atomic_store(&stop, false);
    pthread_create(&t, NULL, timer_thread, thread_cpu);
    uint64_t cpu = busy();
    atomic_store(&stop, true);
    pthread_join(t, NULL);
    return cpu;
}

static uint64_t with_signal(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t tm;
    if (timer_create(CLOCK_MONOTONIC, &ev, &tm) != 0)
        return 0;
    struct timespec p = {(time_t)(period_ns / 1000000000ull), (long)(period_ns % 1000000000ull)};
    struct itimerspec its = {p, p};
    timer_settime(tm, 0, &its, NULL);
    uint64_t cpu = busy();
    timer_delete(tm);
    return cpu;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    long period_us = argc > 2 ? atol(argv[2]) : 1000;
    if (rounds < 1 || rounds > MAX_ROUNDS || period_us < 10 || period_us > 1000000) {
        fprintf(stderr, "usage: tick-cost [ROUNDS [PERIOD_US]]   (1..%d, 10..1000000)\n",
                MAX_ROUNDS);
        return 2;
    }
    period_ns = (uint64_t)period_us * 1000u;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN, &sa, NULL);
    double by_thread[MAX_ROUNDS], by_signal[MAX_ROUNDS], own[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        uint64_t none = busy(), thread_cpu = 0;
        atomic_store(&ticks, 0);
        uint64_t thread = with_thread(&thread_cpu), thread_ticks = atomic_load(&ticks);
        atomic_store(&ticks, 0);
        uint64_t signal = with_signal(), signal_ticks = atomic_load(&ticks);
        by_thread[r] = ((double)thread - (double)none) / (double)thread_ticks;
        by_signal[r] = ((double)signal - (double)none) / (double)signal_ticks;
        own[r] = (double)thread_cpu / (double)thread_ticks;
        printf("round %d: none %.1f ms  thread %.1f ms (%llu ticks)  signal %.1f ms (%llu ticks)\n",
               r, (double)none / 1e6, (double)thread / 1e6, (unsigned long long)thread_ticks,
               (double)signal / 1e6, (unsigned long long)signal_ticks);
    }
    printf("extra process CPU per tick, median: thread %.0f ns (its own CPU %.0f ns), signal %.0f "
           "ns\n",
           median(by_thread, rounds), median(own, rounds), median(by_signal, rounds));
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    uint64_t n = 200000, t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < n; i++)
        syscall(SYS_tgkill, pid, tid, SIGRTMIN);
    uint64_t t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint64_t i = 0; i < n; i++)
        syscall(SYS_getppid);
    uint64_t t2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    printf("a signal to itself: %.0f ns (delivery, handler, return; no timer interrupt)\n",
           ((double)(t1 - t0) - (double)(t2 - t1)) / (double)n);
    return 0;
}
