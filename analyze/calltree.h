/* The call-tree builder over weighted stacks (stack_samples.h): one for
 * every source (CPU samples, OS runtime and HGGC call stacks, later memory
 * and Python) and every view of the manual's Function View:
 *   top-down:  root -> outermost caller -> ... -> the sampled function;
 *              self = weight where the node's function is the leaf
 *   bottom-up: root -> the sampled function -> its caller -> ...;
 *              every weight is self weight of the row's first function
 *   flat:      per function, self weight and total weight (a sample counts
 *              once for a function however often it recurses)
 * Weights are aggregated per distinct stack first, so building costs one
 * walk per stack, not per sample. */
#ifndef ASYS_CALLTREE_H
#define ASYS_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"
#include "stack_samples.h"

enum calltree_view { CALLTREE_TOP_DOWN, CALLTREE_BOTTOM_UP };

#define CALLTREE_ROOT 0u
#define CALLTREE_NONE UINT32_MAX

struct calltree_node {
    uint32_t function; /* stack_set function index; CALLTREE_NONE at the root */
    uint32_t parent;
    uint32_t first_child; /* ordered by total weight, largest first, once sorted */
    uint32_t next_sibling;
    uint32_t depth; /* 0 at the root */
    uint64_t self, total;
};

struct calltree {
    const struct stack_set *set; /* borrowed */
    enum calltree_view view;
    struct calltree_node *nodes; /* [0] is the root */
    size_t count, cap;
    struct asys_u64map children; /* parent << 32 | function -> node */
};

int calltree_build(const struct stack_set *set, enum calltree_view view, struct calltree **out,
                   struct asys_err *err);
void calltree_free(struct calltree *t);

/* Visits the nodes depth first, children by weight (largest first), the
 * root excluded; stops when `visit` returns non-zero and returns that. */
int calltree_walk(const struct calltree *t, int (*visit)(void *ctx, uint32_t node), void *ctx);

struct calltree_flat_row {
    uint32_t function;
    uint64_t self, total;
};

/* Per function; ordered by self weight, then total, then name.  *rows is
 * malloc'd. */
int calltree_flat(const struct stack_set *set, struct calltree_flat_row **rows, size_t *count,
                  struct asys_err *err);

#endif
