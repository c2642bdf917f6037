#define _GNU_SOURCE
#include "symbolize.h"
#include "hex.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <time.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_scopes.h"
#include "debug_cache.h"
#include "grow.h"
#include "hashmap.h"
#include "session.h"
#include "perf_map.h"
#include "symbol_table.h"
#include "notes.h"

/* A run shorter than this never reads libc while the program runs. */
#define WARM_AFTER_NS (150 * 1000 * 1000)

struct file_symbols;

/* A loaded object, once per report: its file (path and build id) and the
 * offsets of every frame that fell into it, in any process. */
struct sym_file {
    char *path;
    char build_id[2 * ASYS_BUILD_ID_MAX + 1];
    struct asys_u64map offsets; /* address - load bias -> 1 */
    struct asys_u64map resolved; /* offset -> cJSON * resolved while the program ran */
    struct file_symbols *kept; /* opened for that, kept until the end; or NULL */
};

/* Where a process image mapped a file. */
struct sym_mapping {
    uint64_t bias;
    uint64_t start;
    uint64_t end;
    uint32_t file; /* index in files */
};

struct sym_image {
    uint64_t uid;
    struct sym_mapping *maps;
    size_t map_count, map_cap;
    struct asys_u64map addresses; /* frame addresses of this image */
};

struct asys_symbolizer {
    struct asys_u64map images; /* uid -> struct sym_image * */
    struct sym_image *current; /* image of the segment being read */
    struct asys_u64map strings; /* string id -> char *, this segment */
    struct sym_file *files;
    size_t file_count, file_cap;
    struct asys_strmap file_index; /* "path\0build id" -> index + 1 */
    struct asys_symbols_warmer *warmer; /* what was read while the program ran, or NULL */
    size_t prefetched, taken; /* frames resolved while the program ran; of them, in the report */
    int warm_taken; /* the warmer's read is a kept file now (or there was none) */
};

struct asys_symbolizer *asys_symbolizer_new(void)
{
    struct asys_symbolizer *s = calloc(1, sizeof *s);
    if (s) {
        asys_u64map_init(&s->images);
        asys_u64map_init(&s->strings);
        asys_strmap_init(&s->file_index);
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

static void kept_close(struct file_symbols *fs);

void asys_symbolizer_free(struct asys_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->images.capacity; i++) {
        if (!s->images.used[i])
            continue;
        struct sym_image *img = (struct sym_image *)(uintptr_t)s->images.values[i];
        free(img->maps);
        asys_u64map_free(&img->addresses);
        free(img);
    }
    asys_u64map_free(&s->images);
    for (size_t i = 0; i < s->file_count; i++) {
        struct sym_file *f = &s->files[i];
        free(f->path);
        asys_u64map_free(&f->offsets);
        for (size_t k = 0; k < f->resolved.capacity; k++)
            if (f->resolved.used[k])
                cJSON_Delete((cJSON *)(uintptr_t)f->resolved.values[k]);
        asys_u64map_free(&f->resolved);
        kept_close(f->kept);
    }
    free(s->files);
    asys_strmap_free(&s->file_index);
    free_strings(s);
    asys_symbols_warmer_free(s->warmer);
    free(s);
}

/* The image of a process uid, made on first sight; NULL: out of memory. */
static struct sym_image *image_for(struct asys_symbolizer *s, uint64_t uid)
{
    uint64_t *v = asys_u64map_get(&s->images, uid);
    if (v)
        return (struct sym_image *)(uintptr_t)*v;
    struct sym_image *img = calloc(1, sizeof *img);
    if (!img)
        return NULL;
    img->uid = uid;
    asys_u64map_init(&img->addresses);
    if (asys_u64map_put(&s->images, img->uid, (uint64_t)(uintptr_t)img) != 0) {
        free(img);
        return NULL;
    }
    return img;
}

void asys_symbolizer_begin_segment(struct asys_symbolizer *s, const struct asys_segment_header *h)
{
    s->current = NULL;
    if (h->collector == ASYS_SEGMENT_THREAD && (h->feature_mask & ASYS_FEATURE_STACKS))
        s->current = image_for(s, h->process_uid);
}

/* The file of a path and build id, added on first sight; -1: out of memory. */
static int64_t file_of(struct asys_symbolizer *s, const char *path, const uint8_t *build_id,
                       uint32_t build_id_length)
{
    char key[4096 + 2 * ASYS_BUILD_ID_MAX + 2];
    size_t n = strlen(path);
    if (n > 4096)
        return -1;
    memcpy(key, path, n + 1);
    char *id = key + n + 1;
    uint32_t len = build_id_length < ASYS_BUILD_ID_MAX ? build_id_length : ASYS_BUILD_ID_MAX;
    asys_hex_encode(build_id, len, id);
    size_t key_len = n + 1 + 2 * len;
    uint32_t at = asys_strmap_get(&s->file_index, key, key_len);
    if (at)
        return at - 1;
    if (asys_grow(&s->files, &s->file_cap, s->file_count, sizeof *s->files, 16))
        return -1;
    struct sym_file *f = &s->files[s->file_count];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path)
        return -1;
    memcpy(f->build_id, id, 2 * len + 1);
    asys_u64map_init(&f->offsets);
    asys_u64map_init(&f->resolved);
    if (asys_strmap_put(&s->file_index, key, key_len, (uint32_t)(s->file_count + 1)) != 0) {
        free(f->path);
        return -1;
    }
    return (int64_t)s->file_count++;
}

