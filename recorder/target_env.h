/* The program's environment as the launcher builds it: the variables that
 * carry the session and every collector option into the injected library. */
#ifndef ASYS_TARGET_ENV_H
#define ASYS_TARGET_ENV_H

#include <stddef.h>

#include "asys_error.h"

#define ASYS_ENV_MAX 64

struct asys_env_var {
    const char *name;
    const char *value;
};

struct asys_env {
    struct asys_env_var vars[ASYS_ENV_MAX];
    int count;
    char text[16384]; /* the copies vars point into */
    size_t used;
};

/* Sets (or replaces) `name`; -1 with err when the table is full. */
int asys_env_set(struct asys_env *env, const char *name, const char *value, struct asys_err *err);
/* Appends `value` to `name`'s value, after `separator` when it has one. */
int asys_env_append(struct asys_env *env, const char *name, const char *value, char separator,
                    struct asys_err *err);
/* The value set for `name`, or NULL. */
const char *asys_env_get(const struct asys_env *env, const char *name);

#endif
