/* The call-tree builder (see calltree.h). */
#define _GNU_SOURCE /* qsort_r */
#include "calltree.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

static int64_t add_node(struct calltree *t, uint32_t parent, uint32_t function)
{
    if (t->count >= UINT32_MAX - 1 ||
        asys_grow(&t->nodes, &t->cap, t->count, sizeof *t->nodes, 1024) != 0)
        return -1;
    t->nodes[t->count] = (struct calltree_node){
        function, parent, CALLTREE_NONE, CALLTREE_NONE, t->nodes[parent].depth + 1, 0, 0};
    if (asys_u64map_put(&t->children, (uint64_t)parent << 32 | function, t->count) != 0)
        return -1;
    return (int64_t)t->count++;
}

static int64_t child(struct calltree *t, uint32_t parent, uint32_t function)
{
    uint64_t *known = asys_u64map_get(&t->children, (uint64_t)parent << 32 | function);
    return known ? (int64_t)*known : add_node(t, parent, function);
}

/* One distinct stack with the weight of all its samples. */
static int add_chain(struct calltree *t, const struct stack_chain *c, uint64_t weight)
{
    const uint32_t *fn = t->set->chain_functions + c->first;
    uint32_t node = CALLTREE_ROOT;
    t->nodes[node].total += weight;
    for (uint32_t i = 0; i < c->depth; i++) {
        uint32_t f = t->view == CALLTREE_TOP_DOWN ? fn[c->depth - 1 - i] : fn[i];
        int64_t next = child(t, node, f);
        if (next < 0)
            return -1;
        node = (uint32_t)next;
        t->nodes[node].total += weight;
    }
    t->nodes[node].self += weight;
    return 0;
}

/* Siblings by weight, largest first, then by name: a stable order for
 * every output. */
static int by_parent_then_weight(const void *a, const void *b, void *ctx)
{
    const struct calltree *t = ctx;
    const struct calltree_node *x = &t->nodes[*(const uint32_t *)a];
    const struct calltree_node *y = &t->nodes[*(const uint32_t *)b];
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(t->set->functions[x->function].name, t->set->functions[y->function].name);
}

static int link_children(struct calltree *t)
{
    size_t n = t->count - 1;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)(i + 1);
    qsort_r(order, n, sizeof *order, by_parent_then_weight, t);
    for (size_t i = n; i-- > 0;) { /* backwards: each node becomes its parent's first child */
        struct calltree_node *node = &t->nodes[order[i]];
        node->next_sibling = t->nodes[node->parent].first_child;
        t->nodes[node->parent].first_child = order[i];
    }
    free(order);
    return 0;
}

int calltree_build(const struct stack_set *set, enum calltree_view view, struct calltree **out,
                   struct asys_err *err)
{
    struct calltree *t = calloc(1, sizeof *t);
    uint64_t *chain_weight = calloc(set->chain_count ? set->chain_count : 1, sizeof *chain_weight);
    int rc = -1;
    *out = NULL;
    if (!t || !chain_weight)
        goto out;
    t->set = set;
    t->view = view;
    asys_u64map_init(&t->children);
    if (asys_grow(&t->nodes, &t->cap, 0, sizeof *t->nodes, 1024) != 0)
        goto out;
    t->nodes[0] =
        (struct calltree_node){CALLTREE_NONE, CALLTREE_NONE, CALLTREE_NONE, CALLTREE_NONE, 0, 0, 0};
    t->count = 1;
    for (size_t i = 0; i < set->sample_count; i++)
        chain_weight[set->samples[i].chain] += set->samples[i].weight;
    for (size_t c = 0; c < set->chain_count; c++)
        if (chain_weight[c] && add_chain(t, &set->chains[c], chain_weight[c]) != 0)
            goto out;
    if (link_children(t) != 0)
        goto out;
    *out = t;
    t = NULL;
    rc = 0;
out:
    if (rc != 0)
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory building the call tree");
    free(chain_weight);
    calltree_free(t);
    return rc;
}

void calltree_free(struct calltree *t)
{
    if (!t)
        return;
    free(t->nodes);
    asys_u64map_free(&t->children);
    free(t);
}

int calltree_walk(const struct calltree *t, int (*visit)(void *ctx, uint32_t node), void *ctx)
{
    /* depth first without recursion: a recursive program's stacks are deep */
    uint32_t node = t->nodes[CALLTREE_ROOT].first_child;
    while (node != CALLTREE_NONE) {
        int rc = visit(ctx, node);
        if (rc != 0)
            return rc;
        const struct calltree_node *n = &t->nodes[node];
        if (n->first_child != CALLTREE_NONE) {
            node = n->first_child;
            continue;
        }
        while (node != CALLTREE_ROOT && t->nodes[node].next_sibling == CALLTREE_NONE)
            node = t->nodes[node].parent;
        node = node == CALLTREE_ROOT ? CALLTREE_NONE : t->nodes[node].next_sibling;
    }
    return 0;
}

static int by_self_then_total(const void *a, const void *b, void *ctx)
{
    const struct stack_set *set = ctx;
    const struct calltree_flat_row *x = a, *y = b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(set->functions[x->function].name, set->functions[y->function].name);
}

int calltree_flat(const struct stack_set *set, struct calltree_flat_row **rows, size_t *count,
                  struct asys_err *err)
{
    size_t n = set->function_count;
    struct calltree_flat_row *out = calloc(n ? n : 1, sizeof *out);
    uint64_t *chain_weight = calloc(set->chain_count ? set->chain_count : 1, sizeof *chain_weight);
    uint32_t *seen = calloc(n ? n : 1, sizeof *seen); /* chain index + 1 that counted it last */
    int rc = -1;
    if (!out || !chain_weight || !seen) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory building the flat profile");
        goto out;
    }
    for (size_t i = 0; i < set->sample_count; i++)
        chain_weight[set->samples[i].chain] += set->samples[i].weight;
    for (size_t f = 0; f < n; f++)
        out[f].function = (uint32_t)f;
    for (size_t c = 0; c < set->chain_count; c++) {
        const struct stack_chain *chain = &set->chains[c];
        const uint32_t *fn = set->chain_functions + chain->first;
        if (!chain_weight[c] || !chain->depth)
            continue;
        out[fn[0]].self += chain_weight[c];
        for (uint32_t i = 0; i < chain->depth; i++)
            if (seen[fn[i]] != c + 1) {
                seen[fn[i]] = (uint32_t)(c + 1);
                out[fn[i]].total += chain_weight[c];
            }
    }
    size_t used = 0; /* functions only ever seen with weight 0 stay out */
    for (size_t f = 0; f < n; f++)
        if (out[f].total)
            out[used++] = out[f];
    qsort_r(out, used, sizeof *out, by_self_then_total, (void *)set);
    *rows = out;
    *count = used;
    out = NULL;
    rc = 0;
out:
    free(out);
    free(chain_weight);
    free(seen);
    return rc;
}
