/* The reports a command was given: report files, analysis databases, and
 * directories of them (asys-stats, asys-export).  A directory gives its
 * NAME.asys-rep files, and the analysis databases without a report beside
 * them, in name order; what a report directory holds besides (hidden files
 * such as the kept partials, an import's temporary database or journal, the
 * analysis database of a report that is there) is passed over, and anything
 * else is refused: a foreign file is a mistake worth saying, not skipping. */
#ifndef ASYS_REPORT_INPUTS_H
#define ASYS_REPORT_INPUTS_H

#include "asys_error.h"

struct asys_report_inputs {
    char **paths;
    int count;
};

/* 0, or -1 with err saying which path and why (nothing kept). */
int asys_report_inputs_expand(const char *const *given, int count, struct asys_report_inputs *out,
                              struct asys_err *err);
void asys_report_inputs_free(struct asys_report_inputs *in);

#endif
