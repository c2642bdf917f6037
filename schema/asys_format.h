/*
 * asys on-disk format: every record a collector writes into a segment file.
 *
 * This header is the data contract between the recorder (libasys-inject.so and
 * the launcher) and every analysis tool.  schema/FORMAT.md is its written spec;
 * change both in the same commit (tests/unit/test_format.c fails when they
 * disagree).
 *
 * Rules: fixed-width little-endian fields, no bitfields, natural alignment,
 * every record a multiple of 8 bytes, sizes and offsets pinned by
 * _Static_assert below.
 */
#ifndef ASYS_FORMAT_H
#define ASYS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "asys segments are written in the host byte order, which must be little-endian"
#endif

/* ---- versions and magic ------------------------------------------------ */

#define ASYS_SEGMENT_MAGIC "ASYSSEG\0"
#define ASYS_SEGMENT_MAGIC_LEN 8
/* Bumped on any incompatible change; readers refuse newer versions and read
 * older ones (1: drops not counted by cause). */
#define ASYS_FORMAT_VERSION 2
/* A report begins with a zstd skippable frame that says what it is (every
 * zstd reader skips it): so that a damaged report is told from a foreign
 * file even when its first frame cannot be decompressed. */
#define ASYS_REPORT_MARK_MAGIC 0x184D2A5Au /* a skippable frame's magic, little-endian */
#define ASYS_REPORT_MARK_ID "ASYS-REP"
struct asys_report_mark {
    uint32_t magic; /* ASYS_REPORT_MARK_MAGIC */
    uint32_t size; /* bytes that follow: 16 */
    char id[8]; /* ASYS_REPORT_MARK_ID, not NUL-terminated */
    uint32_t format_version; /* ASYS_FORMAT_VERSION of the writer */
    uint32_t reserved; /* zero */
};
/* Archive member names. */
#define ASYS_MANIFEST_NAME "manifest.json"
#define ASYS_SYMBOLS_NAME "symbols.json"
#define ASYS_SEGMENT_DIR "segments/"
#define ASYS_SEGMENT_SUFFIX ".seg"

/* ---- feature mask: record families a segment may contain -------------- *
 * One bit set names the collectors everywhere: `-t` and the other options,
 * the manifest, a segment's feature mask and the importer's families. */

enum asys_feature {
    ASYS_FEATURE_CORE = 1u << 0, /* PAD, TIME_BASE, STRING_DEF, PROCESS/THREAD, DROP, CLOCK_PAIR */
    ASYS_FEATURE_HGTX = 1u << 1, /* HGTX (NVTX) records */
    ASYS_FEATURE_OSRT = 1u << 2, /* OS runtime calls */
    ASYS_FEATURE_STACKS = 1u << 3, /* call stacks and the modules they point into */
    ASYS_FEATURE_HGGC = 1u << 4, /* PPU API calls and device activity (CUPTI) */
    ASYS_FEATURE_MEMORY = 1u << 12, /* memory: heap allocations and frees, host memory samples */
    ASYS_FEATURE_EVENTS = 1u << 13, /* event sampling: counts of CPU core and OS events */
    ASYS_FEATURE_PPU_METRICS = 1u << 10, /* PPU performance counters sampled by the launcher */
    ASYS_FEATURE_PYTHON = 1u << 14, /* Python call stack samples */
    ASYS_FEATURE_NIC = 1u << 11, /* NIC metrics: the launcher's readings of sysfs counters */
    ASYS_FEATURE_PCCL = 1u << 7, /* PCCL (NCCL) events through NCCL's profiler plugin */
    ASYS_FEATURE_ACDNN = 1u << 5, /* cuDNN-compatible library calls (libasys-acompute.so) */
    ASYS_FEATURE_ACBLAS = 1u << 6, /* cuBLAS/cuBLASLt/cuBLASXt-compatible library calls */
    /* Collectors of the manual this version does not build yet: their bits
     * name them in options and manifests; no segment carries them. */
    ASYS_FEATURE_HGVIDEO = 1u << 8,
    ASYS_FEATURE_CPU_SAMPLING = 1u << 9, /* CPU samples and scheduling (the launcher's perf
                                            events) */
};
/* Every feature this version of the tools can decode. */
#define ASYS_FEATURES_KNOWN \
    (ASYS_FEATURE_CORE | ASYS_FEATURE_HGTX | ASYS_FEATURE_OSRT | ASYS_FEATURE_STACKS | \
     ASYS_FEATURE_HGGC | ASYS_FEATURE_MEMORY | ASYS_FEATURE_CPU_SAMPLING | ASYS_FEATURE_EVENTS | \
     ASYS_FEATURE_PPU_METRICS | ASYS_FEATURE_PYTHON | ASYS_FEATURE_NIC | ASYS_FEATURE_PCCL | \
     ASYS_FEATURE_ACDNN | ASYS_FEATURE_ACBLAS | ASYS_FEATURE_HGVIDEO)

/* ---- who wrote a segment ----------------------------------------------- */

enum asys_collector_kind {
    ASYS_SEGMENT_THREAD = 1, /* one thread of a traced process (libasys-inject.so) */
    ASYS_SEGMENT_LAUNCHER = 2, /* the asys launcher: clock pairs, session events */
};

/* thread_index of the launcher's segments (pid: the launcher's), one per
 * sampler, so that each is its own segment in the arena and at import; PPU
 * metrics have one per device: ASYS_LAUNCHER_PPU_METRICS +
 * ASYS_LAUNCHER_PER_DEVICE x the device's physical index.  The CPU samples'
 * segments are the sampled processes' (index 1 under a tagged process uid). */
enum asys_launcher_segment {
    ASYS_LAUNCHER_SESSION = 1, /* clock pairs, session events */
    ASYS_LAUNCHER_HOST_MEMORY = 2, /* --host-memory-sampling */
    ASYS_LAUNCHER_EVENTS = 3, /* --event-sample, --cpu-core-events, --os-events */
    ASYS_LAUNCHER_NIC = 4, /* --nic-metrics */
    ASYS_LAUNCHER_PPU_METRICS = 5, /* --ppu-metrics-device, + 256 x the device */
    ASYS_LAUNCHER_PER_DEVICE = 256,
};

/* ---- timestamps -------------------------------------------------------- */

enum asys_clock_kind {
    ASYS_CLOCK_MONOTONIC = 1, /* ticks are CLOCK_MONOTONIC nanoseconds */
    ASYS_CLOCK_TSC = 2, /* x86 invariant TSC ticks (rdtsc) */
    ASYS_CLOCK_CNTVCT = 3, /* arm64 virtual counter (cntvct_el0) */
};

/* ---- segment header: file offset 0, ASYS_SEGMENT_HEADER_SIZE bytes ------ */

#define ASYS_SEGMENT_HEADER_SIZE 256

struct asys_segment_header {
    char magic[8]; /* ASYS_SEGMENT_MAGIC */
    uint16_t format_version; /* ASYS_FORMAT_VERSION of the writer */
    uint16_t header_size; /* ASYS_SEGMENT_HEADER_SIZE; records start here */
    uint32_t collector; /* enum asys_collector_kind */
    uint64_t feature_mask; /* enum asys_feature bits the records may use */
    uint32_t pid;
    uint32_t tid;
    uint32_t ppid;
    uint32_t thread_index; /* 1-based order of registration in the process */
    uint64_t process_uid; /* unique per process image (fork or exec gives a new one) */
    uint64_t parent_process_uid; /* fork child: the parent image's uid, else 0 */
    uint32_t inherited_string_limit; /* fork child: string ids below this resolve in the parent */
    uint32_t clock_kind; /* enum asys_clock_kind of every tick in this segment */
    uint64_t base_ticks; /* clock value the first record's delta is relative to */
    uint64_t calib_ticks; /* (ticks, CLOCK_MONOTONIC ns) pair taken at creation, or the
                           * launcher's latest (asys_arena_control) */
    uint64_t calib_mono_ns;
    uint64_t chunk_size; /* the writer grows the file by this many bytes */
    uint64_t dropped_records; /* updated in place by the writer: every cause */
    uint64_t dropped_bytes; /* updated in place by the writer */
    uint64_t data_end; /* file offset after the last record; 0 = scan for it */
    /* format 2: dropped_records by cause (enum asys_drop_cause), in place */
    uint64_t dropped_full; /* no room: --max-segment-size reached */
    uint64_t dropped_reentry; /* an event inside the tool's own work (a signal handler, a hook
                                 called by the collector) */
    uint64_t dropped_big; /* a record larger than ASYS_REC_MAX_SIZE */
    /* format 2, in the first segment of a process image: its threads that
     * could get no segment of their own (out of file descriptors, disk full),
     * the events they lost, and the errno of the last failure */
    uint64_t lost_threads;
    uint64_t lost_thread_records;
    uint32_t lost_thread_errno;
    uint32_t notices; /* first segment of an image: enum asys_segment_notice bits */
    /* records lost because the session could not give the segment more room
     * (no descriptor, disk full: no_room_errno), apart from dropped_full */
    uint64_t dropped_no_room;
    /* first segment of an image: its fork children that could get no
     * segment at all, the events they lost, the errno and the last pid */
    uint64_t lost_processes;
    uint64_t lost_process_records;
    uint32_t no_room_errno;
    uint32_t lost_process_errno;
    uint32_t lost_process_pid;
    uint32_t reserved2; /* zero */
    uint8_t reserved[48]; /* zero */
};

/* ---- the session's segment arena ---------------------------------------
 *
 * While a program runs, the threads of every traced process write their
 * segments into one file of the session directory, segments/arena, instead
 * of a file each (creating a file costs more than starting a process on
 * some file systems).  Slot 0 holds the control block; slots 1, 2, ... of
 * slot_size bytes each belong to one segment, the first
 * ASYS_SLOT_HEADER_SIZE bytes of a slot saying whose and which (in the
 * page the segment's header and first records share: a short process
 * touches one page).  A segment is its slots' payloads (slot_size -
 * ASYS_SLOT_HEADER_SIZE bytes each) in sequence order; finalize cuts the
 * arena into the report's segment members, so a report never holds an
 * arena. */
#define ASYS_ARENA_NAME "arena"
#define ASYS_ARENA_MAGIC "ASYSARN\0"
#define ASYS_SLOT_MAGIC "ASYSSLT\0"
#define ASYS_ARENA_VERSION 1
#define ASYS_SLOT_HEADER_SIZE 64

struct asys_arena_control { /* at offset 0 */
    char magic[8]; /* ASYS_ARENA_MAGIC */
    uint32_t version; /* ASYS_ARENA_VERSION */
    /* a seqlock over pair_ticks and pair_monotonic_ns: odd while the
     * launcher writes them, 0 before its first pair */
    uint32_t pair_sequence;
    uint64_t slot_size; /* bytes of a slot, a multiple of the page size */
    uint64_t next_slot; /* the next slot to claim (atomic fetch-and-add); starts at 1 */
    /* interactive sessions and --delay (ASYS_CAPTURE_RANGE=session): the
     * launcher's commands open and close the recording of every process of
     * the session at once by storing here, in the page they all map */
    uint32_t session_recording; /* 1 while recording, else 0 */
    uint32_t session_window; /* the recording's number: 1, 2, ... (0 before the first) */
    /* asys launch's answer: the recording its samplers (CPU sampling, NIC,
     * PPU metrics...) run for, 0 once they stopped and wrote their segments */
    uint32_t samplers_window;
    uint32_t window_options; /* ASYS_WINDOW_*: what asys start chose for this recording */
    /* the launcher's latest calibration pair (the session clock's ticks,
     * CLOCK_MONOTONIC ns), written with each CLOCK_PAIR record (every
     * second): a process's segment header takes it as its creation pair
     * instead of reading the clocks (their vDSO data pages are two page
     * faults in a process that reads no clock otherwise) */
    uint64_t pair_ticks;
    uint64_t pair_monotonic_ns;
};

/* window_options: the recording leaves the launcher's samplers off (asys start -s none) */
#define ASYS_WINDOW_NO_SAMPLERS 1u

/* The high byte of the process_uid of the CPU sampler's segments (one per
 * sampled process image, written by the launcher), which a session's
 * reports and the recovery of a killed launcher tell apart by it.  A traced
 * process image's uid is random, never with this high byte
 * (asys_image_uid): one in 256 had it, and its segments were taken for
 * another recording's samples and left out. */
#define ASYS_SAMPLER_UID_TAG 0xc5u
static inline int asys_is_sampler_uid(uint64_t process_uid)
{
    return process_uid >> 56 == ASYS_SAMPLER_UID_TAG;
}
/* A traced process image's uid from 64 random bits: nonzero, never a
 * sampler's. */
static inline uint64_t asys_image_uid(uint64_t random)
{
    if (asys_is_sampler_uid(random))
        random ^= UINT64_C(1) << 56;
    return random ? random : 1;
}

struct asys_slot_header { /* the first bytes of each claimed slot */
    char magic[8]; /* ASYS_SLOT_MAGIC */
    uint64_t process_uid; /* the segment's: process image */
    uint32_t pid;
    uint32_t tid;
    uint32_t thread_index;
    uint32_t sequence; /* 0 for the slot that starts with the segment header, then 1, 2... */
    uint32_t collector; /* enum asys_collector_kind */
    uint32_t flags; /* ASYS_SLOT_RELEASED; other bits zero */
    uint8_t reserved2[24]; /* zero */
};
/* Set by the launcher just before it gives the slot's pages after its
 * first back (ASYS_ARENA_FRAME_RELEASED): its payload is its frame's. */
#define ASYS_SLOT_RELEASED 1u

/* ---- slots compressed while recording ------------------------------------
 *
 * The launcher compresses the arena's sealed slots while the program runs
 * (recorder/arena_compressor.c), on CPU time the program leaves idle, so
 * that finalize copies their frames instead of compressing them after the
 * program has exited.  ASYS_ARENA_FRAMES_NAME (in the session directory)
 * holds one zstd frame per slot, decoding to the slot's whole payload;
 * ASYS_ARENA_FRAME_INDEX_NAME is an array of struct asys_arena_frame, one
 * per frame.  A slot is sealed once its writer has claimed two more slots:
 * a writer pads and unmaps a slot just after claiming the next one, so by
 * the claim after that nothing writes into it any more.  A segment's first
 * slot (sequence 0) holds the segment header, updated until the segment
 * closes: never compressed early.  In `asys profile`, once a slot's frame
 * and index entry are written while the program runs, the launcher gives
 * the slot's pages after its first back to the file system (a hole), so
 * that the arena's memory and disk are reused by the slots claimed next;
 * its entry says so (ASYS_ARENA_FRAME_RELEASED) and readers take the slot's
 * payload from the frame. */
#define ASYS_ARENA_FRAMES_NAME "arena-frames.zst"
#define ASYS_ARENA_FRAME_INDEX_NAME "arena-frames.idx"

