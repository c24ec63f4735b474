/* Loader tests: project root, origins and logical paths, programs given
 * by absolute path, files outside the roots, and every loader error. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/interp_harness.h"

static char *load_diags_at(const char *dir, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct harness_run r;
    harness_run_file(&r, path, 0);
    char *d = strdup(r.diags);
    harness_free(&r);
    return d;
}

START_TEST(origins_and_logical_paths)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "jett.toml", "name = \"demo\"\n");
    harness_write(dir, "src/app.jett",
                  "namespace demo.app\nimport demo.util\nimport acme.fmt\n"
                  "import std.math\nfn main() {\n  print(util.f(), fmt.g(), math.square(3))\n}\n");
    harness_write(dir, "lib/util.jett",
                  "namespace demo.util\nlet cache = {}\nfn f() {\n  return 1\n}\n");
    harness_write(dir, "deps/acme/fmt.jett", "namespace acme.fmt\nfn g() {\n  return 2\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/src/app.jett", dir);
    /* an absolute path, from another working directory */
    ck_assert_int_eq(chdir("/"), 0);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_msg(p != NULL, "%s", d.len ? d.items[0].message : "");
    ck_assert_uint_eq(interp_source_count(p), 4);
    const char *paths[] = {"src/app.jett", "lib/util.jett", "acme/fmt.jett", "stdlib/math.jett"};
    const enum interp_origin origins[] = {INTERP_ORIGIN_PROJECT, INTERP_ORIGIN_PROJECT,
                                          INTERP_ORIGIN_DEPENDENCY, INTERP_ORIGIN_STDLIB};
    for (uint32_t i = 0; i < 4; i++) {
        const struct interp_source *src = interp_source_get(p, i);
        ck_assert_uint_eq(src->id, i);
        ck_assert_str_eq(src->path, paths[i]);
        ck_assert_int_eq(src->origin, origins[i]);
        ck_assert_ptr_null(strstr(src->path, dir));
    }
    ck_assert_str_eq(interp_source_get(p, 1)->text,
                     "namespace demo.util\nlet cache = {}\nfn f() {\n  return 1\n}\n");
    ck_assert_uint_eq(interp_source_get(p, 1)->n_lines, 6);
    /* function identities: user functions, then one <init> per namespace */
    const struct interp_func_info *main_fn = interp_func_get(p, 0);
    ck_assert_str_eq(main_fn->ns, "demo.app");
    ck_assert_str_eq(main_fn->name, "main");
    ck_assert_uint_eq(main_fn->source_id, 0);
    ck_assert_uint_eq(main_fn->decl.start, 68);
    ck_assert_uint_eq(main_fn->decl.end, 77);
    const struct interp_func_info *f = interp_func_get(p, 1);
    ck_assert_str_eq(f->name, "f");
    ck_assert_uint_eq(f->source_id, 1);
    uint32_t inits = 0;
    for (uint32_t i = 0; i < interp_func_count(p); i++)
        inits += strcmp(interp_func_get(p, i)->name, "<init>") == 0;
    ck_assert_uint_eq(inits, 4);
    interp_program_free(p);
    interp_diags_free(&d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(root_without_toml)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "a/main.jett", "namespace m\nfn main() {\n  nope()\n}\n");
    char *d = load_diags_at(dir, "a/main.jett");
    ck_assert_str_eq(d, "main.jett:3:3: error: unknown name 'nope'\n");
    free(d);
    harness_write(dir, "jett.toml", "");
    d = load_diags_at(dir, "a/main.jett");
    ck_assert_str_eq(d, "a/main.jett:3:3: error: unknown name 'nope'\n");
    free(d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(outside_file_rejected)
{
    char *dir = tu_tmpdir();
    char *other = tu_tmpdir();
    harness_write(other, "evil.jett", "namespace evil\nfn x() {\n}\n");
    harness_write(dir, "jett.toml", "");
    harness_write(dir, "main.jett", "namespace m\nimport evil\nfn main() {\n}\n");
    char link[4096], target[4096];
    snprintf(link, sizeof link, "%s/evil.jett", dir);
    snprintf(target, sizeof target, "%s/evil.jett", other);
    ck_assert_int_eq(symlink(target, link), 0);
    char *d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d, "evil.jett:1:1: error: file outside the project root is rejected\n"
                        "main.jett:2:8: error: unknown import 'evil'\n");
    ck_assert_ptr_null(strstr(d, other));
    free(d);
    harness_rmtree(dir);
    harness_rmtree(other);
    free(dir);
    free(other);
}
END_TEST

