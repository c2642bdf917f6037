/* What the HGGC collector said about itself, gathered at finalize for the
 * manifest's "hggc" object: per process whether CUPTI attached (and if not,
 * why), plus CUPTI's dropped records and overhead. */
#ifndef ASYS_HGGC_TALLY_H
#define ASYS_HGGC_TALLY_H

#include <cJSON.h>
#include <stdint.h>

#include "segment_stream.h"

struct asys_hggc_tally;

struct asys_hggc_tally *asys_hggc_tally_new(void);
void asys_hggc_tally_free(struct asys_hggc_tally *t);
/* Takes an HGGC_STATUS or HGGC_OVERHEAD record of process `pid`; ignores others. */
void asys_hggc_tally_add(struct asys_hggc_tally *t, uint32_t pid, const struct asys_record *rec);
/* The manifest's "hggc" object, or NULL when the collector never reported. */
cJSON *asys_hggc_tally_json(const struct asys_hggc_tally *t);

#endif
