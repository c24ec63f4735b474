/* diff_pace: when the NEW capture of a diff waits for BASE (diff_pace.h). */
#include "cli/diff_pace.h"

void diff_pace_init(struct diff_pace *p, uint64_t size)
{
    *p = (struct diff_pace){size, 0, false, false};
}

bool diff_pace_wait(struct diff_pace *p, uint64_t offset, size_t held)
{
    if (p->decided || p->size == 0)
        return false;
    if (!p->quarter_seen && offset >= p->size / 4)
        p->quarter_seen = true, p->at_quarter = held;
    if (offset < p->size / 2)
        return false;
    p->decided = true;
    return held > p->at_quarter && held - p->at_quarter > p->at_quarter / 8;
}