static void add_mapping(struct asys_symbolizer *s, struct sym_image *img, const char *path,
                        const uint8_t *build_id, uint32_t build_id_length, uint64_t start,
                        uint64_t end, uint64_t bias)
{
    for (size_t i = 0; i < img->map_count; i++)
        if (img->maps[i].start == start) /* every thread writes the list: once is enough */
            return;
    int64_t file = file_of(s, path, build_id, build_id_length);
    if (file < 0 || asys_grow(&img->maps, &img->map_cap, img->map_count, sizeof *img->maps, 32))
        return;
    img->maps[img->map_count++] = (struct sym_mapping){bias, start, end, (uint32_t)file};
}

static void add_module(struct asys_symbolizer *s, struct sym_image *img,
                       const struct asys_rec_module *r, const char *path)
{
    add_mapping(s, img, path, r->build_id, r->build_id_length, r->start, r->end, r->load_bias);
}

void asys_symbolizer_add_mapping(struct asys_symbolizer *s, uint64_t uid, const char *path,
                                 const uint8_t *build_id, uint32_t build_id_length, uint64_t start,
                                 uint64_t end, uint64_t bias)
{
    struct sym_image *img = image_for(s, uid);
    if (img)
        add_mapping(s, img, path, build_id, build_id_length, start, end, bias);
}

void asys_symbolizer_add_frames(struct asys_symbolizer *s, uint64_t uid, const uint64_t *frames,
                                uint32_t n)
{
    struct sym_image *img = image_for(s, uid);
    for (uint32_t i = 0; img && i < n; i++)
        asys_u64map_put(&img->addresses, frames[i], 1);
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
            add_module(s, img, m, (const char *)(uintptr_t)*path);
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

/* ---- resolution: each file opened once --------------------------------------- */

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = asys_debug_cache_find, /* libc6-dbg's compressed DWARF, decompressed once */
    .section_address = dwfl_offline_section_address,
};

static const struct sym_mapping *mapping_at(const struct sym_image *img, uint64_t address)
{
    for (size_t i = 0; i < img->map_count; i++)
        if (address >= img->maps[i].start && address < img->maps[i].end)
            return &img->maps[i];
    return NULL;
}

/* The file an image's frame address falls in, and its offset from the
 * file's load bias (the same for every process that loaded it); NULL: none. */
static struct sym_file *file_at(struct asys_symbolizer *s, const struct sym_image *img,
                                uint64_t address, uint64_t *offset)
{
    const struct sym_mapping *m = mapping_at(img, address);
    if (!m)
        return NULL;
    *offset = address - m->bias;
    return &s->files[m->file];
}

/* Every image's frames go to the files they fall in. */
static void collect_offsets(struct asys_symbolizer *s)
{
    for (size_t i = 0; i < s->images.capacity; i++) {
        if (!s->images.used[i])
            continue;
        const struct sym_image *img = (struct sym_image *)(uintptr_t)s->images.values[i];
        for (size_t a = 0; a < img->addresses.capacity; a++) {
            uint64_t offset;
            struct sym_file *f =
                img->addresses.used[a] ? file_at(s, img, img->addresses.keys[a], &offset) : NULL;
            if (f)
                asys_u64map_put(&f->offsets, offset, 1);
        }
    }
}

