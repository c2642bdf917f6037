/* NIC metrics (--nic-metrics): a launcher thread reads the counters of the
 * selected RDMA ports (class/infiniband/DEV/ports/N/{counters,hw_counters})
 * and network interfaces (class/net/IF/statistics, the Ethernet fallback)
 * --nic-metrics-frequency times a second, and writes their raw cumulative
 * values into a segment of its own; the importer makes the rates.
 *
 * A sysfs attribute is kept open and re-read with pread (sysfs builds its
 * text anew at each read from offset 0); a file on any other filesystem (a
 * test's fake tree under $ASYS_NIC_SYSFS_ROOT) is reopened at each reading,
 * so that its writer may replace it atomically by rename.  Nothing runs
 * inside the target. */
#define _GNU_SOURCE
#include "nic_sampler.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "session.h"
#include "notes.h"

#define SYSFS_MAGIC 0x62656572
#define MAX_DEVICES 64 /* 8 descriptors each at most */
#define MAX_RULES 32
#define GAP_BINS 64 /* ticks between two changes of a device's counters, counted up to this */

/* ---- the filter -------------------------------------------------------- */

struct nic_filter {
    pcre2_code *rules[MAX_RULES];
    char *texts[MAX_RULES]; /* as given, for the messages */
    size_t count;
    pcre2_match_data *match;
    /* the first match that failed (PCRE2's match or depth limit): said,
     * not taken silently as "no match" */
    int failed_code;
    char failed_rule[128], failed_device[ASYS_NIC_NAME_MAX];
};

void asys_nic_filter_free(struct nic_filter *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->count; i++) {
        pcre2_code_free(f->rules[i]);
        free(f->texts[i]);
    }
    pcre2_match_data_free(f->match);
    free(f);
}

int asys_nic_filter_new(const char *rules, struct nic_filter **out, struct asys_err *err)
{
    struct nic_filter *f = calloc(1, sizeof *f);
    int rc = -1;
    *out = NULL;
    if (!f) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (strcmp(rules, "all") != 0) {
        for (const char *p = rules;;) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len == 0) {
                asys_fail_kind(err, ASYS_ERR_USAGE, "--nic-device-include: an empty rule in '%s'",
                               rules);
                goto out;
            }
            if (f->count == MAX_RULES) {
                asys_fail_kind(err, ASYS_ERR_USAGE, "--nic-device-include: more than %d rules",
                               MAX_RULES);
                goto out;
            }
            int code;
            PCRE2_SIZE at;
            f->rules[f->count] = pcre2_compile((PCRE2_SPTR)p, len, PCRE2_UTF, &code, &at, NULL);
            if (!f->rules[f->count]) {
                PCRE2_UCHAR why[160];
                pcre2_get_error_message(code, why, sizeof why);
                asys_fail_kind(err, ASYS_ERR_USAGE,
                               "--nic-device-include: bad regular expression '%.*s': %s at "
                               "offset %zu",
                               (int)len, p, (const char *)why, (size_t)at);
                goto out;
            }
            f->texts[f->count] = strndup(p, len < 120 ? len : 120);
            f->count++;
            if (!end)
                break;
            p = end + 1;
        }
        f->match = pcre2_match_data_create(4, NULL);
        if (!f->match) {
            asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    *out = f;
    f = NULL;
    rc = 0;
out:
    asys_nic_filter_free(f);
    return rc;
}

int asys_nic_filter_match(struct nic_filter *f, const char *name)
{
    if (!f->count)
        return 1;
    for (size_t i = 0; i < f->count; i++) {
        int rc = pcre2_match(f->rules[i], (PCRE2_SPTR)name, strlen(name), 0, 0, f->match, NULL);
        if (rc >= 0)
            return 1;
        if (rc != PCRE2_ERROR_NOMATCH && !f->failed_code) {
            f->failed_code = rc;
            snprintf(f->failed_rule, sizeof f->failed_rule, "%s", f->texts[i] ? f->texts[i] : "?");
            snprintf(f->failed_device, sizeof f->failed_device, "%s", name);
        }
    }
    return 0;
}

