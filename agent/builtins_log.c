/* builtins_log: log(level, message [, fields]) -> one structured record
 * for the host.  A malformed record is still handed over, marked not
 * accepted, so that the launcher can consume its sequence number. */
#include <string.h>

#include "agent/builtins.h"

#define LOG_MAX_FIELDS 32
#define LOG_MAX_VALUE 1024

static bool log_level_ok(struct value v)
{
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    if (v.tag != V_STR || v.secret)
        return false;
    for (int i = 0; i < 4; i++) /* the whole string: "info\0x" is not info */
        if (v.u.s->len == strlen(levels[i]) && memcmp(v.u.s->data, levels[i], v.u.s->len) == 0)
            return true;
    return false;
}

/* Formats the fields map into keys/texts; false when it breaks a limit. */
static bool log_fields(struct interp_state *s, struct value m, struct interp_log_field *fields,
                       struct strbuf *texts, size_t *n)
{
    bool ok = true;
    *n = 0;
    for (uint32_t i = 0; i < m.u.m->used; i++) {
        const struct heap_map_entry *e = &m.u.m->entries[i];
        if (e->key == NULL)
            continue;
        if (*n == LOG_MAX_FIELDS)
            return false;
        val_format(s->prog, s->sp, e->val, false, &texts[*n]);
        if (texts[*n].data == NULL)
            sb_puts(&texts[*n], "");
        if (texts[*n].len > LOG_MAX_VALUE)
            ok = false;
        fields[*n].key = m.secret ? "<secret>" : e->key->data;
        fields[*n].key_len = m.secret ? 8 : e->key->len;
        fields[*n].value = m.secret ? "<secret>" : texts[*n].data;
        fields[*n].value_len = m.secret ? 8 : texts[*n].len;
        (*n)++;
    }
    return ok;
}

int bi_log(struct interp_state *s, struct value *args, uint32_t n, const struct ast *call,
           struct value *out)
{
    *out = VAL_NIL;
    if (s->host.log == NULL)
        return 0;
    struct interp_log_field fields[LOG_MAX_FIELDS];
    struct strbuf texts[LOG_MAX_FIELDS];
    memset(texts, 0, sizeof texts);
    struct interp_log_record rec = {.fields = fields};
    rec.accepted = log_level_ok(args[0]) && args[1].tag == V_STR;
    rec.level = args[0].tag == V_STR ? (args[0].secret ? "<secret>" : args[0].u.s->data) : NULL;
    rec.message = args[1].tag == V_STR ? (args[1].secret ? "<secret>" : args[1].u.s->data) : NULL;
    rec.message_len = rec.message == NULL ? 0 : args[1].secret ? 8 : args[1].u.s->len;
    if (n == 3 && args[2].tag != V_MAP)
        rec.accepted = false;
    else if (n == 3 && !log_fields(s, args[2], fields, texts, &rec.n_fields))
        rec.accepted = false;
    const struct interp_frame *f = &s->frames[s->depth - 1];
    const struct interp_func_info *fi = &s->prog->infos[f->func_id];
    const struct interp_source *src = s->prog->sources[fi->source_id];
    rec.path = src->path;
    interp_source_position(src, call->start, &rec.line, &rec.column);
    rec.ns = fi->ns;
    rec.function = fi->name;
    rec.state = s;
    interp_host_lock(s);
    s->host.log(s->host.ctx, &rec);
    interp_host_unlock(s);
    for (int i = 0; i < LOG_MAX_FIELDS; i++)
        sb_free(&texts[i]);
    return 0;
}
