/*
 * runtime: the run state, the jett-runtime thread, safe points,
 * interrupts and the profiler's read-only view of the Jett stack.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/eval.h"

/* The runtime thread's stack: INTERP_MAX_DEPTH ordinary calls need about
 * 15 MiB (30 MiB with sanitizers).  Calls that nest very deep expressions
 * can need more: eval_call_fn stops them at INTERP_STACK_MARGIN bytes
 * before the end, as a runtime error instead of a crash. */
#define RUNTIME_STACK_SIZE ((size_t)64 << 20)

static int runtime_safe_point(struct safepoint *sp)
{
    return interp_safe_point_slow((struct interp_state *)sp);
}

struct interp_state *interp_new(struct interp_program *p, const struct interp_host *host,
                                const struct interp_options *opts)
{
    struct interp_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->prog = p;
    if (host)
        s->host = *host;
    s->sp.slow = runtime_safe_point;
    heap_init(&s->heap, opts ? opts->fail_alloc_at : 0);
    s->heap.sp = &s->sp;
    s->frames = calloc(INTERP_MAX_DEPTH + 1, sizeof *s->frames);
    s->globals = calloc(p->n_globals ? p->n_globals : 1, sizeof *s->globals);
    s->n_args = opts ? opts->n_args : 0;
    s->args = calloc(s->n_args + 1, sizeof *s->args);
    s->oom_msg = strdup("out of memory");
    s->oom_line = malloc(INTERP_OOM_LINE);
    s->oom_trace = malloc(INTERP_OOM_TRACE);
    if (s->frames == NULL || s->globals == NULL || s->args == NULL || s->oom_msg == NULL ||
        s->oom_line == NULL || s->oom_trace == NULL || pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(s->frames);
        free(s->globals);
        free(s->args);
        free(s->oom_msg);
        free(s->oom_line);
        free(s->oom_trace);
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->n_args; i++)
        s->args[i] = strdup(opts->args[i]);
    return s;
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
    /* Teardown is not a Jett event: what globals still hold is freed
     * wholesale, without events and without walking references. */
    heap_set_observer(&s->heap, NULL, NULL);
    heap_destroy(&s->heap);
    for (size_t i = 0; i < s->n_args; i++)
        free(s->args[i]);
    free(s->args);
    free(s->frames);
    free(s->globals);
    free(s->fn_calls);
    free(s->site_calls);
    free(s->err_msg);
    free(s->err_loc);
    free(s->err_trace);
    free(s->oom_msg);
    free(s->oom_line);
    free(s->oom_trace);
    close(s->wake[0]);
    close(s->wake[1]);
    free(s);
}

void interp_interrupt(struct interp_state *s, int signo)
{
    atomic_store(&s->signo, signo);
    atomic_fetch_or(&s->sp.pending, PENDING_INTERRUPT);
    ssize_t n = write(s->wake[1], "!", 1);
    (void)n;
}

int interp_safe_point_slow(struct interp_state *s)
{
    uint32_t p = atomic_load(&s->sp.pending);
    if (p & PENDING_SAMPLE) {
        atomic_fetch_and(&s->sp.pending, ~(uint32_t)PENDING_SAMPLE);
        if (s->sampler)
            s->sampler(s->sampler_ctx, s);
    }
    if (p & PENDING_INTERRUPT)
        s->interrupted = true;
    return s->interrupted ? -1 : 0;
}

int interp_count_calls(struct interp_state *s)
{
    const struct interp_program *p = s->prog;
    if (s->fn_calls)
        return 0;
    s->fn_calls = calloc((size_t)p->n_fns + 1, sizeof *s->fn_calls);
    s->site_calls = calloc((size_t)p->n_call_sites + 1, sizeof *s->site_calls);
    if (s->fn_calls && s->site_calls)
        return 0;
    free(s->fn_calls), free(s->site_calls);
    s->fn_calls = s->site_calls = NULL;
    return -1;
}

const uint64_t *interp_fn_calls(const struct interp_state *s)
{
    return s->fn_calls;
}

const uint64_t *interp_site_calls(const struct interp_state *s)
{
    return s->site_calls;
}

void interp_set_sampler(struct interp_state *s, interp_sampler_fn fn, void *ctx)
{
    s->sampler = fn;
    s->sampler_ctx = ctx;
}

void interp_request_sample(struct interp_state *s)
{
    atomic_fetch_or_explicit(&s->sp.pending, PENDING_SAMPLE, memory_order_relaxed);
}

bool interp_is_blocked(struct interp_state *s)
{
    return atomic_load_explicit(&s->blocked, memory_order_relaxed) != 0;
}

void interp_set_heap_observer(struct interp_state *s, heap_observer_fn fn, void *ctx)
{
    heap_set_observer(&s->heap, fn, ctx);
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
    struct heap_list *l = heap_list_new(&s->heap, (uint32_t)s->n_args);
    if (l == NULL)
        return -1;
    *out = val_list(l);
    for (size_t i = 0; i < s->n_args; i++) {
        struct heap_str *a = heap_str_new(&s->heap, s->args[i], strlen(s->args[i]));
        if (a == NULL)
            return -1;
        l->items[l->len++] = val_str(a);
    }
    return 0;
}

/* Runs the namespace initializers in order, then main. */
static int runtime_program(struct interp_state *s, struct value *ret)
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
        return -1;
    }
    return eval_call_fn(s, p->main_fn, slots, NULL, ret);
}

static char *runtime_strdup_printf(const char *fmt, const char *a, const char *b)
{
    char *out = NULL;
    if (asprintf(&out, fmt, a, b) < 0)
        return NULL;
    return out;
}

/* Turns main's value or the pending error into the caller's result. */
static void runtime_finish(struct interp_state *s, int rc, struct value ret,
                           struct interp_result *r)
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
        if (ret.tag == V_INT && !ret.secret)
            asprintf(&s->err_msg, "main returned %lld, outside 0..255", (long long)ret.u.i);
        else
            asprintf(&s->err_msg, "main must return an int or nothing, got %s", val_type_name(ret));
    }
    val_release(s, ret);
    if (rc == 0)
        return;
    if (s->interrupted) {
        r->termination = INTERP_INTERRUPTED;
        r->signal = atomic_load(&s->signo);
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
    const char *msg = s->err_msg ? s->err_msg : "error";
    r->message = s->err_loc ? runtime_strdup_printf("%s: runtime error: %s", s->err_loc, msg)
                            : runtime_strdup_printf("runtime error: %s%s", msg, "");
    r->trace = strdup(s->err_trace ? s->err_trace : "");
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

int interp_run(struct interp_state *s, struct interp_result *out)
{
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
    return 0;
}

void interp_result_free(struct interp_result *r)
{
    free(r->message);
    free(r->trace);
    memset(r, 0, sizeof *r);
}
