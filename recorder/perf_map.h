/* JIT symbol maps: /tmp/perf-PID.map, perf's text format.
 *
 * A runtime that generates code (a JIT, CPython's perf trampolines) writes
 * one line per function, `START SIZE NAME` (START and SIZE in hex, with or
 * without 0x), so that profilers can name addresses no ELF file holds.  The
 * file is read at finalize, on the recording host, and the names of the
 * sampled addresses go into the report: /tmp files do not outlive the
 * machine. */
#ifndef ASYS_PERF_MAP_H
#define ASYS_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"

struct asys_perf_map;

/* The map's path for a process. */
void asys_perf_map_path(char *out, size_t size, uint32_t pid);
/* Whether a module path names such a map (the symbolizer reads it, not ELF). */
int asys_is_perf_map_path(const char *path);

/* Reads and sorts the map; NULL with `err` set when it cannot be read (a
 * missing file says ENOENT).  Lines that do not parse are skipped. */
struct asys_perf_map *asys_perf_map_read(const char *path, struct asys_err *err);
void asys_perf_map_free(struct asys_perf_map *m);

/* The name of the entry covering `address`, the latest written when
 * entries overlap; NULL when none does. */
const char *asys_perf_map_name(const struct asys_perf_map *m, uint64_t address);

/* The kernel's text symbols, /proc/kallsyms (`ADDR TYPE NAME [MODULE]`)
 * as such a map: each symbol covers up to the next one.  Read at finalize
 * on the recording host (the addresses move at each boot). */
#define ASYS_KALLSYMS "/proc/kallsyms"
struct asys_perf_map *asys_kallsyms_read(const char *path, struct asys_err *err);
/* Whether kallsyms gives addresses (kptr_restrict hides them as zeros). */
int asys_kallsyms_readable(const char *path);

/* The lowest start and highest end of the entries (0 and 0 when empty). */
void asys_perf_map_span(const struct asys_perf_map *m, uint64_t *start, uint64_t *end);

#endif
