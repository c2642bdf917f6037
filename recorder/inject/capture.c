/* --capture-range: which events a process records.
 *
 * Without a capture range every event is recorded.  With one, the process
 * starts outside any window; the trigger (cudaProfilerStart, or the push or
 * start of the named HGTX range) opens a window and its end closes it.
 * --capture-range-end says what happens next: stop (no more windows), repeat
 * (the next trigger opens another, at most N times) or none (the first
 * window never closes).
 *
 * Device activity arrives later, on CUPTI's thread: it is kept when the API
 * call that caused it was recorded.  CUPTI numbers API calls in increasing
 * order process-wide, so each window keeps the first and last correlation id
 * recorded inside it.
 *
 * ASYS_CAPTURE_RANGE=session (asys launch, --delay): the window is opened
 * and closed from outside, by the launcher's commands storing into the
 * arena's control block (session_recording, session_window), which every
 * process of the session maps; the importer keeps each report's records to
 * its window's times, so device activity is kept here whatever its call. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "inject.h"

int asys_capture_on = 1;
int *asys_capture_flag = &asys_capture_on;

#define MAX_WINDOWS 4096
#define MAX_MATCHED_IDS 64

struct capture_window {
    uint32_t first_correlation; /* 0: no API call recorded yet */
    uint32_t last_correlation; /* UINT32_MAX while the window is open */
};

enum end_mode { END_STOP, END_REPEAT, END_NONE };

static struct {
    enum asys_capture_mode mode;
    enum end_mode end_mode;
    uint64_t windows_allowed; /* END_REPEAT:N and END_STOP (1) */
    pthread_mutex_t lock; /* opening and closing windows */
    /* HGTX trigger: the range's message and its domain */
    char range[256];
    char domain[256];
    int any_domain;
    uint16_t domain_ids[MAX_MATCHED_IDS]; /* domains of that name, as they are created */
    uint32_t domain_count;
    uint32_t string_ids[MAX_MATCHED_IDS]; /* registered strings with the range's text */
    uint32_t string_count;
    /* the range that opened the current window */
    struct asys_capture_holder holder;
    uint32_t last_seen; /* atomic: the highest correlation id recorded in the open window */
    /* windows so far; the last one is open while asys_capture_on */
    struct capture_window windows[MAX_WINDOWS];
    uint32_t window_count; /* atomic: readers on CUPTI's thread */
} capture = {.lock = PTHREAD_MUTEX_INITIALIZER};

ASYS_START_DATA enum asys_capture_mode asys_capture_current_mode = ASYS_CAPTURE_ALWAYS;
/* ASYS_CAPTURE_SESSION: the session's window number, in the arena */
const uint32_t *asys_capture_window_word = &capture.window_count;

/* "stop", "none", "repeat" or "repeat:N". */
static int parse_end(const char *text)
{
    if (!text || !strcmp(text, "stop")) {
        capture.end_mode = END_STOP;
        capture.windows_allowed = 1;
        return 0;
    }
    if (!strcmp(text, "none")) {
        capture.end_mode = END_NONE;
        capture.windows_allowed = 1;
        return 0;
    }
    if (strncmp(text, "repeat", 6) != 0)
        return -1;
    capture.end_mode = END_REPEAT;
    capture.windows_allowed = MAX_WINDOWS;
    if (text[6] == ':') {
        char *end;
        unsigned long long n = strtoull(text + 7, &end, 10);
        if (*end || !n)
            return -1;
        capture.windows_allowed = n < MAX_WINDOWS ? n : MAX_WINDOWS;
    } else if (text[6]) {
        return -1;
    }
    return 0;
}

/* "RANGE", "RANGE@DOMAIN" or "RANGE@*"; the last '@' separates them. */
static int parse_hgtx_range(const char *text)
{
    if (!text || !*text)
        return -1;
    const char *at = strrchr(text, '@');
    size_t n = at ? (size_t)(at - text) : strlen(text);
    if (!n || n >= sizeof capture.range || (at && strlen(at + 1) >= sizeof capture.domain))
        return -1;
    memcpy(capture.range, text, n);
    capture.range[n] = '\0';
    if (at) {
        strcpy(capture.domain, at + 1);
        capture.any_domain = !strcmp(capture.domain, "*");
    }
    return 0;
}

