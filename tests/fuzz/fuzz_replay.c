/* libFuzzer target: what `jett-profd replay` and `jett profile diff` do
 * with arbitrary capture bytes (aggregate, rank, render the profile in
 * both forms, diff it against itself): a damaged capture becomes a
 * profile with a collector error, never a crash or a leak, and a profile
 * diffed with itself has no changed row (all unchanged, or all not
 * comparable when it is partial for a reason that may count short).  A memory profile's ALLOC
 * entries, which feed_capture aggregates in runs read in place, give the
 * same document fed one decoded entry at a time. */
#include <stdlib.h>
#include <string.h>

#include "daemon/diff.h"
#include "daemon/feed.h"
#include "daemon/render.h"
#include "proto/toon.h"
#include "tests/feed_entries.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void render_both(const struct rank_report *rep)
{
    char *text = NULL, err[256];
    size_t len = 0;
    if (render_toon(rep, &text, &len, err, sizeof err) == 0)
        free(text);
    text = NULL;
    if (render_human(rep, &text, &len) == 0)
        free(text);
}

/* The diff's side of a capture: every function, detached from g. */
static int side(struct agg *g, struct rank_report *rep, struct diff_sides *s)
{
    struct rank_options opt = diff_rank_options();
    if (rank_build(g, &opt, rep) != 0)
        return -1;
    if (rank_detach(rep) != 0 || diff_sides_take(rep, s) != 0) {
        rank_free(rep);
        return -1;
    }
    return 0;
}

static void self_diff(struct agg *g)
{
    struct rank_report rep[2];
    struct diff_sides s[2] = {{0}};
    if (side(g, &rep[0], &s[0]) != 0)
        return;
    if (side(g, &rep[1], &s[1]) == 0) {
        struct diff d;
        char err[256];
        if (diff_build(&rep[0], &s[0], &rep[1], &s[1], &d, err, sizeof err) == 0) {
            /* a side that may count functions short compares none */
            enum diff_change want =
                diff_side_trust(&rep[0]) == DIFF_TRUST_NONE ? DIFF_NOT_COMPARABLE : DIFF_UNCHANGED;
            for (size_t i = 0; i < d.n; i++)
                if (d.rows[i].change != want)
                    abort();
            char *text = NULL;
            size_t len = 0;
            if (diff_render_human(&d, &text, &len) == 0)
                free(text);
            toon_free(diff_toon(&d));
            diff_free(&d);
        }
        rank_free(&rep[1]);
        diff_sides_free(&s[1]);
    }
    rank_free(&rep[0]);
    diff_sides_free(&s[0]);
}

/* feed_capture, with every EVENTS entry fed on its own. */
static void feed_entries(struct agg *g, struct capture_reader *r, char *err, size_t errlen)
{
    struct wire_record rec;
    int rc;
    while ((rc = capture_reader_next(r, &rec)) > 0)
        if (feed_record_entries(g, capture_reader_decoder(r), &rec) < 0) {
            capture_reader_decode_error(r, err, errlen);
            agg_fail(g, err);
            return;
        }
    if (rc < 0)
        agg_fail(g, capture_reader_error(r));
}

/* The agent document of g, or NULL. */
static char *document(struct agg *g)
{
    struct rank_report rep;
    char *text = NULL, err[256];
    size_t len = 0;
    if (rank_build(g, NULL, &rep) != 0)
        return NULL;
    if (render_toon(&rep, &text, &len, err, sizeof err) != 0)
        text = NULL;
    rank_free(&rep);
    return text;
}

static void runs_agree(const uint8_t *data, size_t size, struct agg *g)
{
    struct capture_reader *r = capture_reader_mem(data, size);
    struct agg *one = agg_new();
    char err[400];
    if (r && one) {
        feed_entries(one, r, err, sizeof err);
        agg_end(one);
        char *a = document(g), *b = document(one);
        if (a && b && strcmp(a, b) != 0)
            abort();
        free(a);
        free(b);
    }
    agg_free(one);
    capture_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct capture_reader *r = capture_reader_mem(data, size);
    struct agg *g = agg_new();
    char err[400];
    if (r && g) {
        feed_capture(g, r, err, sizeof err);
        agg_end(g);
        runs_agree(data, size, g);
        struct rank_report rep;
        if (rank_build(g, NULL, &rep) == 0) {
            render_both(&rep);
            rank_free(&rep);
        }
        self_diff(g);
        agg_release_records(g);
        if (rank_build(g, NULL, &rep) == 0) {
            render_both(&rep);
            rank_free(&rep);
        }
    }
    agg_free(g);
    capture_reader_free(r);
    return 0;
}
