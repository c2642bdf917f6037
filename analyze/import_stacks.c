/* MODULE and CALLCHAIN records -> modules, frames, callchains,
 * callchain_frames.  Frames get the symbols finalize resolved on the
 * recording host (symbols.json); an address it could not resolve keeps its
 * number and module. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "grow.h"
#include "import_family.h"
#include "json_util.h"

struct imp_module {
    uint64_t start;
    uint64_t end;
    int64_t id; /* modules.id */
};

/* symbols.json version 2: one frame table per file, shared by the images
 * that mapped it. */
struct symbol_file {
    struct asys_u64map frames; /* offset from the load bias -> cJSON frame */
};

/* Where an image mapped a file, by the mapping's start. */
struct symbol_mapping {
    uint32_t file;
    uint64_t bias;
};

/* Per process image. */
struct stacks_image {
    struct asys_u64map frames; /* return address -> frames.id */
    struct imp_module *modules; /* loaded objects, for address -> module */
    size_t module_count;
    size_t module_cap;
    struct asys_u64map *symbols; /* version 1: address -> cJSON frame, or NULL */
    struct asys_u64map *mappings; /* version 2: start -> index in symbol_mappings + 1 */
    int symbols_looked_up;
};

struct stacks {
    struct asys_importer *imp;
    int slot; /* per-image state */
    struct asys_u64map symbol_images; /* uid -> struct asys_u64map * (v1: address -> cJSON;
                                         v2: start -> index in mappings + 1) */
    int symbols_version;
    struct symbol_file *files; /* v2 */
    size_t file_count;
    struct symbol_mapping *mappings; /* v2, of every image */
    size_t mapping_count, mapping_cap;
    sqlite3_stmt *insert_module;
    sqlite3_stmt *insert_frame;
    sqlite3_stmt *insert_callchain;
    sqlite3_stmt *insert_callchain_frame;
    int64_t next_module_id;
    int64_t next_frame_id;
    int64_t next_callchain_id;
};

static void image_free(void *p)
{
    struct stacks_image *si = p;
    asys_u64map_free(&si->frames);
    free(si->modules);
    free(si);
}

/* The current segment's image state; NULL when out of memory. */
static struct stacks_image *image_of(struct stacks *st)
{
    struct imp_image *img = st->imp->seg.image;
    if (!img->slot[st->slot]) {
        struct stacks_image *si = calloc(1, sizeof *si);
        if (!si)
            return NULL;
        asys_u64map_init(&si->frames);
        img->slot[st->slot] = si;
    }
    return img->slot[st->slot];
}

/* ---- symbols.json ------------------------------------------------------------ */

static int parse_hex(const char *s, uint64_t *out)
{
    char *end;
    if (!s || strncmp(s, "0x", 2) != 0)
        return -1;
    *out = strtoull(s + 2, &end, 16);
    return *end ? -1 : 0;
}

/* The lookup map of one image of symbols.json (*map NULL: a bad or repeated
 * entry, skipped); -1: out of memory. */
static int new_image_map(struct stacks *st, const cJSON *image, struct asys_u64map **map,
                         struct asys_err *err)
{
    uint64_t uid;
    const char *uid_text = asys_json_get_str(image, "uid", NULL);
    char *end;
    *map = NULL;
    if (!uid_text || (uid = strtoull(uid_text, &end, 16), *end) ||
        asys_u64map_get(&st->symbol_images, uid))
        return 0; /* listed twice: the first stays */
    struct asys_u64map *m = calloc(1, sizeof *m);
    if (!m || asys_u64map_put(&st->symbol_images, uid, (uint64_t)(uintptr_t)m)) {
        free(m);
        return asys_fail(err, "out of memory");
    }
    asys_u64map_init(m);
    *map = m;
    return 0;
}

