#include "profile_options.h"

#include <stdlib.h>
#include <string.h>

#include "segment_writer.h"

// clang-format off
const struct asys_trace_name asys_trace_names[] = {
    {"hggc", "cuda", ASYS_TRACE_HGGC, 1},
    {"hgtx", "nvtx", ASYS_TRACE_HGTX, 1},
    {"acdnn", "cudnn", ASYS_TRACE_ACDNN, 0},
    {"acblas", "cublas", ASYS_TRACE_ACBLAS, 0},
    {"pccl", "nccl", ASYS_TRACE_PCCL, 0},
    {"osrt", NULL, ASYS_TRACE_OSRT, 1},
    {"hgvideo", "nvvideo", ASYS_TRACE_HGVIDEO, 0},
    {NULL, NULL, 0, 0},
};
// clang-format on

#define DEFAULT_TRACE (ASYS_TRACE_HGGC | ASYS_TRACE_HGTX | ASYS_TRACE_ACDNN | ASYS_TRACE_ACBLAS)

static void valid_trace_names(char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct asys_trace_name *t = asys_trace_names; t->name; t++) {
        int n = snprintf(out + used, size - used, "%s%s%s%s", used ? ", " : "", t->name,
                         t->alias ? "/" : "", t->alias ? t->alias : "");
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    snprintf(out + used, size - used, ", none");
}

