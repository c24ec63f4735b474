/*
 * run_fallback: the profile the launcher writes itself when the daemon
 * died or the socket failed after the program started (DESIGN section
 * 4).  It has every required field of jett.profile.v1: what the launcher
 * knows (config, requested and coalesced ticks, wall and process CPU
 * time) is filled in, every other count is `unavailable`, and it is
 * printed by the daemon's own renderers, so its TOON is canonical and its
 * human form has the heading and status of any report.
 */
#ifndef JETT_CLI_RUN_FALLBACK_H
#define JETT_CLI_RUN_FALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/wire.h"

struct run_fallback {
    uint8_t mode; /* enum wire_mode */
    const char *termination, *backend;
    struct wire_config config; /* as sent in HELLO */
    uint32_t capabilities;
    bool colour;
    const struct wire_finish *fin; /* the agent's counters, NULL: none */
    const char *why;               /* the collector's error, "" if none */
};

/* The TOON "profile:" document and the human report, both malloc'd.
 * 0, or -1 when memory runs out. */
int run_fallback_render(const struct run_fallback *f, char **toon, size_t *toon_len, char **human,
                        size_t *human_len);

#endif
