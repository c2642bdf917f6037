/* Packs a session directory into NAME.asys-rep (used by `asys profile` when
 * the program ends, and by `asys finalize` to recover an interrupted session). */
#ifndef ASYS_FINALIZE_H
#define ASYS_FINALIZE_H

#include <stdint.h>

#include "asys_error.h"
#include "target_process.h"

struct asys_arena_compressor;
struct asys_symbols_warmer;
struct asys_symbolizer;

struct asys_finalize_result {
    uint64_t report_bytes;
    uint64_t records;
    uint64_t dropped_records;
    uint64_t lost_threads; /* threads that got no segment of their own */
    uint64_t lost_thread_records; /* and their events */
    int lost_thread_errno; /* why, the last time */
    uint64_t lost_processes; /* fork children that got no segment at all */
    uint64_t lost_process_records; /* and their events */
    int lost_process_errno; /* why, the last time */
    uint32_t lost_process_pid; /* the last of them */
    uint64_t dropped_no_room; /* records the session had no room for */
    int no_room_errno; /* why */
    /* processes that changed NVTX_INJECTION64_PATH (their HGTX is not recorded) */
    uint32_t nvtx_replaced;
    uint32_t nvtx_replaced_pid; /* the first of them */
    int segments;
    /* what could not be read of the session (a damaged or cut arena) */
    uint64_t damaged_slots; /* slots claimed but missing, cut off or unreadable */
    uint64_t damaged_bytes; /* their bytes */
    uint64_t damaged_segments; /* segments that ended on an error */
    int arena_missing; /* the session's arena is gone: every thread's records */
    int control_damaged; /* its control block was unreadable */
    /* --multi-node-mode true around a launcher of several ranks: the report
     * of each rank, written instead of one (asys_finalize_result_free) */
    char **rank_reports;
    size_t rank_report_count, rank_report_cap;
};

/* What ran beside the program to shorten finalize (either may be NULL):
 * the compressor goes on with arena slots while the segments are read; the
 * warmer's libc is used for its frames.  Finalize stops and frees both. */
struct asys_finalize_aids {
    struct asys_arena_compressor *compressor;
    struct asys_symbols_warmer *warmer;
    /* what resolved frames while the program ran (the warmer adopted); finalize
     * frees it */
    struct asys_symbolizer *symbolizer;
    /* the caller exits once the report is written: finalize leaves the
     * symbolizer and the manifest to the exit, unless ASYS_FREE_BEFORE_EXIT
     * (libdw's teardown of the files it kept open took 3-4 ms of the
     * pipelines' end on this project's VMs, the exit a fraction of it) */
    int exiting;
};

/* `target` may be NULL (recovery: the program's status is unknown), and
 * `aids` too.  The session directory is left in place; the caller removes
 * it. */
int asys_finalize(const char *session_dir, const char *report_path, int force,
                  const struct asys_target *target, struct asys_finalize_aids *aids,
                  struct asys_finalize_result *result, struct asys_err *err);

/* `report_path` may hold the %r asys profile kept for the ranks of a
 * launcher's processes: with two ranks or more among them each gets a
 * report of its own (%r, or NAME_rankN), else %r is the one rank or
 * "all". */
void asys_finalize_result_free(struct asys_finalize_result *r);

/* One warning line with what finalize could not read, when anything. */
void asys_finalize_warn_damage(const struct asys_finalize_result *r);

#endif
