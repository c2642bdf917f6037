/* PYTHON_CODE, PYTHON_SAMPLE and PYTHON_STATUS records -> python_code,
 * python_samples, python_status, and the frames, modules and callchains rows
 * of the Python stacks (schema/python.sql).  PYTHON_STACK records
 * (--python-backtrace=hggc) are joined with their HGGC calls' native stacks
 * once every segment is read (their code objects and native chains may be
 * defined in segments read later).  Those rows take ids from
 * PYTHON_ID_BASE up, clear of the native stacks' (import_stacks.c counts
 * from 1), so both kinds share the tables and the call-tree machinery. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_family.h"

#define PYTHON_ID_BASE (INT64_C(1) << 36)
#define MAX_DEPTH 128

/* A PYTHON_STACK waiting for the end of the import. */
struct pending_stack {
    struct imp_image *img;
    uint32_t pid, correlation, callchain;
    uint32_t depth;
    uint64_t frames[];
};

struct python {
    struct asys_importer *imp;
    struct pending_stack **stacks;
    size_t stack_count, stack_cap;
    int slot; /* per image: code_id -> python_code row (asys_u64map) */
    sqlite3_stmt *insert_code, *insert_sample, *insert_status;
    sqlite3_stmt *insert_frame, *insert_module, *insert_chain, *insert_chain_frame;
    struct asys_u64map code_rows; /* python_code.id -> file_id << 32 | name_id */
    struct asys_u64map frames; /* code row << 24 | line -> frames.id */
    struct asys_u64map modules; /* pid << 32 | file string id -> modules.id */
    struct asys_strmap chains; /* pid + frame ids -> callchain index + 1 */
    int64_t next_code, next_frame, next_module;
    uint32_t next_chain;
    uint64_t unknown_codes;
};

static void codes_free(void *p)
{
    if (p) {
        asys_u64map_free(p);
        free(p);
    }
}

static struct asys_u64map *image_codes(struct python *py)
{
    struct imp_image *img = py->imp->seg.image;
    if (!img)
        return NULL;
    if (!img->slot[py->slot]) {
        struct asys_u64map *m = calloc(1, sizeof *m);
        if (!m)
            return NULL;
        asys_u64map_init(m);
        img->slot[py->slot] = m;
    }
    return img->slot[py->slot];
}

static int python_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct python *py = calloc(1, sizeof *py);
    if (!py)
        return asys_fail(err, "out of memory");
    *state = py;
    py->imp = imp;
    py->next_code = 1;
    py->next_frame = py->next_module = PYTHON_ID_BASE;
    asys_u64map_init(&py->code_rows);
    asys_u64map_init(&py->frames);
    asys_u64map_init(&py->modules);
    asys_strmap_init(&py->chains);
    py->slot = imp_image_slot_new(imp, codes_free);
    if (py->slot < 0)
        return asys_fail(err, "too many per-image states");
    return imp_prepare(imp,
                       "INSERT INTO python_code (id, pid, name_id, file_id, module_id, "
                       "first_line) VALUES (?,?,?,?,?,?)",
                       &py->insert_code, err) != 0 ||
                   imp_prepare(imp,
                               "INSERT INTO python_samples (ns, pid, tid, callchain_id, code_id, "
                               "line) VALUES (?,?,?,?,?,?)",
                               &py->insert_sample, err) != 0 ||
                   imp_prepare(imp,
                               "INSERT INTO python_status (pid, ns, status, version, detail) "
                               "VALUES (?,?,?,?,?)",
                               &py->insert_status, err) != 0 ||
                   imp_prepare(imp,
                               "INSERT INTO frames (id, pid, address, module_id, function_id, "
                               "file_id, line) VALUES (?,?,?,?,?,?,?)",
                               &py->insert_frame, err) != 0 ||
                   imp_prepare(imp,
                               "INSERT INTO modules (id, pid, path_id, start_address, "
                               "end_address, load_bias) VALUES (?,?,?,0,0,0)",
                               &py->insert_module, err) != 0 ||
                   imp_prepare(imp, "INSERT INTO callchains (id, pid, depth) VALUES (?,?,?)",
                               &py->insert_chain, err) != 0 ||
                   imp_prepare(imp,
                               "INSERT INTO callchain_frames (callchain_id, level, frame_id) "
                               "VALUES (?,?,?)",
                               &py->insert_chain_frame, err) != 0
               ? -1
               : 0;
}