/* The session's shared words; without an arena nothing can reach this
 * process: it records nothing rather than what nobody asked for. */
static void init_session(void)
{
    struct asys_arena_control *c = asys_proc.arena.control;
    asys_capture_current_mode = ASYS_CAPTURE_SESSION;
    if (!c) {
        asys_debug("capture: a session without an arena; recording nothing");
        asys_capture_on = 0;
        return;
    }
    asys_capture_flag = (int *)&c->session_recording;
    asys_capture_window_word = &c->session_window;
}

void asys_capture_init(void)
{
    const char *mode = getenv("ASYS_CAPTURE_RANGE");
    asys_capture_current_mode = ASYS_CAPTURE_ALWAYS;
    asys_capture_on = 1;
    if (!mode || !*mode || !strcmp(mode, "none"))
        return;
    if (parse_end(getenv("ASYS_CAPTURE_RANGE_END")) != 0) {
        asys_debug("capture: bad ASYS_CAPTURE_RANGE_END; recording everything");
        return;
    }
    if (!strcmp(mode, "session")) {
        init_session();
        return;
    }
    if (!strcmp(mode, "hggc-profiler-api")) {
        asys_capture_current_mode = ASYS_CAPTURE_PROFILER_CALLS;
    } else if (!strcmp(mode, "hgtx") && parse_hgtx_range(getenv("ASYS_HGTX_CAPTURE")) == 0) {
        asys_capture_current_mode = ASYS_CAPTURE_HGTX_RANGE;
    } else {
        asys_debug("capture: bad ASYS_CAPTURE_RANGE '%s'; recording everything", mode);
        return;
    }
    asys_capture_on = 0;
}

static void write_edge(struct asys_thread *t, unsigned edge, uint32_t window, uint32_t name_id,
                       uint64_t ticks)
{
    uint32_t trigger = asys_capture_current_mode == ASYS_CAPTURE_PROFILER_CALLS
                           ? ASYS_CAPTURE_PROFILER_API
                           : ASYS_CAPTURE_HGTX;
    uint32_t delta;
    struct asys_rec_capture *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    r->window = window;
    r->trigger = trigger;
    r->name_string_id = name_id;
    r->reserved = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_CAPTURE, sizeof *r / 8, edge, delta));
}

int asys_capture_begin(struct asys_thread *t, uint64_t ticks, uint32_t name_id,
                       const struct asys_capture_holder *holder)
{
    int opened = 0;
    pthread_mutex_lock(&capture.lock);
    uint32_t n = __atomic_load_n(&capture.window_count, __ATOMIC_RELAXED);
    if (!asys_capture_on && n < capture.windows_allowed && n < MAX_WINDOWS) {
        capture.windows[n] = (struct capture_window){0, UINT32_MAX};
        __atomic_store_n(&capture.last_seen, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&capture.window_count, n + 1, __ATOMIC_RELEASE);
        if (holder)
            capture.holder = *holder;
        __atomic_store_n(&asys_capture_on, 1, __ATOMIC_RELEASE);
        write_edge(t, ASYS_CAPTURE_BEGIN, n, name_id, ticks);
        opened = 1;
    }
    pthread_mutex_unlock(&capture.lock);
    return opened;
}

