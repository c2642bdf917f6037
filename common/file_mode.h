/* Files written through a temporary from mkstemp, which creates them 0600:
 * before the rename, give them the mode the umask allows, as a plain open would. */
#ifndef ASYS_FILE_MODE_H
#define ASYS_FILE_MODE_H

#include <sys/stat.h>

static inline void asys_give_default_mode(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    chmod(path, 0666 & ~mask);
}

#endif
