/*
 * run_profile: a profiled run's connection to jett-profd, from spawning
 * the daemon to its RESULT (DESIGN section 4).
 */
#ifndef JETT_CLI_RUN_PROFILE_H
#define JETT_CLI_RUN_PROFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "agent/collector.h"
#include "agent/interp.h"
#include "agent/profiler.h"
#include "cli/run_args.h"
#include "cli/run_capture.h"
#include "cli/run_stackwalk.h"
#include "cli/run_testenv.h"

enum run_profile_setup {
    RUN_PROFILE_OK,
    RUN_PROFILE_UNSUPPORTED, /* the daemon named a missing capability */
    RUN_PROFILE_FAILED,      /* no daemon, no answer, or the manifest failed */
};

struct run_profile {
    const struct run_args *args;
    pid_t daemon;
    struct run_capture capture;
    struct collector *collector;
    struct profiler *profiler;
    struct interp_state *state;     /* the run, for the walk of retained holders */
    uint64_t walk_ns;               /* the walk's CPU time (JETT_TEST_THREAD_CPU) */
    const struct run_testenv *test; /* set by the caller after opening */
    uint32_t caps;                  /* probed before main */
    struct wire_config config;      /* as sent in HELLO */
    struct wire_finish fin;         /* the agent's counters at the end */
    bool have_fin;
    char message[256];       /* the stable error line of a setup failure */
    char capture_error[160]; /* why the capture is not kept, or "" */
    /* The test-only JETT_TEST_STACK_WALK, or NULL. */
    struct run_stackwalk *stack_walk;
};

/* Opens the capture file (before anything is loaded: an unwritable path
 * is a usage error; see run_capture.h).  0, or -1 with a message. */
int run_profile_open_capture(struct run_profile *rp, const struct run_args *a, char *err,
                             size_t errlen);

/* Spawns the daemon, handshakes and sends the run manifest (SOURCE and
 * FUNC records), before main. */
enum run_profile_setup run_profile_setup(struct run_profile *rp, const struct interp_program *p,
                                         bool colour);

/* Hooks the interpreter and starts the writer and, in CPU mode, the timer,
 * before any user code.  0, or -1 with the setup failure's line in
 * rp->message. */
int run_profile_start(struct run_profile *rp, struct interp_state *s);

/* Stops collection, sends FINISH, and waits for RESULT.  0 with *res
 * filled, -1 on collector failure.  Then the capture replaces its target,
 * or capture_error says why it could not be written whole. */
int run_profile_finish(struct run_profile *rp, enum interp_termination term,
                       struct collector_result *res);

/* Whether the daemon's profile reports a collector failure (a record it
 * refused, or the agent's own failure flag). */
bool run_profile_result_failed(const struct collector_result *res);

/* The launcher's full unavailable profile after a collector failure
 * (run_fallback), TOON and human text, both malloc'd.  0 or -1. */
int run_profile_fallback_full(const struct run_profile *rp, const char *termination, bool colour,
                              char **toon, size_t *toon_len, char **human, size_t *human_len);

/* Kills and reaps the daemon if it still runs; closes everything. */
void run_profile_close(struct run_profile *rp);

/* The minimal profile of a setup failure (DESIGN section 7), as TOON
 * text; `have` are the probed capabilities. */
char *run_profile_fallback(const struct run_args *a, uint32_t have, const char *status,
                           const char *reason, const char *termination, size_t *len);

#endif