struct asys_arena_frame {
    uint64_t slot_offset; /* the slot's offset in the arena */
    uint64_t frame_offset; /* the frame's offset in ASYS_ARENA_FRAMES_NAME */
    uint64_t frame_size; /* its bytes */
    uint32_t sequence; /* the slot's sequence, >= 1 */
    uint32_t flags; /* ASYS_ARENA_FRAME_*; other bits zero */
};
/* The slot's payload after its first page may be gone from the arena (a
 * hole reads as zeros): read it from the frame.  Its first page (the slot
 * header) stays. */
#define ASYS_ARENA_FRAME_RELEASED 1u

/* What the first segment of a process image tells finalize (updated in place). */
enum asys_segment_notice {
    ASYS_NOTICE_NVTX_REPLACED = 1u << 0, /* NVTX_INJECTION64_PATH was changed: HGTX not recorded */
};

/* Why a record was lost (lttng-ust's records_lost_full/_wrap/_big). */
enum asys_drop_cause {
    ASYS_DROP_FULL = 1,
    ASYS_DROP_REENTRY = 2,
    ASYS_DROP_BIG = 3,
    ASYS_DROP_NO_ROOM = 4, /* the session could not give the segment more room */
};

/* ---- record header: one little-endian u64 at the start of every record --
 *
 *   bits  0..7   type          enum asys_record_type
 *   bits  8..15  size_words    record size in 8-byte words, 1..254;
 *                              255 = extended: the u32 at byte offset 8 holds
 *                              the size in bytes; 0 = end of data
 *   bits 16..31  arg           type-specific small argument
 *   bits 32..63  delta_ticks   ticks since the previous record's timestamp
 *                              (the record's timestamp = previous + delta)
 *
 * The writer stores the body first and the header word last, so a record cut
 * short by a crash still reads as end of data.
 */
typedef uint64_t asys_rec_word;

#define ASYS_REC_TYPE(w) ((unsigned)((w)&0xffu))
#define ASYS_REC_SIZE_WORDS(w) ((unsigned)(((w) >> 8) & 0xffu))
#define ASYS_REC_ARG(w) ((unsigned)(((w) >> 16) & 0xffffu))
#define ASYS_REC_DELTA(w) ((uint32_t)((w) >> 32))
#define ASYS_REC_WORD(type, size_words, arg, delta) \
    ((uint64_t)(type) | ((uint64_t)(size_words) << 8) | ((uint64_t)(arg) << 16) | \
     ((uint64_t)(delta) << 32))
#define ASYS_REC_EXTENDED 255u
#define ASYS_REC_MAX_SIZE (256u * 1024u) /* largest record a writer may produce */
#define ASYS_REC_MAX_DELTA 0xffffffffu
#define ASYS_ARG_NONE 0u

enum asys_record_type {
    ASYS_REC_INVALID = 0,
    /* core */
    ASYS_REC_PAD = 1, /* filler up to the end of a chunk */
    ASYS_REC_TIME_BASE = 2, /* struct asys_rec_time_base */
    ASYS_REC_STRING_DEF = 3, /* struct asys_rec_string_def + bytes */
    ASYS_REC_PROCESS_INFO = 4, /* struct asys_rec_process_info */
    ASYS_REC_THREAD_START = 5, /* struct asys_rec_thread */
    ASYS_REC_THREAD_END = 6, /* struct asys_rec_thread */
    ASYS_REC_DROP = 7, /* struct asys_rec_drop */
    ASYS_REC_CLOCK_PAIR = 8, /* struct asys_rec_clock_pair */
    /* stacks */
    ASYS_REC_MODULE = 9, /* struct asys_rec_module: a loaded object */
    ASYS_REC_CALLCHAIN = 10, /* struct asys_rec_callchain + frames */
    /* core, written by the collector whose event opens or closes a window */
    ASYS_REC_CAPTURE = 11, /* struct asys_rec_capture: arg = enum asys_capture_edge */
    /* hgtx */
    ASYS_REC_HGTX_PUSH = 16, /* header only: arg = message string id, default domain */
    ASYS_REC_HGTX_PUSH_EX = 17, /* struct asys_rec_hgtx_ex */
    ASYS_REC_HGTX_POP = 18, /* header only: arg = domain id */
    ASYS_REC_HGTX_MARK = 19, /* header only: arg = message string id, default domain */
    ASYS_REC_HGTX_MARK_EX = 20, /* struct asys_rec_hgtx_ex */
    ASYS_REC_HGTX_START = 21, /* struct asys_rec_hgtx_range: arg = message string id */
    ASYS_REC_HGTX_START_EX = 22, /* struct asys_rec_hgtx_start_ex */
    ASYS_REC_HGTX_END = 23, /* struct asys_rec_hgtx_range */
    ASYS_REC_HGTX_DOMAIN = 24, /* struct asys_rec_hgtx_domain: arg = domain id */
    ASYS_REC_HGTX_CATEGORY = 25, /* struct asys_rec_hgtx_category: arg = domain id */
    ASYS_REC_HGTX_THREAD_NAME = 26, /* struct asys_rec_hgtx_thread_name */
    /* hgtx extensions (payload, counters, memory) and naming */
    ASYS_REC_HGTX_SCHEMA = 27, /* struct asys_rec_hgtx_schema + entries: arg = domain id */
    ASYS_REC_HGTX_PAYLOAD = 28, /* struct asys_rec_hgtx_payload + blobs: arg = domain id */
    ASYS_REC_HGTX_COUNTER = 29, /* struct asys_rec_hgtx_counter: arg = domain id */
    ASYS_REC_HGTX_SAMPLE = 30, /* struct asys_rec_hgtx_sample + data: arg = domain id */
    ASYS_REC_HGTX_MEM = 31, /* struct asys_rec_hgtx_mem: arg = enum asys_hgtx_mem_op */
    ASYS_REC_HGTX_RESOURCE = 33, /* struct asys_rec_hgtx_resource: arg = domain id */
    ASYS_REC_HGTX_SYNC = 34, /* struct asys_rec_hgtx_sync: arg = enum asys_hgtx_sync_op */
    ASYS_REC_HGTX_INJECTION = 35, /* struct asys_rec_hgtx_injection + path */
    ASYS_REC_HGTX_TIME = 36, /* struct asys_rec_hgtx_time: arg = enum asys_hgtx_time_kind */
    /* osrt */
    ASYS_REC_OSRT_CALL = 32, /* struct asys_rec_osrt_call: arg = function id */
    /* hggc: API calls from CUPTI callbacks, device activity from CUPTI records */
    ASYS_REC_HGGC_API = 40, /* struct asys_rec_hggc_api: arg = callback domain */
    ASYS_REC_HGGC_KERNEL = 41, /* struct asys_rec_hggc_kernel */
    ASYS_REC_HGGC_MEMCPY = 42, /* struct asys_rec_hggc_memcpy */
    ASYS_REC_HGGC_MEMSET = 43, /* struct asys_rec_hggc_memset */
    ASYS_REC_HGGC_SYNC = 44, /* struct asys_rec_hggc_sync: arg = synchronization type */
    ASYS_REC_HGGC_EVENT_RECORD = 45, /* struct asys_rec_hggc_event_record */
    ASYS_REC_HGGC_MEMORY = 46, /* struct asys_rec_hggc_memory: arg = operation */
    ASYS_REC_HGGC_GRAPH_TRACE = 47, /* struct asys_rec_hggc_graph_trace */
    ASYS_REC_HGGC_DEVICE = 48, /* struct asys_rec_hggc_device: arg = device ordinal */
    ASYS_REC_HGGC_CONTEXT = 49, /* struct asys_rec_hggc_context */
    ASYS_REC_HGGC_STREAM = 50, /* struct asys_rec_hggc_stream */
    ASYS_REC_HGGC_GRAPH_NODE = 51, /* struct asys_rec_hggc_graph_node: arg = what happened */
    ASYS_REC_HGGC_GRAPH_EXEC = 52, /* struct asys_rec_hggc_graph_exec */
    ASYS_REC_HGGC_GRAPH_LAUNCH = 53, /* struct asys_rec_hggc_graph_exec: a cudaGraphLaunch */
    ASYS_REC_HGGC_OVERHEAD = 54, /* struct asys_rec_hggc_overhead */
    ASYS_REC_HGGC_STATUS = 55, /* struct asys_rec_hggc_status + message: arg = status code */
    /* cpu sampling (written by the launcher at the end of the run) */
    ASYS_REC_CPU_SAMPLE = 56, /* struct asys_rec_cpu_sample */
    ASYS_REC_SCHED_SWITCH = 57, /* struct asys_rec_sched_switch */
    ASYS_REC_CPU_SAMPLING_INFO = 58, /* struct asys_rec_cpu_sampling_info + reason */
    /* heap: sampled allocations and the frees of sampled blocks */
    ASYS_REC_HEAP_ALLOC = 64, /* struct asys_rec_heap_alloc: arg = heap function id */
    ASYS_REC_HEAP_FREE = 65, /* struct asys_rec_heap_free: arg = heap function id */
    /* host memory: the launcher's samples of every process of the tree */
    ASYS_REC_HOST_MEMORY = 66, /* struct asys_rec_host_memory */
    /* event sampling: the launcher's readings of the counters */
    ASYS_REC_EVENT_COUNT = 67, /* struct asys_rec_event_count: arg = event id */
    ASYS_REC_EVENT_STATUS = 68, /* struct asys_rec_event_status: arg = event id */
    /* heap at interval 1 (every allocation): the same events, shorter */
    ASYS_REC_HEAP_ALLOC_EVERY = 69, /* struct asys_rec_heap_alloc_every: arg = heap function id */
    ASYS_REC_HEAP_FREE_EVERY = 70, /* struct asys_rec_heap_free_every: arg = heap function id */
    /* PPU metrics: the launcher's sampling of each device's counters */
    ASYS_REC_PPU_METRICS_DEVICE = 72, /* struct asys_rec_ppu_metrics_device + text: arg = device */
    ASYS_REC_PPU_METRIC_DEF = 73, /* struct asys_rec_ppu_metric_def + text: arg = slot */
    ASYS_REC_PPU_METRIC_SAMPLE = 74, /* struct asys_rec_ppu_metric_sample + values: arg = device */
    ASYS_REC_PPU_METRICS_END = 75, /* struct asys_rec_ppu_metrics_end: arg = device */
    /* NIC metrics: the launcher's readings of the NICs' sysfs counters (83: kept free) */
    ASYS_REC_NIC_DEVICE = 80, /* struct asys_rec_nic_device */
    ASYS_REC_NIC_SAMPLE = 81, /* struct asys_rec_nic_sample + values: arg = device index */
    ASYS_REC_NIC_RATE = 82, /* struct asys_rec_nic_rate */
    /* Python: code objects, stack samples, the sampler's status */
    ASYS_REC_PYTHON_CODE = 88, /* struct asys_rec_python_code */
    ASYS_REC_PYTHON_SAMPLE = 89, /* struct asys_rec_python_sample + frames */
    ASYS_REC_PYTHON_STATUS = 90, /* struct asys_rec_python_status + text: arg = status */
    ASYS_REC_PYTHON_STACK = 91, /* struct asys_rec_python_stack + frames */
    /* heap aggregates (--heap-report-interval): per call stack and interval */
    ASYS_REC_HEAP_ALLOC_SUM = 92, /* struct asys_rec_heap_alloc_sum: arg = heap function id */
    ASYS_REC_HEAP_FREE_SUM = 93, /* struct asys_rec_heap_free_sum: arg = heap function id */
    /* event sampling per thread (--event-sample process-tree) */
    ASYS_REC_EVENT_THREAD_COUNT = 94, /* struct asys_rec_event_thread_count: arg = event id */
    /* PCCL: NCCL profiler plugin events, written when each event stops */
    /* acdnn / acblas: the libraries' public entry points (libasys-acompute.so) */
    ASYS_REC_ACDNN_API = 96, /* struct asys_rec_acompute_api: arg = enum asys_acompute_library */
    ASYS_REC_ACDNN_CALL = 97, /* struct asys_rec_acompute_call: arg = nesting depth */
    ASYS_REC_ACBLAS_API = 98, /* struct asys_rec_acompute_api: arg = enum asys_acompute_library */
    ASYS_REC_ACBLAS_CALL = 99, /* struct asys_rec_acompute_call: arg = nesting depth */
    /* the same calls on the handle and stream of the thread's previous call */
    ASYS_REC_ACDNN_CALL_SAME = 100, /* struct asys_rec_acompute_call_same: arg = depth */
    ASYS_REC_ACBLAS_CALL_SAME = 101, /* struct asys_rec_acompute_call_same: arg = depth */
    ASYS_REC_PCCL_COMM = 112, /* struct asys_rec_pccl_comm: arg = plugin version */
    ASYS_REC_PCCL_GROUP_API = 113, /* struct asys_rec_pccl_group_api */
    ASYS_REC_PCCL_CALL = 114, /* struct asys_rec_pccl_call: arg = call kind */
    ASYS_REC_PCCL_KERNEL_LAUNCH = 115, /* struct asys_rec_pccl_kernel_launch */
    ASYS_REC_PCCL_GROUP = 116, /* struct asys_rec_pccl_group */
    ASYS_REC_PCCL_TASK = 117, /* struct asys_rec_pccl_task: arg = task kind */
    ASYS_REC_PCCL_PROXY_OP = 118, /* struct asys_rec_pccl_proxy_op */
    ASYS_REC_PCCL_PROXY_STEP = 119, /* struct asys_rec_pccl_proxy_step */
    ASYS_REC_PCCL_PROXY_CTRL = 120, /* struct asys_rec_pccl_proxy_ctrl: arg = last state */
    ASYS_REC_PCCL_KERNEL_CH = 121, /* struct asys_rec_pccl_kernel_ch */
    ASYS_REC_PCCL_NET = 122, /* struct asys_rec_pccl_net */
    ASYS_REC_PCCL_COMM_END = 123, /* struct asys_rec_pccl_comm_end */
    ASYS_REC_PCCL_STATUS = 124, /* struct asys_rec_pccl_status + text: arg = status */
    /* hgvideo: NVDEC, NVENC and nvJPEG calls, and the engines' work they started */
    ASYS_REC_VIDEO_API = 128, /* struct asys_rec_video_api: arg = function id */
    ASYS_REC_VIDEO_ACTIVITY = 129, /* struct asys_rec_video_activity: arg = enum asys_video_kind */
    ASYS_REC_VIDEO_STATUS = 130, /* struct asys_rec_video_status: arg = enum asys_video_status */
    ASYS_REC_VIDEO_API_STREAM = 131, /* struct asys_rec_video_api_stream: arg = function id */
    ASYS_REC_TYPE_COUNT = 132
};

/* Largest string id a header-only record can carry in its arg. */
#define ASYS_ARG_MAX_STRING_ID 0xffffu
/* Domain ids are 16 bits; 0 is the default domain. */
#define ASYS_HGTX_DEFAULT_DOMAIN 0u
#define ASYS_HGTX_MAX_DOMAIN 0xffffu

