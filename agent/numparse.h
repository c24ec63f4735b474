/*
 * numparse: the text of int() and float(), read in pieces with a poll
 * between them (agent/safepoint.h).
 *
 * strtoll and strtod read their whole input in one call: float() of a
 * 20 MB string ran for 245 ms without a safe point, and int() of a long
 * run of zeros did the same after its own check.  Here the text is read a
 * chunk at a time, as the libc routines would read it, and the value is
 * computed from a short text that means the same number:
 *
 * int: an optional sign and decimal digits, nothing else; the digits
 * after the leading zeros decide the value (more than 19 of them are out
 * of range).
 *
 * float: what strtod takes, in the C locale, up to the end of the text or
 * its first NUL byte (float() has always stopped there): leading white
 * space, a sign, then decimal digits with a point and an exponent, or
 * 0x and hexadecimal digits with a point and a binary exponent, or inf,
 * infinity or nan(chars).  A decimal number keeps its first 800
 * significant digits and, when a later digit is not 0, a digit 1 after
 * them; a hexadecimal one its first 40 and a 1 likewise.  No double and
 * no point halfway between two doubles has more significant digits than
 * that (768 decimal, 15 hexadecimal), so the short number lies strictly
 * between the same two of them as the long one and strtod rounds it to
 * the same double, with the same ERANGE for a result out of range or
 * below the normal ones; the exponents are summed as 64-bit integers,
 * saturated far beyond any double.  A nan's chars longer than 4096 bytes
 * are dropped: they only choose among NaNs, which print alike.
 */
#ifndef JETT_AGENT_NUMPARSE_H
#define JETT_AGENT_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/safepoint.h"

enum numparse_status {
    NUMPARSE_OK = 0,
    NUMPARSE_BAD,     /* not a number of that kind, or out of range */
    NUMPARSE_STOPPED, /* a poll reported an interrupt */
};

/* The int of the len bytes at p. */
enum numparse_status numparse_int(struct safepoint *sp, const char *p, size_t len, int64_t *out);
/* The float of the len bytes at p (len > 0), as float() has read it:
 * strtod's value when it reads up to the first NUL or the end and does
 * not set ERANGE. */
enum numparse_status numparse_float(struct safepoint *sp, const char *p, size_t len, double *out);

#endif
