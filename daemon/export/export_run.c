#include "daemon/export/export_run.h"

#include "daemon/feed.h"

int export_run(struct capture_reader *r, void (*keep)(struct agg *), export_model_fn *write,
               FILE *out, struct ticks *ticks, char *err, size_t errlen)
{
    struct agg *a = agg_new();
    if (!a)
        return snprintf(err, errlen, "out of memory"), -1;
    keep(a);
    char damage[400] = "";
    int damaged = feed_capture(a, r, damage, sizeof damage);
    agg_end(a);
    agg_release_records(a);
    if (ticks)
        ticks_read(a, ticks);
    int rc;
    if (damaged && !agg_has_hello(a))
        rc = -1, snprintf(err, errlen, "%s", damage); /* not a capture */
    else if ((rc = write(a, out, err, errlen)) == 0 && damaged)
        rc = 1, snprintf(err, errlen, "%s", damage);
    agg_free(a);
    return rc;
}