/* Version 1: per image, address -> its frame array. */
static int load_symbols_v1(struct stacks *st, struct asys_err *err)
{
    const cJSON *image;
    cJSON_ArrayForEach(image, cJSON_GetObjectItemCaseSensitive(st->imp->symbols, "images"))
    {
        struct asys_u64map *frames;
        if (new_image_map(st, image, &frames, err) != 0)
            return -1;
        if (!frames)
            continue;
        const cJSON *frame;
        cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(image, "frames"))
        {
            uint64_t address;
            const cJSON *first = cJSON_GetArrayItem(frame, 0);
            if (cJSON_IsString(first) && parse_hex(first->valuestring, &address) == 0)
                asys_u64map_put(frames, address, (uint64_t)(uintptr_t)frame);
        }
    }
    return 0;
}

/* Version 2: per file, offset -> frame array; per image, mapping start ->
 * (file, bias). */
static int load_symbols_v2(struct stacks *st, struct asys_err *err)
{
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(st->imp->symbols, "modules");
    int count = cJSON_GetArraySize(files);
    st->files = count > 0 ? calloc((size_t)count, sizeof *st->files) : NULL;
    if (count > 0 && !st->files)
        return asys_fail(err, "out of memory");
    st->file_count = count > 0 ? (size_t)count : 0;
    const cJSON *file;
    size_t index = 0;
    cJSON_ArrayForEach(file, files)
    {
        struct symbol_file *f = &st->files[index++];
        asys_u64map_init(&f->frames);
        const cJSON *frame;
        cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(file, "frames"))
        {
            uint64_t offset;
            const cJSON *first = cJSON_GetArrayItem(frame, 0);
            if (cJSON_IsString(first) && parse_hex(first->valuestring, &offset) == 0)
                asys_u64map_put(&f->frames, offset, (uint64_t)(uintptr_t)frame);
        }
    }
    const cJSON *image;
    cJSON_ArrayForEach(image, cJSON_GetObjectItemCaseSensitive(st->imp->symbols, "images"))
    {
        struct asys_u64map *maps;
        if (new_image_map(st, image, &maps, err) != 0)
            return -1;
        if (!maps)
            continue;
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(image, "modules"))
        {
            const cJSON *which = cJSON_GetArrayItem(m, 0);
            const cJSON *start = cJSON_GetArrayItem(m, 1), *bias = cJSON_GetArrayItem(m, 2);
            uint64_t s0, b;
            if (!cJSON_IsNumber(which) || which->valuedouble < 0 ||
                which->valuedouble >= (double)st->file_count || !cJSON_IsString(start) ||
                !cJSON_IsString(bias) || parse_hex(start->valuestring, &s0) != 0 ||
                parse_hex(bias->valuestring, &b) != 0)
                continue; /* from a file: what does not fit is left out */
            if (asys_grow(&st->mappings, &st->mapping_cap, st->mapping_count, sizeof *st->mappings,
                          64))
                return asys_fail(err, "out of memory");
            st->mappings[st->mapping_count++] =
                (struct symbol_mapping){(uint32_t)which->valuedouble, b};
            if (asys_u64map_put(maps, s0, st->mapping_count) != 0)
                return asys_fail(err, "out of memory");
        }
    }
    return 0;
}

/* Indexes symbols.json (either version) for frame lookups. */
static int stacks_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct stacks *st = calloc(1, sizeof *st);
    if (!st)
        return asys_fail(err, "out of memory");
    *state = st;
    st->imp = imp;
    asys_u64map_init(&st->symbol_images);
    st->slot = imp_image_slot_new(imp, image_free);
    if (st->slot < 0)
        return asys_fail(err, "too many per-image states");
    st->next_module_id = st->next_frame_id = st->next_callchain_id = 1;
    if (imp_prepare(imp,
                    "INSERT INTO modules (id, pid, path_id, start_address, end_address, "
                    "load_bias, build_id) VALUES (?,?,?,?,?,?,?)",
                    &st->insert_module, err) ||
        imp_prepare(imp,
                    "INSERT INTO frames (id, pid, address, module_id, function_id, file_id, "
                    "line) VALUES (?,?,?,?,?,?,?)",
                    &st->insert_frame, err) ||
        imp_prepare(imp, "INSERT INTO callchains (id, pid, depth) VALUES (?,?,?)",
                    &st->insert_callchain, err) ||
        imp_prepare(imp,
                    "INSERT INTO callchain_frames (callchain_id, level, frame_id) "
                    "VALUES (?,?,?)",
                    &st->insert_callchain_frame, err))
        return -1;
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(imp->symbols, "version");
    st->symbols_version = cJSON_IsNumber(version) && version->valuedouble == 2 ? 2 : 1;
    return st->symbols_version == 2 ? load_symbols_v2(st, err) : load_symbols_v1(st, err);
}

