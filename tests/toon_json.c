/* toon_json: jansson -> toon conversion for the tests. */
#include "tests/toon_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct toon_value *toon_from_json_object(const json_t *j)
{
    struct toon_value *obj = toon_object();
    const char *key;
    size_t key_len;
    json_t *v;
    json_object_keylen_foreach((json_t *)j, key, key_len, v)
    {
        toon_setn(obj, key, key_len, toon_from_json(v));
    }
    return obj;
}

struct toon_value *toon_from_json(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return toon_from_json_object(j);
    case JSON_ARRAY: {
        struct toon_value *arr = toon_array();
        for (size_t i = 0; i < json_array_size(j); i++)
            toon_push(arr, toon_from_json(json_array_get(j, i)));
        return arr;
    }
    case JSON_STRING:
        return toon_string(json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        return toon_int(json_integer_value(j));
    case JSON_REAL:
        return toon_double(json_real_value(j));
    case JSON_TRUE:
        return toon_bool(true);
    case JSON_FALSE:
        return toon_bool(false);
    default:
        return toon_null();
    }
}

json_t *toon_json_load(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (j == NULL) /* e.g. 1e20 written as an integer: read every number as a real */
        j = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &je);
    if (j == NULL)
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
    return j;
}

int toon_json_options(const json_t *test, struct toon_options *opt)
{
    memset(opt, 0, sizeof *opt);
    json_t *o = json_object_get(test, "options");
    const char *key;
    json_t *v;
    if (o == NULL)
        return 0;
    json_object_foreach(o, key, v)
    {
        if (strcmp(key, "delimiter") == 0 && json_is_string(v) && json_string_length(v) == 1)
            opt->delimiter = json_string_value(v)[0];
        else if (strcmp(key, "indentSize") == 0 && json_is_integer(v))
            opt->indent = (int)json_integer_value(v);
        else
            return -1;
    }
    return 0;
}

const char *toon_json_fixture_dir(char *buf, size_t len)
{
    const char *dir = getenv("JETT_TOON_FIXTURES");
    const char *root = getenv("JETT_SOURCE_ROOT");
    if (dir != NULL)
        snprintf(buf, len, "%s", dir);
    else
        snprintf(buf, len, "%s/fixtures/toon-conformance/encode", root != NULL ? root : ".");
    return buf;
}
