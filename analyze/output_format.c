#include "output_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Rows buffered to size the columns of the column/table formats; later rows
 * are printed with the same widths. */
#define WIDTH_SAMPLE_ROWS 10000

int asys_output_width(int fd)
{
    struct winsize ws;
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    const char *columns = getenv("COLUMNS");
    long n = columns ? strtol(columns, NULL, 10) : 0;
    return n >= 40 && n <= 100000 ? (int)n : 160;
}

int asys_format_from_name(const char *name, enum asys_format *out)
{
    static const struct {
        const char *name;
        enum asys_format f;
    } names[] = {{"column", ASYS_FMT_COLUMN},
                 {"table", ASYS_FMT_TABLE},
                 {"csv", ASYS_FMT_CSV},
                 {"tsv", ASYS_FMT_TSV},
                 {"json", ASYS_FMT_JSON}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!strcmp(name, names[i].name)) {
            *out = names[i].f;
            return 0;
        }
    }
    return -1;
}

const char *asys_format_extension(enum asys_format f)
{
    switch (f) {
    case ASYS_FMT_CSV:
        return "csv";
    case ASYS_FMT_TSV:
        return "tsv";
    case ASYS_FMT_JSON:
        return "json";
    default:
        return "txt";
    }
}

int asys_timeunit_from_name(const char *name, struct asys_output_options *o)
{
    static const struct {
        const char *a, *b, *unit;
        long long div;
    } units[] = {{"ns", "nsec", "ns", 1},
                 {"us", "usec", "us", 1000},
                 {"ms", "msec", "ms", 1000000},
                 {"s", "sec", "s", 1000000000}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (!strcmp(name, units[i].a) || !strcmp(name, units[i].b)) {
            o->time_unit = units[i].unit;
            o->time_divisor = units[i].div;
            return 0;
        }
    }
    return -1;
}

/* ---- cells ---------------------------------------------------------------- */

struct column {
    char *header;
    int is_time;
    int decimals; /* of non-time reals: 3 for megabyte columns (a KB shows), else 1 */
    /* of reals in csv/tsv/json: the unit's own resolution (6 for megabytes:
     * one byte), 0: the shortest text that reads back exactly */
    int stream_decimals;
    int numeric; /* right-aligned; a JSON number */
    int number_text; /* declared ASYS_DECLTYPE_NUMBER: its TEXT digits are numbers */
    int numeric_known;
    size_t width;
};

static int decimals_for(long long divisor)
{
    int d = 0;
    while (divisor > 1) {
        divisor /= 10;
        d++;
    }
    return d;
}

