/*
 * gzsink: a protobuf-c output buffer that gzips what is packed into it
 * straight into a file, so that a large message is never held whole.
 *
 * Deflate costs about as much as everything else an export does after
 * its aggregation, so it runs on a thread of its own while the caller
 * packs the next part.  What is appended is gathered in one buffer of a
 * small queue while the thread compresses and writes the oldest: with
 * only two buffers taking turns, each side waited for the other whenever
 * its pace varied (packing a part of samples and its sizing go in
 * bursts), and both were idle half the time.  Without a second thread
 * (none could be started) the caller compresses each full buffer itself.
 * The output is the same either way: one gzip member.
 */
#ifndef JETT_DAEMON_GZSINK_H
#define JETT_DAEMON_GZSINK_H

#include <protobuf-c/protobuf-c.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <zlib.h>

/* Bytes gathered before they are handed to deflate, and how many such
 * buffers the queue holds (the one being gathered among them). */
#define GZSINK_CHUNK (1u << 18)
#define GZSINK_SLOTS 8

struct gzsink {
    ProtobufCBuffer base; /* first: protobuf-c appends through it */
    z_stream z;
    FILE *out;
    bool failed;                       /* out of memory or a write error: the output is unusable */
    unsigned char *slot[GZSINK_SLOTS]; /* GZSINK_CHUNK bytes each */
    size_t n_slot[GZSINK_SLOTS];       /* bytes in each */
    unsigned fill;                     /* the slot being gathered */
    /* the compressing thread: it owns z and out while it runs, and the
     * `queued` slots before `fill` (the oldest first, the one it is
     * compressing among them); mu guards what follows it */
    bool threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned queued;
    bool last, job_failed;
    unsigned char buf[1 << 16]; /* deflate's output */
};

/* Starts a gzip member at `level` (zlib's 1..9); 0, or -1 when out of
 * memory. */
int gzsink_open(struct gzsink *s, FILE *out, int level);
/* Ends the member, waits for it to be written and releases zlib's state
 * and the thread: 0, or -1 when anything failed (then call it anyway, to
 * release). */
int gzsink_close(struct gzsink *s);

#endif
