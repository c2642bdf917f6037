/* HGTX collector: NVTX v3 injection.
 *
 * Every module (executable or library) compiled with the NVTX headers has its
 * own function table and calls InitializeInjectionNvtx2 on its first NVTX
 * call; each call fills that module's table, global state is shared.
 * Push/pop levels are tracked even when a record cannot be written, so the
 * values returned to the program are always right. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hgtx_internal.h"

/* Domain handles are small integers cast to pointers (never dereferenced by
 * NVTX); names are deduplicated so creating a domain twice returns the same
 * handle. */
#define MAX_DOMAINS 4096
static struct {
    pthread_mutex_t lock;
    uint32_t count;
    uint64_t name_hash[MAX_DOMAINS];
} domains = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint16_t domain_id(nvtxDomainHandle_t domain)
{
    uintptr_t id = (uintptr_t)domain;
    return id <= ASYS_HGTX_MAX_DOMAIN ? (uint16_t)id : 0;
}

uint16_t asys_hgtx_domain_id(nvtxDomainHandle_t domain)
{
    return domain_id(domain);
}

static uint64_t next_dynamic_id = NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;
static uint64_t next_handle;

uint64_t asys_hgtx_dynamic_id(void)
{
    return __atomic_fetch_add(&next_dynamic_id, 1, __ATOMIC_RELAXED);
}

uint64_t asys_hgtx_new_handle(void)
{
    return __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED);
}

/* Levels for a thread without a segment (recording failed for it). */
#define FALLBACK_DEPTH_SLOTS 8
static __thread int32_t fallback_depth[FALLBACK_DEPTH_SLOTS] ASYS_TLS;

/* The level counter of `domain` on this thread; re-entered hooks (t == NULL
 * while the thread has a segment) still count on the thread's own state. */
static int32_t *depth_of(struct asys_thread *t, uint16_t domain)
{
    if (!t)
        t = asys_tls_thread;
    if (t)
        return &t->depth[domain < ASYS_DEPTH_SLOTS ? domain : ASYS_DEPTH_SLOTS - 1];
    return &fallback_depth[domain < FALLBACK_DEPTH_SLOTS ? domain : FALLBACK_DEPTH_SLOTS - 1];
}

/* The level below which `domain`'s open ranges on thread t were pushed before
 * the capture window it now records in (`depth`: the level count before
 * this push or pop, the first time the thread records in the window). */
static int32_t *window_base(struct asys_thread *t, uint16_t domain, int32_t depth)
{
    unsigned slot = domain < ASYS_DEPTH_SLOTS ? domain : ASYS_DEPTH_SLOTS - 1;
    uint32_t window = asys_capture_window_number();
    if (t->capture_window[slot] != window) {
        t->capture_window[slot] = window;
        t->capture_base[slot] = depth;
    }
    return &t->capture_base[slot];
}

/* ---- attribute decoding ------------------------------------------------ */

static int attr_has(const nvtxEventAttributes_t *a, size_t field_end)
{
    return a && a->size >= field_end;
}

#define ATTR_END(field) \
    (offsetof(nvtxEventAttributes_t, field) + sizeof(((nvtxEventAttributes_t *)0)->field))

/* The message of an event as a string id, and its NVTX message type. */
struct message {
    uint32_t id;
    uint8_t type;
};

static struct message resolve_message(struct asys_thread *t, const char *ascii, const wchar_t *wide,
                                      const nvtxEventAttributes_t *a)
{
    struct message m = {0, NVTX_MESSAGE_TYPE_ASCII};
    if (ascii) {
        m.id = asys_intern(t, ascii);
        return m;
    }
    if (wide) {
        m.id = asys_intern_wide(t, wide);
        m.type = NVTX_MESSAGE_TYPE_UNICODE;
        return m;
    }
    m.type = 0;
    if (!attr_has(a, ATTR_END(message)))
        return m;
    m.type = (uint8_t)a->messageType;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        m.id = a->message.ascii ? asys_intern(t, a->message.ascii) : 0;
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        m.id = a->message.unicode ? asys_intern_wide(t, a->message.unicode) : 0;
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        m.id = (uint32_t)(uintptr_t)a->message.registered;
        break;
    default:
        m.type = 0;
        break;
    }
    return m;
}

