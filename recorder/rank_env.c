#include "rank_env.h"

#include <errno.h>
#include <stdlib.h>

struct rank_environment {
    const char *rank, *local_rank, *world_size, *source;
};

static const struct rank_environment environments[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE", "RANK/LOCAL_RANK/WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_*"},
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "PMI_RANK/PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS"},
};

struct lookup {
    const char *(*get)(void *ctx, const char *name);
    void *ctx;
};

/* `name`'s value as a number 0..1<<30; 0 unset (*out = -1), 1 read, -1 not a number. */
static int read_number(const struct lookup *env, const char *name, long *out)
{
    const char *text = env->get(env->ctx, name);
    *out = -1;
    if (!text)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > (1L << 30) || text[0] == '-' ||
        text[0] == '+' || text[0] == ' ')
        return -1;
    *out = v;
    return 1;
}

static const char *from_environ(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

int asys_rank_detect(struct asys_rank *out, struct asys_err *err)
{
    return asys_rank_detect_with(from_environ, NULL, out, err);
}

int asys_rank_detect_with(const char *(*lookup)(void *ctx, const char *name), void *ctx,
                          struct asys_rank *out, struct asys_err *err)
{
    const struct lookup env = {lookup, ctx};
    for (size_t i = 0; i < sizeof environments / sizeof environments[0]; i++) {
        const struct rank_environment *e = &environments[i];
        long rank, local, size;
        int r = read_number(&env, e->rank, &rank);
        if (r == 0)
            continue;
        if (r < 0)
            return asys_fail(err, "%s='%s' is not a rank", e->rank, lookup(ctx, e->rank));
        if (read_number(&env, e->local_rank, &local) < 0)
            return asys_fail(err, "%s='%s' is not a local rank", e->local_rank,
                             lookup(ctx, e->local_rank));
        if (read_number(&env, e->world_size, &size) < 0 || size == 0 ||
            (size > 0 && rank >= size) || (size > 0 && local >= size))
            return asys_fail(err, "%s='%s' does not fit %s=%ld", e->world_size,
                             lookup(ctx, e->world_size) ? lookup(ctx, e->world_size) : "", e->rank,
                             rank);
        out->rank = rank;
        out->local_rank = local;
        out->world_size = size;
        out->source = e->source;
        return 1;
    }
    return 0;
}
