/* The PPU metrics asys knows (manual §2): each metric's name as the PPU
 * names it, its unit and description, its counterpart on NVIDIA GPUs (CUPTI
 * PM sampling) and under NVML GPM where one exists; and the predefined
 * sets.  Data only: ppu_metric_catalog.c is the one table. */
#ifndef ASYS_PPU_METRIC_CATALOG_H
#define ASYS_PPU_METRIC_CATALOG_H

#include <stddef.h>
#include <stdio.h>

struct ppu_metric {
    const char *name; /* the PPU's name, also the display name */
    const char *unit;
    const char *description;
    const char *nvidia; /* the CUPTI PM sampling metric on NVIDIA GPUs; NULL: none */
    unsigned gpm_id; /* NVML GPM metric id; 0: none */
    double gpm_scale; /* GPM value x scale = this metric's unit */
};

struct ppu_metric_set {
    const char *name;
    const char *description;
    const char *const *metrics; /* NULL-terminated */
};

const struct ppu_metric *ppu_metric_find(const char *name);
const struct ppu_metric_set *ppu_metric_set_find(const char *name);

/* The manual's "help" layouts. */
void ppu_metric_print_sets(FILE *out);
void ppu_metric_print_list(FILE *out);

#endif