int asys_parse_trace_list(const char *list, uint32_t *mask, struct asys_err *err)
{
    uint32_t result = 0;
    int saw_none = 0;
    const char *p = list;
    if (!*p)
        return asys_fail(err, "empty --trace list");
    while (*p) {
        size_t n = strcspn(p, ",");
        const struct asys_trace_name *found = NULL;
        for (const struct asys_trace_name *t = asys_trace_names; t->name; t++) {
            if ((strlen(t->name) == n && !strncmp(p, t->name, n)) ||
                (t->alias && strlen(t->alias) == n && !strncmp(p, t->alias, n)))
                found = t;
        }
        if (found) {
            result |= found->bit;
        } else if (n == 4 && !strncmp(p, "none", 4)) {
            saw_none = 1;
        } else {
            char valid[256];
            valid_trace_names(valid, sizeof valid);
            return asys_fail(err, "unknown --trace value '%.*s' (valid: %s)", (int)n, p, valid);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    if (saw_none && result)
        return asys_fail(err, "--trace none cannot be combined with other values");
    *mask = result;
    return 0;
}

void asys_trace_list_string(uint32_t mask, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct asys_trace_name *t = asys_trace_names; t->name; t++) {
        if (!(mask & t->bit))
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? "," : "", t->name);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    if (!used)
        snprintf(out, size, "none");
}

/* ---- the option table ------------------------------------------------------ */

enum arg_kind { ARG_NONE, ARG_REQUIRED, ARG_OPTIONAL_BOOL };

struct option_spec {
    const char *long_name;
    char short_name;
    enum arg_kind arg;
    int supported;
    const char *metavar;
    const char *default_text;
    const char *help;
    int (*apply)(struct asys_profile_options *opts, const char *value, struct asys_err *err);
};

static int parse_bool(const char *value, int *out)
{
    if (!value || !strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no")) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* "64M", "2G", "4096" -> bytes. */
static int parse_size(const char *value, uint64_t *out)
{
    char *end;
    unsigned long long n = strtoull(value, &end, 10);
    if (end == value)
        return -1;
    uint64_t scale = 1;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        scale = 1ull << 10;
        end++;
        break;
    case 'm':
    case 'M':
        scale = 1ull << 20;
        end++;
        break;
    case 'g':
    case 'G':
        scale = 1ull << 30;
        end++;
        break;
    default:
        return -1;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || n > UINT64_MAX / scale)
        return -1;
    *out = n * scale;
    return 0;
}

static int apply_trace(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    return asys_parse_trace_list(v, &o->trace_mask, err);
}

static int apply_output(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (!*v)
        return asys_fail(err, "empty --output name");
    o->output = v;
    return 0;
}

static int apply_force(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (parse_bool(v, &o->force_overwrite) != 0)
        return asys_fail(err, "--force-overwrite takes true or false, not '%s'", v ? v : "");
    return 0;
}

static int apply_wait(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (!strcmp(v, "all"))
        o->wait = ASYS_WAIT_ALL;
    else if (!strcmp(v, "primary"))
        o->wait = ASYS_WAIT_PRIMARY;
    else
        return asys_fail(err, "--wait takes all or primary, not '%s'", v);
    return 0;
}

static int apply_max_segment(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (parse_size(v, &o->max_segment_size) != 0 || o->max_segment_size < ASYS_MIN_CHUNK_SIZE)
        return asys_fail(err, "--max-segment-size needs a size of at least %uK, not '%s'",
                         ASYS_MIN_CHUNK_SIZE >> 10, v);
    return 0;
}

static int apply_chunk(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (parse_size(v, &o->chunk_size) != 0 || o->chunk_size < ASYS_MIN_CHUNK_SIZE ||
        o->chunk_size > (1ull << 30))
        return asys_fail(err, "--chunk-size needs a size between %uK and 1G, not '%s'",
                         ASYS_MIN_CHUNK_SIZE >> 10, v);
    return 0;
}

/* A non-negative integer no larger than `max`. */
static int parse_count(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    if (!v || !*v || *v == '-')
        return -1;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || n > max)
        return -1;
    *out = n;
    return 0;
}

static int apply_osrt_threshold(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (parse_count(v, UINT64_MAX / 4, &o->osrt_threshold_ns) != 0)
        return asys_fail(err, "--osrt-threshold takes nanoseconds, not '%s'", v);
    return 0;
}

static int apply_osrt_backtrace_threshold(struct asys_profile_options *o, const char *v,
                                          struct asys_err *err)
{
    if (parse_count(v, UINT64_MAX / 4, &o->osrt_backtrace_ns) != 0)
        return asys_fail(err, "--osrt-backtrace-threshold takes nanoseconds, not '%s'", v);
    return 0;
}

/* A call-stack depth option: 0 to 128 frames. */
static int parse_depth(const char *option, const char *v, uint32_t *depth, struct asys_err *err)
{
    uint64_t n;
    if (parse_count(v, 128, &n) != 0)
        return asys_fail(err, "%s takes 0 to 128, not '%s'", option, v);
    *depth = (uint32_t)n;
    return 0;
}

static int apply_osrt_backtrace_depth(struct asys_profile_options *o, const char *v,
                                      struct asys_err *err)
{
    return parse_depth("--osrt-backtrace-depth", v, &o->osrt_backtrace_depth, err);
}

/* --hggc-trace-set: the collector's subsets (recorder/inject/hggc.c). */
static const char *const hggc_subsets[] = {"kernel-activity", "kernel-api", "memory-activity",
                                           "memory-api",      "sync",       "graph",
                                           "other-api",       "all",        NULL};

static int apply_hggc_trace_set(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (!*v || strlen(v) >= sizeof o->hggc_trace_set)
        return asys_fail(err, "--hggc-trace-set takes a list of subsets, not '%s'", v);
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        int known = 0;
        for (const char *const *name = hggc_subsets; *name; name++)
            known |= strlen(*name) == n && !strncmp(p, *name, n);
        if (!known)
            return asys_fail(
                err,
                "unknown --hggc-trace-set subset '%.*s' (valid: kernel-activity, "
                "kernel-api, memory-activity, memory-api, sync, graph, other-api, all)",
                (int)n, p);
        p += n + (p[n] == ',');
    }
    strcpy(o->hggc_trace_set, v);
    return 0;
}

static int apply_hggc_graph_trace(struct asys_profile_options *o, const char *v,
                                  struct asys_err *err)
{
    if (strcmp(v, "node") && strcmp(v, "graph"))
        return asys_fail(err, "--hggc-graph-trace takes node or graph, not '%s'", v);
    o->hggc_graph_level = !strcmp(v, "graph");
    return 0;
}