uint32_t asys_hgtx_message_id(struct asys_thread *t, int32_t type, nvtxMessageValue_t value)
{
    switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return value.ascii ? asys_intern(t, value.ascii) : 0;
    case NVTX_MESSAGE_TYPE_UNICODE:
        return value.unicode ? asys_intern_wide(t, value.unicode) : 0;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return (uint32_t)(uintptr_t)value.registered;
    default:
        return 0;
    }
}

static void fill_attributes(struct asys_hgtx_attributes *out, uint16_t domain,
                            const nvtxEventAttributes_t *a, struct message msg)
{
    memset(out, 0, sizeof *out);
    out->message_string_id = msg.id;
    out->message_type = msg.type;
    out->domain_id = domain;
    if (!a)
        return;
    if (attr_has(a, ATTR_END(category)) && a->category) {
        out->category = a->category;
        out->flags |= ASYS_HGTX_HAS_CATEGORY;
    }
    if (attr_has(a, ATTR_END(color)) && a->colorType == NVTX_COLOR_ARGB) {
        out->color_argb = a->color;
        out->flags |= ASYS_HGTX_HAS_COLOR;
    }
    if (!attr_has(a, ATTR_END(payload)))
        return;
    uint64_t bits = 0;
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
    case NVTX_PAYLOAD_TYPE_INT64:
    case NVTX_PAYLOAD_TYPE_DOUBLE:
        bits = a->payload.ullValue;
        break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        bits = a->payload.uiValue;
        break;
    case NVTX_PAYLOAD_TYPE_INT32:
        bits = (uint64_t)(int64_t)a->payload.iValue;
        break;
    case NVTX_PAYLOAD_TYPE_FLOAT: {
        double d = a->payload.fValue;
        memcpy(&bits, &d, sizeof bits);
        break;
    }
    default:
        return;
    }
    out->payload_type = (uint32_t)a->payloadType;
    out->payload = bits;
    out->flags |= ASYS_HGTX_HAS_PAYLOAD;
}

/* Attributes that fit the one-word form: default domain, an ASCII message
 * with a small id, nothing else. */
static int is_plain(const struct asys_hgtx_attributes *attr)
{
    return attr->domain_id == ASYS_HGTX_DEFAULT_DOMAIN && attr->flags == 0 &&
           attr->message_string_id <= ASYS_ARG_MAX_STRING_ID &&
           (attr->message_type == NVTX_MESSAGE_TYPE_ASCII || attr->message_type == 0);
}

/* ---- record writers ---------------------------------------------------- */

/* One-word record: PUSH/MARK with a small string id, or POP. */
static inline void write_word(struct asys_thread *t, unsigned type, unsigned arg, uint64_t ticks)
{
    uint32_t delta;
    asys_rec_word *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (r)
        asys_segment_commit(r, ASYS_REC_WORD(type, 1, arg, delta));
}

/* A push or mark: the compact form when the event carries only a message. */
static void write_event(struct asys_thread *t, unsigned compact_type, unsigned ex_type,
                        uint16_t domain, const nvtxEventAttributes_t *a, struct message msg,
                        uint64_t ticks)
{
    if (!a && domain == ASYS_HGTX_DEFAULT_DOMAIN && msg.type == NVTX_MESSAGE_TYPE_ASCII &&
        msg.id <= ASYS_ARG_MAX_STRING_ID) {
        write_word(t, compact_type, msg.id, ticks);
        return;
    }
    struct asys_hgtx_attributes attr;
    fill_attributes(&attr, domain, a, msg);
    if (is_plain(&attr)) {
        write_word(t, compact_type, attr.message_string_id, ticks);
        return;
    }
    uint32_t delta;
    struct asys_rec_hgtx_ex *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    r->attr = attr;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ex_type, sizeof *r / 8, 0, delta));
}

static nvtxRangeId_t new_range_id(struct asys_thread *t)
{
    return ((uint64_t)t->thread_index << 40) | ++t->next_range_serial;
}

uint64_t asys_hgtx_new_range_id(struct asys_thread *t)
{
    return new_range_id(t);
}

