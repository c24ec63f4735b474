/* Callgrind reader: each accepted construct and boundary rule of the profile. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/callgrind_util.h"

#define ERR(text, kind, line, needle) cgt_parse_err(text, strlen(text), kind, line, needle)

START_TEST(version_omitted_or_1)
{
    cgt_expect_records("events: A\nfn=f\n3 4\n", "cost - - f | 3 | 4\n");
    cgt_expect_records("# callgrind format\nversion: 1\nevents: A\nfn=f\n3 4\n",
                       "cost - - f | 3 | 4\n");
    ERR("version: 2\nevents: A\n", CG_UNSUPPORTED, 1, "version 2");
    ERR("version: 0\nevents: A\n", CG_UNSUPPORTED, 1, "version 0");
    ERR("version: one\nevents: A\n", CG_SYNTAX, 1, NULL);
}
END_TEST

START_TEST(default_position_is_line)
{
    struct cg_model *m = cgt_parse_ok("events: A\nfn=f\n7 1\n");
    ck_assert_uint_eq(m->parts[0].positions, CG_POS_LINE);
    ck_assert_uint_eq(m->parts[0].npos, 1);
    cg_model_free(m);
}
END_TEST

START_TEST(position_subsets_in_order)
{
    cgt_expect_records("positions: instr\nevents: A\nfn=f\n0x10 1\n", "cost - - f | 16 | 1\n");
    cgt_expect_records("positions: bb\nevents: A\nfn=f\n5 1\n", "cost - - f | 5 | 1\n");
    cgt_expect_records("positions: instr line\nevents: A\nfn=f\n0x10 5 1\n",
                       "cost - - f | 16,5 | 1\n");
    cgt_expect_records("positions: bb line\nevents: A\nfn=f\n2 5 1\n", "cost - - f | 2,5 | 1\n");
    cgt_expect_records("positions: instr bb line\nevents: A\nfn=f\n1 2 3 4\n",
                       "cost - - f | 1,2,3 | 4\n");
    struct cg_model *m = cgt_parse_ok("positions:  instr\t bb  line \nevents: A\n");
    ck_assert_str_eq(m->headers[0].value.ptr, "instr bb line");
    cg_model_free(m);
    ERR("positions: line instr\nevents: A\n", CG_SYNTAX, 1, "order");
    ERR("positions: line line\nevents: A\n", CG_SYNTAX, 1, NULL);
    ERR("positions:\nevents: A\n", CG_SYNTAX, 1, "empty");
    ERR("events: A\npositions: addr\n", CG_UNSUPPORTED, 2, "addr");
}
END_TEST

START_TEST(events_unique_and_ordered)
{
    struct cg_model *m = cgt_parse_ok("events: Ir  Dr\tDw\nfn=f\n1 1 2 3\n");
    const struct cg_part *p = &m->parts[0];
    ck_assert_uint_eq(p->nevents, 3);
    ck_assert_str_eq(cg_part_event(m, p, 0)->ptr, "Ir");
    ck_assert_str_eq(cg_part_event(m, p, 1)->ptr, "Dr");
    ck_assert_str_eq(cg_part_event(m, p, 2)->ptr, "Dw");
    cg_model_free(m);
    ERR("events: A B A\n", CG_SYNTAX, 1, "twice");
    ERR("events:\n", CG_SYNTAX, 1, "empty");
    ERR("events: A\nevents: B\n", CG_SYNTAX, 2, "repeated");
}
END_TEST

START_TEST(position_specs_and_calls)
{
    cgt_expect_records("events: A\nob=o\nfl=a.c\nfn=main\n16 20\ncob=lib\ncfi=b.c\ncfn=g\n"
                       "calls=3 20\n16 400\nfi=inl.h\n17 5\nfe=a.c\n18 6\n",
                       "cost o a.c main | 16 | 20\n"
                       "call o a.c main -> lib b.c g x3 @20 | 16 | 400\n"
                       "cost o inl.h main[a.c] | 17 | 5\n"
                       "cost o a.c main | 18 | 6\n");
    /* cfl= is the historic spelling of cfi= */
    cgt_expect_records("events: A\nfl=a.c\nfn=main\ncfl=b.c\ncfn=g\ncalls=1 2\n3 4\n",
                       "call - a.c main -> - b.c g x1 @2 | 3 | 4\n");
}
END_TEST

/* A function is named with the file in effect at its fn= line; fi=/fe=/fl=
 * after it move the costs, not the function; the normal form writes fl=
 * before fn= and fi= for costs elsewhere, as valgrind does. */
