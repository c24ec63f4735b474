/*
 * loader: finds the project root, indexes the namespaces declared by the
 * project's files and by deps/NAME/, reads and parses the program file and
 * everything it imports (project, then dependencies, then the standard
 * library), and hands the parsed program to the checker.  Every path it
 * reports is logical; files outside the authorized roots are rejected.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/diag.h"
#include "agent/interp-internal.h"
#include "agent/loader.h"

#ifndef JETT_STDLIB_BUILD_DIR
#define JETT_STDLIB_BUILD_DIR ""
#endif
#ifndef JETT_STDLIB_INSTALL_DIR
#define JETT_STDLIB_INSTALL_DIR ""
#endif

/* A candidate source file found by scanning the project or deps/. */
struct ld_file {
    char *ns;      /* declared namespace, "" if none */
    char *logical; /* "src/a.jett" or "NAME/x.jett" */
    char *abs;     /* real path (never shown) */
    enum interp_origin origin;
};

struct loader {
    struct interp_program *p;
    struct interp_diags *d;
    char *root;   /* real path of the project root */
    char *stdlib; /* real path of the stdlib folder, or NULL */
    struct ld_file *files;
    size_t n_files, cap_files;
    struct ast_file *asts; /* one per source */
    uint32_t cap_sources;
};

/* Whether real path `path` lies inside folder `dir` (both real paths). */
static bool ld_inside(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    return strncmp(dir, path, n) == 0 && (path[n] == '/' || (n > 0 && dir[n - 1] == '/'));
}

