/* The machine's PPUs as NVML numbers them (the physical indices the whole
 * report uses), for --ppu-metrics-device: names, PCI bus ids, UUIDs. */
#ifndef ASYS_PPU_DEVICES_H
#define ASYS_PPU_DEVICES_H

#include <stddef.h>
#include <stdio.h>

#define PPU_MAX_DEVICES 16

struct ppu_device {
    unsigned index; /* physical */
    char name[96];
    char pci_bus_id[32];
    char uuid[48];
};

struct ppu_device_list {
    struct ppu_device devices[PPU_MAX_DEVICES];
    size_t count;
    char why[256]; /* when count is 0 */
};

/* Fills *out (count 0 and `why` when NVML is not there); NVML is asked once. */
void ppu_devices_list(struct ppu_device_list *out);
/* --ppu-metrics-device help, the manual's layout. */
void ppu_devices_print_help(FILE *out);

#endif