static void python_free(void *state)
{
    struct python *py = state;
    if (!py)
        return;
    sqlite3_stmt *st[] = {py->insert_code,       py->insert_sample, py->insert_status,
                          py->insert_frame,      py->insert_module, py->insert_chain,
                          py->insert_chain_frame};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        sqlite3_finalize(st[i]);
    asys_u64map_free(&py->code_rows);
    asys_u64map_free(&py->frames);
    asys_u64map_free(&py->modules);
    asys_strmap_free(&py->chains);
    for (size_t i = 0; i < py->stack_count; i++)
        free(py->stacks[i]);
    free(py->stacks);
    free(py);
}

static int import_code(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    (void)ns;
    struct python *py = state;
    struct imp_image *img = py->imp->seg.image;
    struct asys_u64map *codes = image_codes(py);
    const struct asys_rec_python_code *r = (const void *)rec->data;
    if (!img || !codes)
        return img ? asys_fail(err, "out of memory") : 0;
    uint32_t name = imp_string(py->imp, img, r->name_string_id);
    uint32_t file = imp_string(py->imp, img, r->file_string_id);
    uint32_t module = imp_string(py->imp, img, r->module_string_id);
    int64_t id = py->next_code++;
    if (asys_u64map_put(codes, r->code_id, (uint64_t)id) != 0 ||
        asys_u64map_put(&py->code_rows, (uint64_t)id, (uint64_t)file << 32 | name) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = py->insert_code;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, py->imp->seg.pid);
    sqlite3_bind_int64(st, 3, name);
    sqlite3_bind_int64(st, 4, file);
    sqlite3_bind_int64(st, 5, module);
    sqlite3_bind_int64(st, 6, r->first_line);
    return imp_step(py->imp, st, err);
}

/* The modules row of a Python source file in this process. */
static int64_t module_of(struct python *py, uint32_t pid, uint32_t file, struct asys_err *err)
{
    uint64_t key = (uint64_t)pid << 32 | file;
    uint64_t *known = asys_u64map_get(&py->modules, key);
    if (known)
        return (int64_t)*known;
    int64_t id = py->next_module++;
    if (asys_u64map_put(&py->modules, key, (uint64_t)id) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = py->insert_module;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, file);
    return imp_step(py->imp, st, err) == 0 ? id : -1;
}

/* The frames row of (code row, line). */
static int64_t frame_of(struct python *py, uint32_t pid, int64_t code, uint32_t line,
                        struct asys_err *err)
{
    uint64_t key = (uint64_t)code << 24 | (line & 0xffffffu);
    uint64_t *known = asys_u64map_get(&py->frames, key);
    if (known)
        return (int64_t)*known;
    uint64_t names = *asys_u64map_get(&py->code_rows, (uint64_t)code);
    uint32_t file = (uint32_t)(names >> 32), name = (uint32_t)names;
    int64_t module = module_of(py, pid, file, err);
    if (module < 0)
        return -1;
    int64_t id = py->next_frame++;
    if (asys_u64map_put(&py->frames, key, (uint64_t)id) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = py->insert_frame;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, code);
    sqlite3_bind_int64(st, 4, module);
    sqlite3_bind_int64(st, 5, name);
    sqlite3_bind_int64(st, 6, file);
    sqlite3_bind_int64(st, 7, line);
    return imp_step(py->imp, st, err) == 0 ? id : -1;
}

/* The callchains row of a stack of frames rows (level 0 innermost). */
static int64_t chain_of(struct python *py, uint32_t pid, const int64_t *frames, uint32_t depth,
                        struct asys_err *err)
{
    int64_t key[MAX_DEPTH + 1];
    key[0] = pid;
    memcpy(key + 1, frames, depth * sizeof *frames);
    size_t len = (depth + 1) * sizeof *key;
    uint32_t index = asys_strmap_get(&py->chains, (const char *)key, len);
    if (index)
        return PYTHON_ID_BASE + index;
    index = ++py->next_chain;
    if (asys_strmap_put(&py->chains, (const char *)key, len, index) != 0)
        return asys_fail(err, "out of memory");
    int64_t id = PYTHON_ID_BASE + index;
    sqlite3_bind_int64(py->insert_chain, 1, id);
    sqlite3_bind_int64(py->insert_chain, 2, pid);
    sqlite3_bind_int64(py->insert_chain, 3, depth);
    if (imp_step(py->imp, py->insert_chain, err) != 0)
        return -1;
    for (uint32_t level = 0; level < depth; level++) {
        sqlite3_stmt *st = py->insert_chain_frame;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, level);
        sqlite3_bind_int64(st, 3, frames[level]);
        if (imp_step(py->imp, st, err) != 0)
            return -1;
    }
    return id;
}

