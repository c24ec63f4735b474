/*
 * channel: FIFO channels between tasks (JETT.md, "Tasks and channels").
 *
 * A message is a deep copy (agent/copy.h) made by the sender at its send
 * statement: its objects are the sender's allocations, held by the
 * channel in a chain that belongs to no heap until a receiver's heap
 * adopts it (the receiver's frees then credit the sender's site).  The
 * buffer grows by doubling up to the capacity.  A receiver waiting on an
 * empty channel gets a message handed over directly; a sender waiting on
 * a full one is let in by the receiver that makes room.
 */
#ifndef JETT_AGENT_CHANNEL_H
#define JETT_AGENT_CHANNEL_H

#include "agent/run.h"

#define CHANNEL_MAX_CAPACITY 1000000

struct channel_msg {
    struct value v;
    struct heap_chain chain;
};

struct interp_channel {
    struct rt_shared base;
    pthread_mutex_t lock;
    uint32_t capacity;
    bool closed;
    struct channel_msg *buf; /* a ring of buf_cap slots */
    uint32_t buf_cap, head, len;
    struct sched_queue recvq, sendq;
};

/* channel(capacity): 0 with the value in *out, or -1 (raised). */
int channel_new(struct interp_state *s, int64_t capacity, const struct ast *call,
                struct value *out);
/* send(ch, v), recv(ch), close(ch): 0, or -1 (raised, or stopped). */
int channel_send(struct interp_state *s, struct interp_channel *ch, struct value v,
                 const struct ast *call);
int channel_recv(struct interp_state *s, struct interp_channel *ch, const struct ast *call,
                 struct value *out);
int channel_close(struct interp_state *s, struct interp_channel *ch, const struct ast *call);

/* Wakes every task waiting on ch with `why` (the stop sweep). */
void channel_wake_all(struct sched *sc, struct interp_channel *ch, enum sched_wake why);

/* Frees a channel whose last reference went: its messages' objects are
 * adopted by h and released through `pending` (rt_shared_drop). */
void channel_drop(struct heap *h, struct interp_channel *ch, struct heap_obj **pending);
/* Frees a channel and its messages at teardown, without events. */
void channel_teardown(struct interp_channel *ch);

#endif
