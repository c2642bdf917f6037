/* The NCCL profiler plugin interface as this collector uses it: the event
 * descriptors, state arguments and plugin tables of interface versions 5 to
 * 2, declared from NCCL's ext-profiler documentation (NCCL 2.28; the layouts
 * are NCCL's ABI, the names ours).  The descriptor layouts are pinned by the
 * static checks below, so a field added in the wrong place fails to build.
 *
 * Version history, as NCCL's loader (src/plugin/profiler.cc) sees it: 2.28
 * looks for ncclProfiler_v5, then _v4, _v3, _v2, _v1 in the library named by
 * NCCL_PROFILER_PLUGIN and adapts the older tables to v5.  v5 adds the
 * API-level events (GroupApi, CollApi, P2pApi, KernelLaunch), a 64-bit event
 * type and parentGroup in Coll and P2p (parentObj became the API event); v4
 * passes the communicator to init and drops name/commHash from Coll and P2p;
 * v3 adds KernelCh and NetPlugin; v2 has string names where v1 had enums
 * (not exported here: its enum numbering changed between releases). */
#ifndef ASYS_PCCL_ABI_H
#define ASYS_PCCL_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int pccl_result_t; /* ncclResult_t: 0 = ncclSuccess */
#define PCCL_SUCCESS 0
#define PCCL_INTERNAL_ERROR 3
typedef void (*pccl_log_fn)(int level, unsigned long flags, const char *file, int line,
                            const char *fmt, ...);

/* Event type bits (ncclProfileGroup ...). */
enum {
    PCCL_EV_GROUP = 1 << 0,
    PCCL_EV_COLL = 1 << 1,
    PCCL_EV_P2P = 1 << 2,
    PCCL_EV_PROXY_OP = 1 << 3,
    PCCL_EV_PROXY_STEP = 1 << 4,
    PCCL_EV_PROXY_CTRL = 1 << 5,
    PCCL_EV_KERNEL_CH = 1 << 6,
    PCCL_EV_NET = 1 << 7,
    PCCL_EV_GROUP_API = 1 << 8,
    PCCL_EV_COLL_API = 1 << 9,
    PCCL_EV_P2P_API = 1 << 10,
    PCCL_EV_KERNEL_LAUNCH = 1 << 11,
};
#define PCCL_EVENTS_V2 0x3f /* Group .. ProxyCtrl */
#define PCCL_EVENTS_V3 0xff /* + KernelCh, NetPlugin */
#define PCCL_EVENTS_V5 0xfff /* + the API events */

/* Event states (ncclProfilerEventState_t): one numbering for every version. */
enum {
    PCCL_ST_PROXY_OP_SEND_POSTED = 0, /* 0..7: per-op states before v4 */
    PCCL_ST_PROXY_OP_RECV_DONE = 7,
    PCCL_ST_STEP_SEND_GPU_WAIT = 8,
    PCCL_ST_STEP_SEND_WAIT = 9,
    PCCL_ST_STEP_RECV_WAIT = 10,
    PCCL_ST_STEP_RECV_FLUSH_WAIT = 11,
    PCCL_ST_STEP_RECV_GPU_WAIT = 12,
    PCCL_ST_CTRL_IDLE = 13,
    PCCL_ST_CTRL_ACTIVE = 14,
    PCCL_ST_CTRL_SLEEP = 15,
    PCCL_ST_CTRL_WAKEUP = 16,
    PCCL_ST_CTRL_APPEND = 17,
    PCCL_ST_CTRL_APPEND_END = 18,
    PCCL_ST_PROXY_OP_IN_PROGRESS = 19,
    PCCL_ST_STEP_SEND_PEER_WAIT = 20,
    PCCL_ST_NET_UPDATE = 21,
    PCCL_ST_KERNEL_CH_STOP = 22,
    PCCL_ST_GROUP_START_API_STOP = 23,
    PCCL_ST_GROUP_END_API_START = 24,
};

/* ---- v5 ------------------------------------------------------------------ */
struct pccl_descr_v5 {
    uint64_t type;
    void *parent;
    int rank;
    union {
        struct {
            _Bool graph_captured;
            int depth;
        } group_api;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            int root;
            void *stream;
            _Bool graph_captured;
        } coll_api;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            void *stream;
            _Bool graph_captured;
        } p2p_api;
        struct {
            void *stream;
        } kernel_launch;
        struct {
            uint64_t seq;
            const char *func;
            const void *send;
            void *recv;
            size_t count;
            int root;
            const char *datatype;
            uint8_t channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
            void *parent_group;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t channels;
            void *parent_group;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channel;
            int peer;
            int steps;
            int chunk_size;
            int is_send;
        } proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel;
            uint64_t ptimer;
        } kernel_ch;
        struct {
            int64_t id;
            void *data;
        } net;
    };
};

