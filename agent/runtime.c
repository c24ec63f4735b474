/*
 * runtime: the run state, the jett-runtime thread (or, with tasks, the
 * workers of agent/sched.h), safe points, interrupts and the profiler's
 * read-only view of the Jett stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/channel.h"
#include "agent/eval.h"
#include "agent/task.h"

/* The runtime thread's stack: INTERP_MAX_DEPTH ordinary calls need about
 * 15 MiB (30 MiB with sanitizers).  Calls that nest very deep expressions
 * can need more: eval_call_fn stops them at INTERP_STACK_MARGIN bytes
 * before the end, as a runtime error instead of a crash. */
#define RUNTIME_STACK_SIZE ((size_t)64 << 20)

/* The slow path of a safe point polled on a worker's word: the state
 * running there (or, between tasks, the worker's own). */
static int runtime_safe_point(struct safepoint *sp)
{
    struct sched_worker *w = (struct sched_worker *)sp;
    struct interp_state *s = atomic_load_explicit(&w->current, memory_order_relaxed);
    return interp_safe_point_slow(s ? s : w->idle);
}

struct interp_state *run_state_new(struct interp_run *run, struct interp_frame *frames)
{
    const struct interp_program *p = run->prog;
    struct interp_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->prog = p;
    s->run = run;
    s->host = run->host;
    s->sp = &run->solo.sp;
    s->worker = &run->solo;
    heap_init(&s->heap, run->fail_alloc_at);
    s->heap.sp = s->sp;
    s->heap.shared_drop = rt_shared_drop;
    s->heap.shared_ctx = run;
    if (run->tasks) {
        s->heap.shared_attempts = &run->attempts;
        if (run->observer)
            heap_set_observer(&s->heap, run->observer, s);
    }
    s->frames = frames;
    s->globals = calloc(p->n_globals ? p->n_globals : 1, sizeof *s->globals);
    s->oom_msg = strdup("out of memory");
    if (s->globals == NULL || s->oom_msg == NULL) {
        free(s->globals);
        free(s->oom_msg);
        free(s);
        return NULL;
    }
    return s;
}

void run_state_free(struct interp_state *s)
{
    if (s == NULL)
        return;
    free(s->globals);
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    free(s->oom_msg);
    free(s);
}

/* The workers of a run with tasks: --workers, else the CPUs, at most 8. */
static uint32_t runtime_workers(uint32_t asked)
{
    if (asked >= 1 && asked <= INTERP_MAX_WORKERS)
        return asked;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > INTERP_DEFAULT_WORKERS_MAX ? INTERP_DEFAULT_WORKERS_MAX : (uint32_t)n;
}

static void runtime_run_free(struct interp_run *run)
{
    if (run->wake[0] >= 0)
        close(run->wake[0]);
    if (run->wake[1] >= 0)
        close(run->wake[1]);
    for (size_t i = 0; i < run->n_args; i++)
        free(run->args[i]);
    free(run->args);
    free(run->oom_line);
    free(run->oom_trace);
    pthread_mutex_destroy(&run->host_lock);
    pthread_mutex_destroy(&run->spawn_lock);
    pthread_mutex_destroy(&run->reg_lock);
    free(run);
}

/* The C library's fast bins keep small freed blocks unmerged until a
 * later larger request merges them all at once: after a program freed
 * millions of small objects (an 8-million-item split dropped), one
 * malloc of a few KiB took 100 ms, which no safe point can split.  With
 * them off, each free merges its own block as it goes, a poll apart
 * (no slower on the allocation benchmarks). */
static void runtime_malloc_setup(void)
{
#ifdef M_MXFAST
    mallopt(M_MXFAST, 0);
#endif
}

