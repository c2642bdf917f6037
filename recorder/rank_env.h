/* The rank of this process in a multi-process job (mpirun, srun, torchrun),
 * read from the environment its launcher sets: for -o's %r and for the
 * manifest under --multi-node-mode true. */
#ifndef ASYS_RANK_ENV_H
#define ASYS_RANK_ENV_H

#include "asys_error.h"

/* The variables a rank is looked for in, in the order they are tried: the
 * innermost launcher first (torchrun runs under mpirun or srun, never the
 * reverse; mpirun sets its own beside srun's). */
#define ASYS_RANK_ENVIRONMENTS "RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID"

/* Every variable those environments use: what a program's processes keep
 * for finalize to split a launcher's ranks into reports of their own. */
#define ASYS_RANK_VARIABLES \
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", \
        "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "SLURM_PROCID", \
        "SLURM_LOCALID", "SLURM_NTASKS"

/* Where the injected library keeps them: SESSION/ranks/PID, NAME=VALUE lines. */
#define ASYS_RANK_DIR "ranks"

struct asys_rank {
    long rank;
    long local_rank; /* -1: not set by that launcher */
    long world_size; /* -1: not set */
    const char *source; /* the environment's name, e.g. "RANK/LOCAL_RANK/WORLD_SIZE" */
};

/* 1: a rank was found (*out filled); 0: none of the environments is set;
 * -1: the first one set holds something that is not a rank (or a local rank
 * or world size that does not fit it), said in `err`. */
int asys_rank_detect(struct asys_rank *out, struct asys_err *err);
/* The same over another process's variables: `lookup` gives a value or NULL. */
int asys_rank_detect_with(const char *(*lookup)(void *ctx, const char *name), void *ctx,
                          struct asys_rank *out, struct asys_err *err);

#endif
