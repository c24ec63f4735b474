/* gzsink: protobuf-c's output through zlib into a file (gzsink.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/export/gzsink.h"

/* Runs deflate over in[0..n) with `flush` (Z_FINISH for the last bytes
 * of the member), writing each full output buffer; false on an error. */
static bool deflate_chunk(struct gzsink *s, const unsigned char *in, size_t n, int flush)
{
    s->z.next_in = (Bytef *)(uintptr_t)in;
    s->z.avail_in = (uInt)n; /* at most GZSINK_CHUNK */
    for (;;) {
        s->z.next_out = s->buf;
        s->z.avail_out = sizeof s->buf;
        int rc = deflate(&s->z, flush);
        if (rc == Z_STREAM_ERROR)
            return false;
        size_t w = sizeof s->buf - s->z.avail_out;
        if (w && fwrite(s->buf, 1, w, s->out) != w)
            return false;
        if (flush == Z_FINISH ? rc == Z_STREAM_END : s->z.avail_out != 0)
            return true;
    }
}

/* The slot `back` places before the one being gathered. */
static unsigned slot_before(const struct gzsink *s, unsigned back)
{
    return (s->fill + GZSINK_SLOTS - back) % GZSINK_SLOTS;
}

/* The compressing thread: each slot handed over, oldest first, until the
 * last; after a failure the rest are only acknowledged. */
static void *compress_jobs(void *arg)
{
    struct gzsink *s = arg;
    pthread_mutex_lock(&s->mu);
    for (bool last = false; !last;) {
        while (s->queued == 0)
            pthread_cond_wait(&s->cv, &s->mu);
        unsigned k = slot_before(s, s->queued);
        last = s->last && s->queued == 1;
        bool skip = s->job_failed;
        pthread_mutex_unlock(&s->mu);
        bool ok = skip || deflate_chunk(s, s->slot[k], s->n_slot[k], last ? Z_FINISH : Z_NO_FLUSH);
        pthread_mutex_lock(&s->mu);
        s->job_failed |= !ok;
        s->queued--;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Hands the gathered bytes to deflate: queued for the thread, which
 * gives a slot back to gather into once one is free, or, without a
 * thread, compressed here. */
static void hand_over(struct gzsink *s, bool last)
{
    if (!s->threaded) {
        if (!s->failed &&
            !deflate_chunk(s, s->slot[s->fill], s->n_slot[s->fill], last ? Z_FINISH : Z_NO_FLUSH))
            s->failed = true;
        s->n_slot[s->fill] = 0;
        return;
    }
    pthread_mutex_lock(&s->mu);
    while (s->queued == GZSINK_SLOTS - 1) /* every other slot is the thread's */
        pthread_cond_wait(&s->cv, &s->mu);
    s->failed |= s->job_failed;
    s->last = last;
    s->fill = (s->fill + 1) % GZSINK_SLOTS; /* the slot just gathered is now queued */
    s->queued++;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    s->n_slot[s->fill] = 0;
}

static void append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    struct gzsink *s = (struct gzsink *)b;
    while (len > 0 && !s->failed) {
        size_t *n_fill = &s->n_slot[s->fill];
        size_t n = GZSINK_CHUNK - *n_fill;
        if (n > len)
            n = len;
        memcpy(s->slot[s->fill] + *n_fill, data, n);
        *n_fill += n, data += n, len -= n;
        if (*n_fill == GZSINK_CHUNK)
            hand_over(s, false);
    }
}

/* Starts the compressing thread; false (the caller compresses) when it
 * cannot. */
static bool start_thread(struct gzsink *s)
{
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return false;
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        return false;
    }
    if (pthread_create(&s->thread, NULL, compress_jobs, s) != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        return false;
    }
    return true;
}

static void free_slots(struct gzsink *s)
{
    for (unsigned k = 0; k < GZSINK_SLOTS; k++)
        free(s->slot[k]), s->slot[k] = NULL;
}

int gzsink_open(struct gzsink *s, FILE *out, int level)
{
    memset(&s->z, 0, sizeof s->z);
    s->base.append = append;
    s->out = out;
    s->failed = s->last = s->job_failed = false;
    s->fill = s->queued = 0;
    bool nomem = false;
    for (unsigned k = 0; k < GZSINK_SLOTS; k++) {
        s->n_slot[k] = 0;
        nomem |= (s->slot[k] = malloc(GZSINK_CHUNK)) == NULL;
    }
    /* 15 + 16: the largest window, with a gzip header and trailer */
    if (nomem || deflateInit2(&s->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free_slots(s);
        return -1;
    }
    s->threaded = start_thread(s);
    return 0;
}

int gzsink_close(struct gzsink *s)
{
    hand_over(s, true);
    if (s->threaded) {
        pthread_join(s->thread, NULL);
        s->failed |= s->job_failed;
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    }
    deflateEnd(&s->z);
    free_slots(s);
    return s->failed ? -1 : 0;
}
