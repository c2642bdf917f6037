/* The registry of flame outputs (see flame.h). */
#include "flame.h"

#include <string.h>

#include "out_file.h"

static const struct flame_format folded = {"folded", "folded", 0, flame_write_folded};
static const struct flame_format speedscope = {"speedscope", "speedscope.json", 0,
                                               flame_write_speedscope};
static const struct flame_format pprof = {"pprof", "pb.gz", 1, flame_write_pprof};
static const struct flame_format svg = {"svg", "svg", 0, flame_write_svg};

const struct flame_format *const flame_formats[] = {&folded, &speedscope, &pprof, &svg, NULL};

const struct flame_format *flame_format_find(const char *name)
{
    for (const struct flame_format *const *f = flame_formats; *f; f++)
        if (!strcmp((*f)->name, name))
            return *f;
    return NULL;
}

size_t flame_node_path(const struct calltree *t, uint32_t node, uint32_t *path, size_t max)
{
    size_t depth = t->nodes[node].depth;
    if (depth > max) /* keep the innermost frames: where the weight was spent */
        depth = max;
    for (size_t i = depth; i-- > 0; node = t->nodes[node].parent)
        path[i] = t->nodes[node].function;
    return depth;
}

int flame_export(sqlite3 *db, const struct flame_request *r, struct asys_err *err)
{
    struct stack_set *set = NULL;
    struct calltree *tree = NULL;
    struct asys_out_file *file = NULL;
    FILE *out = NULL;
    int rc = -1;
    if (stack_set_load(db, r->source, &r->filter, &set, err) != 0 ||
        calltree_build(set, CALLTREE_TOP_DOWN, &tree, err) != 0)
        goto out;
    if (asys_out_file_open(&file, r->path, r->force, r->gzip || r->format->gzip, &out, err) != 0) {
        asys_err_wrap(err, "cannot write '%s'", r->path);
        goto out;
    }
    struct flame_input in = {set, tree, r->title};
    int written = r->format->write(out, &in, err) == 0;
    if (asys_out_file_close(file, written, err) != 0 || !written) {
        asys_err_wrap(err, "cannot write '%s'", r->path);
        goto out;
    }
    rc = 0;
out:
    calltree_free(tree);
    stack_set_free(set);
    return rc;
}