/* ---- core records ------------------------------------------------------ */

struct asys_rec_time_base {
    asys_rec_word header;
    uint64_t ticks; /* absolute: this record's timestamp, and the base of the next delta */
};

/* Strings are interned per process image: (process_uid, string_id). */
struct asys_rec_string_def {
    asys_rec_word header; /* size_words may be ASYS_REC_EXTENDED */
    uint32_t size_bytes; /* total record size when extended, else 0 */
    uint32_t string_id; /* >= 1 */
    uint32_t length; /* bytes of text that follow, without terminator */
    uint32_t flags; /* ASYS_STRING_TRUNCATED */
    /* followed by `length` bytes of UTF-8 text, zero-padded to 8 */
};
#define ASYS_STRING_TRUNCATED 1u

struct asys_rec_process_info {
    asys_rec_word header;
    uint32_t pid;
    uint32_t ppid;
    uint32_t exe_string_id; /* /proc/self/exe */
    uint32_t cmdline_string_id; /* arguments joined by spaces */
    uint32_t origin; /* enum asys_process_origin */
    uint32_t reserved;
};

enum asys_process_origin {
    ASYS_PROCESS_LAUNCHED = 1, /* started by exec (the first image or a later exec) */
    ASYS_PROCESS_FORKED = 2, /* a fork child still running its parent's image */
};

struct asys_rec_thread {
    asys_rec_word header;
    uint32_t tid;
    uint32_t name_string_id; /* the thread's name (comm) at this moment */
};

/* Written when recording resumes after records were lost: they lie between
 * first_drop_ticks and this record's timestamp. */
struct asys_rec_drop {
    asys_rec_word header;
    uint64_t records;
    uint64_t bytes;
    uint64_t first_drop_ticks;
};

/* The launcher writes these at start, every second, and at the end; the
 * importer converts ticks to CLOCK_MONOTONIC ns piecewise-linearly. */
struct asys_rec_clock_pair {
    asys_rec_word header;
    uint64_t ticks;
    uint64_t monotonic_ns;
    uint64_t realtime_ns;
};

/* --capture-range: events are recorded only inside capture windows.  A
 * window opens at the trigger's start (cudaProfilerStart, the push or start
 * of the named HGTX range) and closes at its end; windows are numbered per
 * process image.  Device activity is kept when the API call that caused it
 * was made inside a window. */
enum asys_capture_edge {
    ASYS_CAPTURE_BEGIN = 1,
    ASYS_CAPTURE_END = 2,
};

enum asys_capture_trigger {
    ASYS_CAPTURE_PROFILER_API = 1, /* cudaProfilerStart/Stop, cuProfilerStart/Stop */
    ASYS_CAPTURE_HGTX = 2, /* an HGTX range of a given name (and domain) */
};

struct asys_rec_capture {
    asys_rec_word header;
    uint32_t window; /* 0, 1, ... in this process image */
    uint32_t trigger; /* enum asys_capture_trigger */
    uint32_t name_string_id; /* HGTX: the range's message; else 0 */
    uint32_t reserved; /* zero */
};

/* ---- hgtx records ------------------------------------------------------ */

enum asys_hgtx_flags {
    ASYS_HGTX_HAS_COLOR = 1u << 0,
    ASYS_HGTX_HAS_PAYLOAD = 1u << 1,
    ASYS_HGTX_HAS_CATEGORY = 1u << 2,
};

/* The event attributes of an Ex call. message_type keeps NVTX's numbering
 * (1 ASCII, 2 UNICODE, 3 REGISTERED); every kind arrives as a string id. */
struct asys_hgtx_attributes {
    uint32_t message_string_id; /* 0 = no message */
    uint32_t category;
    uint32_t color_argb; /* [hex] */
    uint16_t domain_id;
    uint8_t message_type;
    uint8_t flags; /* enum asys_hgtx_flags */
    uint32_t payload_type; /* NVTX numbering: 1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float */
    uint32_t reserved;
    uint64_t payload; /* [hex] raw bits, widened: u32/i32 zero/sign-extended, float as double */
};

struct asys_rec_hgtx_ex { /* PUSH_EX and MARK_EX */
    asys_rec_word header;
    struct asys_hgtx_attributes attr;
};

struct asys_rec_hgtx_range { /* START (arg = message string id) and END */
    asys_rec_word header;
    uint64_t range_id; /* the nvtxRangeId_t returned to the caller */
};

struct asys_rec_hgtx_start_ex {
    asys_rec_word header;
    uint64_t range_id;
    struct asys_hgtx_attributes attr;
};

struct asys_rec_hgtx_domain {
    asys_rec_word header; /* arg = domain id; a second record for an id = destroyed */
    uint32_t name_string_id;
    uint32_t destroyed; /* 1 when this records nvtxDomainDestroy */
};

struct asys_rec_hgtx_category {
    asys_rec_word header; /* arg = domain id */
    uint32_t category;
    uint32_t name_string_id;
};

struct asys_rec_hgtx_thread_name {
    asys_rec_word header;
    uint32_t os_tid;
    uint32_t name_string_id;
};

/* ---- hgtx extensions ---------------------------------------------------
 *
 * NVTX's extension modules (nvToolsExtPayload.h, nvToolsExtCounters.h,
 * nvToolsExtMem.h) and its naming modules.  Values keep NVTX's numbering
 * (schema types, entry types and flags, resource types, scopes, timestamp
 * types); ids a program gives or asys hands out are kept as they are, per
 * process image and domain.  Binary payloads are copied as the program
 * passed them and decoded offline from their schema. */

enum asys_hgtx_schema_kind {
    ASYS_HGTX_SCHEMA_PAYLOAD =
        1, /* nvtxPayloadSchemaRegister: entries are asys_hgtx_schema_entry */
    ASYS_HGTX_SCHEMA_ENUM = 2, /* nvtxPayloadEnumRegister: entries are asys_hgtx_enum_entry */
};

struct asys_rec_hgtx_schema {
    asys_rec_word header; /* arg = domain id; size_words may be ASYS_REC_EXTENDED */
    uint32_t size_bytes; /* total record size when extended, else 0 */
    uint32_t kind; /* enum asys_hgtx_schema_kind */
    uint64_t schema_id; /* as returned to the program */
    uint32_t name_string_id;
    uint32_t schema_type; /* NVTX_PAYLOAD_SCHEMA_TYPE_*; enums: 0 */
    uint64_t flags; /* NVTX_PAYLOAD_SCHEMA_FLAG_* */
    uint64_t static_size; /* payloadStaticSize; enums: the enum's size in bytes */
    uint64_t pack_align; /* packAlign, 0: natural alignment */
    uint32_t entry_count; /* entries that follow */
    uint32_t entries_given; /* entries the program passed (more than kept: cut short) */
};

/* One entry of a payload schema (nvtxPayloadSchemaEntry_t), with the
 * semantics asys reads (time domain of a timestamp, a counter's unit). */
struct asys_hgtx_schema_entry {
    uint64_t flags; /* NVTX_PAYLOAD_ENTRY_FLAG_* */
    uint64_t type; /* NVTX_PAYLOAD_ENTRY_TYPE_* or a schema id */
    uint32_t name_string_id;
    uint32_t description_string_id;
    uint64_t array_or_union_detail;
    uint64_t offset; /* 0 for the first or an unset offset: natural alignment */
    uint64_t time_domain; /* nvtxSemanticsTime_t: time domain or timestamp type; 0: none */
    uint32_t unit_string_id; /* nvtxSemanticsCounter_t */
    uint32_t counter_flags; /* NVTX_COUNTER_FLAG_* (low 32 bits) */
};

struct asys_hgtx_enum_entry {
    uint32_t name_string_id;
    uint32_t is_flag;
    uint64_t value;
};

/* What the payloads of a PAYLOAD record belong to. */
enum asys_hgtx_payload_event {
    ASYS_HGTX_PAYLOAD_ATTACHED = 1, /* NVTX_PAYLOAD_TYPE_EXT: the thread's previous push, mark or
                                       start (its PUSH_EX, MARK_EX or START_EX record) */
    ASYS_HGTX_PAYLOAD_MARK = 2, /* nvtxMarkPayload */
    ASYS_HGTX_PAYLOAD_PUSH = 3, /* nvtxRangePushPayload */
    ASYS_HGTX_PAYLOAD_POP = 4, /* nvtxRangePopPayload */
    ASYS_HGTX_PAYLOAD_START = 5, /* nvtxRangeStartPayload (range_id) */
    ASYS_HGTX_PAYLOAD_END = 6, /* nvtxRangeEndPayload (range_id) */
    ASYS_HGTX_PAYLOAD_SUBMIT = 7, /* nvtxEventSubmit: a deferred event, times in the payload */
    ASYS_HGTX_PAYLOAD_BATCH = 8, /* nvtxEventBatchSubmit: one blob of fixed-size events */
};

struct asys_rec_hgtx_payload {
    asys_rec_word header; /* arg = domain id; size_words may be ASYS_REC_EXTENDED */
    uint32_t size_bytes; /* total record size when extended, else 0 */
    uint16_t event; /* enum asys_hgtx_payload_event */
    uint16_t payload_count; /* asys_hgtx_payload_data that follow, each with its bytes */
    uint64_t range_id; /* [hex] START/END: the range; BATCH: the batch's scope */
};

enum asys_hgtx_payload_flags {
    ASYS_HGTX_PAYLOAD_CUT = 1u << 0, /* longer than a record: the first `size` bytes */
    ASYS_HGTX_PAYLOAD_STRINGS = 1u << 1, /* pointer-to-string entries hold string ids */
    ASYS_HGTX_PAYLOAD_SIZE_UNKNOWN = 1u << 2, /* passed with size SIZE_MAX and not measurable */
};

/* One payload (nvtxPayloadData_t): its schema, then `size` bytes padded to 8. */
struct asys_hgtx_payload_data {
    uint64_t schema_id; /* a registered schema, an entry type, or 1022/1023 (referenced/raw) */
    uint32_t size; /* bytes that follow */
    uint32_t flags; /* enum asys_hgtx_payload_flags */
};

/* nvtxCounterRegister (nvtxCounterAttr_t and its nvtxSemanticsCounter_t). */
struct asys_rec_hgtx_counter {
    asys_rec_word header; /* arg = domain id */
    uint32_t name_string_id;
    uint32_t description_string_id;
    uint64_t counter_id; /* as returned to the program */
    uint64_t schema_id; /* layout of a sample: a schema or an entry type */
    uint64_t scope_id;
    uint64_t semantic_flags; /* NVTX_COUNTER_FLAG_* */
    uint32_t unit_string_id;
    int32_t limit_type; /* NVTX_COUNTER_LIMIT_* */
    uint64_t unit_scale_numerator;
    uint64_t unit_scale_denominator;
    uint64_t limit_min; /* [hex] raw bits, by limit_type */
    uint64_t limit_max; /* [hex] */
    uint64_t time_domain; /* nvtxSemanticsTime_t of the group, 0: none */
};

enum asys_hgtx_sample_kind {
    ASYS_HGTX_SAMPLE_INT64 = 1, /* nvtxCounterSampleInt64: value */
    ASYS_HGTX_SAMPLE_FLOAT64 = 2, /* nvtxCounterSampleFloat64: value (bits) */
    ASYS_HGTX_SAMPLE_DATA = 3, /* nvtxCounterSample: data_size bytes, by the counter's schema */
    ASYS_HGTX_SAMPLE_NO_VALUE = 4, /* nvtxCounterSampleNoValue: reason */
    ASYS_HGTX_SAMPLE_BATCH = 5, /* nvtxCounterBatchSubmit: samples, then timestamps */
};

struct asys_rec_hgtx_sample {
    asys_rec_word header; /* arg = domain id; size_words may be ASYS_REC_EXTENDED */
    uint32_t size_bytes; /* total record size when extended, else 0 */
    uint16_t kind; /* enum asys_hgtx_sample_kind */
    uint8_t reason; /* NO_VALUE: NVTX_COUNTER_SAMPLE_* */
    uint8_t cut; /* 1: data or timestamps longer than a record were cut */
    uint64_t counter_id;
    uint64_t value; /* [hex] INT64 / FLOAT64 */
    uint32_t data_size; /* DATA / BATCH: bytes that follow (padded to 8) */
    uint32_t timestamps_size; /* BATCH: bytes of int64 timestamps after the data */
    uint64_t batch_flags; /* BATCH: NVTX_BATCH_FLAG_* | NVTX_COUNTER_BATCH_FLAG_* */
};

/* nvToolsExtMem.h and nvToolsExtMemCudaRt.h, one record per call (a batch
 * call: one record per region). */
enum asys_hgtx_mem_op {
    ASYS_HGTX_MEM_HEAP_REGISTER = 1, /* heap; address, size: its range; flags: usage<<16|type */
    ASYS_HGTX_MEM_HEAP_UNREGISTER = 2, /* heap */
    ASYS_HGTX_MEM_HEAP_RESET = 3, /* heap (0: the process-wide heap) */
    ASYS_HGTX_MEM_REGION_REGISTER = 4, /* heap, address, size; value: region handle; flags: type */
    ASYS_HGTX_MEM_REGION_RESIZE = 5, /* address, size; flags: region type */
    ASYS_HGTX_MEM_REGION_UNREGISTER = 6, /* address or handle (flags: ref type) */
    ASYS_HGTX_MEM_REGION_NAME = 7, /* address or handle (flags: ref type); name, category */
    ASYS_HGTX_MEM_PERMISSIONS_ASSIGN = 8, /* value: permissions; address/handle; size: region
                                             flags; flags: ref type */
    ASYS_HGTX_MEM_PERMISSIONS_CREATE = 9, /* value: permissions handle; flags: creation flags */
    ASYS_HGTX_MEM_PERMISSIONS_DESTROY = 10, /* value */
    ASYS_HGTX_MEM_PERMISSIONS_RESET = 11, /* value */
    ASYS_HGTX_MEM_PERMISSIONS_BIND = 12, /* value; size: bind scope; flags: bind flags */
    ASYS_HGTX_MEM_PERMISSIONS_UNBIND = 13, /* size: bind scope */
    ASYS_HGTX_MEM_CUDA_PROCESS_PERMISSIONS = 14, /* value: the handle returned */
    ASYS_HGTX_MEM_CUDA_DEVICE_PERMISSIONS = 15, /* value: the handle returned; size: device */
    ASYS_HGTX_MEM_CUDA_PEER_ACCESS = 16, /* value: permissions; size: peer device (-1: all);
                                            flags: region flags */
    ASYS_HGTX_MEM_CUDA_INITIALIZED = 17, /* address, size; value: stream; flags: per-thread */
};

