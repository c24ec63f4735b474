/* Tests of agent/stacktab: ids as an independent model gives them (dense,
 * in creation order) whichever way a node is found (a parent's recent
 * children or the index), and the node limit of a budget. */
#include <check.h>
#include <stdlib.h>

#include "agent/stacktab.h"

/* The model: every node created so far, searched one by one. */
struct model {
    uint32_t parent[4096], func[4096], start[4096], end[4096];
    uint32_t count;
};

static uint32_t model_intern(struct model *m, uint32_t parent, uint32_t func, struct wire_span s)
{
    for (uint32_t i = 0; i < m->count; i++)
        if (m->parent[i] == parent && m->func[i] == func && m->start[i] == s.start &&
            m->end[i] == s.end)
            return i;
    m->parent[m->count] = parent, m->func[m->count] = func;
    m->start[m->count] = s.start, m->end[m->count] = s.end;
    return m->count++;
}

/* Both sides intern one level; they must agree, and `created` must say
 * whether the model grew. */
static uint32_t both(struct stacktab *t, struct model *m, uint32_t parent, uint32_t func,
                     struct wire_span s)
{
    uint32_t before = m->count, want = model_intern(m, parent, func, s);
    bool created;
    uint32_t got = stacktab_intern(t, parent, func, s, &created);
    ck_assert_uint_eq(got, want);
    ck_assert(created == (m->count > before));
    ck_assert_uint_eq(stacktab_find(t, parent, func, s), want);
    return got;
}

/* Binary trees: each node entered from two call sites of one function,
 * the same walk round after round (children found through the parent). */
static void tree(struct stacktab *t, struct model *m, uint32_t parent, int depth)
{
    uint32_t a = both(t, m, parent, 1, (struct wire_span){10, 20});
    if (depth > 0)
        tree(t, m, a, depth - 1);
    uint32_t b = both(t, m, parent, 1, (struct wire_span){30, 40});
    if (depth > 0)
        tree(t, m, b, depth - 1);
}

START_TEST(recursion_revisited_gets_the_same_ids)
{
    struct stacktab t;
    stacktab_init(&t, 16u << 20);
    static struct model m;
    m.count = 0;
    uint32_t root = both(&t, &m, WIRE_NONE32, 0, WIRE_SPAN_NONE);
    for (int round = 0; round < 3; round++)
        tree(&t, &m, root, 9);
    /* 1 root and 2 + 4 + ... + 2^10 nodes below it */
    ck_assert_uint_eq(m.count, 1 + 2046);
    ck_assert_uint_eq(t.count, 1 + 2046);
    stacktab_destroy(&t);
}
END_TEST

/* One parent with many children, called in an order that defeats two
 * recent children (and children that differ in the site only). */
START_TEST(many_children_of_one_parent)
{
    struct stacktab t;
    stacktab_init(&t, 16u << 20);
    static struct model m;
    m.count = 0;
    uint32_t root = both(&t, &m, WIRE_NONE32, 0, WIRE_SPAN_NONE);
    for (uint32_t i = 0; i < 3000; i++) {
        uint32_t k = (i * 7) % 23;
        uint32_t kid = both(&t, &m, root, 2 + k % 5, (struct wire_span){k, k + 1});
        both(&t, &m, kid, 9, (struct wire_span){i % 3, 5});
    }
    /* 23 children of the root, each with its 3 children */
    ck_assert_uint_eq(m.count, 1 + 23 + 23 * 3);
    /* Roots are children too: another root and back. */
    both(&t, &m, WIRE_NONE32, 1, WIRE_SPAN_NONE);
    both(&t, &m, WIRE_NONE32, 2, WIRE_SPAN_NONE);
    ck_assert_uint_eq(both(&t, &m, WIRE_NONE32, 0, WIRE_SPAN_NONE), root);
    stacktab_destroy(&t);
}
END_TEST

/* 15,360 bytes are charged by an index of 512 slots (256 + 512 slots
 * while growing: 768 * 20 bytes) but not of 1,024 (1,536 * 20): the table
 * holds 256 nodes (at most half its slots), refuses the 257th, and still
 * finds the 256 it has. */
START_TEST(a_budget_holds_its_node_count)
{
    struct stacktab t;
    stacktab_init(&t, 15360);
    bool created;
    for (uint32_t i = 0; i < 256; i++) {
        ck_assert_uint_eq(
            stacktab_intern(&t, i ? i - 1 : WIRE_NONE32, i % 4, WIRE_SPAN_NONE, &created), i);
        ck_assert(created);
    }
    ck_assert_uint_eq(stacktab_intern(&t, 255, 0, WIRE_SPAN_NONE, &created), WIRE_NONE32);
    ck_assert(!created);
    ck_assert_uint_eq(stacktab_add(&t, 255, 0, WIRE_SPAN_NONE), WIRE_NONE32);
    ck_assert_uint_eq(stacktab_find(&t, 255, 0, WIRE_SPAN_NONE), WIRE_NONE32);
    for (uint32_t i = 0; i < 256; i++) {
        ck_assert_uint_eq(
            stacktab_intern(&t, i ? i - 1 : WIRE_NONE32, i % 4, WIRE_SPAN_NONE, &created), i);
        ck_assert(!created);
    }
    ck_assert_uint_eq(t.count, 256);
    stacktab_destroy(&t);
}
END_TEST

Suite *stacktab_suite(void)
{
    Suite *s = suite_create("stacktab");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, recursion_revisited_gets_the_same_ids);
    tcase_add_test(tc, many_children_of_one_parent);
    tcase_add_test(tc, a_budget_holds_its_node_count);
    suite_add_tcase(s, tc);
    return s;
}