START_TEST(function_file_is_the_file_at_fn)
{
    const char *in = "events: A\nob=o\nfl=crti.S\nfn=f\nfi=crtn.S\n10 1\nfl=x.c\n11 1\n"
                     "fn=g\n12 1\n";
    cgt_expect_records(in, "cost o crtn.S f[crti.S] | 10 | 1\n"
                           "cost o x.c f[crti.S] | 11 | 1\n"
                           "cost o x.c g | 12 | 1\n");
    struct cg_model *m = cgt_parse_ok(in);
    char *out;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), 0);
    ck_assert_str_eq(out, "# callgrind format\npart: 1\nevents: A\n"
                          "ob=(1) o\nfl=(1) crti.S\nfn=(1) f\nfi=(2) crtn.S\n10 1\n"
                          "fi=(3) x.c\n11 1\nfn=(2) g\n12 1\n");
    free(out);
    cg_model_free(m);
}
END_TEST

START_TEST(separate_id_namespaces)
{
    cgt_expect_records("events: A\nob=(1) obj\nfl=(1) file\nfn=(1) func\n1 1\n"
                       "cob=(1)\ncfi=(1)\ncfn=(1)\ncalls=1 1\n1 2\n",
                       "cost obj file func | 1 | 1\n"
                       "call obj file func -> obj file func x1 @1 | 1 | 2\n");
}
END_TEST

START_TEST(fn_and_cfn_share_ids)
{
    cgt_expect_records("events: A\nfn=(1) main\ncfn=(2) g\ncalls=1 5\n1 9\nfn=(2)\n5 9\n",
                       "call - - main -> - - g x1 @5 | 1 | 9\n"
                       "cost - - g | 5 | 9\n");
}
END_TEST

START_TEST(file_aliases_share_ids)
{
    cgt_expect_records("events: A\nfl=(1) a.c\nfn=f\nfi=(2) b.h\n1 1\nfe=(1)\n2 2\nfi=(2)\n3 3\n"
                       "cfl=(2)\ncfn=g\ncalls=1 1\n4 4\ncfi=(1)\ncfn=h\ncalls=1 1\n5 5\n",
                       "cost - b.h f[a.c] | 1 | 1\n"
                       "cost - a.c f | 2 | 2\n"
                       "cost - b.h f[a.c] | 3 | 3\n"
                       "call - b.h f[a.c] -> - b.h g x1 @1 | 4 | 4\n"
                       "call - b.h f[a.c] -> - a.c h x1 @1 | 5 | 5\n");
}
END_TEST

START_TEST(dictionaries_survive_parts_and_are_replaced)
{
    cgt_expect_records("events: A\nfn=(1) a\n1 1\nfn=(1) b\n2 2\n"
                       "events: A\nfn=(1)\n3 3\n",
                       "cost - - a | 1 | 1\n"
                       "cost - - b | 2 | 2\n"
                       "cost - - b | 3 | 3\n");
}
END_TEST

START_TEST(decimal_and_hex_numbers)
{
    cgt_expect_records("positions: instr line\nevents: A B\nfn=f\n"
                       "0xfF 0x0a 0x10 18446744073709551615\n",
                       "cost - - f | 255,10 | 16,18446744073709551615\n");
    cgt_expect_records("events: A\nfn=f\n0xffffffffffffffff 007\n",
                       "cost - - f | 18446744073709551615 | 7\n");
    ERR("events: A\nfn=f\n0X10 1\n", CG_SYNTAX, 3, "malformed");
    ERR("events: A\nfn=f\n0x 1\n", CG_SYNTAX, 3, "malformed");
    ERR("events: A\nfn=f\n1 18446744073709551616\n", CG_RESOURCE, 3, "64 bits");
    ERR("events: A\nfn=f\n1 0x10000000000000000\n", CG_RESOURCE, 3, NULL);
    ERR("events: A\nfn=f\n1 12a\n", CG_SYNTAX, 3, "malformed");
}
END_TEST

START_TEST(relative_positions)
{
    /* bases start at zero: +5 is 5, * is 0 */
    cgt_expect_records("positions: instr line\nevents: A\nfn=f\n+5 * 1\n"
                       "0x80001234 90 1\n+3 * 5\n+1 +1 6\n-4 -91 7\n* * 8\n",
                       "cost - - f | 5,0 | 1\n"
                       "cost - - f | 2147488308,90 | 1\n"
                       "cost - - f | 2147488311,90 | 5\n"
                       "cost - - f | 2147488312,91 | 6\n"
                       "cost - - f | 2147488308,0 | 7\n"
                       "cost - - f | 2147488308,0 | 8\n");
}
END_TEST

START_TEST(bases_reset_per_part)
{
    cgt_expect_records("events: A\nfn=f\n100 1\n+1 1\npart: 2\nevents: A\nfn=f\n+1 1\n",
                       "cost - - f | 100 | 1\n"
                       "cost - - f | 101 | 1\n"
                       "cost - - f | 1 | 1\n");
}
END_TEST