static int import_sample(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    struct python *py = state;
    const struct asys_rec_python_sample *r = (const void *)rec->data;
    struct asys_u64map *codes = image_codes(py);
    size_t room = (rec->size - sizeof *r) / 8;
    uint32_t depth = r->depth < room ? r->depth : (uint32_t)room;
    uint32_t pid = py->imp->seg.pid;
    int64_t frames[MAX_DEPTH], first_code = 0;
    uint32_t first_line = 0, n = 0;
    if (!codes || ns > INT64_MAX)
        return codes ? 0 : asys_fail(err, "out of memory");
    if (depth > MAX_DEPTH)
        depth = MAX_DEPTH;
    for (uint32_t i = 0; i < depth; i++) {
        uint64_t word;
        memcpy(&word, rec->data + sizeof *r + 8 * i, sizeof word);
        uint64_t *code = asys_u64map_get(codes, word >> 32);
        if (!code) {
            if (!py->unknown_codes++)
                imp_warn(py->imp,
                         "%s: a Python sample names a code object never defined; "
                         "its frame is left out",
                         py->imp->seg.member);
            continue;
        }
        if (!n) {
            first_code = (int64_t)*code;
            first_line = (uint32_t)word;
        }
        int64_t frame = frame_of(py, pid, (int64_t)*code, (uint32_t)word, err);
        if (frame < 0)
            return -1;
        frames[n++] = frame;
    }
    if (!n)
        return 0;
    int64_t chain = chain_of(py, pid, frames, n, err);
    if (chain < 0)
        return -1;
    if (r->tid) {
        struct imp_thread *t = imp_thread_get(py->imp, pid, r->tid);
        if (!t)
            return asys_fail(err, "out of memory");
        t->seen = 1;
    }
    sqlite3_stmt *st = py->insert_sample;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, r->tid);
    sqlite3_bind_int64(st, 4, chain);
    sqlite3_bind_int64(st, 5, first_code);
    sqlite3_bind_int64(st, 6, first_line);
    return imp_step(py->imp, st, err);
}