struct asys_rec_hgtx_mem {
    asys_rec_word header; /* arg = enum asys_hgtx_mem_op */
    uint16_t domain_id;
    uint16_t reserved;
    uint32_t name_string_id; /* HEAP_REGISTER, REGION_NAME */
    uint64_t heap; /* [hex] the heap handle asys returned */
    uint64_t address; /* a region's start, or its handle (see the op) */
    uint64_t size;
    uint64_t value; /* [hex] */
    uint32_t flags;
    uint32_t category;
};

/* A named object: nvtxName{Cu,Cuda,Cl}*, and nvtxDomainResourceCreate /
 * Destroy.  `type` is NVTX's resource type (class << 16 | index). */
enum asys_hgtx_resource_flags {
    ASYS_HGTX_RESOURCE_NAMED = 1u << 0, /* an nvtxName* call (no handle) */
    ASYS_HGTX_RESOURCE_DESTROYED = 1u << 1, /* nvtxDomainResourceDestroy of `handle` */
    ASYS_HGTX_RESOURCE_HAS_ID = 1u << 2, /* cupti_id holds CUPTI's id of the stream/context */
};

struct asys_rec_hgtx_resource {
    asys_rec_word header; /* arg = domain id */
    uint32_t type; /* [hex] NVTX_RESOURCE_TYPE_* */
    uint32_t name_string_id;
    uint64_t identifier; /* [hex] the object: a pointer, handle, device ordinal or thread id */
    uint64_t handle; /* the nvtxResourceHandle_t asys returned; 0 for nvtxName* */
    uint32_t cupti_id; /* HAS_ID: the stream's or context's CUPTI id */
    uint32_t flags; /* enum asys_hgtx_resource_flags */
};

/* nvToolsExtSync.h: user-defined synchronization objects. */
enum asys_hgtx_sync_op {
    ASYS_HGTX_SYNC_CREATE = 1,
    ASYS_HGTX_SYNC_DESTROY = 2,
    ASYS_HGTX_SYNC_ACQUIRE_START = 3,
    ASYS_HGTX_SYNC_ACQUIRE_FAILED = 4,
    ASYS_HGTX_SYNC_ACQUIRE_SUCCESS = 5,
    ASYS_HGTX_SYNC_RELEASING = 6,
};

struct asys_rec_hgtx_sync {
    asys_rec_word header; /* arg = enum asys_hgtx_sync_op */
    uint32_t name_string_id; /* CREATE */
    uint16_t domain_id; /* CREATE */
    uint16_t reserved;
    uint64_t handle; /* the nvtxSyncUser_t asys returned */
};

/* The program changed NVTX_INJECTION64_PATH away from libasys-inject.so:
 * NVTX loads that library instead, so this image's HGTX events are not
 * recorded.  Followed by the value (path_length bytes, padded to 8; empty
 * when the variable was removed). */
struct asys_rec_hgtx_injection {
    asys_rec_word header;
    uint32_t path_length;
    uint32_t modules_attached; /* NVTX modules asys had attached to before (their events are in) */
};

/* Scopes and time domains of the payload extension (deferred events carry
 * their own timestamps). */
enum asys_hgtx_time_kind {
    ASYS_HGTX_TIME_SCOPE = 1, /* nvtxScopeRegister: id = scope, a = parent; text = path */
    ASYS_HGTX_TIME_DOMAIN = 2, /* nvtxTimeDomainRegister: id = time domain, a = scope,
                                  b = timestamp type, c = timer flags, d = ticks per second,
                                  e = timer start */
    ASYS_HGTX_TIME_SOURCE = 3, /* nvtxTimerSource[WithData]: id = time domain, a = flags,
                                  b/c = one pair (source timestamp, asys ns) taken then */
    ASYS_HGTX_TIME_SYNC_POINT = 4, /* nvtxTimeSyncPoint[Table]: id = domain 1, a = domain 2,
                                      b = timestamp 1, c = timestamp 2 */
    ASYS_HGTX_TIME_CONVERSION = 5, /* nvtxTimestampConversionFactor: id = source, a = destination,
                                      b = slope (double bits), c = source ts, d = destination ts */
};

struct asys_rec_hgtx_time {
    asys_rec_word header; /* arg = enum asys_hgtx_time_kind */
    uint16_t domain_id;
    uint16_t reserved;
    uint32_t text_string_id;
    uint64_t id;
    uint64_t a, b, c, d, e; /* [hex] */
};

/* ---- call stacks -------------------------------------------------------- */

/* A loaded object (dl_iterate_phdr): where its segments are mapped, so that
 * frame addresses can be symbolized.  Written before the first call chain that
 * may point into it; a thread writes the list again after dlopen/dlclose. */
#define ASYS_BUILD_ID_MAX 32
struct asys_rec_module {
    asys_rec_word header;
    uint64_t load_bias; /* [hex] dlpi_addr: run-time address = ELF address + bias */
    uint64_t start; /* [hex] lowest mapped address of its PT_LOAD segments */
    uint64_t end; /* [hex] one past the highest */
    uint32_t path_string_id;
    uint32_t build_id_length; /* 0 when the object has no NT_GNU_BUILD_ID */
    uint8_t build_id[ASYS_BUILD_ID_MAX];
};

/* A call stack, defined once per process image and referenced by id.
 * frames[0] is the return address into the function that made the call
 * (the leaf), then its caller, and so on. */
#define ASYS_CALLCHAIN_MAX_DEPTH 128
struct asys_rec_callchain {
    asys_rec_word header;
    uint32_t callchain_id; /* >= 1, unique in the process image */
    uint32_t depth; /* frames that follow */
    /* followed by `depth` uint64_t return addresses */
};

/* ---- osrt records -------------------------------------------------------- */

/* One OS runtime call that lasted at least the threshold.  The record's
 * timestamp is the call's END (so records stay in time order even when a call
 * contains others); start = end - duration. */
struct asys_rec_osrt_call {
    asys_rec_word header; /* arg = function id (ASYS_OSRT_FUNCTIONS) */
    uint64_t duration_ticks;
    int64_t result; /* return value; pointers as integers */
    uint32_t error; /* errno when the call failed, else 0 */
    uint32_t callchain_id; /* 0: no stack captured */
};

/* The traced functions; the id is the position (1-based).  Append only. */
// clang-format off
#define ASYS_OSRT_FUNCTIONS(X)                                                                     \
    X(1, read)                                                                                     \
    X(2, write)                                                                                    \
    X(3, pread)                                                                                    \
    X(4, pwrite)                                                                                   \
    X(5, readv)                                                                                    \
    X(6, writev)                                                                                   \
    X(7, open)                                                                                     \
    X(8, openat)                                                                                   \
    X(9, creat)                                                                                    \
    X(10, close)                                                                                   \
    X(11, fsync)                                                                                   \
    X(12, fdatasync)                                                                               \
    X(13, poll)                                                                                    \
    X(14, ppoll)                                                                                   \
    X(15, select)                                                                                  \
    X(16, pselect)                                                                                 \
    X(17, epoll_wait)                                                                              \
    X(18, epoll_pwait)                                                                             \
    X(19, ioctl)                                                                                   \
    X(20, nanosleep)                                                                               \
    X(21, clock_nanosleep)                                                                         \
    X(22, sleep)                                                                                   \
    X(23, usleep)                                                                                  \
    X(24, accept)                                                                                  \
    X(25, accept4)                                                                                 \
    X(26, connect)                                                                                 \
    X(27, recv)                                                                                    \
    X(28, recvfrom)                                                                                \
    X(29, recvmsg)                                                                                 \
    X(30, send)                                                                                    \
    X(31, sendto)                                                                                  \
    X(32, sendmsg)                                                                                 \
    X(33, wait)                                                                                    \
    X(34, waitpid)                                                                                 \
    X(35, waitid)                                                                                  \
    X(36, sched_yield)                                                                             \
    X(37, sigsuspend)                                                                              \
    X(38, sigtimedwait)                                                                            \
    X(39, sigwaitinfo)                                                                             \
    X(40, sigwait)                                                                                 \
    X(41, pthread_mutex_lock)                                                                      \
    X(42, pthread_mutex_timedlock)                                                                 \
    X(43, pthread_cond_wait)                                                                       \
    X(44, pthread_cond_timedwait)                                                                  \
    X(45, pthread_rwlock_rdlock)                                                                   \
    X(46, pthread_rwlock_wrlock)                                                                   \
    X(47, pthread_spin_lock)                                                                       \
    X(48, pthread_barrier_wait)                                                                    \
    X(49, pthread_join)                                                                            \
    X(50, sem_wait)                                                                                \
    X(51, sem_timedwait)                                                                           \
    X(52, mmap)                                                                                    \
    X(53, munmap)                                                                                  \
    X(54, mprotect)                                                                                \
    X(55, fopen)                                                                                   \
    X(56, fread)                                                                                   \
    X(57, fwrite)                                                                                  \
    X(58, fflush)                                                                                  \
    X(59, fclose)                                                                                  \
    X(60, system)                                                                                  \
    X(61, popen)                                                                                   \
    X(62, pclose)                                                                                  \
    X(63, posix_spawn)                                                                             \
    X(64, posix_spawnp)                                                                            \
    X(65, futex)
// clang-format on
#define ASYS_OSRT_FUNCTION_COUNT 65

/* ---- heap records ----------------------------------------------------------
 * Allocations are sampled by bytes (--heap-sampling-interval-bytes N: each
 * byte with probability 1/N, so an allocation of s bytes with probability
 * 1 - exp(-s/N)); only sampled blocks are remembered, and only their frees
 * are written.  The header timestamp is when the call returned. */

/* A sampled allocation (realloc's new block included). */
struct asys_rec_heap_alloc {
    asys_rec_word header; /* arg = heap function id (ASYS_HEAP_FUNCTIONS) */
    uint64_t address; /* the block returned */
    uint64_t size; /* bytes asked for */
    uint64_t sampling_interval; /* N of the sampling; 1: every allocation is recorded */
    uint32_t callchain_id; /* 0: no stack captured */
    uint32_t reserved;
};

/* The free of a sampled block (realloc's old block included). */
struct asys_rec_heap_free {
    asys_rec_word header; /* arg = heap function id */
    uint64_t address;
    uint64_t size; /* as recorded at its allocation */
};

/* With interval 1 every allocation is recorded: its interval goes without
 * saying, a block under 4 GiB has its size in 32 bits (a bigger one is a
 * HEAP_ALLOC), and a free is matched to its allocation by the address. */
struct asys_rec_heap_alloc_every {
    asys_rec_word header; /* arg = heap function id */
    uint64_t address; /* the block returned */
    uint32_t size; /* bytes asked for */
    uint32_t callchain_id; /* 0: no stack captured */
};

struct asys_rec_heap_free_every {
    asys_rec_word header; /* arg = heap function id */
    uint64_t address;
};

/* Aggregates (--heap-report-interval MS > 0): instead of one record per
 * sampled event, each thread sums its sampled allocations per (call stack,
 * allocating function) over an interval of its own and writes one
 * ALLOC_SUM per pair when the interval ends (seen at its next sampled
 * event), when the thread exits or forks, or at process exit; the header
 * timestamp is that moment, last_ticks the last event summed (an idle
 * thread's interval ends late; its events' times stay right).
 * Each interval has a number unique in the process image.  A free is summed
 * under the stack, function and interval of the allocation it frees (the
 * sampled-block table remembers them), into the freeing thread's
 * FREE_SUM of its own current interval.  Estimates undo the sampling per
 * block as the per-event records do: s / p bytes and 1 / p allocations,
 * p = 1 - exp(-s/N); counts are fixed-point with 16 fraction bits. */
#define ASYS_HEAP_COUNT_ONE 65536u /* estimated_count_q16 of one allocation at p = 1 */

struct asys_rec_heap_alloc_sum {
    asys_rec_word header; /* arg = heap function id (ASYS_HEAP_FUNCTIONS) */
    uint32_t callchain_id; /* 0: no stack captured */
    uint32_t interval_id; /* >= 1, unique in the process image */
    uint64_t last_ticks; /* the last allocation summed returned (<= the header's) */
    uint64_t sampling_interval; /* N of the sampling; 1: every allocation is summed */
    uint32_t report_interval_ms; /* --heap-report-interval */
    uint32_t reserved;
    uint64_t samples; /* sampled allocations summed */
    uint64_t bytes; /* their sizes, summed */
    uint64_t largest; /* the largest of them */
    uint64_t estimated_bytes; /* the bytes they stand for (sum of s / p) */
    uint64_t estimated_count_q16; /* the allocations they stand for (sum of 1 / p) << 16 */
};

struct asys_rec_heap_free_sum {
    asys_rec_word header; /* arg = the allocating heap function id */
    uint32_t callchain_id; /* the allocation's stack */
    uint32_t interval_id; /* the allocation's interval (its ALLOC_SUM, any thread) */
    uint64_t last_ticks; /* the last free summed (<= the header's) */
    uint64_t samples; /* sampled blocks freed */
    uint64_t bytes; /* their sizes, summed */
    uint64_t estimated_bytes; /* as the allocations' */
    uint64_t estimated_count_q16; /* as the allocations' */
};

/* A host memory sample (--host-memory-sampling) of one process, read by
 * the launcher from /proc/PID/status; the header timestamp is when. */
struct asys_rec_host_memory {
    asys_rec_word header;
    uint32_t pid;
    uint32_t reserved;
    uint64_t rss_bytes; /* [bytes] resident set size (VmRSS) */
    uint64_t hwm_bytes; /* [bytes] its high-water mark (VmHWM) */
};

/* ---- event sampling (--event-sample) ---------------------------------------
 * Counters of the events of common/event_catalog.h, per CPU, read by the
 * launcher --event-sample-frequency times a second; arg = the event's id. */

/* A counter's value since it was opened (perf's read format with the times
 * enabled and running, which scale a multiplexed counter). */
struct asys_rec_event_count {
    asys_rec_word header; /* arg = event id */
    uint32_t cpu;
    uint32_t reserved;
    uint64_t value;
    uint64_t enabled_ns; /* [unsigned] */
    uint64_t running_ns; /* [unsigned] */
};

/* An event that could not be counted on this machine (once per event).
 * With arg = ASYS_EVENT_THREADS_STATUS (no event), written at the end of a
 * process-tree recording: the threads whose own counters could not be
 * opened (error: the errno of the last such failure, 0 when the cap alone
 * stopped them). */
struct asys_rec_event_status {
    asys_rec_word header; /* arg = event id, or ASYS_EVENT_THREADS_STATUS */
    int32_t error; /* errno of perf_event_open (ENOENT: no such event here) */
    uint32_t threads_not_followed; /* ASYS_EVENT_THREADS_STATUS only; else 0 */
};
#define ASYS_EVENT_THREADS_STATUS 0u

/* A reading of one thread's own counter of an event (--event-sample
 * process-tree): counts since the counter was opened for that thread, just
 * after it started (the first reading, 0, is written then); the last one
 * when it ended. */
struct asys_rec_event_thread_count {
    asys_rec_word header; /* arg = event id */
    uint32_t pid;
    uint32_t tid;
    uint64_t value;
    uint64_t enabled_ns; /* [unsigned] */
    uint64_t running_ns; /* [unsigned] */
};

