/* builtins: the builtin table, argument checks, and the builtins that
 * talk to the host (output, debug rows, log records, time, environment). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/builtins.h"
#include "agent/run.h"

const struct builtin_def builtin_table[] = {
    {"print", 0, 255, 0, bi_print},     {"eprint", 0, 255, 0, bi_eprint},
    {"len", 1, 1, 0, bi_len},           {"push", 2, 2, 0, bi_push},
    {"pop", 1, 1, 0, bi_pop},           {"insert", 3, 3, 0, bi_insert},
    {"remove", 2, 2, 0, bi_remove},     {"keys", 1, 1, 0, bi_keys},
    {"values", 1, 1, 0, bi_values},     {"has", 2, 2, 0, bi_has},
    {"str", 1, 1, 0, bi_str},           {"int", 1, 1, 0, bi_int},
    {"float", 1, 1, 0, bi_float},       {"substr", 2, 3, 0, bi_substr},
    {"split", 2, 2, 0, bi_split},       {"join", 1, 2, 0, bi_join},
    {"contains", 2, 2, 0, bi_contains}, {"find", 2, 2, 0, bi_find},
    {"upper", 1, 1, 0, bi_upper},       {"lower", 1, 1, 0, bi_lower},
    {"repeat", 2, 2, 0, bi_repeat},     {"sort", 1, 2, 0, bi_sort},
    {"slice", 2, 3, 0, bi_slice},       {"abs", 1, 1, 0, bi_abs},
    {"min", 1, 255, 0, bi_min},         {"max", 1, 255, 0, bi_max},
    {"now_ms", 0, 0, 0, bi_now_ms},     {"sleep", 1, 1, 0, bi_sleep},
    {"env", 1, 1, 1, bi_env},           {"secret", 1, 1, 1, bi_secret},
    {"fail", 1, 1, 0, bi_fail},         {"debug", 1, 1, 0, bi_debug},
    {"log", 2, 3, 0, bi_log},           {"spawn", 1, 255, 0, bi_spawn},
    {"channel", 1, 1, 0, bi_channel},   {"send", 2, 2, 0, bi_send},
    {"recv", 1, 1, 0, bi_recv},         {"close", 1, 1, 0, bi_close},
};
const uint32_t builtin_count = sizeof builtin_table / sizeof builtin_table[0];

int builtin_lookup(const char *name)
{
    for (uint32_t i = 0; i < builtin_count; i++)
        if (strcmp(builtin_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const char *bi_tag_name(enum val_tag tag)
{
    return val_type_name((struct value){.tag = (uint8_t)tag});
}

int bi_want(struct interp_state *s, const struct ast *call, struct value *args, uint32_t i,
            enum val_tag tag)
{
    if (args[i].tag == tag && !args[i].secret)
        return 0;
    return interp_raise(s, call, "%s: argument %u must be %s, got %s%s",
                        builtin_table[s->builtin].name, i + 1, bi_tag_name(tag),
                        args[i].secret ? "secret " : "", val_type_name(args[i]));
}

static void bi_output(struct interp_state *s, bool err, struct value *args, uint32_t n)
{
    struct strbuf b = {.sp = s->sp};
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            sb_puts(&b, " ");
        val_format(s->prog, s->sp, args[i], false, &b);
    }
    sb_puts(&b, "\n");
    run_host_write(s, err, b.data, b.len);
    sb_free(&b);
}

int bi_print(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)call;
    bi_output(s, false, args, n);
    *out = VAL_NIL;
    return 0;
}

int bi_eprint(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)call;
    bi_output(s, true, args, n);
    *out = VAL_NIL;
    return 0;
}

/* The call site of a builtin as logical path, line and column. */
static const char *bi_site(struct interp_state *s, const struct ast *call, uint32_t *line,
                           uint32_t *column)
{
    const struct interp_frame *f = &s->frames[s->depth - 1];
    const struct interp_source *src = s->prog->sources[s->prog->infos[f->func_id].source_id];
    interp_source_position(src, call->start, line, column);
    return src->path;
}

int bi_debug(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    *out = VAL_NIL;
    if (s->host.debug == NULL)
        return 0;
    struct strbuf b = {0};
    val_format(s->prog, s->sp, args[0], false, &b);
    struct interp_debug_row row = {.value = b.data ? b.data : "", .value_len = b.len, .state = s};
    row.path = bi_site(s, call, &row.line, &row.column);
    interp_host_lock(s);
    s->host.debug(s->host.ctx, &row);
    interp_host_unlock(s);
    sb_free(&b);
    return 0;
}

int bi_now_ms(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)s;
    (void)args;
    (void)n;
    (void)call;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *out = val_int((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    return 0;
}

static int64_t bi_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Blocks (marked as blocked) until the time is up or an interrupt arrives. */
int bi_sleep(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_INT) < 0)
        return -1;
    if (args[0].u.i < 0)
        return interp_raise(s, call, "sleep: negative duration %lld", (long long)args[0].u.i);
    *out = VAL_NIL;
    if (s->task) { /* the task gives its worker up meanwhile */
        if (sched_sleep(s, args[0].u.i) == SCHED_OK)
            return 0;
        s->interrupted = true;
        return -1;
    }
    /* a deadline in nanoseconds, saturated: the clock plus a duration
     * near INT64_MAX milliseconds would overflow */
    const int64_t ms_ns = 1000000;
    int64_t now = bi_monotonic_ns();
    int64_t deadline =
        args[0].u.i > (INT64_MAX - now) / ms_ns ? INT64_MAX : now + args[0].u.i * ms_ns;
    atomic_store(&s->blocked, 1);
    for (;;) {
        if (atomic_load(&s->sp->pending) & PENDING_INTERRUPT)
            break;
        int64_t left = deadline - bi_monotonic_ns();
        if (left <= 0)
            break;
        if (left > 1000 * ms_ns)
            left = 1000 * ms_ns;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        struct pollfd p = {.fd = s->run->wake[0], .events = POLLIN};
        ppoll(&p, 1, &ts, NULL);
    }
    atomic_store(&s->blocked, 0);
    *out = VAL_NIL;
    if (atomic_load(&s->sp->pending) & PENDING_INTERRUPT) {
        interp_safe_point_slow(s);
        return -1;
    }
    return 0;
}

int bi_env(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_STR) < 0)
        return -1;
    const char *v = getenv(args[0].u.s->data);
    *out = VAL_NIL;
    if (v == NULL)
        return 0;
    struct heap_str *str = heap_str_new(&s->heap, v, strlen(v));
    if (str == NULL)
        return interp_oom(s, call);
    *out = val_str(str);
    out->secret = 1;
    return 0;
}

int bi_secret(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
              struct value *out)
{
    (void)s;
    (void)n;
    (void)call;
    *out = args[0];
    heap_retain(*out);
    out->secret = 1;
    return 0;
}

int bi_fail(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    (void)out;
    struct strbuf b = {0};
    val_format(s->prog, s->sp, args[0], false, &b);
    interp_raise_quoted(s, call, "", b.data ? b.data : "", b.len, "");
    sb_free(&b);
    return -1;
}