/* One line when a rule could not be tried to its end on some device. */
static void nic_filter_warn(const struct nic_filter *f)
{
    if (!f->failed_code)
        return;
    PCRE2_UCHAR why[160];
    pcre2_get_error_message(f->failed_code, why, sizeof why);
    asys_note(ASYS_NOTE_WARNING,
              "--nic-device-include rule '%s' could not be matched against '%s' (%s): that "
              "device is sampled only if another rule matches it",
              f->failed_rule, f->failed_device, (const char *)why);
}

const char *asys_nic_sysfs_root(void)
{
    const char *root = getenv("ASYS_NIC_SYSFS_ROOT");
    return root && *root ? root : "/sys";
}

/* ---- the devices ------------------------------------------------------- */

struct counter_file {
    int dir; /* the directory, for a reopen each reading */
    const char *name; /* the file in it */
    int fd; /* a sysfs attribute kept open; -1: reopen */
};

struct device {
    char name[ASYS_NIC_NAME_MAX];
    uint16_t kind, port;
    uint32_t speed_mbps;
    uint32_t mask;
    struct counter_file files[ASYS_NIC_COUNTER_COUNT];
    uint64_t last[ASYS_NIC_COUNTER_COUNT];
    int have_last;
    uint64_t last_change; /* tick of the last change; 0: none yet */
    int via_proc; /* an interface read from /proc/net/dev with the others */
    int in_proc; /* found there this tick: proc[] holds its counters */
    uint64_t proc[4]; /* rx_bytes, tx_bytes, rx_packets, tx_packets */
};

struct nic_sampler {
    struct asys_segment_writer seg;
    pthread_t thread;
    int stop; /* atomic */
    uint64_t period_ns;
    uint32_t requested_hz;
    struct device devices[MAX_DEVICES];
    size_t count;
    int dirs[2 * MAX_DEVICES]; /* the directories the files are in */
    size_t dir_count;
    uint64_t ticks, first_ns, last_ns;
    uint64_t gaps[GAP_BINS + 1]; /* [n]: changes n ticks after the previous one (last: more) */
    int proc_net_dev; /* /proc/net/dev, when the interfaces are read from it; else -1 */
    char proc_text[32768];
};

static const char *const rdma_files[ASYS_NIC_COUNTER_COUNT] = {
    [ASYS_NIC_RX_BYTES] = "port_rcv_data",      [ASYS_NIC_TX_BYTES] = "port_xmit_data",
    [ASYS_NIC_RX_PACKETS] = "port_rcv_packets", [ASYS_NIC_TX_PACKETS] = "port_xmit_packets",
    [ASYS_NIC_CNP_HANDLED] = "rp_cnp_handled",  [ASYS_NIC_CNP_IGNORED] = "rp_cnp_ignored",
    [ASYS_NIC_CNP_SENT] = "np_cnp_sent",        [ASYS_NIC_XMIT_WAIT] = "port_xmit_wait",
};
static const char *const net_files[ASYS_NIC_COUNTER_COUNT] = {
    [ASYS_NIC_RX_BYTES] = "rx_bytes",
    [ASYS_NIC_TX_BYTES] = "tx_bytes",
    [ASYS_NIC_RX_PACKETS] = "rx_packets",
    [ASYS_NIC_TX_PACKETS] = "tx_packets",
};
/* the hw_counters of an RDMA port (the others are in counters/) */
static int in_hw_counters(unsigned c)
{
    return c == ASYS_NIC_CNP_HANDLED || c == ASYS_NIC_CNP_IGNORED || c == ASYS_NIC_CNP_SENT;
}

