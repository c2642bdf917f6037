/* The HGGC collector's two halves: hggc.c (CUPTI setup, API and resource
 * callbacks, buffers) hands each activity record to hggc_activity.c. */
#ifndef ASYS_HGGC_ACTIVITY_H
#define ASYS_HGGC_ACTIVITY_H

#include <cupti.h>

#include "inject.h"

/* Writes the asys record for one CUPTI activity record into t's segment;
 * returns 0 for kinds the collector does not keep. */
int asys_hggc_convert(struct asys_thread *t, const CUpti_Activity *a);

#endif