static void stacks_free(void *state)
{
    struct stacks *st = state;
    if (!st)
        return;
    sqlite3_finalize(st->insert_module);
    sqlite3_finalize(st->insert_frame);
    sqlite3_finalize(st->insert_callchain);
    sqlite3_finalize(st->insert_callchain_frame);
    for (size_t i = 0; i < st->symbol_images.capacity; i++) {
        if (!st->symbol_images.used[i])
            continue;
        struct asys_u64map *frames = (struct asys_u64map *)(uintptr_t)st->symbol_images.values[i];
        asys_u64map_free(frames);
        free(frames);
    }
    asys_u64map_free(&st->symbol_images);
    for (size_t i = 0; i < st->file_count; i++)
        asys_u64map_free(&st->files[i].frames);
    free(st->files);
    free(st->mappings);
    free(st);
}

/* ---- modules ------------------------------------------------------------------- */

static int import_module(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct stacks *st = state;
    struct asys_importer *imp = st->imp;
    const struct asys_rec_module *m = (const void *)rec->data;
    struct stacks_image *img = image_of(st);
    if (!img)
        return asys_fail(err, "out of memory");
    for (size_t i = 0; i < img->module_count; i++)
        if (img->modules[i].start == m->start)
            return 0; /* every thread writes the list; once is enough */
    if (asys_grow(&img->modules, &img->module_cap, img->module_count, sizeof *img->modules, 32))
        return asys_fail(err, "out of memory");
    int64_t id = st->next_module_id++;
    img->modules[img->module_count++] = (struct imp_module){m->start, m->end, id};
    char build_id[2 * ASYS_BUILD_ID_MAX + 1] = "";
    uint32_t len = m->build_id_length < ASYS_BUILD_ID_MAX ? m->build_id_length : ASYS_BUILD_ID_MAX;
    for (uint32_t i = 0; i < len; i++)
        snprintf(build_id + 2 * i, 3, "%02x", m->build_id[i]);
    sqlite3_stmt *ins = st->insert_module;
    sqlite3_bind_int64(ins, 1, id);
    sqlite3_bind_int64(ins, 2, imp->seg.pid);
    sqlite3_bind_int64(ins, 3, imp_string(imp, imp->seg.image, m->path_string_id));
    sqlite3_bind_int64(ins, 4, (int64_t)m->start);
    sqlite3_bind_int64(ins, 5, (int64_t)m->end);
    sqlite3_bind_int64(ins, 6, (int64_t)m->load_bias);
    if (len)
        sqlite3_bind_text(ins, 7, build_id, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(ins, 7);
    return imp_step(imp, ins, err);
}

static const struct imp_module *module_at(const struct stacks_image *img, uint64_t address)
{
    for (size_t i = 0; i < img->module_count; i++)
        if (address >= img->modules[i].start && address < img->modules[i].end)
            return &img->modules[i];
    return NULL;
}

/* The symbols.json frame of `address` in the current image; NULL: none. */
static const cJSON *symbol_of(struct stacks *st, struct stacks_image *img, uint64_t address,
                              const struct imp_module *module)
{
    if (!img->symbols_looked_up) {
        uint64_t *v = asys_u64map_get(&st->symbol_images, st->imp->seg.image->uid);
        struct asys_u64map *map = v ? (struct asys_u64map *)(uintptr_t)*v : NULL;
        if (st->symbols_version == 2)
            img->mappings = map;
        else
            img->symbols = map;
        img->symbols_looked_up = 1;
    }
    uint64_t *found = NULL;
    if (img->symbols) {
        found = asys_u64map_get(img->symbols, address);
    } else if (img->mappings && module) {
        uint64_t *m = asys_u64map_get(img->mappings, module->start);
        const struct symbol_mapping *map = m ? &st->mappings[*m - 1] : NULL;
        if (map)
            found = asys_u64map_get(&st->files[map->file].frames, address - map->bias);
    }
    return found ? (const cJSON *)(uintptr_t)*found : NULL;
}

/* ---- frames and call chains ------------------------------------------------------ */

static int intern_json_string(struct asys_importer *imp, const cJSON *item, uint32_t *id,
                              struct asys_err *err)
{
    *id = 0;
    if (!cJSON_IsString(item) || !item->valuestring[0])
        return 0;
    return imp_intern_text(imp, item->valuestring, strlen(item->valuestring), id, err);
}

/* Functions inlined at one address kept as frames of their own, at most
 * (symbols.json is untrusted: the rest of a longer chain is left out). */
#define INLINE_FRAMES_MAX 16

/* An inlined function's name as frames keep it: "NAME (inlined)". */
static int intern_inlined(struct asys_importer *imp, const cJSON *item, uint32_t *id,
                          struct asys_err *err)
{
    char name[4096];
    *id = 0;
    if (!cJSON_IsString(item) || !item->valuestring[0])
        return 0;
    int n = snprintf(name, sizeof name, "%.*s%s", (int)(sizeof name - sizeof ASYS_INLINED_SUFFIX),
                     item->valuestring, ASYS_INLINED_SUFFIX);
    return imp_intern_text(imp, name, (size_t)n, id, err);
}

static int insert_frame(struct stacks *st, uint64_t address, int64_t module, uint32_t function,
                        uint32_t file, int line, struct asys_err *err)
{
    sqlite3_stmt *ins = st->insert_frame;
    sqlite3_bind_int64(ins, 1, st->next_frame_id++);
    sqlite3_bind_int64(ins, 2, st->imp->seg.pid);
    sqlite3_bind_int64(ins, 3, (int64_t)address);
    imp_bind_optional(ins, 4, module, module != 0);
    imp_bind_optional(ins, 5, function, function != 0);
    imp_bind_optional(ins, 6, file, file != 0);
    imp_bind_optional(ins, 7, line, file != 0 && line > 0);
    return imp_step(st->imp, ins, err);
}

/* A frame of symbols.json ([name, file, line] from `first`): its strings. */
static int frame_strings(struct asys_importer *imp, const cJSON *frame, int first, int inlined,
                         uint32_t *function, uint32_t *file, int *line, struct asys_err *err)
{
    if ((inlined ? intern_inlined(imp, cJSON_GetArrayItem(frame, first), function, err)
                 : intern_json_string(imp, cJSON_GetArrayItem(frame, first), function, err)) ||
        intern_json_string(imp, cJSON_GetArrayItem(frame, first + 1), file, err))
        return -1;
    const cJSON *l = cJSON_GetArrayItem(frame, first + 2);
    *line = cJSON_IsNumber(l) && l->valuedouble > 0 && l->valuedouble < INT32_MAX ? l->valueint : 0;
    return 0;
}

/* The frames of `address`: the functions inlined there (innermost first),
 * then the function that holds them; their ids are consecutive from the one
 * returned, *count of them (-1 on error). */
static int64_t frame_ids(struct stacks *st, struct stacks_image *img, uint64_t address,
                         uint32_t *count, struct asys_err *err)
{
    struct asys_importer *imp = st->imp;
    uint64_t *known = asys_u64map_get(&img->frames, address);
    if (known) {
        *count = (uint32_t)(*known >> 56);
        return (int64_t)(*known & ((1ull << 56) - 1));
    }
    const struct imp_module *mod = module_at(img, address);
    const cJSON *frame = symbol_of(st, img, address, mod);
    const cJSON *chain = frame ? cJSON_GetArrayItem(frame, 4) : NULL;
    int inlined = cJSON_IsArray(chain) ? cJSON_GetArraySize(chain) : 0;
    if (inlined > INLINE_FRAMES_MAX)
        inlined = INLINE_FRAMES_MAX;
    int64_t first = st->next_frame_id, module = mod ? mod->id : 0;
    uint32_t function = 0, file = 0;
    int line = 0;
    for (int i = 0; i < inlined; i++) {
        const cJSON *in = cJSON_GetArrayItem(chain, i);
        if (!cJSON_IsArray(in) || frame_strings(imp, in, 0, 1, &function, &file, &line, err) != 0 ||
            insert_frame(st, address, module, function, file, line, err) != 0)
            return cJSON_IsArray(in) ? -1 : (asys_fail(err, "a damaged inlined frame"), -1);
    }
    function = file = 0;
    line = 0;
    if (frame && frame_strings(imp, frame, 1, 0, &function, &file, &line, err) != 0)
        return -1;
    if (insert_frame(st, address, module, function, file, line, err) != 0)
        return -1;
    *count = (uint32_t)inlined + 1;
    if (asys_u64map_put(&img->frames, address, (uint64_t)first | (uint64_t)*count << 56) != 0) {
        asys_fail(err, "out of memory");
        return -1;
    }
    return first;
}

static int import_callchain(void *state, const struct asys_record *rec, uint64_t ns,
                            struct asys_err *err)
{
    (void)ns;
    struct stacks *stk = state;
    struct asys_importer *imp = stk->imp;
    struct stacks_image *img = image_of(stk);
    if (!img)
        return asys_fail(err, "out of memory");
    const struct asys_rec_callchain *c = (const void *)rec->data;
    if (c->depth > (rec->size - sizeof *c) / 8) {
        imp_warn(imp, "%s: call chain at offset %" PRIu64 " is longer than its record; ignored",
                 imp->seg.member, rec->offset);
        return 0;
    }
    int64_t id = stk->next_callchain_id++;
    if (asys_u64map_put(&imp->seg.image->chains, c->callchain_id, (uint64_t)id) != 0)
        return asys_fail(err, "out of memory");
    /* the depth counts the inlined functions' frames too: first their ids */
    const uint64_t *frames = (const uint64_t *)(c + 1);
    uint64_t depth = 0;
    for (uint32_t i = 0; i < c->depth; i++) {
        uint32_t count;
        if (frame_ids(stk, img, frames[i], &count, err) < 0)
            return -1;
        depth += count;
    }
    sqlite3_stmt *st = stk->insert_callchain;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, (int64_t)depth);
    if (imp_step(imp, st, err) != 0)
        return -1;
    for (uint32_t i = 0, level = 0; i < c->depth; i++) {
        uint32_t count;
        int64_t frame = frame_ids(stk, img, frames[i], &count, err);
        for (uint32_t k = 0; frame >= 0 && k < count; k++, level++) {
            st = stk->insert_callchain_frame;
            sqlite3_bind_int64(st, 1, id);
            sqlite3_bind_int64(st, 2, level);
            sqlite3_bind_int64(st, 3, frame + k);
            if (imp_step(imp, st, err) != 0)
                return -1;
        }
        if (frame < 0)
            return -1;
    }
    return 0;
}

static const struct imp_record_op stacks_ops[] = {
    {ASYS_REC_MODULE, import_module},
    {ASYS_REC_CALLCHAIN, import_callchain},
};

const struct imp_family imp_family_stacks = {
    .name = "stacks",
    .feature = ASYS_FEATURE_STACKS,
    .schema = "stacks.sql",
    .ops = stacks_ops,
    .op_count = sizeof stacks_ops / sizeof stacks_ops[0],
    .init = stacks_init,
    .free = stacks_free,
};
