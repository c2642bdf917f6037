/* The HGGC collector's two halves: hggc.c (CUPTI setup, API and resource
 * callbacks, buffers) hands each activity record to hggc_activity.c. */
#ifndef ASYS_HGGC_ACTIVITY_H
#define ASYS_HGGC_ACTIVITY_H

#include <cupti.h>

#include "inject.h"

/* Writes the asys record for one CUPTI activity record into t's segment;
 * returns 0 for kinds the collector does not keep. */
int asys_hggc_convert(struct asys_thread *t, const CUpti_Activity *a);
/* The device and pinned frees dropped because main had returned. */
void asys_hggc_frees_after_main(uint64_t *count, uint64_t *bytes);

/* --hggc-memory-usage (hggc_memory.c): the kinds of memory traced */
#define ASYS_HGGC_MEMORY_DEVICE 1u
#define ASYS_HGGC_MEMORY_PINNED 2u
/* Whether API `cbid` allocates memory: its kind (0: it does not), the bytes
 * it asks for and the CUPTI kind of what it allocates. */
unsigned asys_hggc_allocation(int driver, CUpti_CallbackId cbid, const void *params, uint64_t *size,
                              uint32_t *cupti_kind);
/* The record of an allocation call that failed (device UINT32_MAX: unknown). */
void asys_hggc_failed_allocation(struct asys_thread *t, uint32_t correlation_id, uint64_t size,
                                 uint32_t cupti_kind, int32_t error, uint32_t device,
                                 uint32_t context);

#endif