/* A call's target and source positions are read against the bases of the
 * last self-cost line and move neither (as valgrind writes them). */
START_TEST(call_positions_use_bases_without_moving_them)
{
    cgt_expect_records("events: A\nfn=f\n10 1\ncfn=g\ncalls=2 +5\n* 3\n+1 1\n"
                       "calls=1 -10\n+2 4\ncalls=1 50\n40 5\n+1 1\n",
                       "cost - - f | 10 | 1\n"
                       "call - - f -> - - g x2 @15 | 10 | 3\n"
                       "cost - - f | 11 | 1\n"
                       "call - - f -> - - g x1 @1 | 13 | 4\n"
                       "call - - f -> - - g x1 @50 | 40 | 5\n"
                       "cost - - f | 12 | 1\n");
}
END_TEST

START_TEST(negative_and_overflowing_positions)
{
    ERR("events: A\nfn=f\n5 1\n-6 1\n", CG_SYNTAX, 4, "below zero");
    ERR("events: A\nfn=f\n18446744073709551615 1\n+1 1\n", CG_RESOURCE, 4, "64 bits");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 -1\n1 1\n", CG_SYNTAX, 4, "below zero");
}
END_TEST

START_TEST(omitted_and_extra_costs)
{
    cgt_expect_records("events: A B C\nfn=f\n1 5\n2\n", "cost - - f | 1 | 5,0,0\n"
                                                        "cost - - f | 2 | 0,0,0\n");
    ERR("events: A B\nfn=f\n1 1 2 3\n", CG_SYNTAX, 3, "more cost columns");
    ERR("positions: instr line\nevents: A\nfn=f\n0x10\n", CG_SYNTAX, 4, "position columns");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1\n1 1\n", CG_SYNTAX, 4, "position columns");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 2 3\n1 1\n", CG_SYNTAX, 4, "extra column");
    /* relative tokens belong to positions only */
    ERR("events: A B\nfn=f\n1 +2\n", CG_SYNTAX, 3, "malformed");
    ERR("events: A B\nfn=f\n1 *\n", CG_SYNTAX, 3, "malformed");
}
END_TEST

START_TEST(call_count_is_separate)
{
    cgt_expect_records("events: A B\nfn=f\ncfn=g\ncalls=7 3\n1 10 20\n",
                       "call - - f -> - - g x7 @3 | 1 | 10,20\n");
    ERR("events: A\nfn=f\ncfn=g\ncalls=x 3\n1 1\n", CG_SYNTAX, 4, NULL);
}
END_TEST

START_TEST(comments_and_blank_lines)
{
    cgt_expect_records("# callgrind format\n\n  \nevents: A\n# c\n\nfn=f\ncfn=g\ncalls=1 2\n"
                       "# between the call and its cost line\n\n\t\n1 3\n# end",
                       "call - - f -> - - g x1 @2 | 1 | 3\n");
}
END_TEST

START_TEST(headers_ordered_and_typed)
{
    struct cg_model *m = cgt_parse_ok(
        "version: 1\ncreator: me\npid: 0x10\ncmd:  ./a b \nthread: 2\npart: 3\n"
        "desc: I1 cache: 32\nevent: Sum = A + B : total\nevents: A B\nsummary: 5 0x6\n");
    static const char *const want[][2] = {
        {"version", "1"},
        {"creator", "me"},
        {"pid", "16"},
        {"cmd", "./a b"},
        {"thread", "2"},
        {"part", "3"},
        {"desc", "I1 cache: 32"},
        {"event", "Sum = A + B : total"},
        {"events", "A B"},
        {"summary", "5 6"},
    };
    ck_assert_uint_eq(m->nheaders, 10);
    for (size_t i = 0; i < 10; i++) {
        ck_assert_str_eq(cg_header_name(m->headers[i].key), want[i][0]);
        ck_assert_str_eq(m->headers[i].value.ptr, want[i][1]);
    }
    const struct cg_part *p = &m->parts[0];
    ck_assert(p->has_pid && p->pid == 16 && p->has_thread && p->thread == 2);
    ck_assert(p->has_number && p->number == 3);
    /* event: is metadata only: the events stay A B */
    ck_assert_uint_eq(p->nevents, 2);
    cgt_round_trip(m);
    cg_model_free(m);
    ERR("events: A\nfoo: bar\n", CG_UNSUPPORTED, 2, "unknown header");
    ERR("events: A\npid: 1\npid: 2\n", CG_SYNTAX, 3, "repeated");
    ERR("events: A\npid: x\n", CG_SYNTAX, 2, NULL);
}
END_TEST