/* The file reported alone at bias 0: offsets are its own addresses. */
static Dwfl *open_file(const struct sym_file *f, Dwfl_Module **module)
{
    if (f->path[0] != '/' || access(f->path, R_OK) != 0)
        return NULL; /* the vDSO, or a file gone since */
    Dwfl *dwfl = dwfl_begin(&offline_callbacks);
    if (!dwfl)
        return NULL;
    dwfl_report_begin(dwfl);
    const char *name = strrchr(f->path, '/') + 1;
    Dwfl_Module *mod = dwfl_report_elf(dwfl, name, f->path, -1, 0, false);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!mod) {
        dwfl_end(dwfl);
        return NULL;
    }
    *module = mod;
    return dwfl;
}

/* What names a file's addresses: its ELF symbols and DWARF lines, or the
 * JIT map a process wrote. */
struct file_symbols {
    Dwfl *dwfl;
    Dwfl_Module *module;
    struct asys_symbol_table *table;
    struct asys_perf_map *jit;
    struct asys_cu_scopes *scopes; /* the units' top-level DIEs, for inline chains */
    const char *pseudo_name; /* "[kernel]": CPU samples' kernel frames, one per stack */
};

static void file_symbols_open(const struct sym_file *f, struct file_symbols *fs)
{
    memset(fs, 0, sizeof *fs);
    if (!strcmp(f->path, "[kernel.kallsyms]")) {
        struct asys_err err = {0};
        fs->pseudo_name = "[kernel]"; /* what kallsyms does not name */
        fs->jit = asys_kallsyms_read(ASYS_KALLSYMS, &err);
        if (!fs->jit)
            asys_note(ASYS_NOTE_DEBUG, "symbols: %s", err.text);
    } else if (f->path[0] == '[') {
        fs->pseudo_name = f->path;
    } else if (asys_is_perf_map_path(f->path)) {
        struct asys_err err = {0};
        fs->jit = asys_perf_map_read(f->path, &err); /* gone since: the frames stay numbers */
        if (!fs->jit)
            asys_note(ASYS_NOTE_DEBUG, "symbols: %s", err.text);
    } else if ((fs->dwfl = open_file(f, &fs->module)) != NULL) {
        fs->table = asys_symbol_table_read(fs->module);
        fs->scopes = asys_cu_scopes_new(); /* NULL: dwarf_getscopes alone */
    }
}

static void file_symbols_close(struct file_symbols *fs)
{
    asys_symbol_table_free(fs->table);
    asys_cu_scopes_free(fs->scopes);
    asys_perf_map_free(fs->jit);
    if (fs->dwfl)
        dwfl_end(fs->dwfl);
}

static void kept_close(struct file_symbols *fs)
{
    if (fs)
        file_symbols_close(fs);
    free(fs);
}

/* ---- inlined functions ---------------------------------------------------- */

#define INLINE_DEPTH_MAX 16

/* A DIE's name as the symbol table would give it: its linkage (mangled)
 * name where it has one, else its name, looked up through its abstract
 * origin (an inlined instance names nothing itself). */
static const char *die_function_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (!name)
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    return name ? name : dwarf_diename(die) ? dwarf_diename(die) : NULL;
}

/* The file and line an inlined instance was called from. */
static void call_site(Dwarf_Die *inlined, Dwarf_Files *files, const char **file, int *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word value;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 && files)
        *file = dwarf_filesrc(files, value, NULL, NULL);
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0)
        *line = (int)value;
}

/* The functions inlined at `pc`, innermost first, each with the file and
 * line it is at (the innermost: pc's own line, from `file`/`line`); the
 * enclosing function's own file and line (the outermost call site) go into
 * *outer_file, *outer_line.  NULL when nothing is inlined there. */
