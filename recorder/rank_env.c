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

/* `name`'s value as a number 0..1<<30; 0 unset (*out = -1), 1 read, -1 not a number. */
static int read_number(const char *name, long *out)
{
    const char *text = getenv(name);
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

int asys_rank_detect(struct asys_rank *out, struct asys_err *err)
{
    for (size_t i = 0; i < sizeof environments / sizeof environments[0]; i++) {
        const struct rank_environment *e = &environments[i];
        long rank, local, size;
        int r = read_number(e->rank, &rank);
        if (r == 0)
            continue;
        if (r < 0)
            return asys_fail(err, "%s='%s' is not a rank", e->rank, getenv(e->rank));
        if (read_number(e->local_rank, &local) < 0)
            return asys_fail(err, "%s='%s' is not a local rank", e->local_rank,
                             getenv(e->local_rank));
        if (read_number(e->world_size, &size) < 0 || size == 0 || (size > 0 && rank >= size) ||
            (size > 0 && local >= size))
            return asys_fail(err, "%s='%s' does not fit %s=%ld", e->world_size,
                             getenv(e->world_size) ? getenv(e->world_size) : "", e->rank, rank);
        out->rank = rank;
        out->local_rank = local;
        out->world_size = size;
        out->source = e->source;
        return 1;
    }
    return 0;
}