/* Reads a whole file (at most INTERP_MAX_SOURCE + 1 bytes). */
static char *ld_read(const char *abs, size_t *len)
{
    int fd = open(abs, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL)
            break;
        if (n == cap) {
            if (cap > INTERP_MAX_SOURCE)
                break;
            cap *= 2;
            char *g = realloc(buf, cap + 1);
            if (g == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static void ld_add_file(struct loader *L, const char *ns, const char *logical, const char *abs,
                        enum interp_origin origin)
{
    if (L->n_files == L->cap_files) {
        L->cap_files = L->cap_files ? L->cap_files * 2 : 32;
        L->files = realloc(L->files, sizeof *L->files * L->cap_files);
        if (L->files == NULL)
            abort();
    }
    L->files[L->n_files++] = (struct ld_file){strdup(ns), strdup(logical), strdup(abs), origin};
}

/* Indexes one .jett file: its real path must stay inside `authorized`. */
static void ld_index_file(struct loader *L, const char *path, const char *logical,
                          const char *authorized, enum interp_origin origin)
{
    char real[PATH_MAX];
    if (realpath(path, real) == NULL)
        return;
    if (!ld_inside(authorized, real)) {
        diag_add_path(L->d, logical, 1, 1, "file outside the %s is rejected",
                      origin == INTERP_ORIGIN_PROJECT ? "project root" : "dependency folder");
        return;
    }
    size_t len;
    char *text = ld_read(real, &len);
    char ns[512] = "";
    if (text != NULL)
        loader_peek_namespace(text, len, ns, sizeof ns);
    free(text);
    ld_add_file(L, ns, logical, real, origin);
}

/* Walks a folder for .jett files; skips hidden entries and, at the
 * project root, the deps/ folder (indexed separately). */
static void ld_scan(struct loader *L, const char *dir, const char *prefix, const char *authorized,
                    enum interp_origin origin, int depth)
{
    DIR *d = opendir(dir);
    if (d == NULL || depth > 32) {
        if (d)
            closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' ||
            (depth == 0 && origin == INTERP_ORIGIN_PROJECT && strcmp(e->d_name, "deps") == 0))
            continue;
        char path[PATH_MAX], logical[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            snprintf(logical, sizeof logical, "%s%s", prefix, e->d_name) >= (int)sizeof logical)
            continue;
        struct stat st;
        if (stat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            strncat(logical, "/", sizeof logical - strlen(logical) - 1);
            ld_scan(L, path, logical, authorized, origin, depth + 1);
        } else if (S_ISREG(st.st_mode) && strlen(e->d_name) > 5 &&
                   strcmp(e->d_name + strlen(e->d_name) - 5, ".jett") == 0) {
            ld_index_file(L, path, logical, authorized, origin);
        }
    }
    closedir(d);
}

/* Indexes deps/NAME/ folders: logical paths start with NAME/. */
static void ld_scan_deps(struct loader *L)
{
    char deps[PATH_MAX];
    snprintf(deps, sizeof deps, "%s/deps", L->root);
    DIR *d = opendir(deps);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX], real[PATH_MAX], prefix[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", deps, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) || realpath(path, real) == NULL)
            continue;
        snprintf(prefix, sizeof prefix, "%s/", e->d_name);
        ld_scan(L, real, prefix, real, INTERP_ORIGIN_DEPENDENCY, 1);
    }
    closedir(d);
}

/* Creates source `id` from a file, validating size and encoding. */
static struct interp_source *ld_make_source(struct loader *L, const char *abs, const char *logical,
                                            enum interp_origin origin)
{
    size_t len;
    char *text = ld_read(abs, &len);
    if (text == NULL) {
        diag_add_path(L->d, logical, 1, 1, "cannot read source file: %s", strerror(errno));
        return NULL;
    }
    if (len > INTERP_MAX_SOURCE) {
        diag_add_path(L->d, logical, 1, 1, "source file is larger than 2 MiB");
        free(text);
        return NULL;
    }
    struct interp_source *src = calloc(1, sizeof *src);
    src->origin = origin;
    src->path = strdup(logical);
    src->text = text;
    src->len = (uint32_t)len;
    if (source_index_lines(src) < 0)
        abort();
    long bad = loader_utf8_invalid(text, len);
    if (bad >= 0) {
        diag_add(L->d, src, (uint32_t)bad, "source file is not valid UTF-8");
        source_free(src);
        return NULL;
    }
    return src;
}

/* Appends and parses a source; returns its index or -1. */
static int ld_load(struct loader *L, const char *abs, const char *logical,
                   enum interp_origin origin)
{
    struct interp_program *p = L->p;
    struct interp_source *src = ld_make_source(L, abs, logical, origin);
    if (src == NULL)
        return -1;
    if (p->n_sources == L->cap_sources) {
        L->cap_sources = L->cap_sources ? L->cap_sources * 2 : 16;
        p->sources = realloc(p->sources, sizeof *p->sources * L->cap_sources);
        L->asts = realloc(L->asts, sizeof *L->asts * L->cap_sources);
        p->nss = realloc(p->nss, sizeof *p->nss * L->cap_sources);
        if (p->sources == NULL || L->asts == NULL || p->nss == NULL)
            abort();
    }
    uint32_t id = p->n_sources++;
    src->id = id;
    p->sources[id] = src;
    parse_source(src, &p->arena, &p->consts, L->d, &L->asts[id]);
    memset(&p->nss[id], 0, sizeof p->nss[id]);
    p->nss[id].name = L->asts[id].ns ? L->asts[id].ns : "";
    p->nss[id].source_id = id;
    p->n_ns = p->n_sources;
    return (int)id;
}

/* The already loaded source declaring `ns`, or -1. */
static int ld_loaded(struct loader *L, const char *ns)
{
    for (uint32_t i = 0; i < L->p->n_sources; i++)
        if (L->asts[i].ns && strcmp(L->asts[i].ns, ns) == 0)
            return (int)i;
    return -1;
}

/* Finds `ns` among indexed files of one origin; reports duplicates. */
static struct ld_file *ld_find_indexed(struct loader *L, const char *ns, enum interp_origin origin,
                                       const struct interp_source *at_src, uint32_t at)
{
    struct ld_file *found = NULL;
    for (size_t i = 0; i < L->n_files; i++) {
        struct ld_file *f = &L->files[i];
        if (f->origin != origin || strcmp(f->ns, ns) != 0)
            continue;
        if (found != NULL) {
            diag_add(L->d, at_src, at, "namespace %s is declared by two files: %s and %s", ns,
                     found->logical, f->logical);
            return NULL;
        }
        found = f;
    }
    return found;
}

/* Loads the stdlib file of a std.* namespace, or returns -1 if absent. */
static int ld_load_stdlib(struct loader *L, const char *ns)
{
    if (L->stdlib == NULL || strncmp(ns, "std.", 4) != 0)
        return -1;
    char rel[PATH_MAX], path[PATH_MAX], real[PATH_MAX], logical[PATH_MAX];
    snprintf(rel, sizeof rel, "%s", ns + 4);
    for (char *c = rel; *c; c++)
        if (*c == '.')
            *c = '/';
    if (snprintf(path, sizeof path, "%s/std/%s.jett", L->stdlib, rel) >= (int)sizeof path ||
        realpath(path, real) == NULL || !ld_inside(L->stdlib, real) ||
        snprintf(logical, sizeof logical, "stdlib/%s.jett", rel) >= (int)sizeof logical)
        return -1;
    return ld_load(L, real, logical, INTERP_ORIGIN_STDLIB);
}

/* Resolves one import to a source index (loading it), or -1 after a diagnostic. */
static int ld_resolve(struct loader *L, uint32_t from, const struct ast_import *imp)
{
    const struct interp_source *src = L->p->sources[from];
    int id = ld_loaded(L, imp->name);
    if (id >= 0)
        return id;
    static const enum interp_origin order[] = {INTERP_ORIGIN_PROJECT, INTERP_ORIGIN_DEPENDENCY};
    for (int k = 0; k < 2; k++) {
        size_t before = L->d->len;
        struct ld_file *f = ld_find_indexed(L, imp->name, order[k], src, imp->start);
        if (f != NULL)
            return ld_load(L, f->abs, f->logical, f->origin);
        if (L->d->len != before)
            return -1;
    }
    id = ld_load_stdlib(L, imp->name);
    if (id < 0)
        diag_add(L->d, src, imp->start, "unknown import '%s'", imp->name);
    else if (L->asts[id].ns == NULL || strcmp(L->asts[id].ns, imp->name) != 0)
        diag_add(L->d, L->p->sources[id], 0, "this file must declare namespace %s", imp->name);
    return id;
}

/* Loads every import transitively; fills each namespace's import list. */
static void ld_load_imports(struct loader *L)
{
    struct interp_program *p = L->p;
    for (uint32_t i = 0; i < p->n_sources; i++) {
        const struct ast_file *f = &L->asts[i];
        uint32_t *imports = arena_alloc(&p->arena, sizeof *imports * (f->n_imports + 1));
        uint32_t n = 0;
        for (uint32_t k = 0; k < f->n_imports; k++) {
            int id = ld_resolve(L, i, &f->imports[k]);
            if (id >= 0)
                imports[n++] = (uint32_t)id;
        }
        p->nss[i].imports = imports;
        p->nss[i].n_imports = n;
    }
}

/* Depth-first post-order over imports: dependencies initialize first.
 * state: 0 new, 1 on the path, 2 done.  Reports a cycle once. */
static void ld_order(struct loader *L, uint32_t n, uint8_t *state, uint32_t *path, uint32_t len)
{
    struct interp_program *p = L->p;
    state[n] = 1;
    path[len] = n;
    for (uint32_t k = 0; k < p->nss[n].n_imports; k++) {
        uint32_t m = p->nss[n].imports[k];
        if (state[m] == 1) {
            char chain[2048] = "";
            size_t used = 0;
            uint32_t from = 0;
            while (path[from] != m)
                from++;
            for (uint32_t j = from; j <= len; j++)
                used +=
                    (size_t)snprintf(chain + used, used < sizeof chain ? sizeof chain - used : 0,
                                     "%s -> ", p->nss[path[j]].name);
            if (used < sizeof chain)
                snprintf(chain + used, sizeof chain - used, "%s", p->nss[m].name);
            const struct ast_import *imp = &L->asts[n].imports[k];
            diag_add(L->d, p->sources[n], imp->start, "import cycle: %s", chain);
        } else if (state[m] == 0) {
            ld_order(L, m, state, path, len + 1);
        }
    }
    state[n] = 2;
    p->init_order[p->n_init++] = n;
}

/* One <init> function per namespace: a block of its global lets. */
static void ld_build_inits(struct loader *L)
{
    struct interp_program *p = L->p;
    for (uint32_t i = 0; i < p->n_sources; i++) {
        struct interp_ns *ns = &p->nss[i];
        struct ast *body = arena_alloc(&p->arena, sizeof *body);
        body->kind = S_BLOCK;
        body->start = L->asts[i].ns_start;
        body->end = body->start + (uint32_t)strlen(ns->name);
        body->u.list.items = L->asts[i].globals;
        body->u.list.n = L->asts[i].n_globals;
        ns->init_fn = p->n_fns;
        p->fns[p->n_fns] = (struct interp_fn){.decl = NULL, .ns = i, .body = body};
        p->infos[p->n_fns] =
            (struct interp_func_info){p->n_fns, ns->name, "<init>", i, {body->start, body->end}};
        p->n_fns++;
    }
}

/* Namespaces (one per source), functions, <init> functions, globals. */
static void ld_build(struct loader *L)
{
    struct interp_program *p = L->p;
    uint32_t n_fns = 0, n_globals = 0;
    for (uint32_t i = 0; i < p->n_sources; i++) {
        n_fns += L->asts[i].n_fns + 1;
        n_globals += L->asts[i].n_globals;
    }
    p->fns = calloc(n_fns + 1, sizeof *p->fns);
    p->infos = calloc(n_fns + 1, sizeof *p->infos);
    p->globals = calloc(n_globals + 1, sizeof *p->globals);
    if (p->fns == NULL || p->infos == NULL || p->globals == NULL)
        abort();
    for (uint32_t i = 0; i < p->n_sources; i++) {
        struct interp_ns *ns = &p->nss[i];
        struct ast_file *f = &L->asts[i];
        ns->file = arena_alloc(&p->arena, sizeof *ns->file);
        *ns->file = *f;
        ns->first_fn = p->n_fns;
        ns->n_fns = f->n_fns;
        for (uint32_t k = 0; k < f->n_fns; k++, p->n_fns++) {
            struct ast_fn *d = f->fns[k];
            p->fns[p->n_fns] = (struct interp_fn){.decl = d,
                                                  .ns = i,
                                                  .n_params = d->n_params,
                                                  .n_slots = d->n_params,
                                                  .body = d->body};
            p->infos[p->n_fns] =
                (struct interp_func_info){p->n_fns, ns->name, d->name, i, {d->start, d->sig_end}};
        }
        ns->first_global = p->n_globals;
        ns->n_globals = f->n_globals;
        for (uint32_t k = 0; k < f->n_globals; k++, p->n_globals++) {
            struct ast *g = f->globals[k];
            g->u.let.slot = p->n_globals;
            p->globals[p->n_globals] = (struct interp_global){g->u.let.name, i, g, false, false};
        }
    }
    ld_build_inits(L);
}

/* The nearest ancestor of dir holding jett.toml, else dir itself. */
static char *ld_find_root(const char *dir)
{
    char cur[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", dir);
    for (;;) {
        char probe[PATH_MAX + 16];
        snprintf(probe, sizeof probe, "%s/jett.toml", cur);
        if (access(probe, F_OK) == 0)
            return strdup(cur);
        char *slash = strrchr(cur, '/');
        if (slash == NULL || slash == cur)
            break;
        *slash = '\0';
    }
    return strdup(dir);
}

/* The stdlib folder: the option, else the build tree's, else the installed one. */
static char *ld_find_stdlib(const struct interp_load_options *opts)
{
    const char *candidates[] = {opts ? opts->stdlib_dir : NULL, JETT_STDLIB_BUILD_DIR,
                                JETT_STDLIB_INSTALL_DIR};
    for (int i = 0; i < 3; i++) {
        char real[PATH_MAX];
        if (candidates[i] && candidates[i][0] && realpath(candidates[i], real) != NULL)
            return strdup(real);
    }
    return NULL;
}

/* The program file's own namespace must not be declared by another file. */
static void ld_check_main_ns(struct loader *L, const char *abs)
{
    const struct ast_file *f = &L->asts[0];
    if (f->ns == NULL)
        return;
    for (size_t i = 0; i < L->n_files; i++)
        if (L->files[i].origin == INTERP_ORIGIN_PROJECT && strcmp(L->files[i].ns, f->ns) == 0 &&
            strcmp(L->files[i].abs, abs) != 0)
            diag_add(L->d, L->p->sources[0], f->ns_start,
                     "namespace %s is declared by two files: %s and %s", f->ns,
                     L->p->sources[0]->path, L->files[i].logical);
}

/* Reads the program file and everything it imports. */
static void ld_run(struct loader *L, const char *program_path)
{
    char abs[PATH_MAX];
    if (realpath(program_path, abs) == NULL) {
        const char *shown = program_path[0] == '/' ? strrchr(program_path, '/') + 1 : program_path;
        diag_add_path(L->d, shown, 1, 1, "cannot open program file: %s", strerror(errno));
        return;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", abs);
    L->root = ld_find_root(dirname(dir));
    ld_scan(L, L->root, "", L->root, INTERP_ORIGIN_PROJECT, 0);
    ld_scan_deps(L);
    if (ld_load(L, abs, abs + strlen(L->root) + 1, INTERP_ORIGIN_PROJECT) < 0)
        return;
    ld_check_main_ns(L, abs);
    ld_load_imports(L);
    if (L->d->len > 0)
        return;
    struct interp_program *p = L->p;
    uint8_t *state = calloc(p->n_ns, 1);
    uint32_t *path = calloc(p->n_ns, sizeof *path);
    p->init_order = calloc(p->n_ns, sizeof *p->init_order);
    ld_order(L, 0, state, path, 0);
    free(state);
    free(path);
    ld_build(L);
    p->main_ns = 0;
}

struct interp_program *interp_load(const char *program_path, const struct interp_load_options *opts,
                                   struct interp_diags *diags)
{
    memset(diags, 0, sizeof *diags);
    struct interp_program *p = calloc(1, sizeof *p);
    struct loader L = {.p = p, .d = diags, .stdlib = ld_find_stdlib(opts)};
    ld_run(&L, program_path);
    if (diags->len == 0 && p->fns != NULL)
        check_program(p, diags);
    for (size_t i = 0; i < L.n_files; i++) {
        free(L.files[i].ns);
        free(L.files[i].logical);
        free(L.files[i].abs);
    }
    free(L.files);
    free(L.root);
    free(L.stdlib);
    if (diags->len > 0 || p->fns == NULL) {
        free(L.asts);
        interp_program_free(p);
        return NULL;
    }
    free(L.asts);
    return p;
}

void interp_program_free(struct interp_program *p)
{
    if (p == NULL)
        return;
    for (uint32_t i = 0; i < p->n_sources; i++)
        source_free(p->sources[i]);
    free(p->sources);
    free(p->nss);
    free(p->fns);
    free(p->infos);
    free(p->globals);
    free(p->init_order);
    parse_consts_free(&p->consts);
    arena_free(&p->arena);
    free(p);
}

uint32_t interp_source_count(const struct interp_program *p)
{
    return p->n_sources;
}

const struct interp_source *interp_source_get(const struct interp_program *p, uint32_t id)
{
    return id < p->n_sources ? p->sources[id] : NULL;
}

uint32_t interp_func_count(const struct interp_program *p)
{
    return p->n_fns;
}

const struct interp_func_info *interp_func_get(const struct interp_program *p, uint32_t id)
{
    return id < p->n_fns ? &p->infos[id] : NULL;
}