/* ---- PPU metrics (--ppu-metrics-device) -------------------------------------
 * The launcher samples each chosen device's performance counters (CUPTI PM
 * sampling, or NVML GPM) into a segment per device (ppumetrics-N.seg:
 * collector 2, thread index 5 + 256 N, clock CLOCK_MONOTONIC).  Per device: one DEVICE record
 * (what was asked and what happened), a DEF per metric sampled, SAMPLEs with
 * one value per metric in slot order, and an END with the counts.  arg is the
 * device's physical index. */
enum asys_ppu_metrics_status {
    ASYS_PPU_METRICS_SAMPLING = 0, /* sampled */
    ASYS_PPU_METRICS_UNAVAILABLE = 1, /* no backend can sample this device */
    ASYS_PPU_METRICS_BUSY = 2, /* another owner holds the counters */
    ASYS_PPU_METRICS_CAPACITY = 3, /* the metrics need more than one pass */
    ASYS_PPU_METRICS_FAILED = 4, /* the backend failed while sampling */
};
enum asys_ppu_metrics_backend {
    ASYS_PPU_BACKEND_NONE = 0,
    ASYS_PPU_BACKEND_CUPTI_PM = 1, /* CUPTI PM sampling (cupti_pmsampling.h) */
    ASYS_PPU_BACKEND_NVML_GPM = 2, /* NVML GPM, >= 100 ms between samples */
};

struct asys_rec_ppu_metrics_device {
    asys_rec_word header; /* arg = physical device index */
    uint32_t status; /* enum asys_ppu_metrics_status */
    uint32_t backend; /* enum asys_ppu_metrics_backend */
    uint64_t interval_ns; /* the sampling interval used (after any backend limit) */
    uint32_t metric_count; /* DEF records that follow */
    uint32_t text_length; /* text: "NAME\nPCI BUS ID\nREASON" (reason empty when sampling) */
};

struct asys_rec_ppu_metric_def {
    asys_rec_word header; /* arg = the metric's slot in the device's samples */
    uint32_t device; /* physical index */
    uint32_t text_length; /* text: "NAME\nUNIT" (the PPU's name of the metric) */
};

struct asys_rec_ppu_metric_sample {
    asys_rec_word header; /* arg = physical device index; timestamp = the sample's start */
    uint32_t value_count; /* doubles that follow, slot 0 first */
    uint32_t duration_ns; /* the window the values are over */
};

struct asys_rec_ppu_metrics_end {
    asys_rec_word header; /* arg = physical device index */
    uint32_t overflows; /* times the device's buffer overflowed between two reads */
    uint32_t reserved;
    uint64_t samples; /* SAMPLE records written */
};

/* ---- Python (--python-sampling) ---------------------------------------------
 * The injected library samples every Python thread's stack in an interpreter
 * through the interpreter's public C API (resolved at run time).  A code
 * object is defined once per writing thread before its first use; a sample
 * names the sampled thread and lists (code id, current line) pairs, the
 * innermost frame first. */
enum asys_python_status {
    ASYS_PYTHON_SAMPLING = 1, /* the sampler runs; text: the interpreter's version */
    ASYS_PYTHON_ALIASED = 2, /* an interpreter under another name: not sampled */
    ASYS_PYTHON_UNSUPPORTED = 3, /* a version or build the sampler cannot use; text: why */
    ASYS_PYTHON_STOPPED = 4, /* the sampler stopped (interpreter finalizing); text: counts */
    ASYS_PYTHON_TRACING = 5, /* function tracing runs; text: rules and threshold */
    ASYS_PYTHON_TRACE_OFF = 6, /* function tracing could not start; text: why */
};

struct asys_rec_python_code {
    asys_rec_word header;
    uint32_t code_id; /* per process image */
    uint32_t name_string_id; /* the function's qualified name (co_qualname, else co_name) */
    uint32_t file_string_id; /* co_filename */
    uint32_t module_string_id; /* the frame's module (__name__ of its globals) */
    uint32_t first_line; /* co_firstlineno */
    uint32_t reserved;
};

struct asys_rec_python_sample {
    asys_rec_word header; /* timestamp: when the stacks were read */
    uint32_t tid; /* the sampled thread (OS id); 0 when not known */
    uint32_t depth; /* u64 frames that follow: code_id << 32 | current line */
};

/* --python-backtrace=hggc: the Python stack of the thread that made an HGGC
 * API call, to be joined with the call's native stack (its eval frames
 * replaced by the Python frames). */
struct asys_rec_python_stack {
    asys_rec_word header;
    uint32_t correlation_id; /* the HGGC API call (hggc_api_calls.correlation_id) */
    uint32_t callchain_id; /* its native stack (0: none): a CALLCHAIN of the image */
    uint32_t tid; /* the calling thread */
    uint32_t depth; /* u64 frames that follow: code_id << 32 | line, innermost first */
};

struct asys_rec_python_status {
    asys_rec_word header; /* arg = enum asys_python_status */
    uint32_t version_hex; /* [hex] PY_VERSION_HEX of the interpreter, 0 when not known */
    uint32_t text_length; /* text after the struct */
};

/* ---- NIC metrics (--nic-metrics) -------------------------------------------
 * The launcher reads the counters of the selected NICs from sysfs
 * --nic-metrics-frequency times a second, into a segment of its own
 * (nic.seg).  Samples carry the counters' raw cumulative values, as read:
 * the importer turns them into rates, and handles a counter that wraps or
 * is reset (schema/FORMAT.md). */
enum asys_nic_kind {
    ASYS_NIC_RDMA = 1, /* /sys/class/infiniband/DEV/ports/N/{counters,hw_counters} */
    ASYS_NIC_ETHERNET = 2, /* /sys/class/net/IF/statistics */
};
/* The counters, by bit of a sample's metric_mask (their values follow in
 * this order).  RDMA data counters are in 4-byte units, as the driver keeps
 * them; Ethernet's are bytes. */
enum asys_nic_counter {
    ASYS_NIC_RX_BYTES = 0, /* port_rcv_data (x4) | rx_bytes */
    ASYS_NIC_TX_BYTES = 1, /* port_xmit_data (x4) | tx_bytes */
    ASYS_NIC_RX_PACKETS = 2, /* port_rcv_packets | rx_packets */
    ASYS_NIC_TX_PACKETS = 3, /* port_xmit_packets | tx_packets */
    ASYS_NIC_CNP_HANDLED = 4, /* hw_counters/rp_cnp_handled: CNPs received and acted on */
    ASYS_NIC_CNP_IGNORED = 5, /* hw_counters/rp_cnp_ignored: CNPs received and ignored */
    ASYS_NIC_CNP_SENT = 6, /* hw_counters/np_cnp_sent */
    ASYS_NIC_XMIT_WAIT = 7, /* port_xmit_wait: ticks the port had data and could not send */
    ASYS_NIC_COUNTER_COUNT = 8
};
#define ASYS_NIC_NAME_MAX 32
#define ASYS_NIC_MAX_DEVICES 256

/* A sampled device, once, before its first sample. */
struct asys_rec_nic_device {
    asys_rec_word header;
    uint32_t device; /* index: the samples' arg */
    uint16_t kind; /* enum asys_nic_kind */
    uint16_t port; /* RDMA port number; 0 for Ethernet */
    uint32_t speed_mbps; /* link speed; 0 when unknown */
    uint32_t metric_mask; /* the counters this device has (bits of enum asys_nic_counter) */
    char name[ASYS_NIC_NAME_MAX]; /* device or interface name, NUL-padded */
};

/* One reading of a device's counters; the header timestamp is when. */
struct asys_rec_nic_sample {
    asys_rec_word header; /* arg = device index */
    uint32_t metric_mask; /* the counters that follow (a subset of the device's) */
    uint32_t count; /* the number of bits set: uint64 values that follow */
};

/* How fast the sampler went, once, at the end. */
struct asys_rec_nic_rate {
    asys_rec_word header;
    uint32_t requested_hz; /* --nic-metrics-frequency */
    uint32_t reserved;
    uint64_t sample_mhz; /* samples a second the sampler achieved, x1000 */
    uint64_t update_mhz; /* times a second the counters changed while moving, x1000; 0: unknown */
};

/* The functions; the id is the position (1-based).  Append only. */
// clang-format off
#define ASYS_HEAP_FUNCTIONS(X)                                                                     \
    X(1, malloc)                                                                                   \
    X(2, calloc)                                                                                   \
    X(3, realloc)                                                                                  \
    X(4, reallocarray)                                                                             \
    X(5, posix_memalign)                                                                           \
    X(6, aligned_alloc)                                                                            \
    X(7, memalign)                                                                                 \
    X(8, valloc)                                                                                   \
    X(9, pvalloc)                                                                                  \
    X(10, operator new)                                                                            \
    X(11, operator new[])                                                                          \
    X(12, free)                                                                                    \
    X(13, operator delete)                                                                         \
    X(14, operator delete[])
// clang-format on
#define ASYS_HEAP_FUNCTION_COUNT 14

/* ---- hggc records ----------------------------------------------------------
 * Device activity keeps CUPTI's meaning.  Its times are CLOCK_MONOTONIC ns
 * (CUPTI's timestamp callback returns them), absolute in the body; the record
 * header's own timestamp is merely when the collector wrote it. */

enum asys_hggc_domain { ASYS_HGGC_RUNTIME_API = 1, ASYS_HGGC_DRIVER_API = 2 };

/* An API call, written when it returns (header timestamp = end). */
struct asys_rec_hggc_api {
    asys_rec_word header; /* arg = enum asys_hggc_domain */
    uint64_t start_ticks;
    uint32_t name_string_id;
    uint32_t correlation_id; /* joins the call to the device work it caused */
    int32_t result; /* cudaError_t / CUresult */
    uint32_t cbid; /* CUPTI callback id */
    uint32_t callchain_id; /* 0: no stack (shorter than --hggcbacktrace) */
    uint32_t reserved;
};

struct asys_rec_hggc_kernel {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t queued_ns; /* 0 when unknown */
    uint64_t submitted_ns; /* 0 when unknown */
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id;
    int32_t grid[3];
    int32_t block[3];
    int32_t static_shared_memory;
    int32_t dynamic_shared_memory;
    uint16_t registers_per_thread;
    uint8_t launch_type;
    uint8_t reserved;
    uint32_t name_string_id; /* mangled */
    uint64_t graph_node_id; /* 0: not launched by a graph */
    uint32_t graph_id;
    uint32_t reserved2;
};

/* copy_kind, src_kind, dst_kind keep CUPTI's numbering (HtoD 1, DtoH 2, DtoD 8,
 * HtoH 9, PtoP 10; pageable 1, pinned 2, device 3). */
struct asys_rec_hggc_memcpy {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t bytes;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id;
    uint8_t copy_kind;
    uint8_t src_kind;
    uint8_t dst_kind;
    uint8_t flags; /* 1: asynchronous */
    uint32_t graph_id;
    uint64_t graph_node_id;
    uint32_t src_device; /* peer copies (PtoP); 0xffffffff otherwise */
    uint32_t dst_device;
};

struct asys_rec_hggc_memset {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t bytes;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id;
    uint32_t value; /* [hex] */
    uint16_t flags; /* 1: asynchronous */
    uint16_t memory_kind;
    uint32_t graph_id;
    uint32_t reserved;
    uint64_t graph_node_id;
};

/* A synchronization call (CUPTI Synchronization2): arg = type, 1 event
 * synchronize, 2 stream wait event, 3 stream synchronize, 4 context synchronize. */
struct asys_rec_hggc_sync {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t context;
    uint32_t stream; /* 0xffffffff: none */
    uint32_t correlation_id;
    uint32_t event_id; /* 0xffffffff: none */
    uint64_t event_sync_id; /* which record of the event; UINT64_MAX: none */
};

/* cudaEventRecord reaching the device (CUPTI CudaEvent2). */
struct asys_rec_hggc_event_record {
    asys_rec_word header;
    uint64_t device_ns; /* when the event completed on the device */
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id; /* of the cudaEventRecord call */
    uint32_t event_id;
    uint32_t reserved;
    uint64_t event_sync_id;
};

/* A device or pinned allocation or release (CUPTI Memory4): arg = 1 allocation, 2 release. */
/* A device or pinned allocation or release (CUPTI's MEMORY2 activity: arg =
 * its operation, 1 allocation, 2 release) or an allocation call that failed
 * (--hggc-memory-usage; written by the API callback: arg =
 * ASYS_HGGC_MEMORY_FAILED, address 0, bytes = asked). */
enum asys_hggc_memory_op {
    ASYS_HGGC_MEMORY_ALLOCATION = 1,
    ASYS_HGGC_MEMORY_RELEASE = 2,
    ASYS_HGGC_MEMORY_FAILED = 16,
};

struct asys_rec_hggc_memory {
    asys_rec_word header;
    uint64_t timestamp_ns;
    uint64_t address;
    uint64_t bytes;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id;
    uint32_t memory_kind;
    uint32_t error; /* [signed] a failed allocation (ASYS_HGGC_MEMORY_FAILED): the error returned */
};

struct asys_rec_hggc_graph_trace {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t device;
    uint32_t context;
    uint32_t stream;
    uint32_t correlation_id;
    uint32_t graph_id;
    uint32_t reserved;
};

/* A device as the process sees it: arg = CUDA ordinal. */
struct asys_rec_hggc_device {
    asys_rec_word header;
    uint64_t global_memory_bytes;
    uint32_t multiprocessors;
    uint32_t compute_major;
    uint32_t compute_minor;
    uint32_t name_string_id;
    uint8_t uuid[16];
    uint32_t physical_index; /* the machine's index (CUDA_VISIBLE_DEVICES undone); 0xffffffff:
                                unknown */
    uint32_t reserved;
};

struct asys_rec_hggc_context {
    asys_rec_word header;
    uint32_t context;
    uint32_t device;
    uint32_t null_stream;
    uint32_t reserved;
};

struct asys_rec_hggc_stream {
    asys_rec_word header;
    uint32_t context;
    uint32_t stream;
    int32_t priority;
    uint32_t flags; /* 1: non-blocking */
    uint32_t correlation_id;
    uint32_t reserved;
};

/* Graph structure from resource callbacks: arg = 1 node created (other = 0),
 * 2 node cloned (other = the original), 3 dependency (other = the node this
 * one depends on). */
enum asys_hggc_graph_event {
    ASYS_HGGC_NODE_CREATED = 1,
    ASYS_HGGC_NODE_CLONED = 2,
    ASYS_HGGC_NODE_DEPENDENCY = 3
};
struct asys_rec_hggc_graph_node {
    asys_rec_word header;
    uint64_t node_id;
    uint64_t other_node_id;
    uint32_t graph_id;
    uint32_t correlation_id; /* the API call during which it happened, 0: none */
    uint32_t node_type; /* CUgraphNodeType */
    uint32_t reserved;
};

