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
#include "proto/util/selfexe.h"

#ifndef JETT_BUILD_ROOT
#define JETT_BUILD_ROOT ""
#endif
#ifndef JETT_STDLIB_BUILD_DIR
#define JETT_STDLIB_BUILD_DIR ""
#endif
#ifndef JETT_STDLIB_FROM_BINDIR
#define JETT_STDLIB_FROM_BINDIR ""
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

/* One folder by device and inode: each is scanned once. */
struct ld_dir_id {
    dev_t dev;
    ino_t ino;
};

/* A symbolic link to a folder, followed after the real folders. */
struct ld_link {
    char *path;    /* the link */
    char *logical; /* "src/a" */
    char *parent;  /* real path of the folder holding it */
    int depth;
};

/* One tree being scanned: the project, or one dependency. */
struct ld_tree {
    const char *authorized; /* real path every file must stay inside */
    const char *prefix;     /* logical path of its top: "" or "NAME/" */
    enum interp_origin origin;
    struct ld_dir_id *seen;
    size_t n_seen, cap_seen;
    struct ld_link *links;
    size_t n_links, cap_links;
};

/* Marks folder `st` seen; false when it already was. */
static bool ld_first_visit(struct ld_tree *t, const struct stat *st)
{
    for (size_t i = 0; i < t->n_seen; i++)
        if (t->seen[i].dev == st->st_dev && t->seen[i].ino == st->st_ino)
            return false;
    if (t->n_seen == t->cap_seen) {
        t->cap_seen = t->cap_seen ? t->cap_seen * 2 : 16;
        t->seen = realloc(t->seen, sizeof *t->seen * t->cap_seen);
        if (t->seen == NULL)
            abort();
    }
    t->seen[t->n_seen++] = (struct ld_dir_id){st->st_dev, st->st_ino};
    return true;
}

static void ld_defer_link(struct ld_tree *t, const char *path, const char *logical,
                          const char *parent, int depth)
{
    if (t->n_links == t->cap_links) {
        t->cap_links = t->cap_links ? t->cap_links * 2 : 8;
        t->links = realloc(t->links, sizeof *t->links * t->cap_links);
        if (t->links == NULL)
            abort();
    }
    t->links[t->n_links++] = (struct ld_link){strdup(path), strdup(logical), strdup(parent), depth};
}

static int ld_visible(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static bool ld_is_jett(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".jett") == 0;
}

/* Walks real folder `dir` for .jett files in name order; skips hidden
 * entries and, at the project root, the deps/ folder (indexed
 * separately).  Links to folders wait in t->links. */
static void ld_walk(struct loader *L, struct ld_tree *t, const char *dir, const char *prefix,
                    int depth)
{
    struct stat st;
    struct dirent **names;
    if (depth > 32 || stat(dir, &st) < 0 || !ld_first_visit(t, &st))
        return;
    int n = scandir(dir, &names, ld_visible, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[PATH_MAX], logical[PATH_MAX];
        bool skip =
            (depth == 0 && t->origin == INTERP_ORIGIN_PROJECT && strcmp(name, "deps") == 0) ||
            snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
            snprintf(logical, sizeof logical, "%s%s", prefix, name) >= (int)sizeof logical;
        struct stat lst;
        if (!skip && lstat(path, &lst) == 0 && stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode) && S_ISLNK(lst.st_mode)) {
                ld_defer_link(t, path, logical, dir, depth + 1);
            } else if (S_ISDIR(st.st_mode)) {
                strncat(logical, "/", sizeof logical - strlen(logical) - 1);
                ld_walk(L, t, path, logical, depth + 1);
            } else if (S_ISREG(st.st_mode) && ld_is_jett(name)) {
                ld_index_file(L, path, logical, t->authorized, t->origin);
            }
        }
        free(names[i]);
    }
    if (n >= 0)
        free(names);
}

/* Follows a link to a folder: never out of the tree, never back to a
 * folder that holds it (a loop), and not into a folder already scanned. */
static void ld_follow(struct loader *L, struct ld_tree *t, const struct ld_link *k)
{
    const char *what = t->origin == INTERP_ORIGIN_PROJECT ? "project root" : "dependency folder";
    char real[PATH_MAX];
    if (realpath(k->path, real) == NULL)
        return;
    if (strcmp(real, t->authorized) != 0 && !ld_inside(t->authorized, real)) {
        diag_add_path(L->d, k->logical, 1, 1, "folder outside the %s is rejected", what);
        return;
    }
    if (strcmp(real, k->parent) == 0 || ld_inside(real, k->parent)) {
        if (strcmp(real, t->authorized) == 0)
            diag_add_path(L->d, k->logical, 1, 1,
                          "symbolic link loop: the link leads back to the %s", what);
        else
            diag_add_path(L->d, k->logical, 1, 1,
                          "symbolic link loop: the link leads back to folder %s%s", t->prefix,
                          real + strlen(t->authorized) + 1);
        return;
    }
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/", k->logical);
    ld_walk(L, t, real, prefix, k->depth);
}

/* Scans a tree for .jett files: its real folders first, then the folders
 * its links lead to, each folder once. */
static void ld_scan(struct loader *L, const char *dir, const char *prefix, const char *authorized,
                    enum interp_origin origin, int depth)
{
    struct ld_tree t = {.authorized = authorized, .prefix = prefix, .origin = origin};
    ld_walk(L, &t, dir, prefix, depth);
    for (size_t i = 0; i < t.n_links; i++) { /* following may add links */
        struct ld_link k = t.links[i];
        ld_follow(L, &t, &k);
    }
    for (size_t i = 0; i < t.n_links; i++) {
        free(t.links[i].path);
        free(t.links[i].logical);
        free(t.links[i].parent);
    }
    free(t.links);
    free(t.seen);
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

/* The stdlib folder: the option; for an executable of the build tree, the
 * source tree's; else the one of the prefix the executable is installed in
 * (found from its own folder, so a moved install keeps working and never
 * reads a source tree); else the configured install folder. */
static char *ld_find_stdlib(const struct interp_load_options *opts)
{
    char exe_dir[PATH_MAX], root[PATH_MAX], beside[2 * PATH_MAX] = "";
    bool have_exe = self_exe_dir(exe_dir, sizeof exe_dir) == 0;
    bool in_build = have_exe && realpath(JETT_BUILD_ROOT, root) && ld_inside(root, exe_dir);
    if (have_exe && JETT_STDLIB_FROM_BINDIR[0])
        snprintf(beside, sizeof beside, "%s/%s", exe_dir, JETT_STDLIB_FROM_BINDIR);
    const char *candidates[] = {opts ? opts->stdlib_dir : NULL,
                                in_build ? JETT_STDLIB_BUILD_DIR : NULL, beside,
                                JETT_STDLIB_INSTALL_DIR};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
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
    free(p->call_sites);
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

uint32_t interp_call_site_count(const struct interp_program *p)
{
    return p->n_call_sites;
}

const struct interp_call_site *interp_call_site_get(const struct interp_program *p, uint32_t id)
{
    return id < p->n_call_sites ? &p->call_sites[id] : NULL;
}

uint32_t interp_func_count(const struct interp_program *p)
{
    return p->n_fns;
}

const struct interp_func_info *interp_func_get(const struct interp_program *p, uint32_t id)
{
    return id < p->n_fns ? &p->infos[id] : NULL;
}