START_TEST(header_after_body_starts_a_part)
{
    struct cg_model *m = cgt_parse_ok("events: A\nfn=f\n1 1\ntotals: 9\n"
                                      "desc: second\nevents: B\nfn=g\n2 2\n");
    ck_assert_uint_eq(m->nparts, 2);
    ck_assert(m->parts[0].has_totals && m->values[m->parts[0].totals] == 9);
    ck_assert_uint_eq(m->parts[0].nrecords, 1);
    ck_assert_uint_eq(m->parts[1].nrecords, 1);
    ck_assert_str_eq(cg_part_event(m, &m->parts[1], 0)->ptr, "B");
    cgt_round_trip(m);
    cg_model_free(m);
    /* totals is a trailer: it stays in its part */
    m = cgt_parse_ok("events: A\nfn=f\n1 1\ntotals: 1\n");
    ck_assert_uint_eq(m->nparts, 1);
    cg_model_free(m);
}
END_TEST

START_TEST(repeated_part_preserves_empty_parts)
{
    struct cg_model *m = cgt_parse_ok("part: 1\nevents: A\npart: 2\nevents: A\n"
                                      "part: 3\nevents: A\nfn=f\n1 1\n");
    ck_assert_uint_eq(m->nparts, 3);
    ck_assert_uint_eq(m->parts[0].nrecords, 0);
    ck_assert_uint_eq(m->parts[1].nrecords, 0);
    ck_assert_uint_eq(m->parts[2].nrecords, 1);
    cgt_round_trip(m);
    cg_model_free(m);
}
END_TEST

START_TEST(each_part_needs_events)
{
    ERR("", CG_SYNTAX, 1, "no 'events:'");
    ERR("part: 1\npart: 2\nevents: A\n", CG_SYNTAX, 1, "no 'events:'");
    ERR("events: A\nfn=f\n1 1\ndesc: x\nfn=g\n", CG_SYNTAX, 5, "before the part's 'events:'");
    ERR("fl=a.c\nevents: A\n", CG_SYNTAX, 1, "before the part's 'events:'");
}
END_TEST

START_TEST(summary_and_totals_retained)
{
    /* deliberately not the sum of the costs: kept, never recomputed */
    struct cg_model *m = cgt_parse_ok("events: A B\nsummary: 100\nfn=f\n1 1 2\ntotals: 7 0x8\n");
    const struct cg_part *p = &m->parts[0];
    ck_assert(p->has_summary && p->nsummary == 1 && m->values[p->summary] == 100);
    ck_assert(p->has_totals && p->ntotals == 2);
    ck_assert(m->values[p->totals] == 7 && m->values[p->totals + 1] == 8);
    char *out;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "summary: 100\n"));
    ck_assert_ptr_nonnull(strstr(out, "totals: 7 8\n"));
    free(out);
    cg_model_free(m);
    ERR("events: A\nsummary: 1 2\n", CG_SYNTAX, 2, "2 values for 1 events");
    ERR("summary: 1 2\nevents: A\nfn=f\n1 1\n", CG_SYNTAX, 1, "2 values");
    ERR("events: A\nsummary: -1\n", CG_SYNTAX, 2, NULL);
    ERR("events: A\nsummary: 99999999999999999999\n", CG_RESOURCE, 2, NULL);
    ERR("events: A\ntotals: 1\nfn=f\n1 1\ntotals: 1\n", CG_SYNTAX, 5, "repeated");
}
END_TEST

START_TEST(unsupported_constructs)
{
    ERR("events: A\nfn=f\njump=1 5\n1 1\n", CG_UNSUPPORTED, 3, "jump=");
    ERR("events: A\nfn=f\njcnd=1 2 5\n1 1\n", CG_UNSUPPORTED, 3, "jcnd=");
    ERR("events: A\nfn=f\njfi=a.c\n", CG_UNSUPPORTED, 3, "jfi=");
    ERR("events: A\nfn=f\nxyz=1\n", CG_UNSUPPORTED, 3, "xyz=");
    ERR("positions: instr col\nevents: A\n", CG_UNSUPPORTED, 1, "col");
    ERR("version: 3\n", CG_UNSUPPORTED, 1, NULL);
}
END_TEST

START_TEST(selected_events_must_be_recorded)
{
    const char *text = "events: Ir Dr\nfn=f\n1 1\nevents: Ir\nfn=f\n1 1\n";
    const char *ir[] = {"Ir"}, *dr[] = {"Dr"};
    struct cg_options o = {ir, 1};
    struct cg_error err;
    struct cg_model *m = cg_parse(text, strlen(text), &o, &err);
    ck_assert_ptr_nonnull(m);
    cg_model_free(m);
    o.selected_events = dr;
    ck_assert_ptr_null(cg_parse(text, strlen(text), &o, &err));
    ck_assert_int_eq(err.kind, CG_UNSUPPORTED);
    ck_assert_uint_eq(err.line, 4);
}
END_TEST