size_t asys_format_i64(char *out, int64_t v)
{
    char digits[24];
    uint64_t magnitude = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    size_t n = sizeof digits;
    do {
        digits[--n] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (v < 0)
        digits[--n] = '-';
    memcpy(out, digits + n, sizeof digits - n);
    return sizeof digits - n;
}

/* An integral value as "%.*f" prints it, without the binary search below (a
 * counter's values are mostly integers: the search was a twentieth of a
 * JSON export). */
static int format_integral(char *buf, size_t size, int64_t v, int decimals)
{
    char text[ASYS_I64_DIGITS_MAX];
    int len = (int)asys_format_i64(text, v);
    if (decimals > 0)
        return snprintf(buf, size, "%.*s.%0*d", len, text, decimals, 0);
    if (size > 0) {
        size_t copied = (size_t)len < size ? (size_t)len : size - 1;
        memcpy(buf, text, copied);
        buf[copied] = '\0';
    }
    return len;
}

int asys_format_real(char *buf, size_t size, double v, int min_decimals)
{
    if (!isfinite(v))
        return snprintf(buf, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    if (min_decimals < 0)
        min_decimals = 0;
    /* below 2^53: exact; -0.0 is left to snprintf ("-0") */
    if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v && !(v == 0 && signbit(v)))
        return format_integral(buf, size, (int64_t)v, min_decimals);
    if (v == 0)
        return snprintf(buf, size, "%.*f", min_decimals, v);
    /* the fewest significant digits that read back exactly (17 always do) */
    char e[40];
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(e, sizeof e, "%.*e", mid - 1, v);
        if (strtod(e, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(e, sizeof e, "%.*e", lo - 1, v);
    const char *exponent = strchr(e, 'e');
    int exp10 = exponent ? atoi(exponent + 1) : 0;
    if (exp10 >= 17 || exp10 < -6)
        return snprintf(buf, size, "%.*g", lo, v);
    int decimals = lo - 1 - exp10;
    return snprintf(buf, size, "%.*f", decimals > min_decimals ? decimals : min_decimals, v);
}

int asys_is_integer_text(const char *s)
{
    if (*s == '-')
        s++;
    size_t n = strspn(s, "0123456789");
    return n >= 1 && n <= 20 && !s[n] && !(s[0] == '0' && n > 1);
}

/* Decimals of a time in a unit above ns where people read it (column,
 * table): three, whatever the unit (ns in us, us in ms, ms in s); csv, tsv
 * and json keep every ns (format_time). */
#define TIME_DISPLAY_DECIMALS 3

/* ns / divisor with the unit's decimals, exactly (integer arithmetic). */
static void format_time(char *buf, size_t size, long long ns, long long divisor)
{
    unsigned long long v = ns < 0 ? 0ull - (unsigned long long)ns : (unsigned long long)ns;
    unsigned long long d = (unsigned long long)divisor;
    int decimals = decimals_for(divisor);
    decimals = decimals < 1 ? 1 : decimals > 18 ? 18 : decimals;
    snprintf(buf, size, "%s%llu.%0*llu", ns < 0 ? "-" : "", v / d, decimals, v % d);
}

static int is_stream_format(enum asys_format f)
{
    return f == ASYS_FMT_CSV || f == ASYS_FMT_TSV || f == ASYS_FMT_JSON;
}

/* Formats one cell into buf; returns 0 for NULL. */
static int format_cell(sqlite3_stmt *st, int i, const struct column *c,
                       const struct asys_output_options *o, char *buf, size_t size,
                       const char **text)
{
    int type = sqlite3_column_type(st, i);
    *text = buf;
    switch (type) {
    case SQLITE_NULL:
        buf[0] = '\0';
        return 0;
    case SQLITE_INTEGER:
        if (c->is_time && o->time_divisor > 1 && is_stream_format(o->format))
            format_time(buf, size, (long long)sqlite3_column_int64(st, i), o->time_divisor);
        else if (c->is_time && o->time_divisor > 1)
            snprintf(buf, size, "%.*f", TIME_DISPLAY_DECIMALS,
                     (double)sqlite3_column_int64(st, i) / (double)o->time_divisor);
        else
            snprintf(buf, size, "%lld", (long long)sqlite3_column_int64(st, i));
        return 1;
    case SQLITE_FLOAT: {
        /* one rule per unit: a time or a size to its unit's resolution in
         * the machine formats, to three decimals for reading */
        double v = sqlite3_column_double(st, i);
        int stream = is_stream_format(o->format);
        int decimals = c->decimals, fixed = stream ? c->stream_decimals : 1;
        if (c->is_time && o->time_divisor > 1) {
            v /= (double)o->time_divisor;
            decimals = stream ? decimals_for(o->time_divisor) : TIME_DISPLAY_DECIMALS;
            fixed = 1;
        }
        if (!isfinite(v) || !fixed)
            asys_format_real(buf, size, v, decimals); /* reads back exactly */
        else
            snprintf(buf, size, "%.*f", fixed > 1 ? fixed : decimals, v);
        return 1;
    }
    case SQLITE_BLOB:
        snprintf(buf, size, "<%d bytes>", sqlite3_column_bytes(st, i));
        return 1;
    default:
        *text = (const char *)sqlite3_column_text(st, i);
        if (!*text)
            *text = "";
        return 1;
    }
}

static int is_number_type(int type)
{
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
}

/* ---- escaping ---------------------------------------------------------------- */

/* U+FFFD, what a byte that does not start valid UTF-8 becomes. */
static const char replacement[] = "\xef\xbf\xbd";

/* Writes the multi-byte sequence at p (returns its length), or U+FFFD for a
 * byte that starts none (returns 1); 0 for an ASCII byte, left to the caller. */
static size_t put_non_ascii(FILE *out, const unsigned char *p, size_t left)
{
    if (*p < 0x80)
        return 0;
    size_t n = asys_utf8_sequence(p, left);
    if (!n) {
        fputs(replacement, out);
        return 1;
    }
    fwrite(p, 1, n, out);
    return n;
}

/* Whether s is plain ASCII (most fields: written as they are). */
static int is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return 0;
    return 1;
}

static void write_csv_field(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    int quote = strpbrk(s, ",\"\r\n") != NULL;
    if (!quote && is_ascii(s)) {
        fputs(s, out);
        return;
    }
    if (quote)
        fputc('"', out);
    for (size_t i = 0; i < len;) {
        size_t n = put_non_ascii(out, p + i, len - i);
        if (n) {
            i += n;
            continue;
        }
        if (p[i] == '"')
            fputc('"', out);
        fputc(p[i++], out);
    }
    if (quote)
        fputc('"', out);
}

static void write_tsv_field(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    if (!strpbrk(s, "\t\n\r\\") && is_ascii(s)) {
        fputs(s, out);
        return;
    }
    for (size_t i = 0; i < len;) {
        size_t n = put_non_ascii(out, p + i, len - i);
        if (n) {
            i += n;
            continue;
        }
        switch (p[i]) {
        case '\t':
            fputs("\\t", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        default:
            fputc(p[i], out);
        }
        i++;
    }
}

/* Column/table cells: control characters shown escaped so rows stay rows;
 * each byte that does not start valid UTF-8 shown as U+FFFD. */
static char *display_text(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n * 4 + 1);
    if (!d)
        return NULL;
    char *o = d;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = p[i] < 0x80 ? 1 : asys_utf8_sequence(p + i, n - i);
        if (!len) {
            memcpy(o, replacement, 3);
            o += 3;
            i++;
            continue;
        }
        if (len > 1) {
            memcpy(o, p + i, len);
            o += len;
            i += len;
            continue;
        }
        if (p[i] == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else if (p[i] == '\t') {
            *o++ = '\\';
            *o++ = 't';
        } else if (p[i] < 0x20 || p[i] == 0x7f) {
            o += sprintf(o, "\\x%02x", p[i]);
        } else {
            *o++ = (char)p[i];
        }
        i++;
    }
    *o = '\0';
    return d;
}

/* Display width: code points, not bytes. */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *out, size_t n, char c)
{
    while (n--)
        fputc(c, out);
}

/* ---- column and table ------------------------------------------------------------ */

struct grid {
    struct column *cols;
    int ncols;
    size_t wrap; /* column format: the last column's room on a line, 0: no wrapping */
    size_t indent; /* where the last column starts */
    int tree_label; /* column indexes, -1: not a tree */
    int tree_level;
    char **cells; /* row-major, NULL for SQL NULL */
    size_t rows;
    size_t cap;
};

static void print_cell(FILE *out, const struct column *c, const char *text)
{
    size_t w = display_width(text);
    size_t fill = c->width > w ? c->width - w : 0;
    if (c->numeric)
        pad(out, fill, ' ');
    fputs(text, out);
    if (!c->numeric)
        pad(out, fill, ' ');
}

/* The last column's text in lines of at most g->wrap code points, broken
 * after a space where one lies in the second half of a line. */
static void print_wrapped(FILE *out, const struct grid *g, const char *text)
{
    for (int first = 1; *text; first = 0) {
        if (!first) {
            fputc('\n', out);
            pad(out, g->indent, ' ');
            while (*text == ' ')
                text++;
        }
        size_t taken = 0, points = 0, at_space = 0;
        while (text[taken] && points < g->wrap) {
            if (text[taken] == ' ' && points >= g->wrap / 2)
                at_space = taken + 1;
            taken++;
            while (((unsigned char)text[taken] & 0xc0) == 0x80) /* the rest of a code point */
                taken++;
            points++;
        }
        size_t shown = taken;
        if (text[taken] && at_space) /* the space goes with the break */
            shown = (taken = at_space) - 1;
        fwrite(text, 1, shown, out);
        text += taken;
    }
}

static void print_row(FILE *out, const struct grid *g, char **cells, enum asys_format f)
{
    for (int i = 0; i < g->ncols; i++) {
        if (f == ASYS_FMT_TABLE)
            fputs(i ? " | " : "| ", out);
        else
            fputs(i ? "  " : " ", out);
        const char *text = cells[i] ? cells[i] : "";
        /* the last column of the column format is not padded */
        if (f == ASYS_FMT_COLUMN && i == g->ncols - 1 && g->wrap && display_width(text) > g->wrap)
            print_wrapped(out, g, text);
        else if (f == ASYS_FMT_COLUMN && i == g->ncols - 1 && !g->cols[i].numeric)
            fputs(text, out);
        else
            print_cell(out, &g->cols[i], text);
    }
    fputs(f == ASYS_FMT_TABLE ? " |\n" : "\n", out);
}

static void print_rule(FILE *out, const struct grid *g, enum asys_format f)
{
    if (f == ASYS_FMT_TABLE) {
        for (int i = 0; i < g->ncols; i++) {
            fputs(i ? "-+-" : "+-", out);
            pad(out, g->cols[i].width, '-');
        }
        fputs("-+\n", out);
        return;
    }
    for (int i = 0; i < g->ncols; i++) {
        fputs(i ? "  " : " ", out);
        pad(out, g->cols[i].width, '-');
    }
    fputc('\n', out);
}

static void print_header(FILE *out, const struct grid *g, enum asys_format f)
{
    char *names[256];
    for (int i = 0; i < g->ncols && i < 256; i++)
        names[i] = g->cols[i].header;
    if (f == ASYS_FMT_TABLE)
        print_rule(out, g, f);
    print_row(out, g, names, f);
    print_rule(out, g, f);
}

/* Reads one row's cells as display strings. */
/* The label indented by its level (tree reports). */
static char *indented(char *text, long long level)
{
    if (!text || level <= 0)
        return text;
    if (level > 64)
        level = 64;
    size_t n = strlen(text), indent = (size_t)level * 2;
    char *out = malloc(indent + n + 1);
    if (out) {
        memset(out, ' ', indent);
        memcpy(out + indent, text, n + 1);
    }
    free(text);
    return out;
}

static char **row_cells(sqlite3_stmt *st, struct grid *g, const struct asys_output_options *o)
{
    char **cells = calloc((size_t)g->ncols, sizeof *cells);
    if (!cells)
        return NULL;
    for (int i = 0; i < g->ncols; i++) {
        char buf[64];
        const char *text;
        struct column *c = &g->cols[i];
        if (!format_cell(st, i, c, o, buf, sizeof buf, &text))
            continue;
        if (!c->numeric_known) {
            int type = sqlite3_column_type(st, i);
            c->numeric = is_number_type(type) ||
                         (c->number_text && type == SQLITE_TEXT && asys_is_integer_text(text));
            c->numeric_known = 1;
        }
        cells[i] = display_text(text);
        if (i == g->tree_label && g->tree_level >= 0)
            cells[i] = indented(cells[i], sqlite3_column_int64(st, g->tree_level));
    }
    return cells;
}

static void free_cells(char **cells, int n)
{
    if (!cells)
        return;
    for (int i = 0; i < n; i++)
        free(cells[i]);
    free(cells);
}

/* Column format wider than o->max_width: the last column, when it is
 * text, wraps within what the others leave (at least 24 code points). */
static void set_wrap(struct grid *g, const struct asys_output_options *o)
{
    struct column *last = &g->cols[g->ncols - 1];
    g->wrap = 0;
    g->indent = 1;
    for (int i = 0; i + 1 < g->ncols; i++)
        g->indent += g->cols[i].width + 2;
    if (o->format != ASYS_FMT_COLUMN || o->max_width <= 0 || last->numeric ||
        g->indent + 24 > (size_t)o->max_width || g->indent + last->width <= (size_t)o->max_width)
        return;
    g->wrap = (size_t)o->max_width - g->indent;
    last->width = g->wrap;
}

static long long write_grid(FILE *out, sqlite3_stmt *st, struct grid *g,
                            const struct asys_output_options *o, struct asys_err *err)
{
    char ***rows = NULL;
    size_t nrows = 0, cap = 0;
    long long total = 0;
    int rc = SQLITE_DONE;
    while (nrows < WIDTH_SAMPLE_ROWS && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (nrows == cap) {
            cap = cap ? cap * 2 : 64;
            char ***bigger = realloc(rows, cap * sizeof *bigger);
            if (!bigger)
                goto oom;
            rows = bigger;
        }
        rows[nrows] = row_cells(st, g, o);
        if (!rows[nrows])
            goto oom;
        nrows++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        for (size_t r = 0; r < nrows; r++)
            free_cells(rows[r], g->ncols);
        free(rows);
        return asys_fail(err, "%s", sqlite3_errmsg(sqlite3_db_handle(st)));
    }
    if (o->title)
        fputs(o->title, out);
    if (nrows == 0 && o->empty_message) {
        fprintf(out, "%s\n", o->empty_message);
        free(rows);
        return 0;
    }
    for (int i = 0; i < g->ncols; i++)
        g->cols[i].width = display_width(g->cols[i].header);
    for (size_t r = 0; r < nrows; r++)
        for (int i = 0; i < g->ncols; i++)
            if (rows[r][i] && display_width(rows[r][i]) > g->cols[i].width)
                g->cols[i].width = display_width(rows[r][i]);
    set_wrap(g, o);
    print_header(out, g, o->format);
    for (size_t r = 0; r < nrows; r++) {
        print_row(out, g, rows[r], o->format);
        free_cells(rows[r], g->ncols);
    }
    free(rows);
    total = (long long)nrows;
    if (nrows == WIDTH_SAMPLE_ROWS) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            char **cells = row_cells(st, g, o);
            if (!cells)
                return asys_fail(err, "out of memory");
            print_row(out, g, cells, o->format);
            free_cells(cells, g->ncols);
            total++;
        }
    }
    if (rc != SQLITE_DONE)
        return asys_fail(err, "%s", sqlite3_errmsg(sqlite3_db_handle(st)));
    if (o->format == ASYS_FMT_TABLE)
        print_rule(out, g, o->format);
    return total;