static int import_status(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    static const char *const names[] = {"?",       "sampling", "aliased interpreter", "unsupported",
                                        "stopped", "tracing",  "tracing off"};
    struct python *py = state;
    const struct asys_rec_python_status *r = (const void *)rec->data;
    size_t room = rec->size - sizeof *r;
    int len = (int)(r->text_length < room ? r->text_length : room);
    char version[32] = "";
    if (r->version_hex)
        snprintf(version, sizeof version, "%u.%u.%u", r->version_hex >> 24,
                 (r->version_hex >> 16) & 0xffu, (r->version_hex >> 8) & 0xffu);
    sqlite3_stmt *st = py->insert_status;
    sqlite3_bind_int64(st, 1, py->imp->seg.pid);
    sqlite3_bind_int64(st, 2, ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
    sqlite3_bind_text(st, 3, rec->arg < sizeof names / sizeof names[0] ? names[rec->arg] : "?", -1,
                      SQLITE_STATIC);
    if (*version)
        sqlite3_bind_text(st, 4, version, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 4);
    if (rec->arg == ASYS_PYTHON_SAMPLING)
        sqlite3_bind_null(st, 5);
    else
        sqlite3_bind_text(st, 5, (const char *)(r + 1), len, SQLITE_TRANSIENT);
    return imp_step(py->imp, st, err);
}

static int import_stack(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    (void)ns;
    struct python *py = state;
    const struct asys_rec_python_stack *r = (const void *)rec->data;
    size_t room = (rec->size - sizeof *r) / 8;
    uint32_t depth = r->depth < room ? r->depth : (uint32_t)room;
    if (depth > MAX_DEPTH)
        depth = MAX_DEPTH;
    if (!py->imp->seg.image || !depth)
        return 0;
    if (asys_grow(&py->stacks, &py->stack_cap, py->stack_count, sizeof *py->stacks, 64) != 0)
        return asys_fail(err, "out of memory");
    struct pending_stack *p = malloc(sizeof *p + depth * sizeof(uint64_t));
    if (!p)
        return asys_fail(err, "out of memory");
    *p = (struct pending_stack){py->imp->seg.image, py->imp->seg.pid, r->correlation_id,
                                r->callchain_id, depth};
    memcpy(p->frames, rec->data + sizeof *r, depth * sizeof(uint64_t));
    py->stacks[py->stack_count++] = p;
    return 0;
}

/* Whether a native frame is the interpreter running Python code. */
static int eval_frame(const char *name)
{
    return name && (!strncmp(name, "_PyEval_EvalFrame", 17) || !strcmp(name, "_PyEval_Vector") ||
                    !strcmp(name, "PyEval_EvalCode"));
}

/* The native frames of chain `id` (level 0 first) into out; their count. */
static size_t native_frames(sqlite3_stmt *st, int64_t id, int64_t *out, int *eval, size_t cap)
{
    size_t n = 0;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    while (n < cap && sqlite3_step(st) == SQLITE_ROW) {
        out[n] = sqlite3_column_int64(st, 0);
        eval[n++] = eval_frame((const char *)sqlite3_column_text(st, 1));
    }
    return n;
}

/* One HGGC call's joined stack: native frames inside the interpreter's,
 * the Python frames in place of the eval frames, then the native frames
 * outside (py-spy's --native); without eval frames, Python frames last. */
static int join_stack(struct python *py, const struct pending_stack *p, sqlite3_stmt *natives,
                      sqlite3_stmt *update, struct asys_err *err)
{
    struct asys_u64map *codes = p->img->slot[py->slot];
    int64_t native[MAX_DEPTH], python[MAX_DEPTH], joined[2 * MAX_DEPTH];
    int eval[MAX_DEPTH];
    size_t nn = 0, np = 0, nj = 0;
    uint64_t *global = p->callchain ? asys_u64map_get(&p->img->chains, p->callchain) : NULL;
    if (global)
        nn = native_frames(natives, (int64_t)*global, native, eval, MAX_DEPTH);
    for (uint32_t i = 0; codes && i < p->depth; i++) {
        uint64_t *code = asys_u64map_get(codes, p->frames[i] >> 32);
        if (!code)
            continue;
        int64_t frame = frame_of(py, p->pid, (int64_t)*code, (uint32_t)p->frames[i], err);
        if (frame < 0)
            return -1;
        python[np++] = frame;
    }
    size_t first = nn, last = nn;
    for (size_t i = 0; i < nn; i++)
        if (eval[i]) {
            first = first == nn ? i : first;
            last = i;
        }
    for (size_t i = 0; i < first; i++)
        joined[nj++] = native[i];
    for (size_t i = 0; i < np; i++)
        joined[nj++] = python[i];
    for (size_t i = first == nn ? nn : last + 1; i < nn; i++)
        joined[nj++] = native[i];
    if (!np || nj > MAX_DEPTH)
        nj = nj > MAX_DEPTH ? MAX_DEPTH : nj;
    if (!nj)
        return 0;
    int64_t chain = chain_of(py, p->pid, joined, (uint32_t)nj, err);
    if (chain < 0)
        return -1;
    sqlite3_bind_int64(update, 1, chain);
    sqlite3_bind_int64(update, 2, p->pid);
    sqlite3_bind_int64(update, 3, p->correlation);
    return imp_step(py->imp, update, err);
}

static int python_derive(void *state, struct asys_err *err)
{
    struct python *py = state;
    sqlite3_stmt *natives = NULL, *update = NULL;
    int rc = 0;
    if (!py->stack_count)
        return 0;
    if (imp_prepare(py->imp,
                    "SELECT cf.frame_id, s.value FROM callchain_frames AS cf\n"
                    "JOIN frames AS f ON f.id = cf.frame_id\n"
                    "LEFT JOIN strings AS s ON s.id = f.function_id\n"
                    "WHERE cf.callchain_id = ? ORDER BY cf.level",
                    &natives, err) != 0 ||
        imp_prepare(py->imp,
                    "UPDATE hggc_api_calls SET callchain_id = ? WHERE pid = ? AND "
                    "correlation_id = ?",
                    &update, err) != 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < py->stack_count; i++)
        rc = join_stack(py, py->stacks[i], natives, update, err);
    sqlite3_finalize(natives);
    sqlite3_finalize(update);
    return rc;
}

static const struct imp_record_op python_ops[] = {
    {ASYS_REC_PYTHON_CODE, import_code},
    {ASYS_REC_PYTHON_SAMPLE, import_sample},
    {ASYS_REC_PYTHON_STATUS, import_status},
    {ASYS_REC_PYTHON_STACK, import_stack},
};

const struct imp_family imp_family_python = {
    .name = "python",
    .feature = ASYS_FEATURE_PYTHON,
    .schema = "python.sql",
    .ops = python_ops,
    .op_count = sizeof python_ops / sizeof python_ops[0],
    .init = python_init,
    .derive = python_derive,
    .free = python_free,
};
