/* jett-profd: the aggregator process.  `replay` reads a saved capture. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/readfile.h"
#include "daemon/server.h"
#include "jett-config.h"
#include "proto/capture.h"

static const char usage_text[] = "usage: jett-profd replay CAPTURE|-\n"
                                 "       jett-profd --fd N\n"
                                 "       jett-profd --help | --version\n";

/* Counts the records of a capture by type (and hot entries by kind). */
static int replay_count(const char *path)
{
    char err[320];
    int fd = cli_open_input(path, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "jett-profd: %s: %s\n", path, err);
        return 2;
    }
    struct capture_reader *r = capture_reader_fd(fd);
    if (!r) {
        fprintf(stderr, "jett-profd: out of memory\n");
        return 1;
    }
    uint64_t types[WIRE_TYPE_MAX + 1] = {0}, entries[4] = {0};
    struct wire_record rec;
    int rc, entry_rc = 0;
    while (entry_rc >= 0 && (rc = capture_reader_next(r, &rec)) > 0) {
        types[rec.type]++;
        if (rec.type != WIRE_EVENTS)
            continue;
        struct wire_events_iter it;
        struct wire_event ev;
        wire_events_begin(&it, &rec.u.events);
        while ((entry_rc = wire_events_next(capture_reader_decoder(r), &it, &ev)) > 0)
            entries[ev.kind]++;
    }
    if (entry_rc < 0 || rc < 0) {
        const struct wire_error *e = wire_decoder_error(capture_reader_decoder(r));
        if (entry_rc < 0)
            fprintf(stderr, "jett-profd: %s: byte %" PRIu64 ": %s\n", path, e->offset, e->msg);
        else
            fprintf(stderr, "jett-profd: %s: %s\n", path, capture_reader_error(r));
        capture_reader_free(r);
        return 1;
    }
    capture_reader_free(r);
    if (fd != STDIN_FILENO)
        close(fd);
    for (int t = 1; t <= WIRE_TYPE_MAX; t++)
        if (types[t])
            printf("%s %" PRIu64 "\n", wire_type_names[t], types[t]);
    static const char *const kinds[4] = {"", "STACK", "CPU_SAMPLE", "ALLOC"};
    for (int k = 1; k < 4; k++)
        if (entries[k])
            printf("%s %" PRIu64 "\n", kinds[k], entries[k]);
    return 0;
}

/* --fd N: the launcher's socket, inherited as descriptor N. */
static int serve_fd(const char *arg)
{
    char *end;
    long fd = strtol(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0) {
        fprintf(stderr, "jett-profd: --fd expects an open descriptor number\n");
        return 2;
    }
    return server_run((int)fd);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return fputs(usage_text, stdout), 0;
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return printf("jett-profd %s\n", JETT_VERSION), 0;
    if (argc == 3 && strcmp(argv[1], "--fd") == 0)
        return serve_fd(argv[2]);
    if (argc == 3 && strcmp(argv[1], "replay") == 0)
        return replay_count(argv[2]);
    fputs(usage_text, stderr);
    return 2;
}
