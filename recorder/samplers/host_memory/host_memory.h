/* Host memory sampling: a launcher thread that records the RSS and
 * high-water mark of every process of the traced tree (host_memory.c). */
#ifndef ASYS_HOST_MEMORY_H
#define ASYS_HOST_MEMORY_H

#include <stdint.h>
#include <sys/types.h>

#include "asys_error.h"

struct host_memory;

/* Starts sampling `target` and its descendants into SESSION/segments/hostmem.seg. */
int asys_host_memory_start(const char *session_dir, pid_t target, uint64_t frequency_hz,
                           struct host_memory **out, struct asys_err *err);
/* Takes a last sample, stops and closes the segment; frees `h` (NULL is fine). */
void asys_host_memory_stop(struct host_memory *h);

#endif