/* "all:NS" (the manual's form), or "none". */
static int apply_hggc_backtrace(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    if (!strcmp(v, "none")) {
        o->hggc_backtrace_ns = 0;
        return 0;
    }
    if (strncmp(v, "all:", 4) != 0 || parse_count(v + 4, UINT64_MAX / 4, &o->hggc_backtrace_ns) ||
        !o->hggc_backtrace_ns)
        return asys_fail(err, "--hggcbacktrace takes all:NS (NS > 0) or none, not '%s'", v);
    return 0;
}

static int apply_hggc_backtrace_depth(struct asys_profile_options *o, const char *v,
                                      struct asys_err *err)
{
    return parse_depth("--hggc-backtrace-depth", v, &o->hggc_backtrace_depth, err);
}

static int apply_help(struct asys_profile_options *o, const char *v, struct asys_err *err)
{
    (void)v;
    (void)err;
    o->show_help = 1;
    return 0;
}

#define PLANNED(name, metavar, def, help)                                                          \
    {                                                                                              \
        name, 0, ARG_REQUIRED, 0, metavar, def, help, NULL                                         \
    }

static const struct option_spec specs[] = {
    {"trace", 't', ARG_REQUIRED, 1, "LIST", "hggc,hgtx,acdnn,acblas",
     "collectors to enable, comma separated (nsys names accepted)", apply_trace},
    {"output", 'o', ARG_REQUIRED, 1, "NAME", "report#",
     "report name; .asys-rep is appended; report1, report2... when not given", apply_output},
    {"force-overwrite", 'f', ARG_OPTIONAL_BOOL, 1, "[true|false]", "false",
     "replace an existing report", apply_force},
    {"wait", 0, ARG_REQUIRED, 1, "all|primary", "all",
     "wait for every descendant process, or only for the program", apply_wait},
    {"max-segment-size", 0, ARG_REQUIRED, 1, "SIZE", "2G",
     "per-thread buffer limit; records beyond it are dropped and counted", apply_max_segment},
    {"chunk-size", 0, ARG_REQUIRED, 1, "SIZE", "1M", "growth step of a per-thread buffer",
     apply_chunk},
    {"help", 'h', ARG_NONE, 1, NULL, NULL, "show this help", apply_help},
    {"hggc-trace-set", 0, ARG_REQUIRED, 1, "LIST", "all",
     "HGGC subsets: kernel-activity (kernels on the device), kernel-api (launch calls), "
     "memory-activity (copies, sets, allocations), memory-api (memory calls), sync "
     "(synchronization, events, waits), graph (graph calls and structure), other-api (every "
     "other call); ASIGHT_HGGC_TRACE_BLACKLIST=api1,api2 turns single APIs off",
     apply_hggc_trace_set},
    {"hggc-graph-trace", 0, ARG_REQUIRED, 1, "node|graph", "node",
     "a graph launch as its nodes' kernels and copies, or as one range (cheaper)",
     apply_hggc_graph_trace},
    {"hggcbacktrace", 0, ARG_REQUIRED, 1, "all:NS|none", "none",
     "host call stacks of HGGC calls lasting at least NS", apply_hggc_backtrace},
    {"hggc-backtrace-depth", 0, ARG_REQUIRED, 1, "N", "24", "frames per HGGC call stack (0-128)",
     apply_hggc_backtrace_depth},
    PLANNED("hggc-memory-usage", "true|false|device,pinned", "false",
            "device/pinned memory usage with call stacks"),
    {"osrt-threshold", 0, ARG_REQUIRED, 1, "NS", "1000",
     "record OS runtime calls lasting at least NS", apply_osrt_threshold},
    {"osrt-backtrace-threshold", 0, ARG_REQUIRED, 1, "NS", "80000",
     "call stacks of OS runtime calls lasting at least NS", apply_osrt_backtrace_threshold},
    {"osrt-backtrace-depth", 0, ARG_REQUIRED, 1, "N", "24",
     "frames per OS runtime call stack (0-128)", apply_osrt_backtrace_depth},
    PLANNED("acompute-backtrace-threshold", "NS", "80000",
            "call stacks of ACDNN/ACBLAS calls longer than NS"),
    {"sample", 's', ARG_REQUIRED, 0, "process-tree|system-wide|none", "none",
     "CPU sampling and scheduling", NULL},
    {"backtrace", 'b', ARG_REQUIRED, 0, "dwarf|fp|none", "dwarf",
     "call stack method of CPU samples", NULL},
    PLANNED("sample-period", "CYCLES", "2000000", "CPU sampling period"),
    PLANNED("sample-backtrace-depth", "N", "24", "depth of CPU sample call stacks"),
    PLANNED("event-sample", "system-wide|none", "none", "CPU and OS event sampling"),
    PLANNED("cpu-core-events", "LIST", "none", "CPU core events to sample"),
    PLANNED("cpu-core-events-set", "NAME", "none", "predefined CPU core event set"),
    PLANNED("os-events", "LIST", "none", "OS events to sample"),
    PLANNED("os-events-set", "NAME", "none", "predefined OS event set"),
    PLANNED("ppu-metrics-device", "all|none|LIST|help", "none",
            "devices whose metrics are sampled"),
    PLANNED("ppu-metrics-set", "NAME|help", "summary", "predefined PPU metric set"),
    PLANNED("ppu-metrics-list", "LIST|help", "none", "PPU metrics to sample"),
    PLANNED("ppu-metrics-frequency", "HZ", "1000", "PPU metric sampling frequency"),
    PLANNED("check-ppu-metrics-list", "LIST", NULL,
            "check a metric list against the device's capacity"),
    PLANNED("host-memory-sampling", "true|false", "false",
            "sample resident set size and high-water mark"),
    PLANNED("host-memory-sampling-frequency", "HZ", "100", "host memory sampling frequency"),
    PLANNED("heap-memory-usage", "true|false", "false", "heap allocations with call stacks"),
    PLANNED("heap-sampling-interval-bytes", "BYTES", "1048576",
            "mean bytes between sampled allocations"),
    PLANNED("heap-backtrace-depth", "N", "24", "depth of heap call stacks"),
    PLANNED("heap-report-interval", "MS", "10", "heap usage aggregation interval"),
    PLANNED("multi-node-mode", "MODE", "none", "multi-node collection"),
    PLANNED("python-sampling", "true|false", "false", "periodic Python call stack sampling"),
    PLANNED("python-sampling-frequency", "HZ", "500", "Python sampling frequency (1..1000)"),
    PLANNED("python-backtrace", "hggc", "none", "Python call stacks on HGGC events"),
    PLANNED("python-backtrace-depth", "N", "24", "depth of Python call stacks"),
    PLANNED("python-functions-trace", "SPEC|FILE", "none", "trace Python functions as HGTX ranges"),
    PLANNED("python-functions-threshold", "NS", "80000",
            "record traced Python functions longer than NS"),
    PLANNED("nic-metrics", "true|false", "false", "RDMA NIC counters"),
    PLANNED("nic-device-include", "REGEX,...", "all", "NIC devices to sample"),
    PLANNED("nic-metrics-frequency", "HZ", "1000", "NIC sampling frequency (1..100000)"),
    {NULL, 0, ARG_NONE, 0, NULL, NULL, NULL, NULL},
};

