/* ticks: the requested ticks a CPU export's stacks leave out (ticks.h). */
#include <inttypes.h>
#include <string.h>

#include "daemon/export/ticks.h"
#include "daemon/rank.h"

void ticks_read(const struct agg *a, struct ticks *out)
{
    memset(out, 0, sizeof *out);
    out->cpu = agg_mode(a) == WIRE_MODE_CPU;
    if (!out->cpu)
        return;
    attrib_cpu_totals(a, &out->samples);
    const struct wire_finish *f = agg_finish_record(a);
    out->finished = f != NULL;
    if (f)
        out->requested = f->requested_ticks, out->coalesced = f->coalesced_ticks,
        out->dropped = f->dropped_ticks;
}

const char *ticks_frame_name(enum ticks_frame f)
{
    static const char *const names[TICKS_FRAMES] = {
        [TICKS_WAITING] = TICKS_WAITING_NAME,    [TICKS_COALESCED] = "<runtime>.<coalesced>",
        [TICKS_RUNTIME] = "<runtime>.<runtime>", [TICKS_UNAVAILABLE] = "<runtime>.<unavailable>",
        [TICKS_DROPPED] = "<runtime>.<dropped>",
    };
    return (unsigned)f < TICKS_FRAMES ? names[f] : "?";
}

void ticks_root(const struct ticks *t, uint64_t waiting_on_stacks, uint64_t v[TICKS_FRAMES])
{
    const struct attrib_cpu_totals *s = &t->samples;
    v[TICKS_WAITING] = s->waiting > waiting_on_stacks ? s->waiting - waiting_on_stacks : 0;
    v[TICKS_COALESCED] = t->coalesced;
    v[TICKS_RUNTIME] = s->runtime;
    v[TICKS_UNAVAILABLE] = s->unavailable;
    v[TICKS_DROPPED] = t->dropped;
}

/* The coalesced and dropped ticks together, at most 2^64 - 1. */
static uint64_t left_out(const struct ticks *t)
{
    return t->coalesced + t->dropped < t->coalesced ? UINT64_MAX : t->coalesced + t->dropped;
}

bool ticks_noticeable(const struct ticks *t)
{
    return t->cpu && t->finished && t->requested > 0 && left_out(t) > 0 &&
           rank_meets(left_out(t), t->requested, 500);
}

int ticks_describe(const struct ticks *t, char *buf, size_t len)
{
    if (!t->finished)
        return snprintf(buf, len, "%" PRIu64 " samples, coalesced and dropped unknown (no FINISH)",
                        t->samples.recorded);
    return snprintf(buf, len,
                    "%" PRIu64 " requested, %" PRIu64 " samples, %" PRIu64 " coalesced, %" PRIu64
                    " dropped",
                    t->requested, t->samples.recorded, t->coalesced, t->dropped);
}

void ticks_note(const struct ticks *t, bool wall, bool wall_hint, FILE *out)
{
    if (!ticks_noticeable(t))
        return;
    uint64_t pct = rank_percent_hundredths(left_out(t), t->requested);
    fprintf(out,
            "jett: %" PRIu64 " of %" PRIu64 " requested ticks (%" PRIu64 ".%02" PRIu64
            "%%) have no stack, %" PRIu64 " coalesced and %" PRIu64 " dropped: ",
            left_out(t), t->requested, pct / 100, pct % 100, t->coalesced, t->dropped);
    if (wall)
        fputs("they are drawn at the root as <runtime>.<coalesced> and <runtime>.<dropped>, "
              "in no function\n",
              out);
    else
        fprintf(out,
                "no function's share counts them, while the report counts the coalesced ones "
                "as running Jett code%s\n",
                wall_hint ? " (--weight wall draws them)" : "");
}