static int parse_counter(const char *text, ssize_t n, uint64_t *value)
{
    uint64_t v = 0;
    ssize_t i = 0;
    while (i < n && (text[i] == ' ' || text[i] == '\t'))
        i++;
    ssize_t digits = i;
    for (; i < n && text[i] >= '0' && text[i] <= '9'; i++) {
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (i == digits || (i < n && text[i] != '\n' && text[i] != ' '))
        return -1;
    *value = v;
    return 0;
}

/* A counter file under `dir`: regular files only, opened without blocking
 * (a FIFO where a counter should be must never hold up the sampler); -1
 * for anything else. */
static int open_regular(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static int read_counter(const struct counter_file *f, uint64_t *value)
{
    char text[32];
    ssize_t n;
    if (f->fd >= 0) {
        n = pread(f->fd, text, sizeof text, 0);
    } else {
        int fd = open_regular(f->dir, f->name);
        if (fd < 0)
            return -1;
        n = read(fd, text, sizeof text);
        close(fd);
    }
    return n > 0 && n < (ssize_t)sizeof text ? parse_counter(text, n, value) : -1;
}

/* A small file's first line (a link speed), or "" */
static void read_line(int dir, const char *name, char *out, size_t size)
{
    out[0] = '\0';
    int fd = open_regular(dir, name);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
}

static int keep_dir(struct nic_sampler *s, int dir)
{
    if (dir < 0)
        return -1;
    if (s->dir_count == sizeof s->dirs / sizeof s->dirs[0]) {
        close(dir);
        return -1;
    }
    s->dirs[s->dir_count++] = dir;
    return dir;
}

/* Opens counter `c` of `d` in `dir` when it is readable there. */
static void add_counter(struct device *d, unsigned c, int dir, const char *name)
{
    uint64_t v;
    struct counter_file f = {dir, name, -1};
    if (dir < 0 || !name || read_counter(&f, &v) != 0)
        return;
    struct statfs fs;
    if (fstatfs(dir, &fs) == 0 && fs.f_type == SYSFS_MAGIC) {
        f.fd = open_regular(dir, name);
        if (f.fd < 0)
            return;
    }
    d->files[c] = f;
    d->mask |= 1u << c;
}

static struct device *device_new(struct nic_sampler *s, const char *name, unsigned kind,
                                 unsigned port)
{
    if (s->count == MAX_DEVICES)
        return NULL;
    struct device *d = &s->devices[s->count];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->kind = (uint16_t)kind;
    d->port = (uint16_t)port;
    for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
        d->files[c].fd = -1;
    return d;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int visible(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* "100 Gb/sec (4X EDR)" -> 100000 */
static uint32_t rdma_speed(int port_dir)
{
    char text[64];
    double rate;
    read_line(port_dir, "rate", text, sizeof text);
    return sscanf(text, "%lf Gb", &rate) == 1 && rate > 0 && rate < 4e6 ? (uint32_t)(rate * 1000)
                                                                        : 0;
}

static void find_rdma(struct nic_sampler *s, const char *root, struct nic_filter *filter,
                      char (*pci)[PATH_MAX], size_t *pci_count)
{
    char path[PATH_MAX];
    struct dirent **devs = NULL;
    snprintf(path, sizeof path, "%s/class/infiniband", root);
    int n = scandir(path, &devs, visible, by_name);
    for (int i = 0; i < n; i++) {
        const char *dev = devs[i]->d_name;
        struct dirent **ports = NULL;
        int m = 0;
        if (strlen(dev) < ASYS_NIC_NAME_MAX && asys_nic_filter_match(filter, dev)) {
            snprintf(path, sizeof path, "%s/class/infiniband/%s/device", root, dev);
            if (*pci_count < MAX_DEVICES && realpath(path, pci[*pci_count]))
                ++*pci_count;
            snprintf(path, sizeof path, "%s/class/infiniband/%s/ports", root, dev);
            m = scandir(path, &ports, visible, by_name);
        }
        for (int j = 0; j < m; j++) {
            unsigned port = (unsigned)strtoul(ports[j]->d_name, NULL, 10);
            struct device *d = device_new(s, dev, ASYS_NIC_RDMA, port);
            snprintf(path, sizeof path, "%s/class/infiniband/%s/ports/%s", root, dev,
                     ports[j]->d_name);
            int port_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (d && port_dir >= 0) {
                int counters = keep_dir(s, openat(port_dir, "counters", O_RDONLY | O_DIRECTORY));
                int hw = keep_dir(s, openat(port_dir, "hw_counters", O_RDONLY | O_DIRECTORY));
                for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
                    add_counter(d, c, in_hw_counters(c) ? hw : counters, rdma_files[c]);
                d->speed_mbps = rdma_speed(port_dir);
                if (d->mask)
                    s->count++;
            }
            if (port_dir >= 0)
                close(port_dir);
            free(ports[j]);
        }
        free(ports);
        free(devs[i]);
    }
    free(devs);
}

static void find_interfaces(struct nic_sampler *s, const char *root, struct nic_filter *filter,
                            char (*pci)[PATH_MAX], size_t pci_count)
{
    char path[PATH_MAX], real[PATH_MAX];
    struct dirent **ifs = NULL;
    snprintf(path, sizeof path, "%s/class/net", root);
    int n = scandir(path, &ifs, visible, by_name);
    for (int i = 0; i < n; i++) {
        const char *name = ifs[i]->d_name;
        int skip = strlen(name) >= ASYS_NIC_NAME_MAX || !asys_nic_filter_match(filter, name);
        snprintf(path, sizeof path, "%s/class/net/%s/device", root, name);
        /* an interface of an RDMA device sampled already counts the same traffic */
        for (size_t k = 0; !skip && k < pci_count; k++)
            skip = realpath(path, real) && !strcmp(real, pci[k]);
        struct device *d = skip ? NULL : device_new(s, name, ASYS_NIC_ETHERNET, 0);
        snprintf(path, sizeof path, "%s/class/net/%s", root, name);
        int dir = d ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dir >= 0) {
            int stats = keep_dir(s, openat(dir, "statistics", O_RDONLY | O_DIRECTORY));
            for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
                add_counter(d, c, stats, net_files[c]);
            d->via_proc = s->proc_net_dev >= 0 && d->mask == 0xf;
            char text[32];
            read_line(dir, "speed", text, sizeof text);
            long speed = strtol(text, NULL, 10);
            d->speed_mbps = speed > 0 && speed < INT32_MAX ? (uint32_t)speed : 0;
            if (d->mask)
                s->count++;
            close(dir);
        }
        free(ifs[i]);
    }
    free(ifs);
}

/* ---- sampling ---------------------------------------------------------- */

static void put_device(struct nic_sampler *s, size_t index, uint64_t now)
{
    const struct device *d = &s->devices[index];
    uint32_t delta;
    struct asys_rec_nic_device *r = asys_segment_reserve(&s->seg, sizeof *r, now, &delta);
    if (!r)
        return;
    memset(r->name, 0, sizeof r->name);
    r->device = (uint32_t)index;
    r->kind = d->kind;
    r->port = d->port;
    r->speed_mbps = d->speed_mbps;
    r->metric_mask = d->mask;
    memcpy(r->name, d->name, strnlen(d->name, sizeof r->name - 1));
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_NIC_DEVICE, sizeof *r / 8, 0, delta));
}

/* The first `count` unsigned decimal fields of `text` into out; how many
 * there were (sscanf took 7 % of the sampler's time). */
static int parse_fields(const char *text, uint64_t *out, int count)
{
    int n = 0;
    for (const char *p = text; n < count; n++) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            v = v * 10 + (uint64_t)(*p - '0');
        out[n] = v;
    }
    return n;
}