/* GRAPH_EXEC: a graph instantiated; GRAPH_LAUNCH: cudaGraphLaunch of it. */
struct asys_rec_hggc_graph_exec {
    asys_rec_word header;
    uint32_t exec_id;
    uint32_t graph_id;
    uint32_t correlation_id;
    uint32_t reserved;
};

/* Time CUPTI spent on itself (CUPTI Overhead3). */
struct asys_rec_hggc_overhead {
    asys_rec_word header;
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t overhead_kind;
    uint32_t object_kind;
};

/* What happened to the collector: arg = code, value and message by code. */
enum asys_hggc_status_code {
    ASYS_HGGC_ATTACHED = 1, /* value = CUPTI version */
    ASYS_HGGC_CUPTI_UNAVAILABLE = 2, /* message = why */
    ASYS_HGGC_SUBSCRIBER_BUSY = 3, /* another tool holds the CUPTI subscription */
    ASYS_HGGC_CUPTI_DROPPED = 4, /* value = records CUPTI dropped */
    ASYS_HGGC_CUPTI_ERROR = 5, /* message = the call that failed */
    /* value = device and pinned frees made after main returned (runtime
     * destructors), not recorded; message = their bytes, in decimal */
    ASYS_HGGC_FREES_AFTER_MAIN = 6,
};
#define ASYS_HGGC_STATUS_MESSAGE_MAX 240 /* bytes; keeps the record under 255 words */
struct asys_rec_hggc_status {
    asys_rec_word header;
    uint64_t value;
    uint32_t message_length; /* bytes of text that follow, 0: none */
    uint32_t reserved;
    /* followed by the message, UTF-8, zero-padded to 8 (inline: the launcher
     * reads it at finalize without the string table) */
};

/* ---- cpu sampling records ----------------------------------------------
 *
 * The launcher samples the program with perf events (one per CPU, inherited
 * by every thread and child) and records every context switch of every CPU;
 * when the program is done it unwinds the samples' stacks and writes one
 * segment per sampled process image (CPU_SAMPLE records with MODULE and
 * CALLCHAIN records, so finalize symbolizes them like any other stack) and
 * one segment with the SCHED_SWITCH records of every CPU and the
 * CPU_SAMPLING_INFO record.  Ticks are CLOCK_MONOTONIC ns (perf's clockid). */

/* A CPU sample of a thread of the segment's process.  The call chain's frame
 * 0 is the sampled instruction + 1 (symbolizers look up address - 1, the
 * call of a return address), then the callers' return addresses. */
struct asys_rec_cpu_sample {
    asys_rec_word header;
    uint32_t tid;
    uint32_t cpu;
    uint32_t callchain_id; /* 0: no stack */
    uint32_t flags; /* enum asys_cpu_sample_flags */
};

enum asys_cpu_sample_flags {
    ASYS_CPU_SAMPLE_IN_KERNEL = 1u << 0, /* in the kernel: frame 0 is [kernel] */
    ASYS_CPU_SAMPLE_UNWIND_FAILED = 1u << 1, /* the stack ended at the sampled address */
};

/* One context switch on a CPU: prev_tid stopped running, next_tid started
 * (tid 0 is the CPU's idle task). */
struct asys_rec_sched_switch {
    asys_rec_word header;
    uint32_t cpu;
    uint32_t prev_tid;
    uint32_t next_tid;
    uint32_t prev_pid; /* process of prev_tid when it is in the sampled tree, else 0 */
    uint32_t next_pid; /* the same for next_tid */
    uint32_t prev_state; /* [hex] the kernel's prev_state: 0 runnable (preempted), 1 S, 2 D, ... */
};

/* Task states of sched_switch's prev_state (the kernel's TASK_* report bits). */
#define ASYS_TASK_INTERRUPTIBLE 0x1u /* S: waiting */
#define ASYS_TASK_UNINTERRUPTIBLE 0x2u /* D: waiting in the kernel (I/O) */
#define ASYS_TASK_DEAD_MASK 0x30u /* X, Z: the thread exited */
#define ASYS_TASK_IDLE 0x80u /* I: an idle kernel thread */

enum asys_cpu_sampling_status {
    ASYS_CPU_SAMPLING_RECORDED = 1,
    ASYS_CPU_SAMPLING_UNAVAILABLE = 2, /* the reason says why */
};
enum asys_cpu_sampling_event {
    ASYS_CPU_EVENT_CYCLES = 1, /* PERF_COUNT_HW_CPU_CYCLES: period in cycles */
    ASYS_CPU_EVENT_CPU_CLOCK = 2, /* PERF_COUNT_SW_CPU_CLOCK: period in ns */
};
enum asys_cpu_backtrace {
    ASYS_BACKTRACE_NONE = 0,
    ASYS_BACKTRACE_FP = 1, /* the kernel's frame-pointer call chain */
    ASYS_BACKTRACE_DWARF = 2, /* user registers + stack copy, unwound with DWARF CFI */
};
enum asys_cpu_sampling_scope {
    ASYS_SAMPLE_PROCESS_TREE = 1,
    ASYS_SAMPLE_SYSTEM_WIDE = 2,
};
enum asys_sched_source {
    ASYS_SCHED_NONE = 0, /* sched_switch could not be opened (the reason says why) */
    ASYS_SCHED_TRACEPOINT = 1, /* sched:sched_switch on every CPU */
    ASYS_SCHED_CONTEXT_SWITCH = 2, /* the sampled threads' own switches (context_switch): other
                                      processes unseen, S and D both Waiting */
    ASYS_SCHED_CPU_SWITCH = 3, /* every task's switches on every CPU (system-wide
                                  context_switch): S and D both Waiting */
};
/* As the manifest and the analysis database name them. */
static inline const char *asys_sched_source_name(uint32_t source)
{
    return source == ASYS_SCHED_TRACEPOINT       ? "sched:sched_switch"
           : source == ASYS_SCHED_CONTEXT_SWITCH ? "context switches"
           : source == ASYS_SCHED_CPU_SWITCH     ? "cpu-wide context switches"
                                                 : "none";
}

/* What the sampler did: written once, in the scheduling segment. */
#define ASYS_CPU_SAMPLING_REASON_MAX 1024
struct asys_rec_cpu_sampling_info {
    asys_rec_word header;
    uint32_t status; /* enum asys_cpu_sampling_status */
    uint32_t event; /* enum asys_cpu_sampling_event */
    uint64_t period; /* in the event's unit (cycles or ns) */
    uint64_t requested_cycles; /* --sample-period */
    uint64_t samples; /* CPU samples written */
    uint64_t lost_samples; /* PERF_RECORD_LOST of the sampling rings */
    uint64_t throttled; /* PERF_RECORD_THROTTLE records */
    uint64_t unwind_failed; /* samples whose stack ended at the sampled address */
    uint64_t sched_switches; /* SCHED_SWITCH records written */
    uint32_t backtrace; /* enum asys_cpu_backtrace */
    uint32_t scope; /* enum asys_cpu_sampling_scope */
    uint32_t sched_source; /* enum asys_sched_source */
    uint32_t reason_length; /* bytes of reason text that follow (why unavailable, or why
                               scheduling is missing); 0: none */
    uint32_t stack_bytes; /* user stack copied per sample (dwarf) */
    uint32_t nominal_mhz; /* the frequency cpu-clock's period was converted with */
    uint32_t backtrace_depth; /* --sample-backtrace-depth */
    uint32_t reserved; /* zero */
    uint64_t lost_switches; /* PERF_RECORD_LOST of the scheduling rings */
    /* followed by the reason, UTF-8, zero-padded to 8 (inline: finalize puts
     * it in the manifest without the string table) */
};

/* ---- PCCL (-t pccl): NCCL's profiler plugin --------------------------------
 * libasys-inject.so exports the plugin (ncclProfiler_v5 .. _v2); NCCL calls
 * it from the program's threads and from its proxy threads.  Each event is
 * written once, when it stops, by the thread that stops it: the header's
 * timestamp is the stop, its start is absolute ticks of the same clock in
 * the body, its state changes are ticks after its start (u32, "delta + 1":
 * 0 not seen, UINT32_MAX at least that late).  Events are numbered per
 * process image, comm << 40 | ring << 39 | sequence (two rings of slots per
 * context: the program's threads', the proxy's); a child names its parent event
 * (NCCL's parentObj) by that number.  Bit 15 of an event record's header
 * arg marks an event never stopped (written at finalize or exit). */
#define ASYS_PCCL_UNFINISHED 0x8000u /* header arg bit */
#define ASYS_PCCL_ARG_MASK 0x7fffu /* the rest of the arg */
#define ASYS_PCCL_COMM_SHIFT 40 /* event_id >> 40: the context's comm number */

enum asys_pccl_task_kind {
    ASYS_PCCL_TASK_COLL = 1, /* Coll: a collective as NCCL scheduled it */
    ASYS_PCCL_TASK_P2P = 2, /* P2p: a send or receive */
};

enum asys_pccl_call_kind {
    ASYS_PCCL_COLL_API = 2, /* a collective call (ncclAllReduce ...) */
    ASYS_PCCL_P2P_API = 3, /* ncclSend / ncclRecv */
};

enum asys_pccl_status {
    ASYS_PCCL_CHAINED = 1, /* the user's plugin (text) is called too; version = its own */
    ASYS_PCCL_CHAIN_FAILED = 2, /* the user's plugin (text: name and why) could not be used */
};

/* What every event record but the step starts with. */
struct asys_pccl_event {
    uint64_t start_ticks; /* startEvent */
    uint64_t event_id; /* [hex] comm << 40 | ring << 39 | sequence: unique in the image, >= 1 */
    uint64_t parent_id; /* [hex] the parent event (NCCL's parentObj), 0: none or not recorded */
};

/* ---- acdnn / acblas ------------------------------------------------------ */

/* The library an API belongs to (ACDNN_API/ACBLAS_API's arg). */
enum asys_acompute_library {
    ASYS_ACOMPUTE_CUDNN = 1,
    ASYS_ACOMPUTE_CUBLAS = 2,
    ASYS_ACOMPUTE_CUBLASLT = 3,
    ASYS_ACOMPUTE_CUBLASXT = 4,
    ASYS_ACOMPUTE_LIBRARY_MAX = 4,
};

/* An API's name, written by a thread before its first call of it. */
struct asys_rec_acompute_api {
    asys_rec_word header; /* arg = enum asys_acompute_library */
    uint32_t api_id; /* the id the CALL records carry, >= 1 (the build's table) */
    uint32_t name_id; /* [string] string id of the function name */
    uint32_t flags; /* ASYS_ACOMPUTE_API_* */
    uint32_t reserved; /* [unsigned] */
};
#define ASYS_ACOMPUTE_API_DLSYM 1u /* the program resolved it with dlsym on a library handle */

/* One library call, written when it returned; the record's timestamp is the
 * END of the call (nested calls end first), the start is end - duration.  A
 * call on the same handle and stream as the previous call record of the
 * thread's segment is a CALL_SAME record: the first 32 bytes alone. */
struct asys_rec_acompute_call_same {
    asys_rec_word header; /* arg = nesting depth: 0 = the outermost library call */
    uint64_t duration_ticks; /* length of the call */
    int32_t status; /* the returned status or integer (flags say which; cut to 32 bits) */
    uint32_t api_id; /* ACDNN_API / ACBLAS_API id */
    uint32_t callchain_id; /* 0: no stack (shorter than --acompute-backtrace-threshold) */
    uint32_t flags; /* ASYS_ACOMPUTE_CALL_* */
};
struct asys_rec_acompute_call {
    asys_rec_word header; /* arg = nesting depth */
    uint64_t duration_ticks;
    int32_t status;
    uint32_t api_id;
    uint32_t callchain_id;
    uint32_t flags;
    uint64_t handle; /* the library handle (the created one for XCreate), 0: none */
    uint64_t stream; /* [hex] cudaStream_t the call ran on (flags say whether known) */
};
#define ASYS_ACOMPUTE_CALL_HANDLE 1u /* handle is set */
#define ASYS_ACOMPUTE_CALL_STREAM 2u /* stream is known */
#define ASYS_ACOMPUTE_CALL_STREAM_ARG 4u /* the stream was an argument of the call */
#define ASYS_ACOMPUTE_CALL_STATUS 8u /* status is a cudnnStatus_t / cublasStatus_t */
#define ASYS_ACOMPUTE_CALL_RESULT 16u /* status is another integer result */
#define ASYS_ACOMPUTE_CALL_UNKNOWN_HANDLE 32u /* a handle this process never created */

/* A communicator's plugin context (init); written at init. */
struct asys_rec_pccl_comm {
    asys_rec_word header; /* arg = plugin interface version NCCL called (5, 4, 3, 2) */
    uint64_t comm_hash; /* [hex] NCCL's commId/commHash: equal on every rank; 0 unknown (v3, v2) */
    uint32_t comm; /* this context's number in the process image, >= 1 */
    int32_t rank; /* -1: unknown (v3, v2) */
    int32_t nranks; /* -1: unknown */
    int32_t nnodes; /* -1: unknown */
    uint32_t name_string_id; /* commName, 0: none */
    uint32_t event_mask; /* the activation mask the plugin asked for */
};

struct asys_rec_pccl_comm_end {
    asys_rec_word header; /* finalize (or process exit) */
    uint32_t comm;
    uint32_t finalized; /* 1: NCCL called finalize; 0: written at process exit */
    uint64_t events; /* events started */
    uint64_t dropped_no_slot; /* started while every event slot of the context was taken */
    uint64_t dropped_reentry; /* stopped inside the tool's own work, or without a segment */
    uint64_t dropped_bad_handle; /* a stop or state change on a handle not live (a skip) */
    uint64_t dropped_unknown; /* an event type or state this version does not know */
    uint64_t unfinished; /* events still open, written with ASYS_PCCL_UNFINISHED */
};

/* v5's group of calls: ncclGroupStart .. ncclGroupEnd as NCCL 2.28 reports it. */
struct asys_rec_pccl_group_api {
    asys_rec_word header; /* arg = 1: graph captured; | ASYS_PCCL_UNFINISHED */
    struct asys_pccl_event ev;
    uint32_t start_stop_delta; /* GroupStartApiStop (ncclGroupStart returned) */
    uint32_t end_start_delta; /* GroupEndApiStart (ncclGroupEnd entered) */
    int32_t depth; /* ncclGroupStart nesting when it started */
    uint32_t reserved; /* zero */
};

/* v5's collective and point-to-point calls (CollApi, P2pApi). */
struct asys_rec_pccl_call {
    asys_rec_word header; /* arg = enum asys_pccl_call_kind, | 0x100 graph captured */
    struct asys_pccl_event ev;
    uint64_t count; /* elements */
    uint64_t stream; /* [hex] the cudaStream_t given, as a number */
    uint32_t func_string_id; /* "AllReduce", "Send" ... */
    uint32_t datatype_string_id; /* "ncclFloat32" ... */
    int32_t root; /* CollApi */
    uint32_t reserved; /* zero */
};

