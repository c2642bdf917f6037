#include "target_env.h"

#include <stdio.h>
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

int asys_env_append(struct asys_env *env, const char *name, const char *value, char separator,
                    struct asys_err *err)
{
    const char *old = asys_env_get(env, name);
    if (!old || !*old)
        return asys_env_set(env, name, value, err);
    char joined[4096];
    int n = snprintf(joined, sizeof joined, "%s%c%s", old, separator, value);
    if (n < 0 || (size_t)n >= sizeof joined)
        return asys_fail(err, "%s for the program is too long", name);
    return asys_env_set(env, name, joined, err);
}

const char *asys_env_get(const struct asys_env *env, const char *name)
{
    for (int i = 0; i < env->count; i++)
        if (!strcmp(env->vars[i].name, name))
            return env->vars[i].value;
    return NULL;
}
