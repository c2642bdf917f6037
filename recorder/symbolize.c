#define _GNU_SOURCE
#include "symbolize.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashmap.h"

struct sym_module {
    uint64_t bias;
    uint64_t start;
    uint64_t end;
    char *path;
};

struct sym_image {
    uint64_t uid;
    struct sym_module *modules;
    size_t module_count;
    size_t module_cap;
    struct asys_u64map addresses; /* set of frame addresses */
};

struct asys_symbolizer {
    struct asys_u64map images;  /* uid -> struct sym_image * */
    struct sym_image *current;  /* image of the segment being read */
    struct asys_u64map strings; /* string id -> char *, this segment */
};

struct asys_symbolizer *asys_symbolizer_new(void)
{
    struct asys_symbolizer *s = calloc(1, sizeof *s);
    if (s) {
        asys_u64map_init(&s->images);
        asys_u64map_init(&s->strings);
    }
    return s;
}

static void free_strings(struct asys_symbolizer *s)
{
    for (size_t i = 0; i < s->strings.capacity; i++)
        if (s->strings.used[i])
            free((void *)(uintptr_t)s->strings.values[i]);
    asys_u64map_free(&s->strings);
    asys_u64map_init(&s->strings);
}

void asys_symbolizer_free(struct asys_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->images.capacity; i++) {
        if (!s->images.used[i])
            continue;
        struct sym_image *img = (struct sym_image *)(uintptr_t)s->images.values[i];
        for (size_t m = 0; m < img->module_count; m++)
            free(img->modules[m].path);
        free(img->modules);
        asys_u64map_free(&img->addresses);
        free(img);
    }
    asys_u64map_free(&s->images);
    free_strings(s);
    free(s);
}

void asys_symbolizer_begin_segment(struct asys_symbolizer *s, const struct asys_segment_header *h)
{
    s->current = NULL;
    if (h->collector != ASYS_SEGMENT_THREAD || !(h->feature_mask & ASYS_FEATURE_STACKS))
        return;
    uint64_t *v = asys_u64map_get(&s->images, h->process_uid);
    if (v) {
        s->current = (struct sym_image *)(uintptr_t)*v;
        return;
    }
    struct sym_image *img = calloc(1, sizeof *img);
    if (!img)
        return;
    img->uid = h->process_uid;
    asys_u64map_init(&img->addresses);
    if (asys_u64map_put(&s->images, img->uid, (uint64_t)(uintptr_t)img) != 0) {
        free(img);
        return;
    }
    s->current = img;
}