static void link_at(const char *dir, const char *rel, const char *target)
{
    char link[4096];
    snprintf(link, sizeof link, "%s/%s", dir, rel);
    ck_assert_int_eq(symlink(target, link), 0);
}

/* A project importing one namespace, with src/ holding it. */
static char *linked_project(void)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "jett.toml", "");
    harness_write(dir, "main.jett", "namespace m\nimport m.util\nfn main() {\n  util.f()\n}\n");
    harness_write(dir, "src/lib/util.jett", "namespace m.util\nfn f() {\n}\n");
    return dir;
}

/* Links back to the root or to a folder above them are loops: each is
 * reported once, in name order, and the scan ends (it used to walk every
 * path through them: 2^33 folders for two links). */
START_TEST(symlink_loops_reported)
{
    char *dir = linked_project();
    link_at(dir, "a", ".");
    link_at(dir, "b", ".");
    link_at(dir, "src/lib/up", "..");
    char *d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d,
                     "a:1:1: error: symbolic link loop: the link leads back to the project root\n"
                     "b:1:1: error: symbolic link loop: the link leads back to the project root\n"
                     "src/lib/up:1:1: error: symbolic link loop: the link leads back to folder "
                     "src\n");
    free(d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

/* A link to a folder inside the project that is scanned anyway is not a
 * second copy of its files: the namespace is declared once, at its real
 * path.  A link to a folder scanned only through it (a hidden one) shows
 * its files under the link's name. */
START_TEST(symlink_aliases_scanned_once)
{
    char *dir = linked_project();
    link_at(dir, "again", "src");
    link_at(dir, "src/other", "lib");
    harness_write(dir, ".store/extra.jett", "namespace m.extra\nfn g() {\n}\n");
    link_at(dir, "shared", ".store");
    harness_write(dir, "main.jett",
                  "namespace m\nimport m.util\nimport m.extra\nfn main() {\n  util.f()\n"
                  "  extra.g()\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_diags d;
    struct interp_program *p = interp_load(path, NULL, &d);
    ck_assert_msg(p != NULL, "%s", d.len ? d.items[0].message : "");
    ck_assert_uint_eq(interp_source_count(p), 3);
    ck_assert_str_eq(interp_source_get(p, 1)->path, "src/lib/util.jett");
    ck_assert_str_eq(interp_source_get(p, 2)->path, "shared/extra.jett");
    interp_program_free(p);
    interp_diags_free(&d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

/* A link to a folder outside the root is not followed: an error naming
 * the link, never the folder it points to. */
START_TEST(symlink_out_of_root_rejected)
{
    char *dir = linked_project();
    char *other = tu_tmpdir();
    harness_write(other, "evil.jett", "namespace m.util\nfn f() {\n}\n");
    link_at(dir, "ext", other);
    char *d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d, "ext:1:1: error: folder outside the project root is rejected\n");
    ck_assert_ptr_null(strstr(d, other));
    free(d);
    harness_rmtree(dir);
    harness_rmtree(other);
    free(dir);
    free(other);
}
END_TEST

START_TEST(loader_errors)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "jett.toml", "");
    harness_write(dir, "main.jett", "namespace m\nimport nowhere\nimport dup\nfn main() {\n}\n");
    harness_write(dir, "x/dup1.jett", "namespace dup\n");
    harness_write(dir, "x/dup2.jett", "// a comment first\nnamespace dup\n");
    harness_write(dir, "c/one.jett", "namespace c.one\nimport c.two\n");
    harness_write(dir, "c/two.jett", "namespace c.two\nimport c.one\n");
    char *d = load_diags_at(dir, "main.jett");
    ck_assert_msg(strstr(d, "main.jett:2:8: error: unknown import 'nowhere'\n") != NULL, "%s", d);
    ck_assert_msg(
        strstr(d, "main.jett:3:8: error: namespace dup is declared by two files: x/dup") != NULL,
        "%s", d);
    free(d);
    /* a cycle is reported where it closes */
    harness_write(dir, "main.jett", "namespace m\nimport c.one\nfn main() {\n}\n");
    harness_write(dir, "x/dup2.jett", "namespace dup2\n");
    d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d, "c/two.jett:2:8: error: import cycle: c.one -> c.two -> c.one\n");
    free(d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(encoding_and_size)
{
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett", "namespace m\nfn \xff() {\n}\n");
    char *d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d, "main.jett:2:4: error: source file is not valid UTF-8\n");
    free(d);
    char *big = malloc((2u << 20) + 64);
    strcpy(big, "namespace m\n");
    size_t n = strlen(big);
    memset(big + n, ' ', (2u << 20));
    big[n + (2u << 20)] = '\0';
    harness_write(dir, "main.jett", big);
    free(big);
    d = load_diags_at(dir, "main.jett");
    ck_assert_str_eq(d, "main.jett:1:1: error: source file is larger than 2 MiB\n");
    free(d);
    d = load_diags_at(dir, "missing.jett");
    /* the reason, as the system gives it */
    ck_assert_str_eq(d, "missing.jett:1:1: error: cannot open program file: No such file or "
                        "directory\n");
    free(d);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(init_order_follows_imports)
{
    char *dir = tu_tmpdir();
    harness_write(
        dir, "main.jett",
        "namespace m\nimport a\nlet x = mark(\"m\")\nfn mark(s) {\n  print(s)\n  return 0\n}\n"
        "fn main() {\n  print(\"main\")\n}\n");
    harness_write(dir, "a.jett",
                  "namespace a\nimport b\nlet y = f()\nfn f() {\n  print(\"a\")\n  return 1\n}\n");
    harness_write(dir, "b.jett",
                  "namespace b\nlet z = g()\nfn g() {\n  print(\"b\")\n  return 2\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct harness_run r;
    harness_run_file(&r, path, 0);
    ck_assert_str_eq(r.out, "b\na\nm\nmain\n");
    harness_free(&r);
    harness_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(stdlib_dir_option)
{
    char *lib = tu_tmpdir();
    harness_write(lib, "std/extra.jett", "namespace std.extra\nfn hi() {\n  return \"hi\"\n}\n");
    harness_write(lib, "std/wrong.jett", "namespace std.other\n");
    char *dir = tu_tmpdir();
    harness_write(dir, "main.jett",
                  "namespace m\nimport std.extra\nfn main() {\n  print(extra.hi())\n}\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/main.jett", dir);
    struct interp_load_options opts = {lib};
    struct interp_diags d;
    struct interp_program *p = interp_load(path, &opts, &d);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(interp_source_get(p, 1)->path, "stdlib/extra.jett");
    ck_assert_int_eq(interp_source_get(p, 1)->origin, INTERP_ORIGIN_STDLIB);
    interp_program_free(p);
    harness_write(dir, "main.jett",
                  "namespace m\nimport std.wrong\nimport std.nope\nfn main() {\n}\n");
    p = interp_load(path, &opts, &d);
    ck_assert_ptr_null(p);
    ck_assert_uint_eq(d.len, 2);
    char line[512];
    interp_diag_format(&d.items[0], line, sizeof line);
    ck_assert_str_eq(line,
                     "stdlib/wrong.jett:1:1: error: this file must declare namespace std.wrong");
    interp_diag_format(&d.items[1], line, sizeof line);
    ck_assert_str_eq(line, "main.jett:3:8: error: unknown import 'std.nope'");
    interp_diags_free(&d);
    harness_rmtree(dir);
    harness_rmtree(lib);
    free(dir);
    free(lib);
}
END_TEST

Suite *loader_suite(void);
Suite *loader_suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("loader");
    tcase_add_test(tc, origins_and_logical_paths);
    tcase_add_test(tc, root_without_toml);
    tcase_add_test(tc, outside_file_rejected);
    tcase_add_test(tc, loader_errors);
    tcase_add_test(tc, symlink_loops_reported);
    tcase_add_test(tc, symlink_aliases_scanned_once);
    tcase_add_test(tc, symlink_out_of_root_rejected);
    tcase_add_test(tc, encoding_and_size);
    tcase_add_test(tc, init_order_follows_imports);
    tcase_add_test(tc, stdlib_dir_option);
    suite_add_tcase(s, tc);
    return s;
}