START_TEST(fn_before_costs_and_cfn_before_calls)
{
    ERR("events: A\n1 1\n", CG_SYNTAX, 2, "before any 'fn='");
    ERR("events: A\nfl=a\n1 1\n", CG_SYNTAX, 3, "before any 'fn='");
    ERR("events: A\nfn=f\ncalls=1 1\n1 1\n", CG_SYNTAX, 3, "without a 'cfn='");
    ERR("events: A\ncfn=g\ncalls=1 1\n1 1\n", CG_SYNTAX, 3, "before any 'fn='");
    ERR("events: A\nfi=x.h\nfn=f\n", CG_SYNTAX, 2, "'fi=' before any 'fn='");
    ERR("events: A\nfe=x.h\nfn=f\n", CG_SYNTAX, 2, "'fe=' before any 'fn='");
}
END_TEST

START_TEST(callee_reused_until_fn_or_part)
{
    cgt_expect_records("events: A\nfn=f\ncfn=g\ncalls=1 1\n1 1\ncalls=2 2\n2 2\n",
                       "call - - f -> - - g x1 @1 | 1 | 1\n"
                       "call - - f -> - - g x2 @2 | 2 | 2\n");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\n1 1\nfn=h\ncalls=1 1\n1 1\n", CG_SYNTAX, 7,
        "without a 'cfn='");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\n1 1\nevents: A\nfn=f\ncalls=1 1\n1 1\n", CG_SYNTAX, 8,
        "without a 'cfn='");
}
END_TEST

START_TEST(overrides_resolved_at_cfn)
{
    /* cob/cfi apply when cfn is read; alone they do not redefine the callee */
    cgt_expect_records("events: A\nob=o\nfl=a\nfn=f\ncob=lib\ncfi=b\ncfn=g\ncalls=1 1\n1 1\n"
                       "cfi=c\ncalls=1 2\n2 2\ncfn=h\ncalls=1 3\n3 3\n",
                       "call o a f -> lib b g x1 @1 | 1 | 1\n"
                       "call o a f -> lib b g x1 @2 | 2 | 2\n"
                       "call o a f -> o a h x1 @3 | 3 | 3\n");
    /* without overrides the callee takes the caller's object and current file */
    cgt_expect_records("events: A\nob=o\nfl=a\nfn=f\nfi=i\ncfn=g\ncalls=1 1\n1 1\n",
                       "call o i f[a] -> o i g x1 @1 | 1 | 1\n");
    /* an empty override is cancelled */
    cgt_expect_records("events: A\nfl=a\nfn=f\ncfi=b\ncfi=\ncfn=g\ncalls=1 1\n1 1\n",
                       "call - a f -> - a g x1 @1 | 1 | 1\n");
}
END_TEST

/* A callee resolved before the object or file is set keeps them unset, and
 * the normal form resolves it before it sets them (found by fuzzing). */
START_TEST(callee_resolved_before_context_is_set)
{
    cgt_expect_records("events: A\nfn=f\ncfn=g\ncalls=1 1\n1 1\nfi=x.c\n2 2\ncalls=1 2\n3 3\n",
                       "call - - f -> - - g x1 @1 | 1 | 1\n"
                       "cost - x.c f[-] | 2 | 2\n"
                       "call - x.c f[-] -> - - g x1 @2 | 3 | 3\n");
    const char *in = "events: A\nfn=f\ncfn=g\nob=o\ncalls=1 1\n1 1\n";
    cgt_expect_records(in, "call o - f -> - - g x1 @1 | 1 | 1\n");
    struct cg_model *m = cgt_parse_ok(in);
    char *out;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), 0);
    ck_assert_str_eq(out, "# callgrind format\npart: 1\nevents: A\n"
                          "fn=(1) f\ncfn=(2) g\nob=(1) o\ncalls=1 1\n1 1\n");
    free(out);
    cg_model_free(m);
}
END_TEST

START_TEST(overrides_survive_self_costs_cleared_after_call)
{
    cgt_expect_records("events: A\nfl=a\nfn=f\ncfi=b\n1 1\n2 2\ncfn=g\ncalls=1 1\n3 3\n"
                       "cfn=h\ncalls=1 1\n4 4\n",
                       "cost - a f | 1 | 1\n"
                       "cost - a f | 2 | 2\n"
                       "call - a f -> - b g x1 @1 | 3 | 3\n"
                       "call - a f -> - a h x1 @1 | 4 | 4\n");
}
END_TEST