int asys_hgtx_push_level(struct asys_thread *t, uint16_t domain)
{
    return (*depth_of(t, domain))++;
}

int asys_hgtx_pop_level(struct asys_thread *t, uint16_t domain)
{
    int32_t *depth = depth_of(t, domain);
    return *depth > 0 ? --(*depth) : -1;
}

static void write_start(struct asys_thread *t, nvtxRangeId_t id, uint16_t domain,
                        const nvtxEventAttributes_t *a, struct message msg, uint64_t ticks)
{
    struct asys_hgtx_attributes attr;
    fill_attributes(&attr, domain, a, msg);
    uint32_t delta;
    if (is_plain(&attr)) {
        struct asys_rec_hgtx_range *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
        if (r) {
            r->range_id = id;
            asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_START, sizeof *r / 8,
                                                          attr.message_string_id, delta));
        }
        return;
    }
    struct asys_rec_hgtx_start_ex *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (r) {
        r->range_id = id;
        r->attr = attr;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_START_EX, sizeof *r / 8, 0, delta));
    }
}

/* ---- --capture-range=hgtx ---------------------------------------------- */

/* Whether the range being opened is the one --hgtx-capture names. */
static int is_capture_range(uint16_t domain, const char *ascii, const wchar_t *wide,
                            const nvtxEventAttributes_t *a)
{
    if (!asys_capture_hgtx_domain(domain))
        return 0;
    char text[512];
    if (!ascii && !wide && attr_has(a, ATTR_END(message))) {
        if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
            ascii = a->message.ascii;
        else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE)
            wide = a->message.unicode;
        else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
            return asys_capture_hgtx_registered((uint32_t)(uintptr_t)a->message.registered);
    }
    if (wide) {
        asys_wide_to_utf8(text, sizeof text, wide);
        ascii = text;
    }
    return asys_capture_hgtx_text(ascii);
}

/* Outside a window: opens one when this is the capture range (1). */
static int capture_opens(struct asys_thread *t, uint16_t domain, const char *ascii,
                         const wchar_t *wide, const nvtxEventAttributes_t *a, int32_t level,
                         uint64_t range_id, uint64_t ticks)
{
    if (!asys_capture_waits_for_hgtx() || !is_capture_range(domain, ascii, wide, a))
        return 0;
    struct asys_capture_holder holder = {t->tid, domain, level, range_id};
    struct message msg = resolve_message(t, ascii, wide, a);
    return asys_capture_begin(t, ticks, msg.id, &holder);
}

/* Inside a window: whether this pop or end closes the range that opened it. */
static int capture_closes(struct asys_thread *t, uint16_t domain, int32_t level, uint64_t range_id)
{
    if (asys_capture_mode() != ASYS_CAPTURE_HGTX_RANGE)
        return 0;
    const struct asys_capture_holder *h = asys_capture_holder();
    if (range_id)
        return h->level < 0 && h->range_id == range_id;
    return h->level == level && h->tid == t->tid && h->domain == domain;
}

/* ---- push / pop -------------------------------------------------------- */

static int push(uint16_t domain, const char *ascii, const wchar_t *wide,
                const nvtxEventAttributes_t *a)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0; /* after enter: a first event registers the thread */
    int32_t *depth = depth_of(t, domain);
    int level = (*depth)++;
    if (!t) {
        if (asys_capturing())
            asys_thread_count_lost(sizeof(struct asys_rec_hgtx_ex));
        return level;
    }
    if (asys_capturing() || capture_opens(t, domain, ascii, wide, a, level, 0, ticks)) {
        window_base(t, domain, level);
        struct message msg = resolve_message(t, ascii, wide, a);
        write_event(t, ASYS_REC_HGTX_PUSH, ASYS_REC_HGTX_PUSH_EX, domain, a, msg, ticks);
        asys_hgtx_attach_payloads(t, domain, a, ticks);
    }
    asys_thread_leave();
    return level;
}