oom:
    for (size_t r = 0; r < nrows; r++)
        free_cells(rows[r], g->ncols);
    free(rows);
    return asys_fail(err, "out of memory");
}

/* ---- csv, tsv, json ------------------------------------------------------------------- */

static long long write_stream(FILE *out, sqlite3_stmt *st, struct grid *g,
                              const struct asys_output_options *o, struct asys_err *err)
{
    enum asys_format f = o->format;
    if (f == ASYS_FMT_JSON) {
        fputs("[", out);
    } else {
        for (int i = 0; i < g->ncols; i++) {
            if (i)
                fputc(f == ASYS_FMT_CSV ? ',' : '\t', out);
            if (f == ASYS_FMT_CSV)
                write_csv_field(out, g->cols[i].header);
            else
                write_tsv_field(out, g->cols[i].header);
        }
        fputc('\n', out);
    }
    long long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (f == ASYS_FMT_JSON)
            fputs(rows ? ",\n{" : "\n{", out);
        for (int i = 0; i < g->ncols; i++) {
            char buf[64];
            const char *text;
            int present = format_cell(st, i, &g->cols[i], o, buf, sizeof buf, &text);
            if (f == ASYS_FMT_JSON) {
                if (i)
                    fputc(',', out);
                asys_json_write_string(out, g->cols[i].header, strlen(g->cols[i].header));
                fputc(':', out);
                int type = sqlite3_column_type(st, i);
                if (!present || (type == SQLITE_FLOAT && !isfinite(sqlite3_column_double(st, i))))
                    fputs("null", out);
                else if (is_number_type(type))
                    fputs(text, out);
                else if (type == SQLITE_TEXT && g->cols[i].number_text &&
                         asys_is_integer_text(text))
                    fputs(text, out); /* a uint64 beyond SQLite's integers */
                else if (type == SQLITE_TEXT)
                    asys_json_write_string(out, text, (size_t)sqlite3_column_bytes(st, i));
                else
                    asys_json_write_string(out, text, strlen(text));
                continue;
            }
            if (i)
                fputc(f == ASYS_FMT_CSV ? ',' : '\t', out);
            if (f == ASYS_FMT_CSV)
                write_csv_field(out, text);
            else
                write_tsv_field(out, text);
        }
        fputs(f == ASYS_FMT_JSON ? "}" : "\n", out);
        rows++;
    }
    if (f == ASYS_FMT_JSON)
        fputs(rows ? "\n]\n" : "]\n", out);
    if (rc != SQLITE_DONE)
        return asys_fail(err, "%s", sqlite3_errmsg(sqlite3_db_handle(st)));
    return rows;
}