struct interp_state *interp_new(struct interp_program *p, const struct interp_host *host,
                                const struct interp_options *opts)
{
    runtime_malloc_setup();
    struct interp_run *run = calloc(1, sizeof *run);
    if (run == NULL)
        return NULL;
    run->prog = p;
    if (host)
        run->host = *host;
    run->tasks = p->uses_spawn;
    run->n_workers = runtime_workers(opts ? opts->workers : 0);
    run->fail_alloc_at = opts ? opts->fail_alloc_at : 0;
    run->wake[0] = run->wake[1] = -1;
    pthread_mutex_init(&run->host_lock, NULL);
    pthread_mutex_init(&run->spawn_lock, NULL);
    pthread_mutex_init(&run->reg_lock, NULL);
    run->solo.sp.slow = runtime_safe_point;
    run->n_args = opts ? opts->n_args : 0;
    run->args = calloc(run->n_args + 1, sizeof *run->args);
    run->oom_line = malloc(INTERP_OOM_LINE);
    run->oom_trace = malloc(INTERP_OOM_TRACE);
    struct interp_frame *frames = calloc(INTERP_MAX_DEPTH + 1, sizeof *frames);
    struct interp_state *s = frames ? run_state_new(run, frames) : NULL;
    /* The workers exist (idle, without threads) before a profiler looks
     * at them. */
    bool sched_ok = !run->tasks || sched_init(&run->sched, run, run->n_workers) == 0;
    if (s == NULL || !sched_ok || run->args == NULL || run->oom_line == NULL ||
        run->oom_trace == NULL || pipe2(run->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        if (s)
            run_state_free(s);
        if (sched_ok && run->tasks)
            sched_destroy(&run->sched);
        free(frames);
        runtime_run_free(run);
        return NULL;
    }
    for (size_t i = 0; i < run->n_args; i++)
        run->args[i] = strdup(opts->args[i]);
    /* The first state keeps the reserve for running out of memory. */
    s->oom_line = run->oom_line, s->oom_trace = run->oom_trace;
    run->oom_line = run->oom_trace = NULL;
    run->main = s;
    atomic_store(&run->solo.current, s);
    return s;
}

bool interp_program_has_tasks(const struct interp_program *p)
{
    return p->uses_spawn;
}

uint64_t interp_fail_alloc_from_env(void)
{
    const char *v = getenv("JETT_TEST_FAIL_ALLOC");
    if (v == NULL || *v < '1' || *v > '9')
        return 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end == '\0' ? (uint64_t)n : 0;
}

void interp_free(struct interp_state *s)
{
    if (s == NULL)
        return;
    struct interp_run *run = s->run;
    /* Teardown is not a Jett event: what globals still hold is freed
     * wholesale, without events and without walking references; so are
     * the tasks and channels still referenced, and what they hold. */
    heap_set_observer(&s->heap, NULL, NULL);
    heap_destroy(&s->heap);
    while (run->reg) {
        struct rt_shared *o = run->reg;
        run->reg = o->reg_next;
        if (o->kind == RT_TASK)
            task_teardown((struct interp_task *)o);
        else
            channel_teardown((struct interp_channel *)o);
    }
    if (run->tasks)
        sched_destroy(&run->sched);
    free(s->frames);
    if (!run->tasks) /* with tasks, the workers own the tables */
        free(s->fn_calls), free(s->site_calls);
    free(run->fn_calls), free(run->site_calls);
    free(s->oom_line);
    free(s->oom_trace);
    run_state_free(s);
    runtime_run_free(run);
}

void interp_interrupt(struct interp_state *s, int signo)
{
    struct interp_run *run = s->run;
    atomic_store(&run->signo, signo);
    if (run->tasks && run->sched.workers)
        for (uint32_t i = 0; i < run->sched.n_workers; i++)
            atomic_fetch_or(&run->sched.workers[i].sp.pending, PENDING_INTERRUPT);
    atomic_fetch_or(&run->solo.sp.pending, PENDING_INTERRUPT);
    ssize_t n = write(run->wake[1], "!", 1);
    (void)n;
}

int interp_safe_point_slow(struct interp_state *s)
{
    uint32_t p = atomic_load(&s->sp->pending);
    if (p & PENDING_SAMPLE) {
        atomic_fetch_and(&s->sp->pending, ~(uint32_t)PENDING_SAMPLE);
        if (s->run->sampler)
            s->run->sampler(s->run->sampler_ctx, s);
    }
    if (p & PENDING_INTERRUPT)
        s->interrupted = true;
    return s->interrupted ? -1 : 0;
}

void interp_host_lock(struct interp_state *s)
{
    if (s->run->tasks)
        pthread_mutex_lock(&s->run->host_lock);
}

void interp_host_unlock(struct interp_state *s)
{
    if (s->run->tasks)
        pthread_mutex_unlock(&s->run->host_lock);
}

/* Writes all of data to fd, retrying short writes. */
static void run_write_fd(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

void run_host_write(struct interp_state *s, bool err, const char *data, size_t len)
{
    void (*w)(void *, const char *, size_t) = err ? s->host.write_stderr : s->host.write_stdout;
    interp_host_lock(s);
    for (size_t at = 0, n; at < len; at += n) {
        n = len - at < SAFEPOINT_CHUNK ? len - at : SAFEPOINT_CHUNK;
        if (at > 0)
            safepoint_poll(s->sp);
        if (w)
            w(s->host.ctx, data + at, n);
        else
            run_write_fd(err ? 2 : 1, data + at, n);
    }
    interp_host_unlock(s);
}

void interp_host_poll(const struct interp_state *s)
{
    safepoint_poll(s->sp);
}

void interp_host_copy(const struct interp_state *s, void *dst, const void *src, size_t n)
{
    safepoint_copy_all(s->sp, dst, src, n);
}

/* Two tables of call counts, by function id and by call site id: 0, or
 * -1 when memory runs out (none then). */
static int calls_tables(const struct interp_program *p, uint64_t **fn, uint64_t **site)
{
    *fn = calloc((size_t)p->n_fns + 1, sizeof **fn);
    *site = calloc((size_t)p->n_call_sites + 1, sizeof **site);
    if (*fn && *site)
        return 0;
    free(*fn), free(*site);
    *fn = *site = NULL;
    return -1;
}

int interp_count_calls(struct interp_state *s)
{
    struct interp_run *run = s->run;
    if (!run->tasks)
        return s->fn_calls ? 0 : calls_tables(s->prog, &s->fn_calls, &s->site_calls);
    /* with tasks: each worker counts what runs on it (run_task points
     * the task's state at them), and the run's sums are made once the
     * workers ended (runtime_calls_sum) */
    if (run->fn_calls)
        return 0;
    if (calls_tables(s->prog, &run->fn_calls, &run->site_calls) != 0)
        return -1;
    for (uint32_t i = 0; i < run->sched.n_workers; i++) {
        struct sched_worker *w = &run->sched.workers[i];
        if (calls_tables(s->prog, &w->fn_calls, &w->site_calls) != 0)
            return -1; /* what was made is freed with the workers and the run */
    }
    return 0;
}

void runtime_calls_sum(struct interp_run *run)
{
    const struct interp_program *p = run->prog;
    for (uint32_t i = 0; run->fn_calls && i < run->sched.n_workers; i++) {
        const struct sched_worker *w = &run->sched.workers[i];
        for (uint32_t f = 0; f < p->n_fns; f++)
            run->fn_calls[f] += w->fn_calls[f];
        for (uint32_t c = 0; c < p->n_call_sites; c++)
            run->site_calls[c] += w->site_calls[c];
    }
}

const uint64_t *interp_fn_calls(const struct interp_state *s)
{
    return s->run->tasks ? s->run->fn_calls : s->fn_calls;
}

const uint64_t *interp_site_calls(const struct interp_state *s)
{
    return s->run->tasks ? s->run->site_calls : s->site_calls;
}

void interp_set_sampler(struct interp_state *s, interp_sampler_fn fn, void *ctx)
{
    s->run->sampler = fn;
    s->run->sampler_ctx = ctx;
}

void interp_request_sample(struct interp_state *s)
{
    atomic_fetch_or_explicit(&s->sp->pending, PENDING_SAMPLE, memory_order_relaxed);
}

bool interp_is_blocked(struct interp_state *s)
{
    return atomic_load_explicit(&s->blocked, memory_order_relaxed) != 0;
}

void interp_set_heap_observer(struct interp_state *s, const struct heap_observer *o, void *ctx)
{
    heap_set_observer(&s->heap, o, ctx);
}

void interp_set_task_heap_observer(struct interp_state *s, const struct heap_observer *o, void *ctx)
{
    struct interp_run *run = s->run;
    run->observer = o;
    run->observer_ctx = ctx;
    heap_set_observer(&s->heap, o, s);
}

void *interp_heap_observer_ctx(const struct interp_state *s)
{
    return s->run->observer_ctx;
}

void interp_set_task_hooks(struct interp_state *s, const struct interp_task_hooks *h, void *ctx)
{
    s->run->hooks = *h;
    s->run->hooks_ctx = ctx;
}

bool interp_has_tasks(const struct interp_state *s)
{
    return s->run->tasks;
}

uint32_t interp_worker_count(const struct interp_state *s)
{
    return s->run->tasks ? s->run->n_workers : 1;
}

void interp_worker_cpu(const struct interp_state *s, uint64_t *sum_ns, uint64_t *max_ns)
{
    const struct sched *sc = &s->run->sched;
    *sum_ns = *max_ns = 0;
    for (uint32_t i = 0; s->run->tasks && sc->workers && i < sc->n_workers; i++) {
        *sum_ns += sc->workers[i].cpu_ns;
        if (sc->workers[i].cpu_ns > *max_ns)
            *max_ns = sc->workers[i].cpu_ns;
    }
}

/* Worker k of a run with tasks, or NULL (no such worker, or none yet). */
static struct sched_worker *runtime_worker(struct interp_state *s, uint32_t k)
{
    struct interp_run *run = s->run;
    if (!run->tasks || run->sched.workers == NULL || k == 0 || k > run->sched.n_workers)
        return NULL;
    return &run->sched.workers[k - 1];
}

bool interp_worker_busy(struct interp_state *s, uint32_t k)
{
    struct sched_worker *w = runtime_worker(s, k);
    return w && atomic_load_explicit(&w->current, memory_order_relaxed) != NULL;
}

void interp_worker_request(struct interp_state *s, uint32_t k)
{
    struct sched_worker *w = runtime_worker(s, k);
    if (w)
        atomic_fetch_or_explicit(&w->sp.pending, PENDING_SAMPLE, memory_order_relaxed);
}

bool interp_worker_runs(struct interp_state *s, uint32_t k, const struct interp_state *t)
{
    struct sched_worker *w = runtime_worker(s, k);
    return w && atomic_load_explicit(&w->current, memory_order_relaxed) == t;
}

void interp_worker_take_sample(struct interp_state *s, uint32_t k)
{
    struct sched_worker *w = runtime_worker(s, k);
    if (w)
        atomic_fetch_and_explicit(&w->sp.pending, ~(uint32_t)PENDING_SAMPLE, memory_order_relaxed);
}

uint32_t interp_task_number(const struct interp_state *s)
{
    return task_number_of(s);
}

uint32_t interp_thread_id(const struct interp_state *s)
{
    return s->worker ? s->worker->index : 0;
}

uint64_t *interp_task_mark(struct interp_state *s)
{
    return s->task ? &s->task->prof_mark : NULL;
}

uint32_t interp_stack_depth(const struct interp_state *s)
{
    return s->depth;
}

uint32_t interp_stack_node(const struct interp_state *s, uint32_t i)
{
    return s->frames[i].stack_node;
}

void interp_set_stack_node(struct interp_state *s, uint32_t i, uint32_t node)
{
    s->frames[i].stack_node = node;
}

struct interp_frame *interp_frames(struct interp_state *s)
{
    return s->frames;
}

const uint32_t *interp_depth_at(const struct interp_state *s)
{
    return &s->depth;
}

struct interp_frame_info interp_stack_frame(const struct interp_state *s, uint32_t i)
{
    const struct interp_frame *f = &s->frames[i];
    struct interp_frame_info info = {f->func_id, {f->call_start, f->call_end}};
    if (i + 1 == s->depth)
        info.span = (struct interp_span){f->stmt_start, f->stmt_end};
    return info;
}

const struct interp_program *interp_state_program(const struct interp_state *s)
{
    return s->prog;
}

/* main's args list: one string per argument (allocated outside any frame). */
static int runtime_args(struct interp_state *s, struct value *out)
{
    const struct interp_run *run = s->run;
    struct heap_list *l = heap_list_new(&s->heap, (uint32_t)run->n_args);
    if (l == NULL)
        return -1;
    *out = val_list(l);
    for (size_t i = 0; i < run->n_args; i++) {
        struct heap_str *a = heap_str_new(&s->heap, run->args[i], strlen(run->args[i]));
        if (a == NULL)
            return -1;
        l->items[l->len++] = val_str(a);
    }
    return 0;
}

/* Runs the namespace initializers in order, then main. */
int runtime_program(struct interp_state *s, struct value *ret)
{
    const struct interp_program *p = s->prog;
    for (uint32_t i = 0; i < p->n_init; i++) {
        struct value none, slots[1];
        if (eval_call_fn(s, p->nss[p->init_order[i]].init_fn, slots, NULL, &none) < 0)
            return -1;
        val_release(s, none);
    }
    const struct interp_fn *fn = &p->fns[p->main_fn];
    struct value slots[fn->n_slots ? fn->n_slots : 1];
    for (uint32_t i = 0; i < fn->n_slots; i++)
        slots[i] = VAL_NIL;
    if (fn->n_params == 1 && runtime_args(s, &slots[0]) < 0) {
        val_release(s, slots[0]);
        s->err_msg = strdup("out of memory");
        s->err_len = s->err_msg ? strlen(s->err_msg) : 0;
        return -1;
    }
    return eval_call_fn(s, p->main_fn, slots, NULL, ret);
}

/* Turns main's value or the pending error into the caller's result. */
void runtime_finish(struct interp_state *s, int rc, struct value ret, struct interp_result *r)
{
    memset(r, 0, sizeof *r);
    if (rc == 0 && ret.tag == V_INT && ret.u.i >= 0 && ret.u.i <= 255 && !ret.secret) {
        r->exit_code = (int)ret.u.i;
    } else if (rc == 0 && ret.tag != V_NIL) {
        rc = -1;
        s->err_oom = false;
        const struct interp_func_info *fi = &s->prog->infos[s->prog->main_fn];
        const struct interp_source *src = s->prog->sources[fi->source_id];
        uint32_t line, column;
        interp_source_position(src, fi->decl.start, &line, &column);
        free(s->err_loc);
        s->err_loc = NULL;
        if (asprintf(&s->err_loc, "%s:%u:%u", src->path, line, column) < 0)
            s->err_loc = NULL;
        free(s->err_msg);
        int n =
            ret.tag == V_INT && !ret.secret
                ? asprintf(&s->err_msg, "main returned %lld, outside 0..255", (long long)ret.u.i)
                : asprintf(&s->err_msg, "main must return an int or nothing, got %s",
                           val_type_name(ret));
        if (n < 0)
            s->err_msg = NULL;
        s->err_len = n < 0 ? 0 : (size_t)n;
    }
    val_release(s, ret);
    if (rc == 0)
        return;
    if (s->interrupted) {
        r->termination = INTERP_INTERRUPTED;
        r->signal = atomic_load(&s->run->signo);
        r->exit_code = 128 + r->signal;
        return;
    }
    r->termination = INTERP_RUNTIME_ERROR;
    r->exit_code = 1;
    if (s->err_oom && s->oom_line && s->oom_trace) { /* formatted when memory ran out */
        r->message = s->oom_line;
        r->trace = s->oom_trace;
        s->oom_line = s->oom_trace = NULL;
        return;
    }
    /* a long message is copied a chunk at a time, and the trace taken */
    struct strbuf b = {.sp = s->sp};
    sb_error_line(&b, s);
    r->message = b.data;
    r->trace = s->err_trace ? s->err_trace : strdup("");
    s->err_trace = NULL;
}

struct runtime_job {
    struct interp_state *s;
    struct interp_result *r;
};

static void *runtime_thread(void *arg)
{
    struct runtime_job *job = arg;
    pthread_setname_np(pthread_self(), "jett-runtime"); /* before any Jett code runs */
    char base;
    job->s->stack_limit = (uintptr_t)&base - (RUNTIME_STACK_SIZE - INTERP_STACK_MARGIN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* signals go to the launcher's thread */
    struct value ret = VAL_NIL;
    int rc = runtime_program(job->s, &ret);
    runtime_finish(job->s, rc, ret, job->r);
    return NULL;
}

/* Once every task has ended, what is still live anywhere (values a
 * channel holds, what an ended task left: its result, its copy of it
 * that no join took, and any cycle, and what the workers freed tasks
 * into) joins task 1's heap, where the
 * retained walk and the teardown find it.  No event: nothing changes
 * but the lists the objects are on.  A run without tasks has channels
 * too, whose messages are on no heap's list until then. */
static void runtime_gather(struct interp_run *run)
{
    struct heap *h = &run->main->heap;
    for (uint32_t i = 0; run->tasks && i < run->sched.n_workers; i++) {
        struct interp_state *idle = run->sched.workers[i].idle;
        if (idle) { /* no safe point now: the workers have ended */
            idle->heap.sp = &safepoint_idle;
            struct heap_chain c = heap_detach(&idle->heap, &idle->heap.live);
            heap_adopt(h, &c);
        }
    }
    for (struct rt_shared *o = run->reg; o; o = o->reg_next) {
        if (o->kind == RT_TASK) {
            heap_adopt(h, &((struct interp_task *)o)->left);
            heap_adopt(h, &((struct interp_task *)o)->sent_chain);
            continue;
        }
        struct interp_channel *ch = (struct interp_channel *)o;
        for (uint32_t k = 0; k < ch->len; k++)
            heap_adopt(h, &ch->buf[(ch->head + k) % ch->buf_cap].chain);
    }
}

/* A run with tasks: main is task 1 on the workers (agent/scheduler.h). */
static int runtime_run_tasks(struct interp_state *s, struct interp_result *out)
{
    struct interp_run *run = s->run;
    memset(out, 0, sizeof *out);
    struct interp_task *t = task_main(run, out);
    if (t == NULL)
        return -1;
    int rc = sched_run(&run->sched, t);
    runtime_calls_sum(run); /* the workers have ended */
    if (rc == 0)
        runtime_gather(run);
    return rc;
}

int interp_run(struct interp_state *s, struct interp_result *out)
{
    if (s->run->tasks)
        return runtime_run_tasks(s, out);
    struct runtime_job job = {s, out};
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, RUNTIME_STACK_SIZE);
    int err = pthread_create(&t, &attr, runtime_thread, &job);
    pthread_attr_destroy(&attr);
    if (err != 0)
        return -1;
    pthread_join(t, NULL);
    runtime_gather(s->run);
    return 0;
}

void interp_result_free(struct interp_result *r)
{
    free(r->message);
    free(r->trace);
    memset(r, 0, sizeof *r);
}
