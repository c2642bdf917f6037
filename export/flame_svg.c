/* An SVG flame graph drawn by asys itself: self-contained, readable without
 * JavaScript.  The top-down tree from the bottom up: the whole weight at the
 * bottom, each function above its caller as wide as its share, siblings by
 * weight (largest on the left); every box has a hover title with its weight
 * and share.  Boxes narrower than a tenth of a pixel are left out (with
 * their callees, which are narrower still); names are cut to fit the box. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "output_format.h"

#define IMAGE_WIDTH 1200.0
#define MARGIN 10.0
#define TITLE_HEIGHT 40.0
#define FRAME_HEIGHT 16.0
#define CHAR_WIDTH 7.0 /* of the 12 px monospace font, for cutting names */
#define MIN_BOX_WIDTH 0.1

struct svg {
    FILE *out;
    const struct calltree *tree;
    uint64_t *offset;      /* node -> weight to its left within the graph */
    uint64_t *next_offset; /* node -> where its next child starts */
    double scale;          /* pixels per unit of weight */
    double height;
    const char *unit;
};

/* Text for XML: the five special characters escaped, bytes that do not
 * start valid UTF-8 as U+FFFD; at most `max_chars` characters, ".." when cut. */
static void put_xml(FILE *out, const char *text, size_t max_chars)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t left = strlen(text), chars = 0;
    while (left) {
        if (chars + 1 >= max_chars && left > 1) {
            fputs("..", out);
            return;
        }
        size_t n = asys_utf8_sequence(s, left);
        if (n == 0) {
            fputs("\xEF\xBF\xBD", out);
            n = 1;
        } else if (*s == '&') {
            fputs("&amp;", out);
        } else if (*s == '<') {
            fputs("&lt;", out);
        } else if (*s == '>') {
            fputs("&gt;", out);
        } else if (*s == '"') {
            fputs("&quot;", out);
        } else if (*s < 0x20) { /* not allowed in XML 1.0 */
            putc(' ', out);
        } else {
            fwrite(s, 1, n, out);
        }
        s += n;
        left -= n;
        chars++;
    }
}

/* flamegraph.pl's "hot" palette, from a hash of the name: stable colours. */
static void colour(const char *name, int *r, int *g, int *b)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    *r = 205 + (int)(h % 50);
    *g = (int)((h >> 8) % 230);
    *b = (int)((h >> 16) % 55);
}

static void draw_box(struct svg *g, const char *name, double x, double width, uint32_t depth,
                     uint64_t weight, uint64_t whole)
{
    double y = g->height - MARGIN - (depth + 1) * FRAME_HEIGHT;
    int r, gr, b;
    colour(name, &r, &gr, &b);
    fputs("<g><title>", g->out);
    put_xml(g->out, name, SIZE_MAX);
    fprintf(g->out, " (%" PRIu64 " %s, %.2f%%)</title>", weight, g->unit,
            100.0 * (double)weight / (double)whole);
    fprintf(g->out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" "
            "rx=\"2\" ry=\"2\"/>",
            x, y, width, FRAME_HEIGHT - 1, r, gr, b);
    if (width >= 3 * CHAR_WIDTH) {
        fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 5);
        put_xml(g->out, name, (size_t)((width - 6) / CHAR_WIDTH));
        fputs("</text>", g->out);
    }
    fputs("</g>\n", g->out);
}

static int draw_node(void *ctx, uint32_t node)
{
    struct svg *g = ctx;
    const struct calltree_node *n = &g->tree->nodes[node];
    g->offset[node] = g->next_offset[n->parent];
    g->next_offset[n->parent] += n->total;
    g->next_offset[node] = g->offset[node];
    double width = (double)n->total * g->scale;
    if (width >= MIN_BOX_WIDTH)
        draw_box(g, g->tree->set->functions[n->function].name,
                 MARGIN + (double)g->offset[node] * g->scale, width, n->depth, n->total,
                 g->tree->nodes[CALLTREE_ROOT].total);
    return ferror(g->out) ? -1 : 0;
}

static uint32_t visible_depth(const struct calltree *t, double scale)
{
    uint32_t deepest = 0;
    for (size_t i = 1; i < t->count; i++)
        if ((double)t->nodes[i].total * scale >= MIN_BOX_WIDTH && t->nodes[i].depth > deepest)
            deepest = t->nodes[i].depth;
    return deepest;
}

int flame_write_svg(FILE *out, const struct flame_input *in, struct asys_err *err)
{
    const struct calltree *t = in->tree;
    uint64_t whole = t->nodes[CALLTREE_ROOT].total;
    struct svg g = {out,
                    t,
                    calloc(t->count, sizeof(uint64_t)),
                    calloc(t->count, sizeof(uint64_t)),
                    (IMAGE_WIDTH - 2 * MARGIN) / (double)(whole ? whole : 1),
                    0,
                    t->set->source->unit};
    int rc = -1;
    if (!g.offset || !g.next_offset) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    g.height = TITLE_HEIGHT + (visible_depth(t, g.scale) + 1) * FRAME_HEIGHT + 2 * MARGIN;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
            "<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); } "
            ".title { font-size: 17px; }</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
            "<text class=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
            IMAGE_WIDTH, g.height, IMAGE_WIDTH, g.height, IMAGE_WIDTH / 2);
    put_xml(out, in->title, SIZE_MAX);
    fprintf(out, ": %s stacks, %" PRIu64 " %s</text>\n", t->set->source->name, whole, g.unit);
    draw_box(&g, "all", MARGIN, IMAGE_WIDTH - 2 * MARGIN, 0, whole, whole ? whole : 1);
    int drawn = calltree_walk(t, draw_node, &g) == 0;
    if (drawn)
        fputs("</svg>\n", out);
    if (!drawn || ferror(out)) {
        asys_fail_errno(err, errno ? errno : EIO, "cannot write the flame graph");
        goto out;
    }
    rc = 0;
out:
    free(g.offset);
    free(g.next_offset);
    return rc;
}