static cJSON *inline_chain(const struct file_symbols *fs, Dwarf_Addr pc, const char *file, int line,
                           const char **outer_file, int *outer_line)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = fs->module ? dwfl_module_addrdie(fs->module, pc, &bias) : NULL;
    Dwarf_Die *scopes = NULL;
    int n = cu ? asys_cu_getscopes(fs->scopes, cu, pc - bias, &scopes) : 0;
    Dwarf_Files *files = NULL;
    if (n > 0)
        dwarf_getsrcfiles(cu, &files, NULL);
    cJSON *chain = NULL;
    for (int i = 0, depth = 0; i < n && depth < INLINE_DEPTH_MAX; i++) {
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
            break; /* the function that holds them all */
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue; /* a lexical block */
        const char *name = die_function_name(&scopes[i]);
        if (!chain)
            chain = cJSON_CreateArray();
        cJSON *frame = cJSON_CreateArray();
        cJSON_AddItemToArray(frame, cJSON_CreateString(name ? name : ""));
        cJSON_AddItemToArray(frame, cJSON_CreateString(file ? file : ""));
        cJSON_AddItemToArray(frame, cJSON_CreateNumber(file ? line : 0));
        cJSON_AddItemToArray(chain, frame);
        depth++;
        call_site(&scopes[i], files, &file, &line); /* where the next one out stands */
    }
    free(scopes);
    *outer_file = file;
    *outer_line = line;
    return chain;
}

static cJSON *resolve_offset(const struct file_symbols *fs, uint64_t offset)
{
    /* a return address: the call that made the frame is just before it */
    Dwarf_Addr pc = offset ? offset - 1 : 0;
    const char *function = fs->table ? asys_symbol_table_name(fs->table, pc)
                           : fs->jit ? asys_perf_map_name(fs->jit, pc)
                                     : NULL;
    if (!function)
        function = fs->pseudo_name;
    Dwfl_Line *line = fs->module ? dwfl_module_getsrc(fs->module, pc) : NULL;
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    /* the functions inlined there, as frames of their own (perf --inline) */
    cJSON *inlined = inline_chain(fs, pc, file, lineno, &file, &lineno);
    char hex[24] = "0x"; /* what "0x%" PRIx64 prints, without printf: one per sampled address */
    asys_hex_u64(offset, hex + 2);
    cJSON *frame = cJSON_CreateArray();
    cJSON_AddItemToArray(frame, cJSON_CreateString(hex));
    char name[512] = "";
    if (function) { /* "__libc_start_main@@GLIBC_2.34": the version is noise here */
        size_t n = fs->jit ? strnlen(function, sizeof name - 1)
                           : strcspn(function, "@"); /* stops at the end as well */
        n = n < sizeof name - 1 ? n : sizeof name - 1;
        memcpy(name, function, n);
        name[n] = '\0';
    }
    cJSON_AddItemToArray(frame, cJSON_CreateString(name));
    cJSON_AddItemToArray(frame, cJSON_CreateString(file ? file : ""));
    cJSON_AddItemToArray(frame, cJSON_CreateNumber(file ? lineno : 0));
    if (inlined)
        cJSON_AddItemToArray(frame, inlined);
    return frame;
}

/* The frame resolved while the program ran, taken from `f`; NULL: none. */
static cJSON *take_resolved(struct sym_file *f, uint64_t offset)
{
    uint64_t *v = asys_u64map_get(&f->resolved, offset);
    cJSON *frame = v ? (cJSON *)(uintptr_t)*v : NULL;
    if (v)
        *v = 0;
    return frame;
}

/* The offsets of `f` not resolved while the program ran. */
static size_t unresolved(const struct sym_file *f)
{
    size_t n = 0;
    for (size_t a = 0; a < f->offsets.capacity; a++) {
        const uint64_t *v =
            f->offsets.used[a] ? asys_u64map_get(&f->resolved, f->offsets.keys[a]) : NULL;
        n += f->offsets.used[a] && !(v && *v);
    }
    return n;
}

static cJSON *file_json(struct sym_file *f, const struct file_symbols *fs)
{
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddStringToObject(entry, "path", f->path);
    if (f->build_id[0])
        cJSON_AddStringToObject(entry, "build_id", f->build_id);
    cJSON *frames = cJSON_AddArrayToObject(entry, "frames");
    for (size_t a = 0; a < f->offsets.capacity; a++) {
        if (!f->offsets.used[a])
            continue;
        cJSON *frame = take_resolved(f, f->offsets.keys[a]);
        cJSON_AddItemToArray(frames, frame ? frame : resolve_offset(fs, f->offsets.keys[a]));
    }
    return entry;
}

