/*
 * keeper_program: a program that keeps what one function allocated and
 * then runs two others that allocate only afterwards, for the tests of
 * what a retention budget leaves of each function (test_memory_e2e,
 * test_diff).  hold() (line 2) keeps 3000 strings "h" + str(i); later()
 * (line 9) and after() (line 16) each build and drop 300 short ones.
 */
#ifndef JETT_TESTS_KEEPER_PROGRAM_H
#define JETT_TESTS_KEEPER_PROGRAM_H

static const char keeper_program[] = "namespace mem\n"
                                     "fn hold() -> list {\n"
                                     "    let out = []\n"
                                     "    for i in 0..3000 {\n"
                                     "        push(out, \"h\" + str(i))\n"
                                     "    }\n"
                                     "    return out\n"
                                     "}\n"
                                     "fn later() -> int {\n"
                                     "    let n = 0\n"
                                     "    for i in 0..300 {\n"
                                     "        n += len(\"l\" + str(i))\n"
                                     "    }\n"
                                     "    return n\n"
                                     "}\n"
                                     "fn after() -> int {\n"
                                     "    let n = 0\n"
                                     "    for i in 0..300 {\n"
                                     "        n += len(\"a\" + str(i))\n"
                                     "    }\n"
                                     "    return n\n"
                                     "}\n"
                                     "fn main() {\n"
                                     "    let kept = hold()\n"
                                     "    print(later() + after() + len(kept))\n"
                                     "}\n";

#endif
