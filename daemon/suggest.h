/*
 * suggest: the deterministic suggestions of DESIGN section 6.  Each has a
 * stable rule id and a fixed template filled only with reported numbers
 * and qualified names, never source text.  They are added only when the
 * profile is complete and the entry has a source to point at; at most two
 * per entry, ordered by rule id.
 */
#ifndef JETT_DAEMON_SUGGEST_H
#define JETT_DAEMON_SUGGEST_H

#include "daemon/rank.h"

/* Adds the CPU rule that applies to `e`: CPU_HIGH_SELF when
 * 2 * self >= inclusive, else CPU_CALLEE_DOMINATED.  -1: out of memory. */
int suggest_cpu(struct rank_entry *e);

/* Adds MEM_ALLOCATION_PRESSURE (rank 1 only) and MEM_RETAINED (retained *
 * 10000 >= threshold_bp * attributed allocated bytes).  -1: no memory. */
int suggest_mem(struct rank_entry *e, uint32_t threshold_bp, uint64_t attributed_bytes);

/* Frees the texts of an entry's suggestions. */
void suggest_clear(struct rank_entry *e);

#endif
