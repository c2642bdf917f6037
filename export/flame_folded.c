/* Folded stacks, flamegraph.pl's input: one line per distinct stack,
 * "outer;...;inner WEIGHT", frames as the top-down tree names them.  A ';'
 * inside a name would split the frame and becomes ':'; line breaks become
 * spaces (the weight is what follows the last space, so spaces are fine). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "flame.h"

#define MAX_FOLDED_DEPTH 4096

struct folded {
    FILE *out;
    const struct calltree *tree;
    uint32_t *path;
};

static void put_frame(FILE *out, const char *name)
{
    for (const char *c = name; *c; c++)
        putc(*c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c, out);
}

static int write_stack(void *ctx, uint32_t node)
{
    struct folded *f = ctx;
    const struct calltree_node *n = &f->tree->nodes[node];
    if (!n->self)
        return 0;
    size_t depth = flame_node_path(f->tree, node, f->path, MAX_FOLDED_DEPTH);
    for (size_t i = 0; i < depth; i++) {
        if (i)
            putc(';', f->out);
        put_frame(f->out, f->tree->set->functions[f->path[i]].name);
    }
    fprintf(f->out, " %" PRIu64 "\n", n->self);
    return ferror(f->out) ? -1 : 0;
}

int flame_write_folded(FILE *out, const struct flame_input *in, struct asys_err *err)
{
    struct folded f = {out, in->tree, malloc(MAX_FOLDED_DEPTH * sizeof(uint32_t))};
    int rc = f.path ? calltree_walk(in->tree, write_stack, &f)
                    : asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    if (rc != 0 && f.path)
        asys_fail_errno(err, errno ? errno : EIO, "cannot write the folded stacks");
    free(f.path);
    return rc ? -1 : 0;
}