static const struct option_spec *find_long(const char *name, size_t len)
{
    for (const struct option_spec *s = specs; s->long_name; s++)
        if (strlen(s->long_name) == len && !strncmp(s->long_name, name, len))
            return s;
    return NULL;
}

static const struct option_spec *find_short(char c)
{
    for (const struct option_spec *s = specs; s->long_name; s++)
        if (s->short_name && s->short_name == c)
            return s;
    return NULL;
}

static int remember(struct asys_profile_options *o, const struct option_spec *s, const char *value,
                    struct asys_err *err)
{
    if (o->given_count >= ASYS_MAX_GIVEN_OPTIONS)
        return asys_fail(err, "too many options");
    struct asys_given_option *g = &o->given[o->given_count++];
    g->name = s->long_name;
    g->value = value;
    g->supported = s->supported;
    return s->apply ? s->apply(o, value, err) : 0; /* value is NULL only for flags */
}

int asys_profile_parse(int argc, char **argv, struct asys_profile_options *o, struct asys_err *err)
{
    memset(o, 0, sizeof *o);
    o->trace_mask = DEFAULT_TRACE;
    o->wait = ASYS_WAIT_ALL;
    o->max_segment_size = ASYS_DEFAULT_MAX_SEGMENT_SIZE;
    o->chunk_size = ASYS_DEFAULT_CHUNK_SIZE;
    o->osrt_threshold_ns = 1000;
    o->osrt_backtrace_ns = 80000;
    o->osrt_backtrace_depth = 24;
    strcpy(o->hggc_trace_set, "all");
    o->hggc_backtrace_depth = 24;
    int i = 1;
    for (; i < argc; i++) {
        char *arg = argv[i];
        if (!strcmp(arg, "--")) {
            i++;
            break;
        }
        if (arg[0] != '-' || !arg[1])
            break; /* the program */
        const struct option_spec *s;
        const char *value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            s = find_long(name, eq ? (size_t)(eq - name) : strlen(name));
            if (!s)
                return asys_fail(err, "unknown option '%s' (see asys profile --help)", arg);
            value = eq ? eq + 1 : NULL;
        } else {
            s = find_short(arg[1]);
            if (!s)
                return asys_fail(err, "unknown option '%s' (see asys profile --help)", arg);
            if (arg[2])
                value = arg[2] == '=' ? arg + 3 : arg + 2;
        }
        if (s->arg == ARG_NONE && value)
            return asys_fail(err, "option --%s takes no value", s->long_name);
        if (s->arg == ARG_REQUIRED && !value) {
            if (i + 1 >= argc)
                return asys_fail(err, "option --%s needs a value (%s)", s->long_name, s->metavar);
            value = argv[++i];
        }
        /* "-f true" / "-f false"; anything else after a flag is not its value */
        if (s->arg == ARG_OPTIONAL_BOOL && !value && i + 1 < argc &&
            (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false")))
            value = argv[++i];
        if (remember(o, s, value, err) != 0)
            return -1;
        if (o->show_help)
            return 0;
    }
    o->target_argc = argc - i;
    o->target_argv = argv + i;
    if (o->target_argc <= 0)
        return asys_fail(
            err, "no program to profile (usage: asys profile [options] <program> [args...])");
    if (o->chunk_size > o->max_segment_size)
        return asys_fail(err, "--chunk-size is larger than --max-segment-size");
    return 0;
}

void asys_profile_print_help(FILE *out)
{
    fprintf(out, "usage: asys profile [options] <program> [args...]\n\n"
                 "Records <program> and every process it starts into one report, NAME.asys-rep.\n"
                 "The program's stdin, stdout, stderr and exit status are left as they are.\n\n"
                 "Options marked 'planned' are options of the manual this build does not\n"
                 "implement yet: they are accepted, reported once and recorded in the report.\n\n");
    for (const struct option_spec *s = specs; s->long_name; s++) {
        char head[96];
        if (s->short_name)
            snprintf(head, sizeof head, "-%c, --%s%s%s", s->short_name, s->long_name,
                     s->metavar ? " " : "", s->metavar ? s->metavar : "");
        else
            snprintf(head, sizeof head, "    --%s%s%s", s->long_name, s->metavar ? " " : "",
                     s->metavar ? s->metavar : "");
        fprintf(out, "  %-44s %s%s\n", head, s->supported ? "" : "[planned] ", s->help);
        if (s->default_text)
            fprintf(out, "  %-44s default: %s\n", "", s->default_text);
    }
    fprintf(out, "\n-t/--trace collectors:\n");
    for (const struct asys_trace_name *t = asys_trace_names; t->name; t++)
        fprintf(out, "  %-8s %-8s %s\n", t->name, t->alias ? t->alias : "",
                t->available ? "available" : "planned (recorded as unavailable)");
    fprintf(out, "  %-8s %-8s %s\n", "none", "", "trace nothing (session and process info only)");
}
