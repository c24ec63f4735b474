/* loader_text: checks on raw source text (UTF-8, namespace header). */
#include <string.h>

#include "agent/loader.h"

long loader_utf8_invalid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        size_t n = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        if (n == 0 || i + n > len || c == 0xc0 || c == 0xc1 || c > 0xf4)
            return (long)i;
        for (size_t k = 1; k < n; k++)
            if ((p[i + k] & 0xc0) != 0x80)
                return (long)i;
        if (n == 3) {
            unsigned cp = ((c & 0x0fu) << 12) | ((p[i + 1] & 0x3fu) << 6) | (p[i + 2] & 0x3fu);
            if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
                return (long)i;
        } else if (n == 4) {
            unsigned cp = ((c & 0x07u) << 18) | ((p[i + 1] & 0x3fu) << 12);
            if (cp < 0x10000 || cp > 0x10ffff)
                return (long)i;
        }
        i += n;
    }
    return -1;
}

/* Skips blanks, newlines and comments from *i. */
static void loader_skip_trivia(const char *t, size_t len, size_t *i)
{
    while (*i < len) {
        if (t[*i] == ' ' || t[*i] == '\t' || t[*i] == '\r' || t[*i] == '\n') {
            (*i)++;
        } else if (*i + 1 < len && t[*i] == '/' && t[*i + 1] == '/') {
            while (*i < len && t[*i] != '\n')
                (*i)++;
        } else if (*i + 1 < len && t[*i] == '/' && t[*i + 1] == '*') {
            const char *end = memmem(t + *i + 2, len - *i - 2, "*/", 2);
            *i = end ? (size_t)(end - t) + 2 : len;
        } else {
            return;
        }
    }
}

static bool loader_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
}

bool loader_peek_namespace(const char *text, size_t len, char *out, size_t cap)
{
    size_t i = 0;
    loader_skip_trivia(text, len, &i);
    if (len - i < 10 || memcmp(text + i, "namespace", 9) != 0 ||
        (text[i + 9] != ' ' && text[i + 9] != '\t'))
        return false;
    i += 9;
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
        i++;
    size_t n = 0;
    while (i < len && loader_name_char(text[i]) && n + 1 < cap)
        out[n++] = text[i++];
    out[n] = '\0';
    return n > 0;
}
