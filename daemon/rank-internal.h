/*
 * rank-internal: the orders of rank.c that the report's other sections
 * (rank_retained.c) share.  Only daemon/ includes this header.
 */
#ifndef JETT_DAEMON_RANK_INTERNAL_H
#define JETT_DAEMON_RANK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/rank.h"

/* Byte strings bytewise, a prefix first. */
int rank_bytes_cmp(const char *a, size_t an, const char *b, size_t bn);
/* Sources by origin then path, unavailable (ATTRIB_NONE) last. */
int rank_source_cmp(const struct agg *a, uint32_t x, uint32_t y);
/* Function identities as the bottlenecks order them (both defined). */
int rank_ident_cmp(const struct agg *a, uint32_t x, uint32_t y);

/* An entry's identity fields: names, source path and origin, the first
 * line of its declaration. */
void rank_identity(const struct agg *a, uint32_t ident, struct rank_entry *e);

/* The leads of a built report (jett-profile(7), "Leads"). */
void rank_leads(const struct agg *a, struct rank_report *r);

/* The retained section of a memory report (jett-profile(7)): 0, or -1
 * when memory runs out. */
int rank_retained(const struct agg *a, struct rank_report *r);

#endif