/* ---- libc read while the program runs ------------------------------------------- */

struct asys_symbols_warmer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int cancel; /* under lock: do not begin */
    int began; /* under lock: the thread is reading */
    int done; /* the thread has been joined */
    struct sym_file file; /* path and build id; no offsets */
    struct file_symbols fs;
    int have; /* fs holds what was read */
    int finished; /* atomic: the thread is done (read, or cancelled) */
};

/* The libc this launcher runs on, as dl_iterate_phdr sees it. */
struct libc_search {
    char path[PATH_MAX];
    char build_id[2 * ASYS_BUILD_ID_MAX + 1];
};

static void note_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *ph, char *out)
{
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + 12 <= end) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, p, 4);
        memcpy(&descsz, p + 4, 4);
        memcpy(&type, p + 8, 4);
        const uint8_t *desc = p + 12 + ((namesz + 3) & ~3u);
        if (desc + descsz > end)
            return;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + 12, "GNU", 4) &&
            descsz <= ASYS_BUILD_ID_MAX) {
            asys_hex_encode(desc, descsz, out);
            return;
        }
        p = desc + ((descsz + 3) & ~3u);
    }
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct libc_search *l = arg;
    const char *base = strrchr(info->dlpi_name, '/');
    (void)size;
    if (!base || strncmp(base + 1, "libc.so", 7) || !realpath(info->dlpi_name, l->path))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_NOTE)
            note_build_id(info, &info->dlpi_phdr[i], l->build_id);
    return 1;
}

static void warm_read(struct asys_symbols_warmer *w)
{
    file_symbols_open(&w->file, &w->fs);
    w->have = 1;
    Dwarf_Addr bias;
    Dwarf *dw = w->fs.module ? dwfl_module_getdwarf(w->fs.module, &bias) : NULL;
    Dwarf_Aranges *aranges;
    size_t count, header;
    Dwarf_Off next;
    Dwarf_Die cu;
    Dwarf_Lines *lines;
    if (dw && dwarf_getaranges(dw, &aranges, &count) == 0 &&
        dwarf_nextcu(dw, 0, &next, &header, NULL, NULL, NULL) == 0 && dwarf_offdie(dw, header, &cu))
        dwarf_getsrclines(&cu, &lines, &count);
}

/* Waits WARM_AFTER_NS (a run shorter than that never pays for it), then
 * opens the file as finalize would and reads its line tables whole: the
 * compressed DWARF of a separate debug file is inflated on first use. */
static void *warm(void *arg)
{
    struct asys_symbols_warmer *w = arg;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    asys_session_advance(&at, WARM_AFTER_NS);
    pthread_mutex_lock(&w->lock);
    while (!w->cancel && pthread_cond_timedwait(&w->wake, &w->lock, &at) != ETIMEDOUT)
        ;
    w->began = !w->cancel;
    pthread_mutex_unlock(&w->lock);
    if (w->began)
        warm_read(w);
    __atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct asys_symbols_warmer *asys_symbols_warmer_start(void)
{
    struct libc_search l = {"", ""};
    dl_iterate_phdr(find_libc, &l);
    struct asys_symbols_warmer *w = l.path[0] && l.build_id[0] ? calloc(1, sizeof *w) : NULL;
    if (!w || !(w->file.path = strdup(l.path))) {
        free(w);
        return NULL;
    }
    memcpy(w->file.build_id, l.build_id, sizeof l.build_id);
    pthread_mutex_init(&w->lock, NULL);
    asys_session_cond_init(&w->wake);
    if (pthread_create(&w->thread, NULL, warm, w) != 0) {
        w->done = 1;
        asys_symbols_warmer_free(w);
        return NULL;
    }
    return w;
}

/* Cancels a reading not begun, waits for one that has. */
static void warmer_join(struct asys_symbols_warmer *w)
{
    if (w->done)
        return;
    pthread_mutex_lock(&w->lock);
    w->cancel = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    w->done = 1;
}

void asys_symbols_warmer_free(struct asys_symbols_warmer *w)
{
    if (!w)
        return;
    warmer_join(w);
    if (w->have)
        file_symbols_close(&w->fs);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w->file.path);
    free(w);
}

