/* channel: FIFO channels between tasks (see channel.h). */
#include "agent/channel.h"

#include <stdlib.h>
#include <string.h>

#include "agent/copy.h"
#include "agent/task.h"

int channel_new(struct interp_state *s, int64_t capacity, const struct ast *call, struct value *out)
{
    if (capacity < 1 || capacity > CHANNEL_MAX_CAPACITY)
        return interp_raise(s, call, "channel: capacity must be from 1 to %d, got %lld",
                            CHANNEL_MAX_CAPACITY, (long long)capacity);
    struct interp_channel *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return interp_oom(s, call);
    pthread_mutex_init(&ch->lock, NULL);
    ch->capacity = (uint32_t)capacity;
    ch->base.h.rc = 1;
    rt_register(s->run, &ch->base, RT_CHANNEL);
    *out = (struct value){.tag = V_CHANNEL};
    out->u.o = &ch->base.h;
    return 0;
}

/* Room for one more message in the buffer (which doubles up to the
 * capacity, the messages moved with a poll of `sp` each: a sample may be
 * taken under the channel's lock, which the sampler never takes); false
 * when memory runs out. */
static bool channel_room(struct safepoint *sp, struct interp_channel *ch)
{
    if (ch->len < ch->buf_cap)
        return true;
    uint32_t cap = ch->buf_cap ? ch->buf_cap * 2 : 8;
    if (cap > ch->capacity)
        cap = ch->capacity;
    struct channel_msg *buf = malloc(sizeof *buf * cap);
    if (buf == NULL)
        return false;
    for (uint32_t i = 0; i < ch->len; i++) {
        safepoint_poll(sp);
        buf[i] = ch->buf[(ch->head + i) % ch->buf_cap];
    }
    free(ch->buf);
    ch->buf = buf, ch->buf_cap = cap, ch->head = 0;
    return true;
}

static void channel_push(struct interp_channel *ch, struct channel_msg *m)
{
    ch->buf[(ch->head + ch->len) % ch->buf_cap] = *m;
    ch->len++;
}

static struct channel_msg channel_take(struct interp_channel *ch)
{
    struct channel_msg m = ch->buf[ch->head];
    ch->head = (ch->head + 1) % ch->buf_cap;
    ch->len--;
    return m;
}

/* A message's objects join the heap of the task that now owns them. */
static struct value channel_own(struct interp_state *s, struct channel_msg *m)
{
    heap_adopt(&s->heap, &m->chain);
    return m->v;
}

/* Gives a message that did not go through back to its sender, which
 * frees it. */
static void channel_discard(struct interp_state *s, struct channel_msg *m)
{
    val_release(s, channel_own(s, m));
}

/* The running task blocks on ch (whose lock the caller holds) in q:
 * why it woke.  Without tasks nothing could ever wake it. */
static enum sched_wake channel_wait(struct interp_state *s, struct interp_channel *ch,
                                    struct sched_queue *q)
{
    if (s->task == NULL) {
        pthread_mutex_unlock(&ch->lock);
        return SCHED_DEADLOCK;
    }
    if (sched_stopping(&s->run->sched)) {
        pthread_mutex_unlock(&ch->lock);
        return SCHED_STOP;
    }
    task_wait_on(s->task, &ch->lock, q);
    return sched_park(s, &ch->lock);
}

/* Raises what a wake that was not a success means for a channel call. */
static int channel_woke_badly(struct interp_state *s, enum sched_wake why, const struct ast *call)
{
    if (why == SCHED_DEADLOCK)
        return interp_raise(s, call, "deadlock: every task is blocked");
    s->interrupted = true; /* SCHED_STOP */
    return -1;
}

int channel_send(struct interp_state *s, struct interp_channel *ch, struct value v,
                 const struct ast *call)
{
    struct copy_ctx cc;
    copy_begin(&cc, &s->heap, s->sp);
    struct heap_obj *mark = heap_mark(&s->heap);
    struct channel_msg m;
    int rc = copy_value(&cc, v, &m.v);
    bool oom = cc.oom;
    copy_end(&cc);
    if (rc < 0)
        return oom ? interp_oom(s, call) : -1;
    m.chain = heap_detach(&s->heap, mark);
    struct sched *sc = &s->run->sched;
    if (s->run->hooks.publish)
        s->run->hooks.publish(s->run->hooks_ctx, s); /* the copy's events before the receiver's */
    pthread_mutex_lock(&ch->lock);
    if (ch->closed) {
        pthread_mutex_unlock(&ch->lock);
        channel_discard(s, &m);
        return interp_raise(s, call, "send: the channel is closed");
    }
    struct interp_task *r = sched_queue_pop(&ch->recvq);
    if (r != NULL) { /* a receiver waits: the message is its */
        *(struct channel_msg *)r->wait_msg = m;
        task_unwait(r);
        pthread_mutex_unlock(&ch->lock);
        sched_ready(sc, r, SCHED_OK);
        return 0;
    }
    if (ch->len < ch->capacity && channel_room(s->sp, ch)) {
        channel_push(ch, &m);
        pthread_mutex_unlock(&ch->lock);
        return 0;
    }
    if (ch->len < ch->capacity) { /* no memory for the buffer */
        pthread_mutex_unlock(&ch->lock);
        channel_discard(s, &m);
        return interp_oom(s, call);
    }
    if (s->task)
        s->task->wait_msg = &m;
    enum sched_wake why = channel_wait(s, ch, &ch->sendq);
    if (why == SCHED_OK) /* a receiver took it in */
        return 0;
    channel_discard(s, &m);
    if (why == SCHED_CLOSED)
        return interp_raise(s, call, "send: the channel is closed");
    return channel_woke_badly(s, why, call);
}