/* Every interface's line of /proc/net/dev ("  eth0: rx_bytes rx_packets
 * 6 more | tx_bytes tx_packets ..."): one read for all of them. */
static void read_proc_net_dev(struct nic_sampler *s)
{
    for (size_t i = 0; i < s->count; i++)
        s->devices[i].in_proc = 0;
    ssize_t n = pread(s->proc_net_dev, s->proc_text, sizeof s->proc_text - 1, 0);
    if (n <= 0)
        return;
    s->proc_text[n] = '\0';
    for (char *line = s->proc_text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        while (*line == ' ')
            line++;
        for (size_t i = 0; i < s->count; i++) {
            struct device *d = &s->devices[i];
            if (!d->via_proc || strcmp(d->name, line))
                continue;
            uint64_t v[10]; /* rx: bytes packets errs drop fifo frame compressed multicast,
                               tx: bytes packets */
            if (parse_fields(colon + 1, v, 10) == 10) {
                d->proc[0] = v[0], d->proc[1] = v[8], d->proc[2] = v[1], d->proc[3] = v[9];
                d->in_proc = 1;
            }
            break;
        }
    }
}

static int read_value(const struct device *d, unsigned c, uint64_t *value)
{
    if (!d->via_proc)
        return read_counter(&d->files[c], value);
    if (!d->in_proc || c > ASYS_NIC_TX_PACKETS)
        return -1;
    *value = d->proc[c];
    return 0;
}

