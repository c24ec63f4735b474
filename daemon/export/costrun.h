/*
 * costrun: exact per-(function, line) costs in little memory.
 *
 * A Callgrind export of a large capture can hold millions of distinct
 * (function, line) pairs, one table entry each, far more than the capture's
 * stacks.  Each function has a buffer of varints instead: the lines added
 * are appended as they come, and once that tail is as long as the sorted
 * part before it (and at least a few KiB), the function's entries are
 * sorted by line, equal lines summed, and rewritten as the sorted part,
 * line deltas and values: a few bytes a pair, sorted in cache a function
 * at a time.  Nothing is dropped: every value is the exact sum of what was
 * added for its key.
 */
#ifndef JETT_PROTO_COSTRUN_H
#define JETT_PROTO_COSTRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct costrun;

/* n_values: 1 or 2 values per key.  NULL when out of memory. */
struct costrun *costrun_new(unsigned n_values);
/* The same for very many functions of a few lines each (one per stack
 * node): a buffer per function would cost more than its lines, so the
 * additions go to one log, sorted and merged now and then into one
 * buffer of every function's sorted lines.  Read as costrun_new's. */
struct costrun *costrun_new_dense(unsigned n_values);
void costrun_free(struct costrun *c);

/* Adds w[0..n_values) at (func, line); 0, or -1 when out of memory. */
int costrun_add(struct costrun *c, uint32_t func, uint32_t line, const uint64_t *w);

/* Ends adding; functions 0..n_funcs-1 can then be read (every func added
 * must be below n_funcs).  0, or -1 when out of memory. */
int costrun_finish(struct costrun *c, uint32_t n_funcs);
/* Bytes held, for tests of the memory bound. */
size_t costrun_bytes(const struct costrun *c);

/* The lines of one function, ascending, after costrun_finish. */
struct costrun_iter {
    const uint8_t *p, *end;
    uint32_t line;
    bool first;
};

/* Starts on `func`'s lines; false when it has none. */
bool costrun_func(const struct costrun *c, uint32_t func, struct costrun_iter *it);
/* The next line and its values; false at the end of the function. */
bool costrun_next(const struct costrun *c, struct costrun_iter *it, uint32_t *line, uint64_t *w);

#endif
