#include "target_env.h"

#include <string.h>

static const char *copy(struct asys_env *env, const char *text)
{
    size_t n = strlen(text) + 1;
    if (n > sizeof env->text - env->used)
        return NULL;
    char *p = env->text + env->used;
    memcpy(p, text, n);
    env->used += n;
    return p;
}

int asys_env_set(struct asys_env *env, const char *name, const char *value, struct asys_err *err)
{
    int slot = env->count;
    for (int i = 0; i < env->count; i++)
        if (!strcmp(env->vars[i].name, name))
            slot = i;
    if (slot == ASYS_ENV_MAX)
        return asys_fail(err, "too many environment variables for the program");
    const char *v = copy(env, value);
    const char *n = slot < env->count ? env->vars[slot].name : copy(env, name);
    if (!v || !n)
        return asys_fail(err, "environment for the program is too large");
    env->vars[slot].name = n;
    env->vars[slot].value = v;
    if (slot == env->count)
        env->count++;
    return 0;
}

const char *asys_env_get(const struct asys_env *env, const char *name)
{
    for (int i = 0; i < env->count; i++)
        if (!strcmp(env->vars[i].name, name))
            return env->vars[i].value;
    return NULL;
}
