/*
 * ticks: what a CPU export says of the requested ticks that its stacks
 * leave out.
 *
 * A CPU capture's requested ticks are its recorded samples (jett,
 * runtime, waiting, unavailable) and the ticks FINISH counts as
 * coalesced (a request was still pending when the tick came: the
 * program was running Jett code and took no stack for it) or dropped (of
 * unknown state).  The exports draw the jett samples at their stacks;
 * the report's time: line counts the coalesced ticks as running Jett
 * code.  So every CPU export says how many ticks were coalesced and
 * dropped (ticks_describe), the launcher notes on standard error when
 * they are a noticeable share (ticks_note), and --weight wall draws
 * every requested tick: what has no Jett stack as root-level pseudo-frames
 * named as the other runtime buckets are (enum ticks_frame), whose counts
 * are the report's.
 */
#ifndef JETT_DAEMON_EXPORT_TICKS_H
#define JETT_DAEMON_EXPORT_TICKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/attrib.h"

/* A CPU capture's ticks and samples, as the profile counts them. */
struct ticks {
    bool cpu;      /* a CPU capture; nothing below means anything otherwise */
    bool finished; /* FINISH was read: requested, coalesced and dropped are known */
    uint64_t requested, coalesced, dropped;
    struct attrib_cpu_totals samples;
};

/* The pseudo-frames of --weight wall.  <runtime>.<waiting> also stands
 * above the leaf of each waiting sample that has a stack; at the root it
 * holds the waiting samples without one. */
enum ticks_frame {
    TICKS_WAITING,     /* waiting samples: the program was blocked */
    TICKS_COALESCED,   /* coalesced ticks: running Jett code, no stack taken */
    TICKS_RUNTIME,     /* runtime samples: the interpreter, no Jett frame */
    TICKS_UNAVAILABLE, /* unavailable samples: the stack was not kept */
    TICKS_DROPPED,     /* dropped ticks: of unknown state */
    TICKS_FRAMES,
};

#define TICKS_WAITING_NAME "<runtime>.<waiting>"

/* The capture's counts (all zero but `cpu` for a memory capture). */
void ticks_read(const struct agg *a, struct ticks *out);

/* "<runtime>.<coalesced>" and the others. */
const char *ticks_frame_name(enum ticks_frame f);

/* The values of the root-level pseudo-frames of --weight wall, given the
 * waiting samples the export drew on a stack: with the jett samples they
 * add up to every requested tick (recorded, coalesced and dropped). */
void ticks_root(const struct ticks *t, uint64_t waiting_on_stacks, uint64_t v[TICKS_FRAMES]);

/* Whether the coalesced and dropped ticks are at least 5% of the
 * requested ones: enough to move a function's share in a picture of
 * the samples alone by whole points. */
bool ticks_noticeable(const struct ticks *t);

/* The ticks in words, after "ticks: ": "12 requested, 10 samples, 1
 * coalesced, 1 dropped", or without FINISH "10 samples, coalesced and
 * dropped unknown (no FINISH)".  snprintf's return value. */
int ticks_describe(const struct ticks *t, char *buf, size_t len);

/* One line on `out` when ticks_noticeable: how many ticks were coalesced
 * and dropped, and what the export made of them (`wall`: drawn at the
 * root; else left out, `wall_hint`: the format takes --weight wall). */
void ticks_note(const struct ticks *t, bool wall, bool wall_hint, FILE *out);

#endif