/* ---- entry ---------------------------------------------------------------------------- */

static char *header_for(const char *name, const struct asys_output_options *o, int *is_time)
{
    const char *unit = strstr(name, "(ns)");
    *is_time = unit != NULL;
    if (!unit || o->time_divisor <= 1)
        return strdup(name);
    size_t n = strlen(name) + 8;
    char *h = malloc(n);
    if (h)
        snprintf(h, n, "%.*s(%s)%s", (int)(unit - name), name, o->time_unit, unit + 4);
    return h;
}

long long asys_write_rows(FILE *out, sqlite3_stmt *st, const struct asys_output_options *o,
                          struct asys_err *err)
{
    struct grid g;
    memset(&g, 0, sizeof g);
    g.ncols = sqlite3_column_count(st);
    if (g.ncols <= 0 || g.ncols > 256)
        return asys_fail(err, "a report must return between 1 and 256 columns");
    g.cols = calloc((size_t)g.ncols, sizeof *g.cols);
    if (!g.cols)
        return asys_fail(err, "out of memory");
    long long rc = -1;
    g.tree_label = g.tree_level = -1;
    for (int i = 0; i < g.ncols; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (o->tree_label && !strcmp(name, o->tree_label))
            g.tree_label = i;
        if (o->tree_level && !strcmp(name, o->tree_level))
            g.tree_level = i;
    }
    for (int i = 0; i < g.ncols; i++) {
        g.cols[i].header = header_for(sqlite3_column_name(st, i), o, &g.cols[i].is_time);
        int megabytes = g.cols[i].header && strstr(g.cols[i].header, "(MB") != NULL;
        g.cols[i].decimals = megabytes ? 3 : 1;
        g.cols[i].stream_decimals = megabytes ? 6 : 0;
        const char *declared = sqlite3_column_decltype(st, i);
        g.cols[i].number_text = declared && !sqlite3_stricmp(declared, ASYS_DECLTYPE_NUMBER);
        if (g.cols[i].header && (o->format == ASYS_FMT_COLUMN || o->format == ASYS_FMT_TABLE)) {
            char *shown = display_text(g.cols[i].header);
            free(g.cols[i].header);
            g.cols[i].header = shown;
        }
        if (!g.cols[i].header) {
            asys_fail(err, "out of memory");
            goto out;
        }
    }
    if (o->format == ASYS_FMT_COLUMN || o->format == ASYS_FMT_TABLE)
        rc = write_grid(out, st, &g, o, err);
    else
        rc = write_stream(out, st, &g, o, err);
out:
    for (int i = 0; i < g.ncols; i++)
        free(g.cols[i].header);
    free(g.cols);
    return rc;
}
