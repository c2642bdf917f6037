/* The events --event-sample counts (--cpu-core-events, --os-events and
 * their sets): one table, compiled in, shared by the launcher (which opens
 * them with perf_event_open) and the analysis tools (which name them).  An
 * event's id is what its records carry: CPU core events 1..99 by their
 * --cpu-core-events index, OS events 101.. (index + 100).  Append only. */
#ifndef ASYS_EVENT_CATALOG_H
#define ASYS_EVENT_CATALOG_H

#include <stdint.h>
#include <stdio.h>

enum asys_event_group { ASYS_EVENT_CPU_CORE = 1, ASYS_EVENT_OS = 2 };

enum asys_event_source {
    ASYS_EVENT_HARDWARE, /* PERF_TYPE_HARDWARE: config */
    ASYS_EVENT_HW_CACHE, /* PERF_TYPE_HW_CACHE: config */
    ASYS_EVENT_SOFTWARE, /* PERF_TYPE_SOFTWARE: config */
    ASYS_EVENT_TRACEPOINT, /* PERF_TYPE_TRACEPOINT: its id from tracefs */
};

struct asys_event_def {
    uint16_t id; /* in records */
    uint16_t index; /* in its group's list: what --cpu-core-events / --os-events take */
    enum asys_event_group group;
    const char *name;
    const char *description;
    enum asys_event_source source;
    uint64_t config; /* HARDWARE, HW_CACHE, SOFTWARE */
    const char *tracepoint; /* TRACEPOINT: "category/name" under tracefs events/ */
};

struct asys_event_set {
    enum asys_event_group group;
    const char *name;
    const char *description;
    const uint16_t *indexes; /* 0-terminated */
};

extern const struct asys_event_def asys_event_defs[];
extern const struct asys_event_set asys_event_sets[];

/* By group and index, or by id; NULL when unknown. */
const struct asys_event_def *asys_event_by_index(enum asys_event_group group, unsigned index);
const struct asys_event_def *asys_event_by_id(unsigned id);
const struct asys_event_set *asys_event_set_find(enum asys_event_group group, const char *name);

/* The help outputs: the events of a group with their index, and the sets. */
void asys_event_print_list(FILE *out, enum asys_event_group group);
void asys_event_print_sets(FILE *out, enum asys_event_group group);

#endif