void asys_capture_end(struct asys_thread *t, uint64_t ticks)
{
    pthread_mutex_lock(&capture.lock);
    uint32_t n = __atomic_load_n(&capture.window_count, __ATOMIC_RELAXED);
    if (asys_capture_on && n && capture.end_mode != END_NONE) {
        struct capture_window *w = &capture.windows[n - 1];
        __atomic_store_n(&asys_capture_on, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&w->last_correlation,
                         __atomic_load_n(&capture.last_seen, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
        write_edge(t, ASYS_CAPTURE_END, n - 1, 0, ticks);
        memset(&capture.holder, 0, sizeof capture.holder);
    }
    pthread_mutex_unlock(&capture.lock);
}

/* An API call recorded inside the open window: the window's id range grows. */
void asys_capture_note_correlation(uint32_t correlation)
{
    if (asys_capture_current_mode == ASYS_CAPTURE_ALWAYS ||
        asys_capture_current_mode == ASYS_CAPTURE_SESSION || !correlation)
        return;
    uint32_t n = __atomic_load_n(&capture.window_count, __ATOMIC_ACQUIRE);
    if (!n)
        return;
    struct capture_window *w = &capture.windows[n - 1];
    uint32_t zero = 0;
    __atomic_compare_exchange_n(&w->first_correlation, &zero, correlation, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
    /* the open window's last id stays UINT32_MAX until it closes on this */
    uint32_t seen = __atomic_load_n(&capture.last_seen, __ATOMIC_RELAXED);
    while (correlation > seen &&
           !__atomic_compare_exchange_n(&capture.last_seen, &seen, correlation, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

int asys_capture_keeps(uint32_t correlation)
{
    if (asys_capture_current_mode == ASYS_CAPTURE_ALWAYS ||
        asys_capture_current_mode == ASYS_CAPTURE_SESSION)
        return 1;
    if (!correlation)
        return 0;
    uint32_t n = __atomic_load_n(&capture.window_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = n; i-- > 0;) {
        uint32_t first = __atomic_load_n(&capture.windows[i].first_correlation, __ATOMIC_RELAXED);
        uint32_t last = __atomic_load_n(&capture.windows[i].last_correlation, __ATOMIC_ACQUIRE);
        if (first && correlation >= first && correlation <= last)
            return 1;
    }
    return 0;
}

const struct asys_capture_holder *asys_capture_holder(void)
{
    return &capture.holder;
}

/* ---- the HGTX trigger ---------------------------------------------------- */

int asys_capture_waits_for_hgtx(void)
{
    return asys_capture_current_mode == ASYS_CAPTURE_HGTX_RANGE &&
           !__atomic_load_n(&asys_capture_on, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&capture.window_count, __ATOMIC_RELAXED) < capture.windows_allowed;
}

static int contains_u32(const uint32_t *ids, uint32_t count, uint32_t id)
{
    for (uint32_t i = 0; i < count; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

int asys_capture_hgtx_domain(uint16_t domain)
{
    if (capture.any_domain)
        return 1;
    if (!capture.domain[0])
        return domain == ASYS_HGTX_DEFAULT_DOMAIN;
    uint32_t n = __atomic_load_n(&capture.domain_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (capture.domain_ids[i] == domain)
            return 1;
    return 0;
}

int asys_capture_hgtx_text(const char *text)
{
    return text && !strcmp(text, capture.range);
}

int asys_capture_hgtx_registered(uint32_t string_id)
{
    uint32_t n = __atomic_load_n(&capture.string_count, __ATOMIC_ACQUIRE);
    return string_id && contains_u32(capture.string_ids, n, string_id);
}

void asys_capture_hgtx_domain_created(uint16_t domain, const char *name)
{
    if (asys_capture_current_mode != ASYS_CAPTURE_HGTX_RANGE || !capture.domain[0] ||
        capture.any_domain || !name || strcmp(name, capture.domain) != 0)
        return;
    pthread_mutex_lock(&capture.lock);
    if (capture.domain_count < MAX_MATCHED_IDS) {
        capture.domain_ids[capture.domain_count] = domain;
        __atomic_store_n(&capture.domain_count, capture.domain_count + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&capture.lock);
}

void asys_capture_hgtx_string_registered(uint32_t string_id, const char *text)
{
    if (asys_capture_current_mode != ASYS_CAPTURE_HGTX_RANGE || !asys_capture_hgtx_text(text))
        return;
    pthread_mutex_lock(&capture.lock);
    if (capture.string_count < MAX_MATCHED_IDS &&
        !contains_u32(capture.string_ids, capture.string_count, string_id)) {
        capture.string_ids[capture.string_count] = string_id;
        __atomic_store_n(&capture.string_count, capture.string_count + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&capture.lock);
}