/* v5's KernelLaunch: NCCL launching its kernel for a plan. */
struct asys_rec_pccl_kernel_launch {
    asys_rec_word header;
    struct asys_pccl_event ev; /* parent: the GroupApi */
    uint64_t stream; /* [hex] the stream it launched on, as a number */
};

struct asys_rec_pccl_group {
    asys_rec_word header;
    struct asys_pccl_event ev;
};

struct asys_rec_pccl_task {
    asys_rec_word header; /* arg = enum asys_pccl_task_kind */
    struct asys_pccl_event ev; /* parent: CollApi / P2pApi (v5), else the group */
    uint64_t group_id; /* [hex] the Group event (parentGroup), 0: none */
    uint64_t seq_number; /* Coll: NCCL's per-function sequence number */
    uint64_t count; /* elements (AllGather, Broadcast: bytes, as NCCL sends them) */
    uint32_t func_string_id;
    uint32_t datatype_string_id;
    uint32_t algo_string_id; /* Coll: "RING", "TREE" ..., 0 */
    uint32_t proto_string_id; /* Coll: "SIMPLE", "LL" ..., 0 */
    int32_t rank;
    int32_t root_or_peer; /* Coll: root; P2p: peer */
    uint8_t channels; /* nChannels (nMaxChannels before v4) */
    uint8_t warps; /* Coll: nWarps */
    uint16_t reserved; /* zero */
    uint32_t reserved2; /* zero */
};

struct asys_rec_pccl_proxy_op {
    asys_rec_word header;
    struct asys_pccl_event ev; /* parent: the Coll or P2p task */
    uint32_t in_progress_delta; /* ProxyOpInProgress */
    uint32_t pid; /* process that posted the op */
    int32_t rank;
    int32_t peer;
    int32_t steps; /* nSteps */
    int32_t chunk_size; /* bytes a step moves */
    uint8_t channel;
    uint8_t is_send;
    uint16_t reserved; /* zero */
    uint32_t reserved2; /* zero */
};

/* A proxy step: the most numerous event, kept small.  It has no number of
 * its own: (op_id, step) names it.  Its three states are its direction's:
 * send: GPU wait, peer wait, send wait; receive: receive wait, flush wait,
 * GPU wait. */
struct asys_rec_pccl_proxy_step {
    asys_rec_word header; /* arg: ASYS_PCCL_UNFINISHED */
    uint64_t start_ticks;
    uint64_t op_id; /* [hex] the ProxyOp (its comm: op_id >> 40) */
    uint32_t state_delta[3]; /* the direction's three states */
    uint32_t trans_size; /* bytes moved, as last reported (saturated) */
    int32_t step;
    uint8_t channel; /* its op's */
    uint8_t is_send; /* its op's */
    uint16_t reserved; /* zero */
};

struct asys_rec_pccl_proxy_ctrl {
    asys_rec_word header; /* arg = the last state (NCCL's numbering: 13 idle .. 18 append end) */
    struct asys_pccl_event ev;
    uint32_t state_delta; /* when that state was recorded */
    int32_t appended; /* AppendEnd: proxy ops appended */
    uint32_t states; /* states recorded */
    uint32_t reserved; /* zero */
};

struct asys_rec_pccl_kernel_ch {
    asys_rec_word header;
    struct asys_pccl_event ev; /* parent: the Coll or P2p task */
    uint64_t ptimer_start; /* [ns] the GPU's globaltimer at the channel's start (ns), 0: none */
    uint64_t ptimer_stop; /* [ns] at its stop (KernelChStop), 0: none */
    uint32_t stop_state_delta; /* KernelChStop */
    uint8_t channel;
    uint8_t reserved[3]; /* zero */
};

struct asys_rec_pccl_net {
    asys_rec_word header;
    struct asys_pccl_event ev; /* parent_id: its step's op; step: which of its steps */
    int64_t plugin_id; /* [hex] the network plugin's event id (type and version) */
    uint32_t last_update_delta;
    uint32_t updates; /* NetPluginUpdate states */
    int32_t step;
    uint32_t reserved; /* zero */
};

#define ASYS_PCCL_STATUS_TEXT_MAX 240
struct asys_rec_pccl_status {
    asys_rec_word header; /* arg = enum asys_pccl_status */
    uint32_t version; /* CHAINED: the user's plugin interface version */
    uint32_t text_length; /* text after the struct */
};

/* ---- hgvideo (-t hgvideo): NVDEC, NVENC, nvJPEG ----------------------------
 * libasys-video.so (preloaded with -t hgvideo) defines the libraries' entry
 * points (libnvcuvid.so.1 cuvid*, libnvidia-encode.so.1
 * NvEncodeAPICreateInstance, whose function list it wraps, libnvjpeg.so
 * nvjpeg*) and dlsym, so that linked, dlopen'ed and dlsym-resolved libraries
 * are all traced.  A call is written when it returns (the record's
 * timestamp), its start in the body.  Calls are numbered per process image:
 * call_id = thread_index << 40 | the thread's sequence (32 bits). */
#define ASYS_VIDEO_CALL_SHIFT 40
/* The API a function belongs to: its id's range. */
enum asys_video_api {
    ASYS_VIDEO_API_DECODE = 1, /* ids 1..31: NVDEC (libnvcuvid) */
    ASYS_VIDEO_API_ENCODE = 2, /* ids 32..95: NVENC (libnvidia-encode) */
    ASYS_VIDEO_API_JPEG = 3, /* ids 96..191: nvJPEG (libnvjpeg) */
};
#define ASYS_VIDEO_ENCODE_FIRST 32u
#define ASYS_VIDEO_JPEG_FIRST 96u
#define ASYS_VIDEO_FUNCTION_MAX 191u
#define ASYS_VIDEO_API_OF(id) \
    ((id) >= ASYS_VIDEO_JPEG_FIRST     ? ASYS_VIDEO_API_JPEG \
     : (id) >= ASYS_VIDEO_ENCODE_FIRST ? ASYS_VIDEO_API_ENCODE \
                                       : ASYS_VIDEO_API_DECODE)
/* The traced functions: id, api, name.  Append only (ids are the format). */
// clang-format off
#define ASYS_VIDEO_FUNCTIONS(X)                                                                    \
    X(1, 1, cuvidGetDecoderCaps)                                                                   \
    X(2, 1, cuvidCreateDecoder)                                                                    \
    X(3, 1, cuvidDestroyDecoder)                                                                   \
    X(4, 1, cuvidDecodePicture)                                                                    \
    X(5, 1, cuvidGetDecodeStatus)                                                                  \
    X(6, 1, cuvidReconfigureDecoder)                                                               \
    X(7, 1, cuvidMapVideoFrame)                                                                    \
    X(8, 1, cuvidUnmapVideoFrame)                                                                  \
    X(9, 1, cuvidMapVideoFrame64)                                                                  \
    X(10, 1, cuvidUnmapVideoFrame64)                                                               \
    X(11, 1, cuvidCtxLockCreate)                                                                   \
    X(12, 1, cuvidCtxLockDestroy)                                                                  \
    X(13, 1, cuvidCtxLock)                                                                         \
    X(14, 1, cuvidCtxUnlock)                                                                       \
    X(15, 1, cuvidCreateVideoSource)                                                               \
    X(16, 1, cuvidCreateVideoSourceW)                                                              \
    X(17, 1, cuvidDestroyVideoSource)                                                              \
    X(18, 1, cuvidSetVideoSourceState)                                                             \
    X(19, 1, cuvidGetVideoSourceState)                                                             \
    X(20, 1, cuvidGetSourceVideoFormat)                                                            \
    X(21, 1, cuvidGetSourceAudioFormat)                                                            \
    X(22, 1, cuvidCreateVideoParser)                                                               \
    X(23, 1, cuvidParseVideoData)                                                                  \
    X(24, 1, cuvidDestroyVideoParser)                                                              \
    X(32, 2, NvEncodeAPIGetMaxSupportedVersion)                                                    \
    X(33, 2, NvEncodeAPICreateInstance)                                                            \
    X(34, 2, nvEncOpenEncodeSession)                                                               \
    X(35, 2, nvEncGetEncodeGUIDCount)                                                              \
    X(36, 2, nvEncGetEncodeProfileGUIDCount)                                                       \
    X(37, 2, nvEncGetEncodeProfileGUIDs)                                                           \
    X(38, 2, nvEncGetEncodeGUIDs)                                                                  \
    X(39, 2, nvEncGetInputFormatCount)                                                             \
    X(40, 2, nvEncGetInputFormats)                                                                 \
    X(41, 2, nvEncGetEncodeCaps)                                                                   \
    X(42, 2, nvEncGetEncodePresetCount)                                                            \
    X(43, 2, nvEncGetEncodePresetGUIDs)                                                            \
    X(44, 2, nvEncGetEncodePresetConfig)                                                           \
    X(45, 2, nvEncInitializeEncoder)                                                               \
    X(46, 2, nvEncCreateInputBuffer)                                                               \
    X(47, 2, nvEncDestroyInputBuffer)                                                              \
    X(48, 2, nvEncCreateBitstreamBuffer)                                                           \
    X(49, 2, nvEncDestroyBitstreamBuffer)                                                          \
    X(50, 2, nvEncEncodePicture)                                                                   \
    X(51, 2, nvEncLockBitstream)                                                                   \
    X(52, 2, nvEncUnlockBitstream)                                                                 \
    X(53, 2, nvEncLockInputBuffer)                                                                 \
    X(54, 2, nvEncUnlockInputBuffer)                                                               \
    X(55, 2, nvEncGetEncodeStats)                                                                  \
    X(56, 2, nvEncGetSequenceParams)                                                               \
    X(57, 2, nvEncRegisterAsyncEvent)                                                              \
    X(58, 2, nvEncUnregisterAsyncEvent)                                                            \
    X(59, 2, nvEncMapInputResource)                                                                \
    X(60, 2, nvEncUnmapInputResource)                                                              \
    X(61, 2, nvEncDestroyEncoder)                                                                  \
    X(62, 2, nvEncInvalidateRefFrames)                                                             \
    X(63, 2, nvEncOpenEncodeSessionEx)                                                             \
    X(64, 2, nvEncRegisterResource)                                                                \
    X(65, 2, nvEncUnregisterResource)                                                              \
    X(66, 2, nvEncReconfigureEncoder)                                                              \
    X(67, 2, nvEncCreateMVBuffer)                                                                  \
    X(68, 2, nvEncDestroyMVBuffer)                                                                 \
    X(69, 2, nvEncRunMotionEstimationOnly)                                                         \
    X(70, 2, nvEncGetLastErrorString)                                                              \
    X(71, 2, nvEncSetIOCudaStreams)                                                                \
    X(72, 2, nvEncGetEncodePresetConfigEx)                                                         \
    X(73, 2, nvEncGetSequenceParamEx)                                                              \
    X(96, 3, nvjpegGetProperty)                                                                    \
    X(97, 3, nvjpegGetCudartProperty)                                                              \
    X(98, 3, nvjpegCreate)                                                                         \
    X(99, 3, nvjpegCreateSimple)                                                                   \
    X(100, 3, nvjpegCreateEx)                                                                      \
    X(101, 3, nvjpegDestroy)                                                                       \
    X(102, 3, nvjpegSetDeviceMemoryPadding)                                                        \
    X(103, 3, nvjpegSetPinnedMemoryPadding)                                                        \
    X(104, 3, nvjpegJpegStateCreate)                                                               \
    X(105, 3, nvjpegJpegStateDestroy)                                                              \
    X(106, 3, nvjpegGetImageInfo)                                                                  \
    X(107, 3, nvjpegDecode)                                                                        \
    X(108, 3, nvjpegDecodeBatchedInitialize)                                                       \
    X(109, 3, nvjpegDecodeBatched)                                                                 \
    X(110, 3, nvjpegDecoderCreate)                                                                 \
    X(111, 3, nvjpegDecoderDestroy)                                                                \
    X(112, 3, nvjpegDecoderStateCreate)                                                            \
    X(113, 3, nvjpegJpegStreamCreate)                                                              \
    X(114, 3, nvjpegJpegStreamDestroy)                                                             \
    X(115, 3, nvjpegJpegStreamParse)                                                               \
    X(116, 3, nvjpegDecodeParamsCreate)                                                            \
    X(117, 3, nvjpegDecodeParamsDestroy)                                                           \
    X(118, 3, nvjpegDecodeParamsSetOutputFormat)                                                   \
    X(119, 3, nvjpegDecodeJpegHost)                                                                \
    X(120, 3, nvjpegDecodeJpegTransferToDevice)                                                    \
    X(121, 3, nvjpegDecodeJpegDevice)                                                              \
    X(122, 3, nvjpegDecodeJpeg)                                                                    \
    X(123, 3, nvjpegBufferPinnedCreate)                                                            \
    X(124, 3, nvjpegBufferPinnedDestroy)                                                           \
    X(125, 3, nvjpegBufferDeviceCreate)                                                            \
    X(126, 3, nvjpegBufferDeviceDestroy)                                                           \
    X(127, 3, nvjpegStateAttachPinnedBuffer)                                                       \
    X(128, 3, nvjpegStateAttachDeviceBuffer)                                                       \
    X(129, 3, nvjpegEncoderStateCreate)                                                            \
    X(130, 3, nvjpegEncoderStateDestroy)                                                           \
    X(131, 3, nvjpegEncoderParamsCreate)                                                           \
    X(132, 3, nvjpegEncoderParamsDestroy)                                                          \
    X(133, 3, nvjpegEncoderParamsSetQuality)                                                       \
    X(134, 3, nvjpegEncoderParamsSetSamplingFactors)                                               \
    X(135, 3, nvjpegEncodeYUV)                                                                     \
    X(136, 3, nvjpegEncodeImage)                                                                   \
    X(137, 3, nvjpegEncodeRetrieveBitstream)
// clang-format on

/* What an activity record times. */
enum asys_video_kind {
    ASYS_VIDEO_DECODE = 1, /* a picture: cuvidDecodePicture .. first seen complete */
    ASYS_VIDEO_ENCODE = 2, /* a frame: nvEncEncodePicture .. nvEncLockBitstream returns */
    ASYS_VIDEO_JPEG = 3, /* nvJPEG device work (derived at import from HGGC; never written) */
};
/* asys_rec_video_api.flags and asys_rec_video_activity.flags */
#define ASYS_VIDEO_STREAM_ID 1u /* stream_id holds CUPTI's id of the stream */

/* 32 bytes for a call, 48 for one that takes a stream: the record is most
 * of a traced call's cost (fresh segment memory). */
struct asys_rec_video_api {
    asys_rec_word header; /* arg = function id (ASYS_VIDEO_FUNCTIONS); timestamp: the return */
    uint64_t start_ticks; /* the call's entry */
    uint64_t handle; /* the decoder, encoder session, parser, source or nvJPEG handle */
    int32_t status; /* CUresult / NVENCSTATUS / nvjpegStatus_t returned */
    uint32_t sequence; /* the thread's call number: call_id = thread_index << 40 | sequence */
};