void asys_symbolizer_adopt(struct asys_symbolizer *s, struct asys_symbols_warmer *w)
{
    asys_symbols_warmer_free(s->warmer);
    s->warmer = w;
}

/* What the warmer read, when it is `f` (the same build id: the path a
 * process saw may differ); 1 and `fs` filled, the warmer's left empty. */
static int take_warmed(struct asys_symbols_warmer *w, const struct sym_file *f,
                       struct file_symbols *fs)
{
    if (!w || !f->build_id[0] || strcmp(f->build_id, w->file.build_id))
        return 0;
    warmer_join(w);
    if (!w->have || !w->fs.dwfl)
        return 0;
    *fs = w->fs;
    memset(&w->fs, 0, sizeof w->fs);
    w->have = 0;
    asys_note(ASYS_NOTE_DEBUG, "symbols: %s was read while the program ran", w->file.path);
    return 1;
}

/* The file kept open for `f`'s build id (or path) while the program ran;
 * NULL: none. */
static struct file_symbols *kept_of(const struct asys_symbolizer *s, const struct sym_file *f)
{
    if (f->kept)
        return f->kept;
    for (size_t i = 0; f->build_id[0] && i < s->file_count; i++)
        if (s->files[i].kept && !strcmp(s->files[i].build_id, f->build_id))
            return s->files[i].kept;
    return NULL;
}

/* An image's frames resolved now: those in files of build id `only`, or
 * (NULL) all but those of `skip` (the warmer's file while it reads). */
static void prefetch_image(struct asys_symbolizer *s, const struct sym_image *img, const char *only,
                           const char *skip)
{
    for (size_t a = 0; a < img->addresses.capacity; a++) {
        uint64_t offset;
        struct sym_file *f =
            img->addresses.used[a] ? file_at(s, img, img->addresses.keys[a], &offset) : NULL;
        if (!f || (only && strcmp(f->build_id, only)) || (skip[0] && !strcmp(f->build_id, skip)) ||
            asys_u64map_get(&f->resolved, offset))
            continue;
        struct file_symbols *fs = kept_of(s, f);
        if (!fs && (fs = malloc(sizeof *fs)) != NULL) {
            file_symbols_open(f, fs);
            f->kept = fs;
        }
        cJSON *frame = fs ? resolve_offset(fs, offset) : NULL;
        if (frame && asys_u64map_put(&f->resolved, offset, (uint64_t)(uintptr_t)frame) != 0)
            cJSON_Delete(frame);
        else
            s->prefetched += frame != NULL;
    }
}

/* The warmer's read, once its thread is done, kept for its file (when a
 * frame fell in it): the frames skipped until then are resolved now. */
static void take_finished_warmer(struct asys_symbolizer *s)
{
    struct asys_symbols_warmer *w = s->warmer;
    if (!w || s->warm_taken || !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE))
        return;
    struct sym_file *f = NULL;
    for (size_t i = 0; i < s->file_count && !f; i++)
        if (!strcmp(s->files[i].build_id, w->file.build_id))
            f = &s->files[i];
    if (!f)
        return; /* no frame in it yet */
    s->warm_taken = 1;
    struct file_symbols *fs = malloc(sizeof *fs);
    if (fs && take_warmed(w, f, fs))
        f->kept = fs;
    else
        free(fs); /* nothing was read: opened as any other file */
    for (size_t i = 0; i < s->images.capacity; i++)
        if (s->images.used[i])
            prefetch_image(s, (const struct sym_image *)(uintptr_t)s->images.values[i],
                           w->file.build_id, "");
}

void asys_symbolizer_prefetch(struct asys_symbolizer *s, uint64_t uid)
{
    uint64_t *v = asys_u64map_get(&s->images, uid);
    if (!v)
        return;
    take_finished_warmer(s);
    const char *reading = s->warmer && !s->warm_taken ? s->warmer->file.build_id : "";
    prefetch_image(s, (const struct sym_image *)(uintptr_t)*v, NULL, reading);
}

static const struct sym_file *sort_files;

