/*
 * gzsink: a protobuf-c output buffer that gzips what is packed into it
 * straight into a file, so that a large message is never held whole.
 *
 * Deflate costs about as much as everything else an export does after
 * its aggregation, so it runs on a thread of its own while the caller
 * packs the next part: what is appended is gathered in one buffer while
 * the thread compresses and writes the other.  Without a second thread
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

/* Bytes gathered before they are handed to deflate. */
#define GZSINK_CHUNK (1u << 18)

struct gzsink {
    ProtobufCBuffer base; /* first: protobuf-c appends through it */
    z_stream z;
    FILE *out;
    bool failed;         /* out of memory or a write error: the output is unusable */
    unsigned char *fill; /* the buffer being gathered, GZSINK_CHUNK bytes */
    size_t n_fill;
    /* the compressing thread: it owns z and out while it runs, and the
     * buffer `job` while `busy`; mu guards what follows it */
    bool threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *job;
    size_t n_job;
    bool busy, last, job_failed;
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
