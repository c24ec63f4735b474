/*
 * suggest_option: the known option a misspelt one was probably meant to
 * be, for "did you mean --profile?".
 */
#ifndef JETT_PROTO_UTIL_SUGGEST_OPTION_H
#define JETT_PROTO_UTIL_SUGGEST_OPTION_H

#include <stddef.h>

/* The entry of known[0..n) nearest to `given` by edit distance (insert,
 * delete, substitute, or swap two neighbours: one edit each), or NULL
 * when none is close: at most 2 edits, and at most a third of the
 * option's letters after its dashes (so "-x" never becomes "-o").  On a
 * tie the first listed wins. */
const char *suggest_option(const char *given, const char *const *known, size_t n);

/* " (did you mean OPTION?)" for the nearest option, or "" when none is
 * close: ready to append to an "unknown option" message. */
const char *suggest_option_hint(const char *given, const char *const *known, size_t n, char *buf,
                                size_t buflen);

#endif