static int pop(uint16_t domain)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    int32_t *depth = depth_of(t, domain);
    if (*depth <= 0) { /* NVTX: a pop without a push is an error, reported as -1 */
        if (t)
            asys_thread_leave();
        return -1;
    }
    int level = --(*depth);
    if (!t) {
        if (asys_capturing())
            asys_thread_count_lost(sizeof(asys_rec_word));
        return level;
    }
    int32_t *base = asys_capturing() ? window_base(t, domain, level + 1) : NULL;
    if (base && level < *base) {
        *base = level; /* pushed before the window opened: its push is not in the report */
    } else if (base) {
        write_word(t, ASYS_REC_HGTX_POP, domain, ticks);
        if (capture_closes(t, domain, level, 0))
            asys_capture_end(t, ticks);
    }
    asys_thread_leave();
    return level;
}

/* The thread's recorder for the common push and pop (default domain,
 * recording, in the window its levels were last counted in), else NULL:
 * push() and pop() handle the rest. */
static inline __attribute__((always_inline)) struct asys_thread *fast_path_thread(void)
{
    struct asys_thread *t = asys_tls_thread;
    if (ASYS_UNLIKELY(!t || asys_tls_busy || !asys_capturing()))
        return NULL;
    unsigned slot = ASYS_HGTX_DEFAULT_DOMAIN;
    return t->capture_window[slot] == asys_capture_window_number() ? t : NULL;
}

/* The fast paths' record: the thread held, stamped, its default-domain
 * level moved (a push returns the level before, a pop the one after). */
static inline __attribute__((always_inline)) int fast_word(struct asys_thread *t, unsigned type,
                                                           unsigned arg, int push)
{
    asys_tls_busy = 1;
    uint64_t ticks = asys_now();
    int32_t *depth = &t->depth[ASYS_HGTX_DEFAULT_DOMAIN];
    int level = push ? (*depth)++ : --*depth;
    write_word(t, type, arg, ticks);
    asys_thread_leave();
    return level;
}

/* A push of a literal the thread has seen: one word, no call but the
 * clock's (issue 30.1: the hooks were most of a pair's cost beside the two
 * clock reads).  The same record push() writes; 0 when not taken. */
static inline __attribute__((always_inline)) int fast_push(const char *message, int *level)
{
    struct asys_thread *t = fast_path_thread();
    uint32_t id = t && message ? asys_intern_cached(t, message) : 0;
    if (ASYS_UNLIKELY(!id || id > ASYS_ARG_MAX_STRING_ID))
        return 0;
    *level = fast_word(t, ASYS_REC_HGTX_PUSH, id, 1);
    return 1;
}

/* The ASCII message of attributes that carry nothing else (no colour,
 * category or payload: the one-word record holds them whole), else NULL.
 * NVTX3's C++ ranges push such attributes. */
static const char *plain_ascii_message(const nvtxEventAttributes_t *a)
{
    if (!attr_has(a, ATTR_END(message)) || a->messageType != NVTX_MESSAGE_TYPE_ASCII ||
        (attr_has(a, ATTR_END(category)) && a->category) ||
        (attr_has(a, ATTR_END(color)) && a->colorType == NVTX_COLOR_ARGB) ||
        (attr_has(a, ATTR_END(payload)) && a->payloadType != NVTX_PAYLOAD_UNKNOWN))
        return NULL;
    return a->message.ascii;
}

static int NVTX_API hook_push_a(const char *message)
{
    int level;
    if (ASYS_LIKELY(fast_push(message, &level)))
        return level;
    return push(ASYS_HGTX_DEFAULT_DOMAIN, message ? message : "", NULL, NULL);
}

static int NVTX_API hook_push_w(const wchar_t *message)
{
    return push(ASYS_HGTX_DEFAULT_DOMAIN, NULL, message ? message : L"", NULL);
}

static int NVTX_API hook_push_ex(const nvtxEventAttributes_t *a)
{
    int level;
    if (fast_push(plain_ascii_message(a), &level))
        return level;
    return push(ASYS_HGTX_DEFAULT_DOMAIN, NULL, NULL, a);
}

/* A pop of a range pushed inside the window, when no HGTX range closes
 * windows: the same record pop() writes; 0 when not taken. */
