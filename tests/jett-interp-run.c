/* jett-interp-run: a test-only runner for Jett programs until `jett run`
 * exists.  Usage: jett-interp-run FILE.jett [ARGS...].  Exit status as
 * `jett run`: 3 compile error, 1 runtime error, 130/143 interrupted,
 * else main's value.  JETT_TEST_FAIL_ALLOC=N fails the Nth allocation. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/interp.h"

static struct interp_state *run_state;

static void run_on_signal(int signo)
{
    if (run_state != NULL)
        interp_interrupt(run_state, signo);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: jett-interp-run FILE.jett [ARGS...]\n");
        return 2;
    }
    struct interp_diags diags;
    struct interp_program *p = interp_load(argv[1], NULL, &diags);
    if (p == NULL) {
        for (size_t i = 0; i < diags.len; i++) {
            char line[1024];
            interp_diag_format(&diags.items[i], line, sizeof line);
            fprintf(stderr, "%s\n", line);
        }
        interp_diags_free(&diags);
        return 3;
    }
    struct interp_options opts = {(const char *const *)argv + 2, (size_t)argc - 2,
                                  interp_fail_alloc_from_env()};
    run_state = interp_new(p, NULL, &opts);
    struct sigaction sa = {.sa_handler = run_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct interp_result r;
    if (run_state == NULL || interp_run(run_state, &r) < 0) {
        fprintf(stderr, "jett-interp-run: cannot start the runtime\n");
        return 4;
    }
    if (r.termination == INTERP_RUNTIME_ERROR)
        fprintf(stderr, "%s\n%s", r.message, r.trace);
    int code = r.exit_code;
    interp_result_free(&r);
    struct interp_state *s = run_state;
    run_state = NULL;
    interp_free(s);
    interp_program_free(p);
    return code;
}
