/* rank_detach: a report that outlives its aggregator (see rank.h). */
#include <stdlib.h>
#include <string.h>

#include "daemon/rank.h"

static size_t str_need(struct rank_str s)
{
    return s.ptr ? s.len + 1 : 0;
}

/* Copies s to *at (NUL-terminated, as the aggregator keeps it). */
static struct rank_str str_copy(char **at, struct rank_str s)
{
    if (!s.ptr)
        return s;
    memcpy(*at, s.ptr, s.len);
    (*at)[s.len] = '\0';
    struct rank_str c = {*at, s.len};
    *at += s.len + 1;
    return c;
}

static const char *cstr_copy(char **at, const char *s)
{
    return s ? str_copy(at, (struct rank_str){s, strlen(s)}).ptr : NULL;
}

int rank_detach(struct rank_report *r)
{
    size_t need = 1;
    need += r->backend ? strlen(r->backend) + 1 : 0;
    need += r->collector_error ? strlen(r->collector_error) + 1 : 0;
    for (size_t i = 0; i < r->n_entries; i++) {
        const struct rank_entry *e = &r->entries[i];
        need += str_need(e->ns) + str_need(e->fn) + str_need(e->path);
        need += str_need(e->callee_ns) + str_need(e->callee_fn);
        for (unsigned k = 0; k < e->n_hot; k++)
            need += str_need(e->hot[k].path);
        for (unsigned k = 0; k < e->n_calls; k++)
            need += str_need(e->call_lines[k].where.path) + str_need(e->call_lines[k].callee_ns) +
                    str_need(e->call_lines[k].callee_fn);
    }
    for (unsigned k = 0; k < r->n_waits; k++)
        need +=
            str_need(r->waits[k].ns) + str_need(r->waits[k].fn) + str_need(r->waits[k].where.path);
    for (size_t k = 0; k < r->n_tasks; k++) {
        const struct rank_task *t = &r->tasks[k];
        need += str_need(t->ns) + str_need(t->fn) + str_need(t->path) + str_need(t->spawn_path);
    }
    for (size_t k = 0; k < r->n_all_waits; k++)
        need += str_need(r->all_waits[k].ns) + str_need(r->all_waits[k].fn) +
                str_need(r->all_waits[k].where.path);
    for (unsigned k = 0; k <= r->n_retained; k++) {
        const struct rank_retained *t = k < r->n_retained ? &r->retained[k] : &r->top_holder;
        need += str_need(t->holder_ns) + str_need(t->holder_name) + str_need(t->holder_path);
        need += str_need(t->ns) + str_need(t->fn) + str_need(t->path);
    }
    for (unsigned k = 0; k < r->n_leads; k++) {
        const struct rank_lead *l = &r->leads[k];
        need += str_need(l->ns) + str_need(l->name) + str_need(l->path);
    }
    char *arena = malloc(need), *at = arena;
    if (!arena)
        return -1;
    r->backend = cstr_copy(&at, r->backend);
    r->collector_error = cstr_copy(&at, r->collector_error);
    for (size_t i = 0; i < r->n_entries; i++) {
        struct rank_entry *e = &r->entries[i];
        e->ns = str_copy(&at, e->ns);
        e->fn = str_copy(&at, e->fn);
        e->path = str_copy(&at, e->path);
        e->callee_ns = str_copy(&at, e->callee_ns);
        e->callee_fn = str_copy(&at, e->callee_fn);
        for (unsigned k = 0; k < e->n_hot; k++)
            e->hot[k].path = str_copy(&at, e->hot[k].path);
        for (unsigned k = 0; k < e->n_calls; k++) {
            struct rank_call *c = &e->call_lines[k];
            c->where.path = str_copy(&at, c->where.path);
            c->callee_ns = str_copy(&at, c->callee_ns);
            c->callee_fn = str_copy(&at, c->callee_fn);
        }
    }
    for (unsigned k = 0; k < r->n_waits; k++) {
        struct rank_wait *w = &r->waits[k];
        w->ns = str_copy(&at, w->ns);
        w->fn = str_copy(&at, w->fn);
        w->where.path = str_copy(&at, w->where.path);
    }
    for (size_t k = 0; k < r->n_tasks; k++) {
        struct rank_task *t = &r->tasks[k];
        t->ns = str_copy(&at, t->ns);
        t->fn = str_copy(&at, t->fn);
        t->path = str_copy(&at, t->path);
        t->spawn_path = str_copy(&at, t->spawn_path);
    }
    for (size_t k = 0; k < r->n_all_waits; k++) {
        struct rank_wait *w = &r->all_waits[k];
        w->ns = str_copy(&at, w->ns);
        w->fn = str_copy(&at, w->fn);
        w->where.path = str_copy(&at, w->where.path);
    }
    for (unsigned k = 0; k <= r->n_retained; k++) {
        struct rank_retained *t = k < r->n_retained ? &r->retained[k] : &r->top_holder;
        t->holder_ns = str_copy(&at, t->holder_ns);
        t->holder_name = str_copy(&at, t->holder_name);
        t->holder_path = str_copy(&at, t->holder_path);
        t->ns = str_copy(&at, t->ns);
        t->fn = str_copy(&at, t->fn);
        t->path = str_copy(&at, t->path);
    }
    for (unsigned k = 0; k < r->n_leads; k++) {
        struct rank_lead *l = &r->leads[k];
        l->ns = str_copy(&at, l->ns);
        l->name = str_copy(&at, l->name);
        l->path = str_copy(&at, l->path);
    }
    free(r->arena);
    r->arena = arena;
    return 0;
}