START_TEST(pending_call_needs_its_cost_line)
{
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\nfn=h\n1 1\n", CG_SYNTAX, 5, "after 'calls=' at line 4");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\ncalls=1 1\n1 1\n", CG_SYNTAX, 5, NULL);
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\ntotals: 1\n", CG_SYNTAX, 5, "header after 'calls='");
    ERR("events: A\nfn=f\ncfn=g\ncalls=1 1\n# only a comment\n\n", CG_SYNTAX, 4,
        "input ends after 'calls='");
}
END_TEST

START_TEST(outer_whitespace_trimmed)
{
    cgt_expect_records("  events:\tA  \r\n\tfn= (1)  main x \r\n fl=  a b\t\r\n 1\t 2 \r\n"
                       "fn=(1)\r\n3 4\r\n",
                       "cost - a b main x[-] | 1 | 2\n"
                       "cost - a b main x | 3 | 4\n");
    ERR("events: A\nfn=   \n", CG_SYNTAX, 2, "empty name");
    ERR("events: A\nfn=(3\n", CG_SYNTAX, 2, "')'");
    ERR("events: A\nfn=(3)\n", CG_SYNTAX, 2, "function ID (3) used before its definition");
    ERR("events: A\nob=(8)\n", CG_SYNTAX, 2, "object ID (8)");
    ERR("events: A\nfn=f\n?? 1\n", CG_SYNTAX, 3, "unrecognized");
}
END_TEST

/* Lines that end with CR alone are one line holding CRs: rejected at its
 * first CR, never read as a header whose event names hold the rest.  A
 * comment may hold one. */
START_TEST(cr_only_line_ends_rejected)
{
    ERR("events: A\rfn=main\r1 10\r", CG_SYNTAX, 1, "carriage return inside a line");
    ERR("events: A\nfn=main\rfn=g\n1 10\n", CG_SYNTAX, 2, "carriage return inside a line");
    ERR("events: A\nfn=main\n1 10\r2 20\n", CG_SYNTAX, 3, "carriage return inside a line");
    ERR("# a comment\r may hold one\nevents: A\nfn=f\n1 1\r3 4\n", CG_SYNTAX, 4,
        "carriage return inside a line");
}
END_TEST

/* The exact canonical text of a small profile, written out by hand. */
START_TEST(normalized_text)
{
    const char *in = "# callgrind format\n"
                     "version: 1\ncreator: me\n"
                     "totals: 30 1\n"
                     "positions: instr line\nevents: A B\n"
                     "fn=(9) unused\n"
                     "ob=(4) o\nfl=(7) a.c\nfn=(5) main\n"
                     "0x10 +3 10\n+2 * 0 0\n"
                     "fi=(8) in.h\n* -1 5 1\n"
                     "cob=(2) lib\ncfi=(3) b.c\ncfn=(6) g\ncalls=2 0x20 +4\n* * 9\n"
                     "fn=(6)\n0x20 7 4\n"
                     "thread: 2\nevents: A\nfn=(5)\n1 1\n";
    const char *want = "# callgrind format\n"
                       "version: 1\ncreator: me\npart: 1\n"
                       "positions: instr line\nevents: A B\n"
                       "ob=(1) o\nfl=(1) a.c\nfn=(1) main\n"
                       "16 3 10\n18 3\n"
                       "fi=(2) in.h\n18 2 5 1\n"
                       "cob=(2) lib\ncfi=(3) b.c\ncfn=(2) g\ncalls=2 32 6\n18 2 9\n"
                       "fn=(2)\n32 7 4\n"
                       "totals: 30 1\n"
                       "part: 2\nthread: 2\nevents: A\n"
                       "fn=(1)\n1 1\n";
    struct cg_model *m = cgt_parse_ok(in);
    char *out;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), 0);
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(len, strlen(want));
    free(out);
    cgt_round_trip(m);
    cg_model_free(m);
}
END_TEST

START_TEST(utf8_names_and_errors)
{
    cgt_expect_records("events: A\nfn=caf\xc3\xa9 \xf0\x9f\x98\x80\n1 1\n",
                       "cost - - caf\xc3\xa9 \xf0\x9f\x98\x80 | 1 | 1\n");
    ERR("events: A\nfn=\xc3\n", CG_SYNTAX, 2, "UTF-8");             /* truncated mid-line */
    ERR("events: A\nfn=a\xc3", CG_SYNTAX, 2, "truncated");          /* truncated at the end */
    ERR("events: A\n\nfn=\xc0\xaf\n", CG_SYNTAX, 3, "UTF-8");       /* overlong */
    ERR("events: A\nfn=\xed\xa0\x80\n", CG_SYNTAX, 2, "UTF-8");     /* surrogate */
    ERR("events: A\nfn=\xf4\x90\x80\x80\n", CG_SYNTAX, 2, "UTF-8"); /* above U+10FFFF */
    ERR("events: A\n# \xff\n", CG_SYNTAX, 2, "UTF-8");              /* even in a comment */
    cgt_parse_err("events: A\nfn=a\0b\n1 1\n", 17, CG_SYNTAX, 2, "NUL");
}
END_TEST

