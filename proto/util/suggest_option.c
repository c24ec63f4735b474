/* suggest_option: nearest known option by optimal string alignment. */
#include <stdio.h>
#include <string.h>

#include "proto/util/suggest_option.h"

#define SUGGEST_MAX_LEN 64 /* longer words are no misspelt option */
#define SUGGEST_MAX_EDITS 2

/* Optimal string alignment distance of a and b (both < SUGGEST_MAX_LEN). */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *suggest_option(const char *given, const char *const *known, size_t n)
{
    size_t lg = strlen(given), best_d = SUGGEST_MAX_EDITS + 1;
    const char *best = NULL;
    if (lg >= SUGGEST_MAX_LEN)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        size_t lk = strlen(known[k]);
        if (lk >= SUGGEST_MAX_LEN || strcmp(known[k], given) == 0)
            continue;
        size_t letters = lk - strspn(known[k], "-");
        size_t dist = distance(given, lg, known[k], lk);
        if (dist < best_d && dist * 3 <= letters)
            best = known[k], best_d = dist;
    }
    return best;
}

const char *suggest_option_hint(const char *given, const char *const *known, size_t n, char *buf,
                                size_t buflen)
{
    const char *s = suggest_option(given, known, n);
    if (!s || buflen == 0)
        return "";
    snprintf(buf, buflen, " (did you mean %s?)", s);
    return buf;
}