/* v5 and v4 state arguments. */
union pccl_state_args_v4 {
    struct {
        size_t trans_size;
    } proxy_step;
    struct {
        int appended;
    } proxy_ctrl;
    struct {
        void *data;
    } net;
    struct {
        uint64_t ptimer;
    } kernel_ch;
};

struct pccl_plugin_v5 {
    const char *name;
    pccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
                          int nnodes, int nranks, int rank, pccl_log_fn log);
    pccl_result_t (*start)(void *ctx, void **handle, struct pccl_descr_v5 *d);
    pccl_result_t (*stop)(void *handle);
    pccl_result_t (*record)(void *handle, int state, union pccl_state_args_v4 *args);
    pccl_result_t (*finalize)(void *ctx);
};

/* ---- v4 ------------------------------------------------------------------ */
struct pccl_descr_v4 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            uint64_t seq;
            const char *func;
            const void *send;
            void *recv;
            size_t count;
            int root;
            const char *datatype;
            uint8_t channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t channels;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channel;
            int peer;
            int steps;
            int chunk_size;
            int is_send;
        } proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel;
            uint64_t ptimer;
        } kernel_ch;
        struct {
            int64_t id;
            void *data;
        } net;
    };
};

struct pccl_plugin_v4 {
    const char *name;
    pccl_result_t (*init)(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
                          int nnodes, int nranks, int rank, pccl_log_fn log);
    pccl_result_t (*start)(void *ctx, void **handle, struct pccl_descr_v4 *d);
    pccl_result_t (*stop)(void *handle);
    pccl_result_t (*record)(void *handle, int state, union pccl_state_args_v4 *args);
    pccl_result_t (*finalize)(void *ctx);
};

/* ---- v3 and v2 ------------------------------------------------------------ */
struct pccl_descr_v3 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send;
            void *recv;
            size_t count;
            int root;
            const char *datatype;
            uint8_t channels; /* nMaxChannels */
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channel;
            int peer;
            int steps;
            int chunk_size;
            int is_send;
        } proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel;
        } kernel_ch;
        struct {
            int64_t id;
            void *data;
        } net;
    };
};

/* v2: v3 without KernelCh and NetPlugin, and with trafficBytes in Coll. */
struct pccl_descr_v2 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send;
            void *recv;
            size_t count;
            int root;
            const char *datatype;
            size_t traffic_bytes;
            uint8_t channels;
            uint8_t warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        struct {
            pid_t pid;
            uint8_t channel;
            int peer;
            int steps;
            int chunk_size;
            int is_send;
        } proxy_op;
        struct {
            int step;
        } proxy_step;
    };
};

/* v3 and v2 state arguments. */
union pccl_state_args_v3 {
    struct {
        size_t trans_size;
        int steps;
    } proxy_op;
    struct {
        int appended;
    } proxy_ctrl;
};

struct pccl_plugin_v3 {
    const char *name;
    pccl_result_t (*init)(void **ctx, int *mask);
    pccl_result_t (*start)(void *ctx, void **handle, void *d); /* pccl_descr_v3 or _v2 */
    pccl_result_t (*stop)(void *handle);
    pccl_result_t (*record)(void *handle, int state, union pccl_state_args_v3 *args);
    pccl_result_t (*finalize)(void *ctx);
};

/* The layouts NCCL passes: the offsets of x86-64 and aarch64 (LP64). */
_Static_assert(offsetof(struct pccl_descr_v5, coll.parent_group) == 104, "v5 coll");
_Static_assert(offsetof(struct pccl_descr_v5, p2p.parent_group) == 64, "v5 p2p");
_Static_assert(offsetof(struct pccl_descr_v5, proxy_op.chunk_size) == 40, "v5 proxy op");
_Static_assert(offsetof(struct pccl_descr_v5, kernel_ch.ptimer) == 32, "v5 kernel ch");
_Static_assert(offsetof(struct pccl_descr_v5, coll_api.graph_captured) == 64, "v5 coll api");
_Static_assert(offsetof(struct pccl_descr_v4, coll.proto) == 96, "v4 coll");
_Static_assert(offsetof(struct pccl_descr_v3, coll.proto) == 112, "v3 coll");
_Static_assert(offsetof(struct pccl_descr_v2, coll.proto) == 120, "v2 coll");
_Static_assert(offsetof(struct pccl_descr_v3, p2p.peer) == 72, "v3 p2p");

#endif
