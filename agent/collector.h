/*
 * collector: the launcher's end of the connection to jett-profd.
 *
 * The main thread sends HELLO and waits for READY (the handshake), sends
 * the run manifest (SOURCE and FUNC), then starts the writer thread.  The
 * runtime thread appends hot-event entries to the ring; the writer ships
 * them in EVENTS frames of at most COLLECTOR_FRAME bytes to the socket and,
 * when asked, to a capture file, writing each entry from the ring where it
 * lies (no intermediate copy), a full frame at once and anything less
 * within COLLECTOR_FLUSH_NS.  At termination collector_finish drains
 * the ring, sends FINISH and reads RESULT.
 *
 * Failure is sticky and never blocks the program: once the socket fails or
 * the daemon makes no progress for `stall_ns`, every later append is
 * dropped at once and collector_finish reports the failure.  The capture
 * file, when there is one, still receives every frame; it is given up
 * (and the reason kept) when a write to it fails or makes no progress for
 * `stall_ns` (a pipe whose reader stopped), which does not fail the
 * collector (nor does the back-pressure that waiting causes: the
 * capture's own limit bounds it).
 */
#ifndef JETT_AGENT_COLLECTOR_H
#define JETT_AGENT_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/evring.h"
#include "proto/wire.h"

#define COLLECTOR_FRAME (64u << 10)
/* Frames the writer sends in one write when that many wait: each wake of
 * the writer and of the daemon costs tens of microseconds on a VM, as
 * much as the compact entries of a thousand heap events. */
#define COLLECTOR_BATCH_FRAMES 16
#define COLLECTOR_RING (4u << 20)
#define COLLECTOR_STALL_NS (5000000000ull)
/* Entries short of a full frame wait at most this long for the next.
 * Each wake of the writer (and so of the daemon) costs 20 to 150 us of
 * CPU on a VM: a CPU profile's samples (42 KB a second at 1000 Hz, a
 * full batch in 25 s) wait up to COLLECTOR_FLUSH_CPU_NS, one wake a
 * second, a hundredth of a percent of a core. */
#define COLLECTOR_FLUSH_NS (20000000ull)
#define COLLECTOR_FLUSH_CPU_NS (1000000000ull)
#define COLLECTOR_MIN_NAP_NS (50000ull)
/* an EVENTS frame: header, and the run in 1-2 pieces; a batch of them */
#define COLLECTOR_IOV (3 * COLLECTOR_BATCH_FRAMES)

struct collector;

enum collector_answer {
    COLLECTOR_READY,
    COLLECTOR_UNSUPPORTED, /* the daemon named a missing capability */
    COLLECTOR_NO_ANSWER,   /* no daemon, no answer in time, or a bad answer */
};

/* `sock` is the connected socket (owned from now on); `capture_fd` a file
 * open for writing or -1.  NULL when memory runs out. */
struct collector *collector_new(int sock, int capture_fd, size_t ring_bytes, uint64_t stall_ns);
void collector_free(struct collector *c);

/* Sends HELLO and waits up to timeout_ms for the answer; for UNSUPPORTED
 * the capability's name is copied into `missing`. */
enum collector_answer collector_handshake(struct collector *c, const struct wire_hello *h,
                                          int timeout_ms, char *missing, size_t missing_len);

/* Sends one SOURCE or FUNC record (main thread, before collector_start). */
int collector_send_source(struct collector *c, const struct wire_source *s);
int collector_send_func(struct collector *c, const struct wire_func *f);

/* Starts the writer thread.  0 or -1. */
int collector_start(struct collector *c);

/* Runtime thread: whether the collector still accepts entries. */
bool collector_failed(const struct collector *c);

/* Runtime thread: reserves room for `n` bytes of entries appended next.
 * True when the collector accepts entries and they fit now; then the
 * collector_put calls (without wait) that append those n bytes cannot
 * fail, so a record of several entries goes in whole or not at all. */
bool collector_reserve(struct collector *c, size_t n);

/* Runtime thread: appends one entry and publishes it with everything
 * held before it (evring.h).  Without `wait` a full ring drops it
 * (false); with `wait` it waits for the writer (memory events are never
 * dropped) until the collector fails. */
bool collector_put(struct collector *c, const uint8_t *entry, size_t n, bool wait);

/* Runtime thread: the ring and the failed flag, for a producer that
 * writes entries in place (evring_claim, evring_commit or evring_hold)
 * after checking the flag (relaxed), falling back to collector_put when
 * the ring has no room in one piece.  Both live as long as the
 * collector. */
struct evring *collector_ring(struct collector *c);
const atomic_bool *collector_failed_flag(const struct collector *c);

/* Main thread, once the runtime thread has ended: ships what the ring
 * holds and stops the writer, so that the records sent next come after
 * every EVENTS frame (collector_finish does it too). */
void collector_end_events(struct collector *c);

/* Main thread, after collector_end_events: sends one RETAINED record
 * (the walk of retained holders).  0, or -1 when the collector failed. */
int collector_send_retained(struct collector *c, const struct wire_retained *r);

/* The daemon's answer at the end of a run. */
struct collector_result {
    char *profile; /* canonical TOON "profile:" document */
    size_t profile_len;
    char *human;
    size_t human_len;
};

/* The CALLS entries collector_finish sends after the last EVENTS frame
 * and before FINISH (in as many CALLS records as they take); the arrays
 * must stay until then.  None unless set. */
void collector_set_calls(struct collector *c, const struct wire_fn_calls *fn, uint32_t n,
                         const struct wire_site_calls *site, uint32_t m);

/* Drains the ring, stops the writer, sends FINISH (fin->collector_failure
 * is set when the collector failed before) and waits up to timeout_ms for
 * RESULT.  0 with *out filled, or -1 when the collector failed. */
int collector_finish(struct collector *c, struct wire_finish *fin, int timeout_ms,
                     struct collector_result *out);
void collector_result_free(struct collector_result *r);

/* EVENTS frames sent so far (each one write to the socket, and to the
 * capture): how often the writer and the daemon wake. */
uint64_t collector_frames_sent(const struct collector *c);

/* Before collector_start: the longest entries short of a full frame wait
 * (COLLECTOR_FLUSH_NS unless set: COLLECTOR_FLUSH_CPU_NS in CPU mode, or
 * what a test needs). */
void collector_set_flush_ns(struct collector *c, uint64_t ns);

/* CPU nanoseconds the writer thread used, exact once it has been
 * stopped (collector_finish): the profiler's own cost. */
uint64_t collector_writer_cpu_ns(const struct collector *c);

/* Why the collector failed ("" while it has not). */
const char *collector_error(const struct collector *c);

/* Async-signal-safe: stop waiting.  Every wait (the socket, the capture,
 * RESULT, back-pressure) gives up within 50 ms and the collector fails
 * with "interrupted". */
void collector_interrupt(struct collector *c);

/* Why the capture was given up ("" while it was not), and whether it
 * holds the whole stream up to and including FINISH. */
const char *collector_capture_error(const struct collector *c);
bool collector_capture_complete(const struct collector *c);

#endif
