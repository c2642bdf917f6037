/* PPU devices through NVML (ppu_devices.h), loaded at run time: asys does
 * not link the driver's libraries. */
#include "ppu_devices.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "nvml_api.h"

struct nvml {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
};

static int nvml_open(struct nvml *n, char *why, size_t why_size)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, why_size, "libnvidia-ml.so.1 not found (no PPU driver)");
        return -1;
    }
    n->init = (nvmlReturn_t(*)(void))dlsym(lib, "nvmlInit_v2");
    n->count = (nvmlReturn_t(*)(unsigned *))dlsym(lib, "nvmlDeviceGetCount_v2");
    n->handle =
        (nvmlReturn_t(*)(unsigned, nvmlDevice_t *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    n->name = (nvmlReturn_t(*)(nvmlDevice_t, char *, unsigned))dlsym(lib, "nvmlDeviceGetName");
    n->pci = (nvmlReturn_t(*)(nvmlDevice_t, nvmlPciInfo_t *))dlsym(lib, "nvmlDeviceGetPciInfo_v3");
    n->uuid = (nvmlReturn_t(*)(nvmlDevice_t, char *, unsigned))dlsym(lib, "nvmlDeviceGetUUID");
    if (!n->init || !n->count || !n->handle || !n->name || !n->pci || !n->uuid) {
        snprintf(why, why_size, "libnvidia-ml.so.1 lacks the device queries");
        return -1;
    }
    nvmlReturn_t r = n->init();
    if (r != NVML_SUCCESS) {
        snprintf(why, why_size, "NVML cannot start (error %d)", r);
        return -1;
    }
    return 0; /* the library stays loaded: NVML keeps its state for the process */
}

static void enumerate(struct ppu_device_list *out)
{
    struct nvml n;
    unsigned count = 0;
    memset(out, 0, sizeof *out);
    if (nvml_open(&n, out->why, sizeof out->why) != 0)
        return;
    if (n.count(&count) != NVML_SUCCESS || count == 0) {
        snprintf(out->why, sizeof out->why, "NVML sees no device");
        return;
    }
    for (unsigned i = 0; i < count && out->count < PPU_MAX_DEVICES; i++) {
        nvmlDevice_t d;
        nvmlPciInfo_t pci;
        struct ppu_device *p = &out->devices[out->count];
        if (n.handle(i, &d) != NVML_SUCCESS)
            continue;
        p->index = i;
        if (n.name(d, p->name, sizeof p->name) != NVML_SUCCESS)
            snprintf(p->name, sizeof p->name, "PPU");
        if (n.pci(d, &pci) == NVML_SUCCESS)
            snprintf(p->pci_bus_id, sizeof p->pci_bus_id, "%s", pci.busId);
        if (n.uuid(d, p->uuid, sizeof p->uuid) != NVML_SUCCESS)
            p->uuid[0] = '\0';
        out->count++;
    }
}

/* The devices do not change during a run: NVML is asked once per launcher
 * (starting it costs tens of ms on a machine with a driver). */
static struct ppu_device_list known;
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

static void enumerate_once(void)
{
    enumerate(&known);
}

void ppu_devices_list(struct ppu_device_list *out)
{
    pthread_once(&known_once, enumerate_once);
    *out = known;
}

void ppu_devices_print_help(FILE *out)
{
    struct ppu_device_list list;
    ppu_devices_list(&list);
    fprintf(out, "Possible --ppu-metrics-device values are:\n"
                 "    all: Select all supported PPUs\n"
                 "    none: Disable PPU Metrics [Default]\n"
                 "    device ID list: comma separated device ID list(eg.: 0,1)\n\n");
    if (!list.count) {
        fprintf(out, "No PPU metrics sampling devices are available: %s.\n", list.why);
        return;
    }
    fprintf(out, "Available PPU metrics sampling devices are:\n");
    for (size_t i = 0; i < list.count; i++)
        fprintf(out, "    %u: %s, PCI Bus ID: %s\n", list.devices[i].index, list.devices[i].name,
                list.devices[i].pci_bus_id);
}
