/* builtins_task: spawn, join(task), channel, send, recv and close. */
#include "agent/builtins.h"
#include "agent/channel.h"
#include "agent/task.h"

int bi_spawn(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    return task_spawn(s, args[0], args + 1, n - 1, call, out);
}

int bi_join_task(struct interp_state *s, struct value *args, const struct ast *call,
                 struct value *out)
{
    if (bi_want(s, call, args, 0, V_TASK) < 0)
        return -1;
    return task_join(s, (struct interp_task *)args[0].u.o, call, out);
}

int bi_channel(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
               struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_INT) < 0)
        return -1;
    return channel_new(s, args[0].u.i, call, out);
}

int bi_send(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    *out = VAL_NIL;
    if (bi_want(s, call, args, 0, V_CHANNEL) < 0)
        return -1;
    return channel_send(s, (struct interp_channel *)args[0].u.o, args[1], call);
}

int bi_recv(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
            struct value *out)
{
    (void)n;
    if (bi_want(s, call, args, 0, V_CHANNEL) < 0)
        return -1;
    return channel_recv(s, (struct interp_channel *)args[0].u.o, call, out);
}

int bi_close(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
             struct value *out)
{
    (void)n;
    *out = VAL_NIL;
    if (bi_want(s, call, args, 0, V_CHANNEL) < 0)
        return -1;
    return channel_close(s, (struct interp_channel *)args[0].u.o, call);
}