static void add_module(struct sym_image *img, const struct asys_rec_module *r, const char *path)
{
    for (size_t i = 0; i < img->module_count; i++)
        if (img->modules[i].start == r->start) /* every thread writes the list: once is enough */
            return;
    if (img->module_count == img->module_cap) {
        size_t cap = img->module_cap ? img->module_cap * 2 : 32;
        struct sym_module *bigger = realloc(img->modules, cap * sizeof *bigger);
        if (!bigger)
            return;
        img->modules = bigger;
        img->module_cap = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return;
    img->modules[img->module_count++] = (struct sym_module){r->load_bias, r->start, r->end, copy};
}

void asys_symbolizer_add(struct asys_symbolizer *s, const struct asys_record *rec)
{
    struct sym_image *img = s->current;
    if (!img)
        return;
    if (rec->type == ASYS_REC_STRING_DEF) {
        const struct asys_rec_string_def *d = (const void *)rec->data;
        if (d->length > rec->size - sizeof *d || d->length > 4096)
            return; /* paths only: longer text is not a path */
        char *text = strndup((const char *)(d + 1), d->length);
        if (text && asys_u64map_put(&s->strings, d->string_id, (uint64_t)(uintptr_t)text) != 0)
            free(text);
    } else if (rec->type == ASYS_REC_MODULE) {
        const struct asys_rec_module *m = (const void *)rec->data;
        uint64_t *path = asys_u64map_get(&s->strings, m->path_string_id);
        if (path)
            add_module(img, m, (const char *)(uintptr_t)*path);
    } else if (rec->type == ASYS_REC_CALLCHAIN) {
        const struct asys_rec_callchain *c = (const void *)rec->data;
        if (c->depth > (rec->size - sizeof *c) / 8)
            return;
        const uint64_t *frames = (const uint64_t *)(c + 1);
        for (uint32_t i = 0; i < c->depth; i++)
            asys_u64map_put(&img->addresses, frames[i], 1);
    }
}

void asys_symbolizer_end_segment(struct asys_symbolizer *s)
{
    free_strings(s);
    s->current = NULL;
}

/* ---- resolution ------------------------------------------------------------ */

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static const struct sym_module *module_at(const struct sym_image *img, uint64_t address)
{
    for (size_t i = 0; i < img->module_count; i++)
        if (address >= img->modules[i].start && address < img->modules[i].end)
            return &img->modules[i];
    return NULL;
}

static Dwfl *report_modules(const struct sym_image *img)
{
    Dwfl *dwfl = dwfl_begin(&offline_callbacks);
    if (!dwfl)
        return NULL;
    dwfl_report_begin(dwfl);
    for (size_t i = 0; i < img->module_count; i++) {
        const struct sym_module *m = &img->modules[i];
        if (m->path[0] != '/' || access(m->path, R_OK) != 0)
            continue; /* the vDSO, or a file gone since */
        const char *name = strrchr(m->path, '/') + 1;
        dwfl_report_elf(dwfl, name, m->path, -1, m->bias, false);
    }
    dwfl_report_end(dwfl, NULL, NULL);
    return dwfl;
}

static cJSON *resolve_frame(Dwfl *dwfl, const struct sym_image *img, uint64_t address)
{
    /* a return address: the call that made the frame is just before it */
    Dwarf_Addr pc = address ? address - 1 : 0;
    Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
    const char *function = mod ? dwfl_module_addrname(mod, pc) : NULL;
    Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, pc) : NULL;
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    const struct sym_module *m = module_at(img, address);
    char hex[24];
    snprintf(hex, sizeof hex, "0x%" PRIx64, address);
    cJSON *frame = cJSON_CreateArray();
    cJSON_AddItemToArray(frame, cJSON_CreateString(hex));
    char name[512] = "";
    if (function) { /* "__libc_start_main@@GLIBC_2.34": the version is noise here */
        snprintf(name, sizeof name, "%s", function);
        name[strcspn(name, "@")] = '\0';
    }
    cJSON_AddItemToArray(frame, cJSON_CreateString(name));
    cJSON_AddItemToArray(frame, cJSON_CreateString(file ? file : ""));
    cJSON_AddItemToArray(frame, cJSON_CreateNumber(file ? lineno : 0));
    cJSON_AddItemToArray(frame, cJSON_CreateString(m ? m->path : ""));
    return frame;
}

cJSON *asys_symbolizer_resolve(struct asys_symbolizer *s)
{
    cJSON *root = NULL, *images = NULL;
    for (size_t i = 0; i < s->images.capacity; i++) {
        if (!s->images.used[i])
            continue;
        struct sym_image *img = (struct sym_image *)(uintptr_t)s->images.values[i];
        if (!img->addresses.count)
            continue;
        if (!root) {
            root = cJSON_CreateObject();
            images = cJSON_AddArrayToObject(root, "images");
        }
        cJSON *entry = cJSON_CreateObject();
        char uid[24];
        snprintf(uid, sizeof uid, "%" PRIx64, img->uid);
        cJSON_AddStringToObject(entry, "uid", uid);
        cJSON *frames = cJSON_AddArrayToObject(entry, "frames");
        Dwfl *dwfl = report_modules(img);
        for (size_t a = 0; a < img->addresses.capacity; a++)
            if (img->addresses.used[a])
                cJSON_AddItemToArray(frames, resolve_frame(dwfl, img, img->addresses.keys[a]));
        if (dwfl)
            dwfl_end(dwfl);
        cJSON_AddItemToArray(images, entry);
    }
    return root;
}
