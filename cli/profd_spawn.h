/* profd_spawn: starting jett-profd on one end of a socketpair. */
#ifndef JETT_CLI_PROFD_SPAWN_H
#define JETT_CLI_PROFD_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* The daemon binary beside the running jett: in the same folder when
 * installed, in ../daemon/ in the build tree.  0 with a malloc'd path, or
 * -1 when there is none. */
int profd_find(char **path);

/* Starts `path --fd 3` with only the socket (as descriptor 3) and
 * /dev/null for its standard input and output; its standard error is
 * inherited.  0 with the launcher's end in *sock and the child in *pid, or
 * -1 with a message. */
int profd_spawn(const char *path, int *sock, pid_t *pid, char *err, size_t errlen);

#endif
