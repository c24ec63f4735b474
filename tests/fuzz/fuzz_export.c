/* libFuzzer target: every export over arbitrary capture bytes (folded
 * lines in both name forms, the SVG flame graph, the Callgrind and the
 * pprof profile, each CPU one with and without the waiting samples):
 * a damaged capture must fail cleanly, never crash or leak. */
#include <stdio.h>
#include <stdlib.h>

#include "daemon/export/cgexport.h"
#include "daemon/export/flame.h"
#include "daemon/export/fold.h"
#include "daemon/export/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void)
{
    return fopen("/dev/null", "w");
}

static void fold_and_write(const uint8_t *data, size_t size, enum fold_names names)
{
    struct capture_reader *r = capture_reader_mem(data, size);
    struct fold *f = NULL;
    char err[400];
    /* the weight follows the capture's mode; memory captures try one more,
     * CPU ones the waiting samples (a weight of the other mode fails) */
    static const enum fold_weight weights[] = {FOLD_WEIGHT_DEFAULT, FOLD_WEIGHT_LIVE_AT_PEAK,
                                               FOLD_WEIGHT_WALL};
    enum fold_weight w = weights[size % 3];
    if (r && fold_read(r, w, names, &f, err, sizeof err) == FOLD_OK) {
        FILE *out = sink();
        if (names == FOLD_NAMES_COLLAPSED ? fold_write_collapsed(f, out) : flame_write_svg(f, out))
            abort(); /* writing a fold that was read must succeed */
        fclose(out);
        fold_free(f);
    }
    capture_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fold_and_write(data, size, FOLD_NAMES_COLLAPSED);
    fold_and_write(data, size, FOLD_NAMES_EXACT);
    struct capture_reader *r = capture_reader_mem(data, size);
    char err[400];
    FILE *out = sink();
    if (r)
        cgexport_write(r, out, NULL, err, sizeof err);
    fclose(out);
    capture_reader_free(r);
    r = capture_reader_mem(data, size);
    out = sink();
    if (r)
        (size % 2 ? pprof_write : pprof_write_wall)(r, out, NULL, err, sizeof err);
    fclose(out);
    capture_reader_free(r);
    return 0;
}
