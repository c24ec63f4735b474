/*
 * diskpath: where a source's file lies on disk, for the exports whose
 * readers open it (Callgrind's fl=, pprof's Function.filename,
 * speedscope's frame file).
 *
 * A logical path (jett-capture(5)) names a source as the run manifest
 * does, not as the file lies: a project file is at its logical path below
 * the project's root, a dependency's NAME/... lies under deps/ there
 * (deps/NAME/...), and a standard library file stdlib/X.jett is
 * stdlib/std/X.jett below jett's data folder (PREFIX/share/jett, or
 * agent/ of the source tree for a jett run from its build).  So a reader
 * run from the project's root finds the project's and its dependencies'
 * files, and with the data folder as a search path the standard
 * library's.  The rule lives here once; every export that writes file
 * names for a reader takes it.
 */
#ifndef JETT_DAEMON_EXPORT_DISKPATH_H
#define JETT_DAEMON_EXPORT_DISKPATH_H

#include <stddef.h>
#include <stdint.h>

/* A file's path on disk: `prefix`, then the logical path without its
 * first `skip` bytes. */
struct diskpath {
    const char *prefix;
    size_t skip;
};

/* The disk path of a source of `origin` (enum wire_origin) at the
 * logical path path[0..len). */
struct diskpath diskpath_of(uint8_t origin, const char *path, size_t len);

#endif