static void sample(struct nic_sampler *s)
{
    uint64_t tick = ++s->ticks;
    if (s->proc_net_dev >= 0)
        read_proc_net_dev(s);
    for (size_t i = 0; i < s->count; i++) {
        struct device *d = &s->devices[i];
        uint64_t values[ASYS_NIC_COUNTER_COUNT];
        uint32_t mask = 0, count = 0;
        int changed = 0;
        for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++) {
            if (!(d->mask & 1u << c) || read_value(d, c, &values[count]) != 0)
                continue;
            changed |= d->have_last && values[count] != d->last[c];
            d->last[c] = values[count++];
            mask |= 1u << c;
        }
        d->have_last = 1;
        if (changed) {
            if (d->last_change)
                s->gaps[tick - d->last_change < GAP_BINS ? tick - d->last_change : GAP_BINS]++;
            d->last_change = tick;
        }
        uint64_t now = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
        uint32_t size = (uint32_t)(sizeof(struct asys_rec_nic_sample) + 8 * count), delta;
        struct asys_rec_nic_sample *r = asys_segment_reserve(&s->seg, size, now, &delta);
        if (!r)
            continue; /* counted as a drop by the writer */
        r->metric_mask = mask;
        r->count = count;
        memcpy(r + 1, values, 8 * count);
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_NIC_SAMPLE, size / 8, (unsigned)i, delta));
    }
    s->last_ns = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
    if (tick == 1)
        s->first_ns = s->last_ns;
}

static void *sampler(void *arg)
{
    struct nic_sampler *s = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        sample(s);
        /* late (the reads took longer than a period): go on from now, as fast
         * as the driver answers, rather than catching up in a burst */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t behind = (int64_t)(now.tv_sec - next.tv_sec) * 1000000000 +
                         (now.tv_nsec - next.tv_nsec) - (int64_t)s->period_ns;
        if (behind > 0)
            next = now, next.tv_nsec -= (long)s->period_ns;
        while (next.tv_nsec < 0)
            next.tv_nsec += 1000000000, next.tv_sec--;
        asys_session_wait_period(&next, s->period_ns);
    }
    sample(s); /* the last one, as the program ends */
    return NULL;
}

static void close_files(struct nic_sampler *s)
{
    for (size_t i = 0; i < s->count; i++)
        for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
            if (s->devices[i].files[c].fd >= 0)
                close(s->devices[i].files[c].fd);
    for (size_t i = 0; i < s->dir_count; i++)
        close(s->dirs[i]);
    if (s->proc_net_dev >= 0)
        close(s->proc_net_dev);
    s->proc_net_dev = -1;
    s->count = s->dir_count = 0;
}