static inline __attribute__((always_inline)) int fast_pop(int *level)
{
    struct asys_thread *t = fast_path_thread();
    unsigned slot = ASYS_HGTX_DEFAULT_DOMAIN;
    if (ASYS_UNLIKELY(!t || asys_capture_mode() == ASYS_CAPTURE_HGTX_RANGE ||
                      t->depth[slot] <= t->capture_base[slot]))
        return 0;
    *level = fast_word(t, ASYS_REC_HGTX_POP, ASYS_HGTX_DEFAULT_DOMAIN, 0);
    return 1;
}

static int NVTX_API hook_pop(void)
{
    int level;
    if (ASYS_LIKELY(fast_pop(&level)))
        return level;
    return pop(ASYS_HGTX_DEFAULT_DOMAIN);
}

/* The default domain's (a NULL handle: NVTX3's global domain) take the
 * fast paths too. */
static int NVTX_API hook_domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    int level;
    if (domain_id(domain) == ASYS_HGTX_DEFAULT_DOMAIN && fast_push(plain_ascii_message(a), &level))
        return level;
    return push(domain_id(domain), NULL, NULL, a);
}

static int NVTX_API hook_domain_pop(nvtxDomainHandle_t domain)
{
    int level;
    if (domain_id(domain) == ASYS_HGTX_DEFAULT_DOMAIN && fast_pop(&level))
        return level;
    return pop(domain_id(domain));
}

/* ---- marks --------------------------------------------------------------- */

static void mark(uint16_t domain, const char *ascii, const wchar_t *wide,
                 const nvtxEventAttributes_t *a)
{
    if (!asys_capturing())
        return;
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_ex));
        return;
    }
    struct message msg = resolve_message(t, ascii, wide, a);
    write_event(t, ASYS_REC_HGTX_MARK, ASYS_REC_HGTX_MARK_EX, domain, a, msg, ticks);
    asys_hgtx_attach_payloads(t, domain, a, ticks);
    asys_thread_leave();
}

static void NVTX_API hook_mark_a(const char *message)
{
    mark(ASYS_HGTX_DEFAULT_DOMAIN, message ? message : "", NULL, NULL);
}

static void NVTX_API hook_mark_w(const wchar_t *message)
{
    mark(ASYS_HGTX_DEFAULT_DOMAIN, NULL, message ? message : L"", NULL);
}

static void NVTX_API hook_mark_ex(const nvtxEventAttributes_t *a)
{
    mark(ASYS_HGTX_DEFAULT_DOMAIN, NULL, NULL, a);
}

static void NVTX_API hook_domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    mark(domain_id(domain), NULL, NULL, a);
}

/* ---- start / end --------------------------------------------------------- */

static nvtxRangeId_t start(uint16_t domain, const char *ascii, const wchar_t *wide,
                           const nvtxEventAttributes_t *a)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        if (asys_capturing())
            asys_thread_count_lost(sizeof(struct asys_rec_hgtx_start_ex));
        return 0;
    }
    nvtxRangeId_t id = new_range_id(t);
    if (asys_capturing() || capture_opens(t, domain, ascii, wide, a, -1, id, ticks)) {
        struct message msg = resolve_message(t, ascii, wide, a);
        write_start(t, id, domain, a, msg, ticks);
        asys_hgtx_attach_payloads(t, domain, a, ticks);
    }
    asys_thread_leave();
    return id;
}

static void end(nvtxRangeId_t id)
{
    if (id == 0 || !asys_capturing()) /* not a range asys handed out, or outside a window */
        return;
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_range));
        return;
    }
    uint32_t delta;
    struct asys_rec_hgtx_range *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (r) {
        r->range_id = id;
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_END, sizeof *r / 8, 0, delta));
    }
    if (capture_closes(t, 0, -1, id))
        asys_capture_end(t, ticks);
    asys_thread_leave();
}

static nvtxRangeId_t NVTX_API hook_start_a(const char *message)
{
    return start(ASYS_HGTX_DEFAULT_DOMAIN, message ? message : "", NULL, NULL);
}

static nvtxRangeId_t NVTX_API hook_start_w(const wchar_t *message)
{
    return start(ASYS_HGTX_DEFAULT_DOMAIN, NULL, message ? message : L"", NULL);
}

static nvtxRangeId_t NVTX_API hook_start_ex(const nvtxEventAttributes_t *a)
{
    return start(ASYS_HGTX_DEFAULT_DOMAIN, NULL, NULL, a);
}