/* The incremental decoder gives the same verdict however the input is cut. */
START_TEST(utf8_across_chunks)
{
    const char *s = "a\xc3\xa9\n\xf0\x9f\x98\x80z";
    size_t n = strlen(s);
    for (size_t cut = 0; cut <= n; cut++) {
        struct cg_utf8 u;
        struct cg_error err;
        cg_utf8_init(&u);
        ck_assert_int_eq(cg_utf8_feed(&u, s, cut, &err), 0);
        ck_assert_int_eq(cg_utf8_feed(&u, s + cut, n - cut, &err), 0);
        ck_assert_int_eq(cg_utf8_finish(&u, &err), 0);
        ck_assert_uint_eq(u.units, 6); /* a é \n 😀(2) z */
    }
    struct cg_utf8 u;
    struct cg_error err;
    cg_utf8_init(&u);
    ck_assert_int_eq(cg_utf8_feed(&u, "ok\n\xe2\x82", 5, &err), 0);
    ck_assert_int_eq(cg_utf8_finish(&u, &err), -1);
    ck_assert_int_eq(err.kind, CG_SYNTAX);
    ck_assert_uint_eq(err.line, 2);
}
END_TEST

START_TEST(unreferenced_declarations_dropped)
{
    struct cg_model *m = cgt_parse_ok(
        "events: A\nfn=(1) never_costed\nfl=(4) unused.c\nfl=(2) a.c\nfn=(2) f\n1 1\n");
    char *out;
    size_t len;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), 0);
    ck_assert_ptr_null(strstr(out, "never_costed"));
    ck_assert_ptr_null(strstr(out, "unused.c"));
    ck_assert_ptr_nonnull(strstr(out, "fl=(1) a.c\nfn=(1) f\n1 1\n"));
    free(out);
    cg_model_free(m);
}
END_TEST

