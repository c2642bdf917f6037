/* MODULE and CALLCHAIN records -> modules, frames, callchains,
 * callchain_frames.  Frames get the symbols finalize resolved on the
 * recording host (symbols.json); an address it could not resolve keeps its
 * number and module. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_family.h"
#include "json_util.h"

struct imp_module {
    uint64_t start;
    uint64_t end;
    int64_t id; /* modules.id */
};

/* Per process image. */
struct stacks_image {
    struct asys_u64map frames;  /* return address -> frames.id */
    struct imp_module *modules; /* loaded objects, for address -> module */
    size_t module_count;
    size_t module_cap;
    struct asys_u64map *symbols; /* address -> cJSON frame of symbols.json, or NULL */
    int symbols_looked_up;
};

struct stacks {
    struct asys_importer *imp;
    int slot;                         /* per-image state */
    struct asys_u64map symbol_images; /* uid -> struct asys_u64map * (address -> cJSON) */
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

/* Indexes symbols.json: image uid -> (address -> its frame array). */
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
    const cJSON *image;
    cJSON_ArrayForEach(image, cJSON_GetObjectItemCaseSensitive(imp->symbols, "images"))
    {
        uint64_t uid;
        const char *uid_text = asys_json_get_str(image, "uid", NULL);
        char *end;
        if (!uid_text || (uid = strtoull(uid_text, &end, 16), *end))
            continue;
        struct asys_u64map *frames = calloc(1, sizeof *frames);
        if (!frames || asys_u64map_put(&st->symbol_images, uid, (uint64_t)(uintptr_t)frames)) {
            free(frames);
            return asys_fail(err, "out of memory");
        }
        asys_u64map_init(frames);
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

static int64_t module_of(const struct stacks_image *img, uint64_t address)
{
    for (size_t i = 0; i < img->module_count; i++)
        if (address >= img->modules[i].start && address < img->modules[i].end)
            return img->modules[i].id;
    return 0;
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

static int64_t frame_id(struct stacks *st, struct stacks_image *img, uint64_t address,
                        struct asys_err *err)
{
    struct asys_importer *imp = st->imp;
    uint64_t *known = asys_u64map_get(&img->frames, address);
    if (known)
        return (int64_t)*known;
    if (!img->symbols_looked_up) {
        uint64_t *v = asys_u64map_get(&st->symbol_images, imp->seg.image->uid);
        img->symbols = v ? (struct asys_u64map *)(uintptr_t)*v : NULL;
        img->symbols_looked_up = 1;
    }
    uint64_t *sym = img->symbols ? asys_u64map_get(img->symbols, address) : NULL;
    const cJSON *frame = sym ? (const cJSON *)(uintptr_t)*sym : NULL;
    uint32_t function = 0, file = 0;
    int line = 0;
    if (frame) {
        if (intern_json_string(imp, cJSON_GetArrayItem(frame, 1), &function, err) ||
            intern_json_string(imp, cJSON_GetArrayItem(frame, 2), &file, err))
            return -1;
        const cJSON *l = cJSON_GetArrayItem(frame, 3);
        line = cJSON_IsNumber(l) ? l->valueint : 0;
    }
    int64_t id = st->next_frame_id++;
    int64_t module = module_of(img, address);
    sqlite3_stmt *ins = st->insert_frame;
    sqlite3_bind_int64(ins, 1, id);
    sqlite3_bind_int64(ins, 2, imp->seg.pid);
    sqlite3_bind_int64(ins, 3, (int64_t)address);
    imp_bind_optional(ins, 4, module, module != 0);
    imp_bind_optional(ins, 5, function, function != 0);
    imp_bind_optional(ins, 6, file, file != 0);
    imp_bind_optional(ins, 7, line, file != 0 && line > 0);
    if (imp_step(imp, ins, err) != 0)
        return -1;
    if (asys_u64map_put(&img->frames, address, (uint64_t)id) != 0) {
        asys_fail(err, "out of memory");
        return -1;
    }
    return id;
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
    sqlite3_stmt *st = stk->insert_callchain;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, c->depth);
    if (imp_step(imp, st, err) != 0)
        return -1;
    const uint64_t *frames = (const uint64_t *)(c + 1);
    for (uint32_t level = 0; level < c->depth; level++) {
        int64_t frame = frame_id(stk, img, frames[level], err);
        if (frame < 0)
            return -1;
        st = stk->insert_callchain_frame;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, level);
        sqlite3_bind_int64(st, 3, frame);
        if (imp_step(imp, st, err) != 0)
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