static nvtxRangeId_t NVTX_API hook_domain_start_ex(nvtxDomainHandle_t domain,
                                                   const nvtxEventAttributes_t *a)
{
    return start(domain_id(domain), NULL, NULL, a);
}

static void NVTX_API hook_end(nvtxRangeId_t id)
{
    end(id);
}

static void NVTX_API hook_domain_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
    (void)domain; /* range ids are unique across domains */
    end(id);
}

/* ---- naming ---------------------------------------------------------------- */

static void name_category(uint16_t domain, uint32_t category, const char *ascii,
                          const wchar_t *wide)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint32_t name = ascii ? asys_intern(t, ascii) : asys_intern_wide(t, wide);
    uint32_t delta;
    struct asys_rec_hgtx_category *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        r->category = category;
        r->name_string_id = name;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_CATEGORY, sizeof *r / 8, domain, delta));
    }
    asys_thread_leave();
}

static void NVTX_API hook_name_category_a(uint32_t category, const char *name)
{
    name_category(ASYS_HGTX_DEFAULT_DOMAIN, category, name ? name : "", NULL);
}

static void NVTX_API hook_name_category_w(uint32_t category, const wchar_t *name)
{
    name_category(ASYS_HGTX_DEFAULT_DOMAIN, category, NULL, name ? name : L"");
}

static void NVTX_API hook_domain_name_category_a(nvtxDomainHandle_t d, uint32_t category,
                                                 const char *name)
{
    name_category(domain_id(d), category, name ? name : "", NULL);
}

static void NVTX_API hook_domain_name_category_w(nvtxDomainHandle_t d, uint32_t category,
                                                 const wchar_t *name)
{
    name_category(domain_id(d), category, NULL, name ? name : L"");
}

static void name_os_thread(uint32_t os_tid, const char *ascii, const wchar_t *wide)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint32_t name = ascii ? asys_intern(t, ascii) : asys_intern_wide(t, wide);
    uint32_t delta;
    struct asys_rec_hgtx_thread_name *r =
        asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        r->os_tid = os_tid;
        r->name_string_id = name;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_THREAD_NAME, sizeof *r / 8, 0, delta));
    }
    asys_thread_leave();
}

static void NVTX_API hook_name_os_thread_a(uint32_t os_tid, const char *name)
{
    name_os_thread(os_tid, name ? name : "", NULL);
}

static void NVTX_API hook_name_os_thread_w(uint32_t os_tid, const wchar_t *name)
{
    name_os_thread(os_tid, NULL, name ? name : L"");
}

/* ---- domains and registered strings ----------------------------------------- */

static void write_domain(struct asys_thread *t, uint16_t id, uint32_t name, uint32_t destroyed)
{
    uint32_t delta;
    struct asys_rec_hgtx_domain *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        r->name_string_id = name;
        r->destroyed = destroyed;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_DOMAIN, sizeof *r / 8, id, delta));
    }
}

static uint64_t text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a; creation is not a hot path */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static nvtxDomainHandle_t create_domain(const char *name)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t h = text_hash(name);
    uint32_t id = 0;
    int is_new = 0;
    pthread_mutex_lock(&domains.lock);
    for (uint32_t i = 0; i < domains.count; i++) {
        if (domains.name_hash[i] == h) {
            id = i + 1;
            break;
        }
    }
    if (!id && domains.count < MAX_DOMAINS) {
        domains.name_hash[domains.count++] = h;
        id = domains.count;
        is_new = 1;
    }
    pthread_mutex_unlock(&domains.lock);
    if (is_new)
        asys_capture_hgtx_domain_created((uint16_t)id, name);
    if (t) {
        if (is_new)
            write_domain(t, (uint16_t)id, asys_intern(t, name), 0);
        asys_thread_leave();
    }
    /* Beyond MAX_DOMAINS every new domain shares the default one. */
    return (nvtxDomainHandle_t)(uintptr_t)id;
}

