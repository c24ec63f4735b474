/* builtins: the functions every namespace can call without an import. */
#ifndef JETT_AGENT_BUILTINS_H
#define JETT_AGENT_BUILTINS_H

#include "agent/interp-internal.h"

/* args are borrowed (the caller releases them); *out is owned.  A builtin
 * whose work grows with its input passes a safe point once per item or
 * per SAFEPOINT_CHUNK bytes (agent/safepoint.h); a sample taken there
 * belongs to the calling statement.  When interp_safe_point reports an
 * interrupt, the builtin frees what it built and returns -1. */
typedef int (*builtin_fn)(struct interp_state *s, struct value *args, uint32_t n,
                          const struct ast *call, struct value *out);

struct builtin_def {
    const char *name;
    uint8_t min_args, max_args; /* max 255: variadic */
    uint8_t secret_result;      /* its result is secret<T> */
    builtin_fn fn;
};

extern const struct builtin_def builtin_table[];
extern const uint32_t builtin_count;

/* -1 when name is not a builtin. */
int builtin_lookup(const char *name);

/* Implementations, grouped by file. */
int bi_print(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_eprint(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_debug(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_log(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_now_ms(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_sleep(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_env(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_secret(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_fail(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_len(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_push(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_pop(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_insert(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_remove(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_keys(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_values(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_has(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_sort(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_slice(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_contains(struct interp_state *, struct value *, uint32_t, const struct ast *,
                struct value *);
int bi_str(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_int(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_float(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_substr(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_split(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_join(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_find(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_upper(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_lower(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_repeat(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_abs(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_min(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_max(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_spawn(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_channel(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_send(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_recv(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
int bi_close(struct interp_state *, struct value *, uint32_t, const struct ast *, struct value *);
/* join(t): the one-argument join (bi_join's other form joins strings). */
int bi_join_task(struct interp_state *s, struct value *args, const struct ast *call,
                 struct value *out);

/* Shared argument checks: raise "NAME: expected T as argument I". */
int bi_want(struct interp_state *s, const struct ast *call, struct value *args, uint32_t i,
            enum val_tag tag);

#endif