static int by_build_id(const void *a, const void *b)
{
    const struct sym_file *x = &sort_files[*(const size_t *)a],
                          *y = &sort_files[*(const size_t *)b];
    int c = strcmp(x->build_id, y->build_id);
    return c ? c : *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Every file's entry, in file order.  Files with one build id under several
 * paths (/lib/... from the loader's list, /usr/lib/... from the kernel's
 * mappings on a merged /usr) are one file: opened once, so its DWARF (on
 * this VM libc's, zlib-compressed in libc6-dbg: 55 ms) is read once. */
static int files_json(struct asys_symbolizer *s, cJSON *out)
{
    size_t n = s->file_count;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    cJSON **entries = calloc(n ? n : 1, sizeof *entries);
    int rc = -1;
    if (!order || !entries)
        goto out;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    sort_files = s->files;
    qsort(order, n, sizeof *order, by_build_id);
    struct file_symbols fs, none;
    memset(&none, 0, sizeof none);
    const struct file_symbols *use = NULL; /* what resolves `open`'s build id */
    int own = 0; /* use is fs, opened here */
    const struct sym_file *open = NULL;
    for (size_t k = 0; k < n; k++) {
        struct sym_file *f = &s->files[order[k]];
        /* the same build id: reused when its first path gave something */
        int reuse = use && f->build_id[0] && !strcmp(open->build_id, f->build_id) &&
                    (use->dwfl || use->jit || use->pseudo_name);
        size_t unresolved_now = unresolved(f);
        int need = unresolved_now != 0;
        if (need && !reuse) {
            if (own)
                file_symbols_close(&fs);
            own = 0;
            use = kept_of(s, f); /* opened while the program ran */
            if (!use) {
                if (!take_warmed(s->warmer, f, &fs))
                    file_symbols_open(f, &fs);
                use = &fs;
                own = 1;
            }
            open = f;
        }
        /* nothing to resolve: nothing opened */
        s->taken += f->offsets.count - unresolved_now;
        entries[order[k]] = file_json(f, need || reuse ? use : &none);
    }
    if (own)
        file_symbols_close(&fs);
    for (size_t i = 0; i < n; i++) {
        cJSON_AddItemToArray(out, entries[i]);
        entries[i] = NULL;
    }
    rc = 0;
out:
    for (size_t i = 0; entries && i < n; i++)
        cJSON_Delete(entries[i]);
    free(entries);
    free(order);
    return rc;
}

static cJSON *image_json(const struct sym_image *img)
{
    cJSON *entry = cJSON_CreateObject();
    char text[24];
    snprintf(text, sizeof text, "%" PRIx64, img->uid);
    cJSON_AddStringToObject(entry, "uid", text);
    cJSON *maps = cJSON_AddArrayToObject(entry, "modules");
    for (size_t i = 0; i < img->map_count; i++) {
        cJSON *m = cJSON_CreateArray();
        cJSON_AddItemToArray(m, cJSON_CreateNumber(img->maps[i].file));
        snprintf(text, sizeof text, "0x%" PRIx64, img->maps[i].start);
        cJSON_AddItemToArray(m, cJSON_CreateString(text));
        snprintf(text, sizeof text, "0x%" PRIx64, img->maps[i].bias);
        cJSON_AddItemToArray(m, cJSON_CreateString(text));
        cJSON_AddItemToArray(maps, m);
    }
    return entry;
}

cJSON *asys_symbolizer_resolve(struct asys_symbolizer *s)
{
    collect_offsets(s);
    int any = 0;
    for (size_t i = 0; i < s->file_count && !any; i++)
        any = s->files[i].offsets.count != 0;
    if (!any)
        return NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "version", 2);
    /* every file, so that an image's module list indexes them; files no
     * frame fell in have an empty list and cost nothing to resolve */
    cJSON *files = cJSON_AddArrayToObject(root, "modules");
    if (files_json(s, files) != 0) {
        cJSON_Delete(root);
        return NULL;
    }
    asys_note(ASYS_NOTE_DEBUG, "symbols: %zu frames resolved while the program ran, %zu taken",
              s->prefetched, s->taken);
    cJSON *images = cJSON_AddArrayToObject(root, "images");
    for (size_t i = 0; i < s->images.capacity; i++) {
        if (!s->images.used[i])
            continue;
        const struct sym_image *img = (struct sym_image *)(uintptr_t)s->images.values[i];
        if (img->addresses.count)
            cJSON_AddItemToArray(images, image_json(img));
    }
    return root;
}