/* For the Python function tracer: the same ids as nvtxDomainCreateA. */
uint16_t asys_hgtx_domain_create(const char *name)
{
    return (uint16_t)(uintptr_t)create_domain(name);
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_a(const char *name)
{
    return create_domain(name ? name : "");
}

static nvtxDomainHandle_t NVTX_API hook_domain_create_w(const wchar_t *name)
{
    char buf[512];
    asys_wide_to_utf8(buf, sizeof buf, name);
    return create_domain(buf);
}

static void NVTX_API hook_domain_destroy(nvtxDomainHandle_t domain)
{
    uint16_t id = domain_id(domain);
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    if (id)
        write_domain(t, id, 0, 1);
    asys_thread_leave();
}

static nvtxStringHandle_t NVTX_API hook_register_string_a(nvtxDomainHandle_t domain,
                                                          const char *text)
{
    (void)domain; /* string ids are process-wide */
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return (nvtxStringHandle_t)0;
    uint32_t id = asys_intern(t, text ? text : "");
    asys_capture_hgtx_string_registered(id, text);
    asys_thread_leave();
    return (nvtxStringHandle_t)(uintptr_t)id;
}

static nvtxStringHandle_t NVTX_API hook_register_string_w(nvtxDomainHandle_t domain,
                                                          const wchar_t *text)
{
    (void)domain;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return (nvtxStringHandle_t)0;
    uint32_t id = asys_intern_wide(t, text ? text : L"");
    char utf8[512];
    asys_wide_to_utf8(utf8, sizeof utf8, text ? text : L"");
    asys_capture_hgtx_string_registered(id, utf8);
    asys_thread_leave();
    return (nvtxStringHandle_t)(uintptr_t)id;
}

static void NVTX_API hook_initialize(const void *reserved)
{
    (void)reserved;
}

/* ---- injection entry point ----------------------------------------------- */

#define HOOK ASYS_HGTX_HOOK

static const struct asys_hgtx_hook core_hooks[] = {
    HOOK(NVTX_CBID_CORE_MarkEx, hook_mark_ex),
    HOOK(NVTX_CBID_CORE_MarkA, hook_mark_a),
    HOOK(NVTX_CBID_CORE_MarkW, hook_mark_w),
    HOOK(NVTX_CBID_CORE_RangeStartEx, hook_start_ex),
    HOOK(NVTX_CBID_CORE_RangeStartA, hook_start_a),
    HOOK(NVTX_CBID_CORE_RangeStartW, hook_start_w),
    HOOK(NVTX_CBID_CORE_RangeEnd, hook_end),
    HOOK(NVTX_CBID_CORE_RangePushEx, hook_push_ex),
    HOOK(NVTX_CBID_CORE_RangePushA, hook_push_a),
    HOOK(NVTX_CBID_CORE_RangePushW, hook_push_w),
    HOOK(NVTX_CBID_CORE_RangePop, hook_pop),
    HOOK(NVTX_CBID_CORE_NameCategoryA, hook_name_category_a),
    HOOK(NVTX_CBID_CORE_NameCategoryW, hook_name_category_w),
    HOOK(NVTX_CBID_CORE_NameOsThreadA, hook_name_os_thread_a),
    HOOK(NVTX_CBID_CORE_NameOsThreadW, hook_name_os_thread_w),
};

static const struct asys_hgtx_hook core2_hooks[] = {
    HOOK(NVTX_CBID_CORE2_DomainMarkEx, hook_domain_mark_ex),
    HOOK(NVTX_CBID_CORE2_DomainRangeStartEx, hook_domain_start_ex),
    HOOK(NVTX_CBID_CORE2_DomainRangeEnd, hook_domain_end),
    HOOK(NVTX_CBID_CORE2_DomainRangePushEx, hook_domain_push_ex),
    HOOK(NVTX_CBID_CORE2_DomainRangePop, hook_domain_pop),
    HOOK(NVTX_CBID_CORE2_DomainResourceCreate, asys_hgtx_resource_create),
    HOOK(NVTX_CBID_CORE2_DomainResourceDestroy, asys_hgtx_resource_destroy),
    HOOK(NVTX_CBID_CORE2_DomainNameCategoryA, hook_domain_name_category_a),
    HOOK(NVTX_CBID_CORE2_DomainNameCategoryW, hook_domain_name_category_w),
    HOOK(NVTX_CBID_CORE2_DomainRegisterStringA, hook_register_string_a),
    HOOK(NVTX_CBID_CORE2_DomainRegisterStringW, hook_register_string_w),
    HOOK(NVTX_CBID_CORE2_DomainCreateA, hook_domain_create_a),
    HOOK(NVTX_CBID_CORE2_DomainCreateW, hook_domain_create_w),
    HOOK(NVTX_CBID_CORE2_DomainDestroy, hook_domain_destroy),
    HOOK(NVTX_CBID_CORE2_Initialize, hook_initialize),
};

static int install(const NvtxExportTableCallbacks *etbl, NvtxCallbackModule module,
                   const struct asys_hgtx_hook *hooks, size_t count)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!etbl->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (hooks[i].cbid < size && table[hooks[i].cbid])
            *table[hooks[i].cbid] = (NvtxFunctionPointer)hooks[i].fn;
    return 1;
}

