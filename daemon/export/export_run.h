/*
 * export_run: what every export that writes straight from the
 * aggregation shares: aggregate the whole capture as a replay does (with
 * the detail the export asks for), then write the model.  A damaged
 * capture is exported as far as it was read.
 */
#ifndef JETT_DAEMON_EXPORT_RUN_H
#define JETT_DAEMON_EXPORT_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "daemon/agg.h"
#include "daemon/export/ticks.h"
#include "proto/capture.h"

/* Writes the aggregated model to `out`: 0, or -1 with `err` set. */
typedef int export_model_fn(const struct agg *a, FILE *out, char *err, size_t errlen);

/* 0 written; 1 written from a damaged capture (`err` says where it
 * stopped); -1 nothing usable (`err` says why).  `ticks` (NULL: not
 * wanted) gets the capture's ticks once it was read, for the note on
 * those without a stack. */
int export_run(struct capture_reader *r, void (*keep)(struct agg *), export_model_fn *write,
               FILE *out, struct ticks *ticks, char *err, size_t errlen);

#endif