/* After a receiver made room: the first waiting sender's message goes
 * into the buffer and the sender wakes (the caller holds the lock). */
static struct interp_task *channel_let_in(struct safepoint *sp, struct interp_channel *ch)
{
    struct interp_task *w =
        ch->len < ch->capacity && channel_room(sp, ch) ? sched_queue_pop(&ch->sendq) : NULL;
    if (w == NULL)
        return NULL;
    channel_push(ch, w->wait_msg);
    task_unwait(w);
    return w;
}

int channel_recv(struct interp_state *s, struct interp_channel *ch, const struct ast *call,
                 struct value *out)
{
    struct sched *sc = &s->run->sched;
    pthread_mutex_lock(&ch->lock);
    if (ch->len > 0) {
        struct channel_msg m = channel_take(ch);
        struct interp_task *w = channel_let_in(s->sp, ch);
        pthread_mutex_unlock(&ch->lock);
        if (w)
            sched_ready(sc, w, SCHED_OK);
        *out = channel_own(s, &m);
        return 0;
    }
    struct interp_task *w = sched_queue_pop(&ch->sendq);
    if (w != NULL) { /* a sender of a full channel of... no room: take its message */
        struct channel_msg m = *(struct channel_msg *)w->wait_msg;
        task_unwait(w);
        pthread_mutex_unlock(&ch->lock);
        sched_ready(sc, w, SCHED_OK);
        *out = channel_own(s, &m);
        return 0;
    }
    if (ch->closed) {
        pthread_mutex_unlock(&ch->lock);
        *out = VAL_NIL;
        return 0;
    }
    struct channel_msg m = {VAL_NIL, {NULL, NULL, 0}};
    if (s->task)
        s->task->wait_msg = &m;
    enum sched_wake why = channel_wait(s, ch, &ch->recvq);
    if (why == SCHED_OK) {
        *out = channel_own(s, &m);
        return 0;
    }
    if (why == SCHED_CLOSED) {
        *out = VAL_NIL;
        return 0;
    }
    return channel_woke_badly(s, why, call);
}

int channel_close(struct interp_state *s, struct interp_channel *ch, const struct ast *call)
{
    pthread_mutex_lock(&ch->lock);
    if (ch->closed) {
        pthread_mutex_unlock(&ch->lock);
        return interp_raise(s, call, "close: the channel is already closed");
    }
    ch->closed = true;
    pthread_mutex_unlock(&ch->lock);
    channel_wake_all(&s->run->sched, ch, SCHED_CLOSED);
    return 0;
}

void channel_wake_all(struct sched *sc, struct interp_channel *ch, enum sched_wake why)
{
    pthread_mutex_lock(&ch->lock);
    struct sched_queue woken = {NULL, NULL};
    for (struct interp_task *t; (t = sched_queue_pop(&ch->recvq)) != NULL;)
        task_unwait(t), sched_queue_push(&woken, t);
    for (struct interp_task *t; (t = sched_queue_pop(&ch->sendq)) != NULL;)
        task_unwait(t), sched_queue_push(&woken, t);
    pthread_mutex_unlock(&ch->lock);
    for (struct interp_task *t; (t = sched_queue_pop(&woken)) != NULL;)
        sched_ready(sc, t, why);
}

void channel_drop(struct heap *h, struct interp_channel *ch, struct heap_obj **pending)
{
    rt_unregister(h->shared_ctx, &ch->base);
    while (ch->len > 0) {
        struct channel_msg m = channel_take(ch);
        heap_adopt(h, &m.chain);
        heap_drop_value(pending, m.v);
    }
    free(ch->buf);
    pthread_mutex_destroy(&ch->lock);
    free(ch);
}

void channel_teardown(struct interp_channel *ch)
{
    while (ch->len > 0) {
        struct channel_msg m = channel_take(ch);
        heap_chain_destroy(&m.chain);
    }
    free(ch->buf);
    pthread_mutex_destroy(&ch->lock);
    free(ch);
}