/* ---- a program that replaces NVTX_INJECTION64_PATH ----------------------------- */

/* NVTX loads whatever NVTX_INJECTION64_PATH names when a module makes its
 * first call: a program (NVTX's own tests do) may point it at another tool
 * or remove it.  Checked at exit, reported once per image in a record and
 * in the image's first segment header, for finalize to say. */
ASYS_START_DATA static struct {
    char own_path[1024];
    int reported;
    uint32_t modules_attached; /* atomic */
} injection;

ASYS_START_CODE static int is_own_library(const char *path)
{
    if (!strcmp(path, injection.own_path))
        return 1;
    struct stat a, b;
    return injection.own_path[0] && stat(path, &a) == 0 && stat(injection.own_path, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

ASYS_START_CODE static void check_injection(void)
{
    const char *value = getenv("NVTX_INJECTION64_PATH");
    if (injection.reported || !injection.own_path[0] || (value && is_own_library(value)))
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    injection.reported = 1;
    size_t length = value ? strnlen(value, 4096) : 0;
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_hgtx_injection) + ((length + 7) & ~7u));
    uint32_t delta;
    struct asys_rec_hgtx_injection *r = asys_segment_reserve(&t->seg, size, asys_now(), &delta);
    if (r) {
        r->path_length = (uint32_t)length;
        r->modules_attached = __atomic_load_n(&injection.modules_attached, __ATOMIC_RELAXED);
        memset(r + 1, 0, size - sizeof *r);
        memcpy(r + 1, value ? value : "", length);
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_INJECTION,
                                                      asys_hgtx_size_words(size), 0, delta));
    }
    if (asys_proc.anchor)
        __atomic_fetch_or(&asys_proc.anchor->notices, ASYS_NOTICE_NVTX_REPLACED, __ATOMIC_RELAXED);
    asys_thread_leave();
}

/* At process start (the registry calls it). */
ASYS_START_CODE int asys_hgtx_init(void)
{
    Dl_info info;
    if (dladdr((void *)asys_hgtx_init, &info) && info.dli_fname &&
        strlen(info.dli_fname) < sizeof injection.own_path)
        strcpy(injection.own_path, info.dli_fname);
    asys_at_exit(check_injection);
    return 0;
}

ASYS_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    asys_inject_init();
    if (!asys_proc.enabled || !(asys_proc.features & ASYS_FEATURE_HGTX) || !get_export_table)
        return 0; /* NVTX turns every call of this module into a no-op */
    const NvtxExportTableCallbacks *etbl = get_export_table(NVTX_ETID_CALLBACKS);
    if (!etbl || etbl->struct_size < sizeof *etbl)
        return 0;
    if (!install(etbl, NVTX_CB_MODULE_CORE, core_hooks, sizeof core_hooks / sizeof *core_hooks))
        return 0;
    install(etbl, NVTX_CB_MODULE_CORE2, core2_hooks, sizeof core2_hooks / sizeof *core2_hooks);
    for (size_t i = 0; i < asys_hgtx_naming_module_count; i++) {
        const struct asys_hgtx_core_module *m = &asys_hgtx_naming_modules[i];
        install(etbl, (NvtxCallbackModule)m->module, m->hooks, m->hook_count);
    }
    __atomic_add_fetch(&injection.modules_attached, 1, __ATOMIC_RELAXED);
    asys_debug("NVTX module attached");
    return 1;
}
