/* An SVG flame graph drawn by asys itself: self-contained, readable without
 * JavaScript.  The top-down tree from the bottom up: the whole weight at the
 * bottom, each function above its caller as wide as its share, siblings by
 * weight (largest on the left); every box has a hover title with its weight
 * and share.  Boxes narrower than a tenth of a pixel are left out (with
 * their callees, which are narrower still); names are cut to fit the box.
 * In a browser it is interactive, as flamegraph.pl's: a click zooms into a
 * box (its callers stretch under it, its callees fill the width), "Reset
 * Zoom" goes back, "Search" (or Ctrl-F) marks the functions a regular
 * expression matches and says how much of the whole they are, and the line
 * at the bottom names the box under the pointer.  --pid/--tid choose the
 * process or thread drawn. */
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
#define DETAILS_HEIGHT 20.0 /* the line under the graph that names the box pointed at */

/* Zoom, search and details, in the spirit of flamegraph.pl's (written here):
 * boxes are <g class="f"> with a <title> ("name (weight unit, share%)"), a
 * <rect> and a <text>, the widest ("all") first. */
static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var boxes, all, details, matched, W, M, CW = %.1f;\n"
    "function init() {\n"
    "  boxes = Array.prototype.slice.call(document.getElementsByClassName('f'));\n"
    "  all = boxes[0]; details = document.getElementById('details');\n"
    "  matched = document.getElementById('matched');\n"
    "  var r = rect(all); M = +r.getAttribute('x'); W = +r.getAttribute('width');\n"
    "  boxes.forEach(function (g) {\n"
    "    var r = rect(g);\n"
    "    g.ox = +r.getAttribute('x'); g.ow = +r.getAttribute('width');\n"
    "    g.oy = +r.getAttribute('y'); g.label = name(g);\n"
    "    g.onclick = function () { zoom(g); };\n"
    "    g.onmouseover = function () { details.textContent = title(g); };\n"
    "    g.onmouseout = function () { details.textContent = ' '; };\n"
    "  });\n"
    "  window.addEventListener('keydown', function (e) {\n"
    "    if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) { e.preventDefault(); search(); "
    "}\n"
    "  });\n"
    "}\n"
    "function rect(g) { return g.getElementsByTagName('rect')[0]; }\n"
    "function title(g) { return g.getElementsByTagName('title')[0].textContent; }\n"
    "function name(g) { return title(g).replace(/ \\([^()]*\\)$/, ''); }\n"
    "function place(g, x, w) {\n"
    "  var r = rect(g), t = g.getElementsByTagName('text')[0];\n"
    "  r.setAttribute('x', x); r.setAttribute('width', w);\n"
    "  t.setAttribute('x', x + 3);\n"
    "  var fit = Math.floor((w - 6) / CW);\n"
    "  t.textContent = w < 3 * CW ? '' : g.label.length <= fit ? g.label\n"
    "    : g.label.substring(0, Math.max(fit - 2, 0)) + '..';\n"
    "  g.style.display = w < 0.1 ? 'none' : '';\n"
    "}\n"
    "function zoom(z) {\n"
    "  var scale = W / z.ow;\n"
    "  boxes.forEach(function (g) {\n"
    "    var inside = g.ox >= z.ox - 1e-6 && g.ox + g.ow <= z.ox + z.ow + 1e-6;\n"
    "    var under = g.oy > z.oy && g.ox <= z.ox + 1e-6 && g.ox + g.ow >= z.ox + z.ow - 1e-6;\n"
    "    if (under) place(g, M, W);\n"
    "    else if (inside && g.oy <= z.oy) place(g, M + (g.ox - z.ox) * scale, g.ow * scale);\n"
    "    else place(g, 0, 0);\n"
    "  });\n"
    "  document.getElementById('unzoom').style.opacity = 1;\n"
    "}\n"
    "function unzoom() {\n"
    "  boxes.forEach(function (g) { place(g, g.ox, g.ow); });\n"
    "  document.getElementById('unzoom').style.opacity = 0;\n"
    "}\n"
    "function search() {\n"
    "  var text = prompt('Search for (a regular expression):', '');\n"
    "  if (text === null) return;\n"
    "  var re; try { re = new RegExp(text); } catch (e) { alert(e); return; }\n"
    "  var spans = [];\n"
    "  boxes.forEach(function (g) {\n"
    "    var hit = text !== '' && g !== all && re.test(g.label);\n"
    "    var r = rect(g);\n"
    "    if (!r.orig) r.orig = r.getAttribute('fill');\n"
    "    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.orig);\n"
    "    if (hit) spans.push([g.ox, g.ox + g.ow]);\n"
    "  });\n"
    "  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
    "  var covered = 0, end = -1;\n"
    "  spans.forEach(function (s) {\n"
    "    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }\n"
    "    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
    "  });\n"
    "  matched.textContent = text === '' ? ' ' : 'Matched: ' + (100 * covered / W).toFixed(1) + "
    "'%%';\n"
    "}\n"
    "]]></script>\n";

struct svg {
    FILE *out;
    const struct calltree *tree;
    uint64_t *offset; /* node -> weight to its left within the graph */
    uint64_t *next_offset; /* node -> where its next child starts */
    double scale; /* pixels per unit of weight */
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
    double y = g->height - MARGIN - DETAILS_HEIGHT - (depth + 1) * FRAME_HEIGHT;
    int r, gr, b;
    colour(name, &r, &gr, &b);
    fputs("<g class=\"f\"><title>", g->out);
    put_xml(g->out, name, SIZE_MAX);
    fprintf(g->out, " (%" PRIu64 " %s, %.2f%%)</title>", weight, g->unit,
            100.0 * (double)weight / (double)whole);
    fprintf(g->out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" "
            "rx=\"2\" ry=\"2\"/>",
            x, y, width, FRAME_HEIGHT - 1, r, gr, b);
    /* always a text element: zooming may give the box the room */
    fprintf(g->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 5);
    if (width >= 3 * CHAR_WIDTH)
        put_xml(g->out, name, (size_t)((width - 6) / CHAR_WIDTH));
    fputs("</text>", g->out);
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
    g.height =
        TITLE_HEIGHT + (visible_depth(t, g.scale) + 1) * FRAME_HEIGHT + 2 * MARGIN + DETAILS_HEIGHT;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" onload=\"init()\">\n"
            "<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); } "
            ".title { font-size: 17px; } .f:hover rect { stroke: black; stroke-width: 0.5; } "
            ".button { cursor: pointer; } .f { cursor: pointer; }</style>\n",
            IMAGE_WIDTH, g.height, IMAGE_WIDTH, g.height);
    fprintf(out, svg_script, CHAR_WIDTH);
    fprintf(out,
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
            "<text id=\"unzoom\" class=\"button\" x=\"%.0f\" y=\"24\" style=\"opacity:0\" "
            "onclick=\"unzoom()\">Reset Zoom</text>\n"
            "<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" "
            "onclick=\"search()\">Search</text>\n"
            "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
            "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n"
            "<text class=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
            MARGIN, IMAGE_WIDTH - MARGIN, IMAGE_WIDTH - MARGIN, g.height - 6, MARGIN, g.height - 6,
            IMAGE_WIDTH / 2);
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