/* A call that takes a stream (cuvidMapVideoFrame's output stream, nvJPEG's,
 * nvEncSetIOCudaStreams', nvEncEncodePicture's: the encoder's). */
struct asys_rec_video_api_stream {
    asys_rec_word header; /* arg = function id; timestamp: the return */
    uint64_t start_ticks;
    uint64_t handle;
    int32_t status;
    uint32_t sequence;
    uint64_t stream; /* [hex] the CUstream (its value; 0 the default stream) */
    uint32_t stream_id; /* CUPTI's id of that stream (flags & ASYS_VIDEO_STREAM_ID) */
    uint32_t flags; /* ASYS_VIDEO_STREAM_ID */
};

struct asys_rec_video_activity {
    asys_rec_word header; /* arg = enum asys_video_kind; timestamp: when written */
    uint64_t start_ticks; /* the work submitted: the submitting call's return */
    uint64_t end_ticks; /* the work first seen complete (<= the timestamp) */
    uint64_t call_id; /* [hex] the API call that submitted it */
    uint64_t handle; /* decoder / encoder session */
    uint64_t stream; /* [hex] the CUstream it is accounted to (its value) */
    uint64_t bytes; /* decode: bitstream bytes in; encode: bitstream bytes out */
    uint32_t stream_id; /* CUPTI's id of that stream (flags & ASYS_VIDEO_STREAM_ID) */
    uint32_t flags; /* ASYS_VIDEO_STREAM_ID */
    int32_t picture; /* decode: the picture index; encode: -1 */
    uint32_t reserved; /* zero */
};

enum asys_video_status {
    ASYS_VIDEO_TABLE_UNKNOWN = 1, /* an NVENC function list of a version not known: not wrapped */
    ASYS_VIDEO_TABLE_CHANGED = 2, /* a second NVENC list with other functions: not wrapped */
    ASYS_VIDEO_PENDING_FULL = 3, /* work submitted with the pending table full: untimed */
    ASYS_VIDEO_NO_REAL = 4, /* a traced function whose library could not be found */
};
#define ASYS_VIDEO_PENDING_MAX 1024
struct asys_rec_video_status {
    asys_rec_word header; /* arg = enum asys_video_status */
    uint32_t value; /* [hex] TABLE_*: the list's version field; NO_REAL: the function id */
    uint32_t count; /* occurrences this record stands for */
};

/* ---- static checks ----------------------------------------------------- */

#define ASYS_CHECK_SIZE(type, size) _Static_assert(sizeof(type) == (size), #type " size")
#define ASYS_CHECK_OFFSET(type, field, off) \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " offset")

ASYS_CHECK_SIZE(struct asys_segment_header, ASYS_SEGMENT_HEADER_SIZE);
ASYS_CHECK_SIZE(struct asys_arena_control, 64);
ASYS_CHECK_OFFSET(struct asys_arena_control, session_recording, 32);
ASYS_CHECK_OFFSET(struct asys_arena_control, samplers_window, 40);
ASYS_CHECK_OFFSET(struct asys_arena_control, window_options, 44);
ASYS_CHECK_OFFSET(struct asys_arena_control, pair_sequence, 12);
ASYS_CHECK_OFFSET(struct asys_arena_control, pair_ticks, 48);
ASYS_CHECK_OFFSET(struct asys_arena_control, pair_monotonic_ns, 56);
ASYS_CHECK_SIZE(struct asys_slot_header, ASYS_SLOT_HEADER_SIZE);
ASYS_CHECK_SIZE(struct asys_arena_frame, 32);
ASYS_CHECK_SIZE(struct asys_report_mark, 24);
ASYS_CHECK_OFFSET(struct asys_report_mark, format_version, 16);
ASYS_CHECK_OFFSET(struct asys_arena_frame, sequence, 24);
ASYS_CHECK_OFFSET(struct asys_segment_header, format_version, 8);
ASYS_CHECK_OFFSET(struct asys_segment_header, feature_mask, 16);
ASYS_CHECK_OFFSET(struct asys_segment_header, pid, 24);
ASYS_CHECK_OFFSET(struct asys_segment_header, process_uid, 40);
ASYS_CHECK_OFFSET(struct asys_segment_header, inherited_string_limit, 56);
ASYS_CHECK_OFFSET(struct asys_segment_header, base_ticks, 64);
ASYS_CHECK_OFFSET(struct asys_segment_header, dropped_records, 96);
ASYS_CHECK_OFFSET(struct asys_segment_header, data_end, 112);
ASYS_CHECK_OFFSET(struct asys_segment_header, dropped_full, 120);
ASYS_CHECK_OFFSET(struct asys_segment_header, dropped_big, 136);
ASYS_CHECK_OFFSET(struct asys_segment_header, lost_threads, 144);
ASYS_CHECK_OFFSET(struct asys_segment_header, lost_thread_errno, 160);
ASYS_CHECK_OFFSET(struct asys_segment_header, dropped_no_room, 168);
ASYS_CHECK_OFFSET(struct asys_segment_header, lost_process_records, 184);
ASYS_CHECK_OFFSET(struct asys_segment_header, lost_process_pid, 200);
ASYS_CHECK_OFFSET(struct asys_segment_header, reserved, 208);
ASYS_CHECK_SIZE(asys_rec_word, 8);
ASYS_CHECK_SIZE(struct asys_rec_time_base, 16);
ASYS_CHECK_SIZE(struct asys_rec_string_def, 24);
ASYS_CHECK_OFFSET(struct asys_rec_string_def, size_bytes, 8);
ASYS_CHECK_SIZE(struct asys_rec_process_info, 32);
ASYS_CHECK_SIZE(struct asys_rec_thread, 16);
ASYS_CHECK_SIZE(struct asys_rec_drop, 32);
ASYS_CHECK_SIZE(struct asys_rec_clock_pair, 32);
ASYS_CHECK_SIZE(struct asys_rec_capture, 24);
ASYS_CHECK_SIZE(struct asys_hgtx_attributes, 32);
ASYS_CHECK_OFFSET(struct asys_hgtx_attributes, domain_id, 12);
ASYS_CHECK_OFFSET(struct asys_hgtx_attributes, payload, 24);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_ex, 40);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_range, 16);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_start_ex, 48);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_domain, 16);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_category, 16);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_thread_name, 16);

ASYS_CHECK_SIZE(struct asys_rec_hgtx_schema, 64);
ASYS_CHECK_SIZE(struct asys_hgtx_schema_entry, 56);
ASYS_CHECK_SIZE(struct asys_hgtx_enum_entry, 16);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_payload, 24);
ASYS_CHECK_SIZE(struct asys_hgtx_payload_data, 16);

ASYS_CHECK_SIZE(struct asys_rec_hgtx_counter, 96);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_sample, 48);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_mem, 56);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_resource, 40);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_sync, 24);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_injection, 16);
ASYS_CHECK_SIZE(struct asys_rec_hgtx_time, 64);
ASYS_CHECK_SIZE(struct asys_rec_module, 72);
ASYS_CHECK_OFFSET(struct asys_rec_module, build_id, 40);
ASYS_CHECK_SIZE(struct asys_rec_callchain, 16);
ASYS_CHECK_SIZE(struct asys_rec_osrt_call, 32);
ASYS_CHECK_SIZE(struct asys_rec_acompute_api, 24);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_api, flags, 16);
ASYS_CHECK_SIZE(struct asys_rec_acompute_call_same, 32);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call_same, status, 16);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call_same, flags, 28);
ASYS_CHECK_SIZE(struct asys_rec_acompute_call, 48);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call, status, 16);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call, flags, 28);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call, handle, 32);
ASYS_CHECK_OFFSET(struct asys_rec_acompute_call, stream, 40);
ASYS_CHECK_SIZE(struct asys_rec_heap_alloc, 40);
ASYS_CHECK_OFFSET(struct asys_rec_heap_alloc, callchain_id, 32);
ASYS_CHECK_SIZE(struct asys_rec_heap_free, 24);
ASYS_CHECK_SIZE(struct asys_rec_heap_alloc_every, 24);
ASYS_CHECK_OFFSET(struct asys_rec_heap_alloc_every, callchain_id, 20);
ASYS_CHECK_SIZE(struct asys_rec_heap_free_every, 16);
ASYS_CHECK_SIZE(struct asys_rec_heap_alloc_sum, 80);
ASYS_CHECK_OFFSET(struct asys_rec_heap_alloc_sum, report_interval_ms, 32);
ASYS_CHECK_OFFSET(struct asys_rec_heap_alloc_sum, estimated_count_q16, 72);
ASYS_CHECK_SIZE(struct asys_rec_heap_free_sum, 56);
ASYS_CHECK_OFFSET(struct asys_rec_heap_free_sum, estimated_count_q16, 48);
ASYS_CHECK_SIZE(struct asys_rec_host_memory, 32);
ASYS_CHECK_SIZE(struct asys_rec_event_count, 40);
ASYS_CHECK_SIZE(struct asys_rec_event_thread_count, 40);
ASYS_CHECK_SIZE(struct asys_rec_event_status, 16);
ASYS_CHECK_SIZE(struct asys_rec_ppu_metrics_device, 32);
ASYS_CHECK_OFFSET(struct asys_rec_ppu_metrics_device, text_length, 28);
ASYS_CHECK_SIZE(struct asys_rec_ppu_metric_def, 16);
ASYS_CHECK_SIZE(struct asys_rec_ppu_metric_sample, 16);
ASYS_CHECK_SIZE(struct asys_rec_ppu_metrics_end, 24);
ASYS_CHECK_SIZE(struct asys_rec_python_code, 32);
ASYS_CHECK_SIZE(struct asys_rec_python_sample, 16);
ASYS_CHECK_SIZE(struct asys_rec_python_status, 16);
ASYS_CHECK_SIZE(struct asys_rec_python_stack, 24);
ASYS_CHECK_SIZE(struct asys_rec_nic_device, 56);
ASYS_CHECK_OFFSET(struct asys_rec_nic_device, name, 24);
ASYS_CHECK_SIZE(struct asys_rec_nic_sample, 16);
ASYS_CHECK_SIZE(struct asys_rec_nic_rate, 32);
ASYS_CHECK_SIZE(struct asys_rec_hggc_api, 40);
ASYS_CHECK_SIZE(struct asys_rec_hggc_kernel, 112);
ASYS_CHECK_OFFSET(struct asys_rec_hggc_kernel, grid, 56);
ASYS_CHECK_OFFSET(struct asys_rec_hggc_kernel, name_string_id, 92);
ASYS_CHECK_SIZE(struct asys_rec_hggc_memcpy, 72);
ASYS_CHECK_SIZE(struct asys_rec_hggc_memset, 72);
ASYS_CHECK_SIZE(struct asys_rec_hggc_sync, 48);
ASYS_CHECK_SIZE(struct asys_rec_hggc_event_record, 48);
ASYS_CHECK_SIZE(struct asys_rec_hggc_memory, 56);
ASYS_CHECK_SIZE(struct asys_rec_hggc_graph_trace, 48);
ASYS_CHECK_SIZE(struct asys_rec_hggc_device, 56);
ASYS_CHECK_SIZE(struct asys_rec_hggc_context, 24);
ASYS_CHECK_SIZE(struct asys_rec_hggc_stream, 32);
ASYS_CHECK_SIZE(struct asys_rec_hggc_graph_node, 40);
ASYS_CHECK_SIZE(struct asys_rec_hggc_graph_exec, 24);
ASYS_CHECK_SIZE(struct asys_rec_hggc_overhead, 32);
ASYS_CHECK_SIZE(struct asys_rec_hggc_status, 24);
ASYS_CHECK_SIZE(struct asys_rec_cpu_sample, 24);
ASYS_CHECK_OFFSET(struct asys_rec_cpu_sample, callchain_id, 16);
ASYS_CHECK_SIZE(struct asys_rec_sched_switch, 32);
ASYS_CHECK_OFFSET(struct asys_rec_sched_switch, prev_state, 28);
ASYS_CHECK_SIZE(struct asys_rec_cpu_sampling_info, 112);
ASYS_CHECK_OFFSET(struct asys_rec_cpu_sampling_info, backtrace, 72);
ASYS_CHECK_OFFSET(struct asys_rec_cpu_sampling_info, lost_switches, 104);
ASYS_CHECK_SIZE(struct asys_pccl_event, 24);
ASYS_CHECK_SIZE(struct asys_rec_pccl_comm, 40);
ASYS_CHECK_SIZE(struct asys_rec_pccl_comm_end, 64);
ASYS_CHECK_SIZE(struct asys_rec_pccl_group_api, 48);
ASYS_CHECK_SIZE(struct asys_rec_pccl_call, 64);
ASYS_CHECK_SIZE(struct asys_rec_pccl_kernel_launch, 40);
ASYS_CHECK_SIZE(struct asys_rec_pccl_group, 32);
ASYS_CHECK_SIZE(struct asys_rec_pccl_task, 88);
ASYS_CHECK_SIZE(struct asys_rec_pccl_proxy_op, 64);
ASYS_CHECK_SIZE(struct asys_rec_pccl_proxy_step, 48);
ASYS_CHECK_OFFSET(struct asys_rec_pccl_proxy_step, trans_size, 36);
ASYS_CHECK_SIZE(struct asys_rec_pccl_proxy_ctrl, 48);
ASYS_CHECK_SIZE(struct asys_rec_pccl_kernel_ch, 56);
ASYS_CHECK_SIZE(struct asys_rec_pccl_net, 56);
ASYS_CHECK_SIZE(struct asys_rec_pccl_status, 16);
ASYS_CHECK_SIZE(struct asys_rec_video_api, 32);
ASYS_CHECK_OFFSET(struct asys_rec_video_api, sequence, 28);
ASYS_CHECK_SIZE(struct asys_rec_video_api_stream, 48);
ASYS_CHECK_OFFSET(struct asys_rec_video_api_stream, sequence, 28);
ASYS_CHECK_OFFSET(struct asys_rec_video_api_stream, flags, 44);
ASYS_CHECK_SIZE(struct asys_rec_video_activity, 72);
ASYS_CHECK_OFFSET(struct asys_rec_video_activity, stream_id, 56);
ASYS_CHECK_OFFSET(struct asys_rec_video_activity, picture, 64);
ASYS_CHECK_SIZE(struct asys_rec_video_status, 16);
_Static_assert(sizeof(struct asys_rec_callchain) + 8 * ASYS_CALLCHAIN_MAX_DEPTH <= 254 * 8,
               "a call chain fits a record without the extended size");
_Static_assert(ASYS_REC_MAX_SIZE % 8 == 0, "records are whole words");
_Static_assert(ASYS_REC_MAX_SIZE > 254u * 8u, "extended records exist");

#endif /* ASYS_FORMAT_H */
