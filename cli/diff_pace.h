/*
 * diff_pace: when the NEW capture of `jett profile diff` waits for BASE.
 *
 * The two captures are aggregated at once, on two threads, and each
 * aggregation is largest when its capture ends.  When the tables grow
 * with the capture (new call chains and lines all along, as in a CPU
 * capture), two aggregations that end together hold two full peaks at
 * once; NEW, the larger side (it keeps per-node detail for the flame
 * graph), then stops halfway through its capture until BASE is done, so
 * that only half of its tables meet all of BASE's.  When the tables stop
 * growing early (a memory capture's live allocations level off soon),
 * waiting would cost time and save nothing, so NEW runs on.
 *
 * The rule: at the first record at or past a quarter of NEW's bytes the
 * aggregation's table bytes are noted; at the first record at or past
 * half of them NEW waits if those bytes grew by more than an eighth
 * since.  It is decided once.
 */
#ifndef JETT_CLI_DIFF_PACE_H
#define JETT_CLI_DIFF_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diff_pace {
    uint64_t size;     /* the capture's bytes; 0: unknown (never waits) */
    size_t at_quarter; /* table bytes at a quarter of them */
    bool quarter_seen, decided;
};

/* A pace for a capture of `size` bytes (0: not a regular file). */
void diff_pace_init(struct diff_pace *p, uint64_t size);

/* After a record that began at byte `offset`, with the aggregation
 * holding `held` bytes of tables: true exactly once, at half the
 * capture, when NEW should wait for BASE. */
bool diff_pace_wait(struct diff_pace *p, uint64_t offset, size_t held);

#endif
