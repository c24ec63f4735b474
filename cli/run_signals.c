/* run_signals: one handler, three phases. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/run_signals.h"

enum phase { LOADING, RUNNING, FINISHING };

static volatile sig_atomic_t phase, received;
static volatile pid_t daemon_pid = -1;
static struct interp_state *volatile running;
static struct collector *volatile finishing;
/* The envelopes for SIGINT ([0]) and SIGTERM ([1]), and the capture. */
static char *quit_doc[2];
static size_t quit_len[2];
static char *partial;

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w <= 0)
            return;
        p += w, n -= (size_t)w;
    }
}

/* Async-signal-safe: only write, unlink, kill and _exit. */
static void quit_now(int signo)
{
    const char *doc = quit_doc[signo == SIGTERM];
    if (doc) {
        write_all(doc, quit_len[signo == SIGTERM]);
        write_all("\n", 1);
    }
    if (partial)
        unlink(partial);
    if (daemon_pid > 0)
        kill(daemon_pid, SIGKILL);
    _exit(128 + signo);
}

static void on_signal(int signo)
{
    if (phase == LOADING)
        quit_now(signo);
    if (!received)
        received = signo;
    struct interp_state *s = running;
    struct collector *c = finishing;
    if (phase == RUNNING && s)
        interp_interrupt(s, signo);
    else if (phase == FINISHING && c)
        collector_interrupt(c);
}

void run_signals_install(void)
{
    phase = LOADING;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int run_signals_prepare_quit(struct runout *ro, bool agent, const char *partial_capture)
{
    static const int signals[2] = {SIGINT, SIGTERM};
    int rc = 0;
    for (int i = 0; agent && rc == 0 && i < 2; i++) {
        char err[200], *doc;
        size_t len;
        runout_set_error(ro, "interrupted", "interrupted by %s",
                         signals[i] == SIGINT ? "SIGINT" : "SIGTERM");
        ro->exit_code = 128 + signals[i];
        rc = runout_render(ro, &doc, &len, err, sizeof err);
        if (rc == 0)
            quit_doc[i] = doc, quit_len[i] = len;
    }
    if (agent) { /* back to the run's own outcome, still to come */
        free(ro->error);
        ro->error = NULL, ro->error_kind = NULL, ro->exit_code = 0;
    }
    partial = partial_capture ? strdup(partial_capture) : NULL;
    return rc;
}

void run_signals_daemon(pid_t pid)
{
    daemon_pid = pid;
}

void run_signals_running(struct interp_state *s)
{
    running = s;
    phase = RUNNING;
}

void run_signals_finishing(struct collector *c, bool program_interrupted)
{
    finishing = c;
    phase = FINISHING;
    /* one that came after the program's last safe point acts now */
    if (received && !program_interrupted && c)
        collector_interrupt(c);
}

int run_signals_received(void)
{
    return received;
}

void run_signals_free(void)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old); /* the handler reads them */
    for (int i = 0; i < 2; i++)
        free(quit_doc[i]), quit_doc[i] = NULL;
    free(partial), partial = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
}