/* A model filled through the builder prints and reads back the same. */
START_TEST(builder_round_trip)
{
    struct cg_error err;
    struct cg_model *m = cg_model_new();
    uint32_t fn, g, fl;
    ck_assert_int_eq(cg_model_begin_part(m, &err), 0);
    ck_assert_int_eq(cg_model_add_header(m, CG_H_EVENTS, "samples", 7, &err), 0);
    ck_assert_int_eq(cg_model_name(m, CG_NS_FUNCTION, "main", 4, &fn, &err), 0);
    ck_assert_int_eq(cg_model_name(m, CG_NS_FUNCTION, "(1) odd name", 12, &g, &err), 0);
    ck_assert_int_eq(cg_model_name(m, CG_NS_FILE, "app.jett", 8, &fl, &err), 0);
    const uint32_t ctx[CG_CTX_COUNT] = {CG_NONE, fl, fn, fl}, callee[3] = {CG_NONE, fl, g};
    const uint64_t pos[1] = {3}, target[1] = {9}, costs[1] = {5};
    ck_assert_int_eq(cg_model_add_cost(m, ctx, pos, costs, 1, &err), 0);
    ck_assert_int_eq(cg_model_add_call(m, ctx, callee, 2, target, pos, costs, 1, &err), 0);
    ck_assert_int_eq(cg_model_end_part(m, &err), 0);
    char *r = cgt_render(m);
    ck_assert_str_eq(r, "cost - app.jett main | 3 | 5\n"
                        "call - app.jett main -> - app.jett (1) odd name x2 @9 | 3 | 5\n");
    free(r);
    cgt_round_trip(m);
    /* a corrupted supplied model is a Syntax error, never a crash */
    m->calls[0].cfn = 99;
    char *out;
    size_t len;
    ck_assert_int_eq(cg_normalize(m, &out, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_SYNTAX);
    ck_assert_uint_eq(err.line, 0);
    cg_model_free(m);
}
END_TEST

/* Header values (a later part's summary) appended after the records can
 * take the value count past the point where the short append path stops
 * checking room: it must still see the count (found by fuzzing; an overflow
 * of the value array under ASan). */
START_TEST(header_values_after_records)
{
    char text[1024] = "events: A\nfn=f\n1 1\nevents:", costs[256] = "";
    for (int j = 0; j < 20; j++) {
        char e[16];
        snprintf(e, sizeof e, " E%d", j);
        strcat(text, e);
        strcat(costs, j ? " 7" : "7");
    }
    strcat(text, "\nsummary: ");
    strcat(text, costs);
    strcat(text, "\nfn=f\n2 ");
    strcat(text, costs);
    strcat(text, "\n");
    struct cg_model *m = cgt_parse_ok(text);
    ck_assert_uint_eq(m->nrecords, 2);
    const uint64_t *v = cg_record_values(m, &m->records[1]);
    ck_assert_uint_eq(v[0], 2);
    for (int j = 0; j < 20; j++)
        ck_assert_uint_eq(v[1 + j], 7);
    cgt_round_trip(m);
    cg_model_free(m);
}
END_TEST

/* cg_normalize_into reuses the caller's buffer, small or large, for the
 * same text as cg_normalize, and leaves it to the caller on failure. */
START_TEST(normalize_into_reuses_buffer)
{
    struct cg_model *m = cgt_parse_ok("events: A\nfn=f\n1 2\ncfn=g\ncalls=1 3\n1 4\n");
    char *want, *buf;
    size_t want_len, len, cap;
    struct cg_error err;
    ck_assert_int_eq(cg_normalize(m, &want, &want_len, &err), 0);
    for (size_t size = 1; size <= 4096; size *= 64) {
        cap = size, buf = malloc(cap);
        ck_assert_int_eq(cg_normalize_into(m, &buf, &cap, &len, &err), 0);
        ck_assert_uint_eq(len, want_len);
        ck_assert_uint_gt(cap, len);
        ck_assert_str_eq(buf, want);
        free(buf);
    }
    buf = NULL, cap = 0;
    ck_assert_int_eq(cg_normalize_into(m, &buf, &cap, &len, &err), 0);
    ck_assert_str_eq(buf, want);
    m->records[0].fn = 99; /* corrupted: refused, the buffer is still ours */
    ck_assert_int_eq(cg_normalize_into(m, &buf, &cap, &len, &err), -1);
    ck_assert_int_eq(err.kind, CG_SYNTAX);
    free(buf);
    free(want);
    cg_model_free(m);
}
END_TEST

Suite *callgrind_suite(void)
{
    Suite *s = suite_create("callgrind");
    TCase *t = tcase_create("accepted");
    tcase_add_test(t, version_omitted_or_1);
    tcase_add_test(t, default_position_is_line);
    tcase_add_test(t, position_subsets_in_order);
    tcase_add_test(t, events_unique_and_ordered);
    tcase_add_test(t, position_specs_and_calls);
    tcase_add_test(t, function_file_is_the_file_at_fn);
    tcase_add_test(t, separate_id_namespaces);
    tcase_add_test(t, fn_and_cfn_share_ids);
    tcase_add_test(t, file_aliases_share_ids);
    tcase_add_test(t, dictionaries_survive_parts_and_are_replaced);
    tcase_add_test(t, decimal_and_hex_numbers);
    tcase_add_test(t, relative_positions);
    tcase_add_test(t, bases_reset_per_part);
    tcase_add_test(t, call_positions_use_bases_without_moving_them);
    tcase_add_test(t, negative_and_overflowing_positions);
    tcase_add_test(t, omitted_and_extra_costs);
    tcase_add_test(t, call_count_is_separate);
    tcase_add_test(t, comments_and_blank_lines);
    tcase_add_test(t, headers_ordered_and_typed);
    tcase_add_test(t, header_after_body_starts_a_part);
    tcase_add_test(t, repeated_part_preserves_empty_parts);
    tcase_add_test(t, each_part_needs_events);
    tcase_add_test(t, summary_and_totals_retained);
    suite_add_tcase(s, t);
    t = tcase_create("boundaries");
    tcase_add_test(t, unsupported_constructs);
    tcase_add_test(t, selected_events_must_be_recorded);
    tcase_add_test(t, fn_before_costs_and_cfn_before_calls);
    tcase_add_test(t, callee_reused_until_fn_or_part);
    tcase_add_test(t, overrides_resolved_at_cfn);
    tcase_add_test(t, overrides_survive_self_costs_cleared_after_call);
    tcase_add_test(t, callee_resolved_before_context_is_set);
    tcase_add_test(t, pending_call_needs_its_cost_line);
    tcase_add_test(t, outer_whitespace_trimmed);
    tcase_add_test(t, cr_only_line_ends_rejected);
    tcase_add_test(t, utf8_names_and_errors);
    tcase_add_test(t, utf8_across_chunks);
    suite_add_tcase(s, t);
    t = tcase_create("normalize");
    tcase_add_test(t, normalized_text);
    tcase_add_test(t, unreferenced_declarations_dropped);
    tcase_add_test(t, builder_round_trip);
    tcase_add_test(t, normalize_into_reuses_buffer);
    tcase_add_test(t, header_values_after_records);
    suite_add_tcase(s, t);
    return s;
}
