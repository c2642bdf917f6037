/* session.json (written when recording starts) and manifest.json (written at
 * finalize: session.json plus what the recording produced). */
#ifndef ASYS_MANIFEST_H
#define ASYS_MANIFEST_H

#include <cJSON.h>

#include "asys_error.h"
#include "profile_options.h"
#include "rank_env.h"
#include "read_file.h"
#include "session.h"

/* The session description: command, options, host, CPU, clock, collectors. */
cJSON *asys_session_json_new(const struct asys_profile_options *opts, const struct asys_session *s,
                             const char *report_path);

/* The kernel's id of this boot: ticks and CLOCK_MONOTONIC keep their
 * relation within one boot only. */
#define ASYS_BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

int asys_json_save(const char *path, const cJSON *root, struct asys_err *err);
cJSON *asys_json_load(const char *path, struct asys_err *err);
/* `path` from the root (the current directory before a relative one); 0 or -1. */
int asys_absolute_path(const char *path, char *out, size_t size);

/* A rank's fields (rank, local_rank, world_size, source) into `obj`;
 * nothing for NULL. */
void asys_rank_json(cJSON *obj, const struct asys_rank *r);

#endif