int asys_nic_sampler_start(const char *session_dir, const char *rules, uint64_t frequency_hz,
                           struct nic_sampler **out, struct asys_err *err)
{
    struct nic_sampler *s = calloc(1, sizeof *s);
    struct nic_filter *filter = NULL;
    char(*pci)[PATH_MAX] = calloc(MAX_DEVICES, PATH_MAX);
    size_t pci_count = 0;
    int rc = -1, segment_open = 0;
    *out = NULL;
    if (s)
        s->proc_net_dev = -1;
    if (!s || !pci) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (asys_nic_filter_new(rules, &filter, err) != 0)
        goto out;
    const char *root = asys_nic_sysfs_root();
    /* the real /sys: every interface's counters in one read of /proc/net/dev
     * (the same numbers as class/net/IF/statistics, a quarter of the cost) */
    if (!strcmp(root, "/sys") && !getenv("ASYS_NIC_NO_PROC"))
        s->proc_net_dev = open("/proc/net/dev", O_RDONLY | O_CLOEXEC);
    find_rdma(s, root, filter, pci, &pci_count);
    find_interfaces(s, root, filter, pci, pci_count);
    nic_filter_warn(filter);
    if (!s->count) {
        asys_note(ASYS_NOTE_NOTICE, "--nic-metrics: no NIC under %s/class matches '%s'", root,
                  rules);
        rc = 0;
        goto out;
    }
    if (s->count == MAX_DEVICES)
        asys_note(ASYS_NOTE_NOTICE, "--nic-metrics: sampling the first %d devices", MAX_DEVICES);
    s->requested_hz = (uint32_t)frequency_hz;
    s->period_ns = 1000000000u / (frequency_hz ? frequency_hz : 1);
    if (asys_session_sampler_segment(&s->seg, session_dir, "nic", ASYS_LAUNCHER_NIC,
                                     ASYS_FEATURE_NIC, err) != 0)
        goto out;
    segment_open = 1;
    uint64_t now = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
    for (size_t i = 0; i < s->count; i++)
        put_device(s, i, now);
    if ((errno = pthread_create(&s->thread, NULL, sampler, s)) != 0) {
        asys_fail_errno(err, errno, "cannot start the NIC sampler");
        goto out;
    }
    *out = s;
    s = NULL;
    rc = 0;
out:
    if (s) {
        if (segment_open)
            asys_segment_close(&s->seg);
        close_files(s);
    }
    asys_nic_filter_free(filter);
    free(pci);
    free(s);
    return rc;
}

/* The 10th percentile of the gaps between changes, in ticks; 0: too few. */
static uint64_t update_gap(const struct nic_sampler *s)
{
    uint64_t total = 0, seen = 0;
    for (unsigned g = 1; g <= GAP_BINS; g++)
        total += s->gaps[g];
    if (total < 20)
        return 0;
    for (unsigned g = 1; g <= GAP_BINS; g++)
        if ((seen += s->gaps[g]) * 10 >= total)
            return g;
    return GAP_BINS;
}

void asys_nic_sampler_stop(struct nic_sampler *s)
{
    if (!s)
        return;
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    pthread_join(s->thread, NULL);
    double span = (double)(s->last_ns - s->first_ns) / 1e9;
    double achieved = s->ticks > 1 && span > 0 ? (double)(s->ticks - 1) / span : 0;
    uint64_t gap = update_gap(s);
    double updates = gap ? achieved / (double)gap : 0;
    uint32_t delta;
    uint64_t now = asys_clock_ticks(ASYS_CLOCK_MONOTONIC);
    struct asys_rec_nic_rate *r = asys_segment_reserve(&s->seg, sizeof *r, now, &delta);
    if (r) {
        r->requested_hz = s->requested_hz;
        r->reserved = 0;
        r->sample_mhz = (uint64_t)(achieved * 1000 + 0.5);
        r->update_mhz = (uint64_t)(updates * 1000 + 0.5);
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_NIC_RATE, sizeof *r / 8, 0, delta));
    }
    /* the manual: the driver may not keep up; say so once, with what was recorded */
    if (span >= 0.5 && achieved > 0 && achieved < 0.9 * s->requested_hz)
        asys_note(ASYS_NOTE_NOTICE,
                  "--nic-metrics-frequency %u: the NIC counters could be read %.0f times a "
                  "second; the report records that rate",
                  s->requested_hz, achieved);
    else if (gap >= 2)
        asys_note(ASYS_NOTE_NOTICE,
                  "--nic-metrics-frequency %u: the NIC driver updates its counters about %.0f "
                  "times a second; the report records that rate",
                  s->requested_hz, updates);
    asys_segment_close(&s->seg);
    close_files(s);
    free(s);
}
