/* The PCCL collector in-process: the test plays NCCL, calling the plugin
 * tables libasys-inject.so exports (ncclProfiler_v5 .. _v2) as NCCL's
 * loader would, and reads back what the segments hold.  Hostile calls
 * (stale and foreign handles, unknown types, a context NCCL never got)
 * are counted, never fatal.  Runs under the sanitizers of the unit tests. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "inject.h"
#include "pccl_abi.h"
#include "segment_stream.h"
#include "test_util.h"

extern const struct pccl_plugin_v5 ncclProfiler_v5;
extern const struct pccl_plugin_v4 ncclProfiler_v4;
extern const struct pccl_plugin_v3 ncclProfiler_v3;

/* ---- reading back: every PCCL record of this process ---- */
#define MAX_RECORDS 512
struct record {
    unsigned type, arg;
    uint8_t data[128];
};
struct seen {
    struct record r[MAX_RECORDS];
    int count;
};

static void read_all(struct seen *out)
{
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    memset(out, 0, sizeof *out);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "p%d-", (int)getpid());
    DIR *d = opendir(asys_proc.segment_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s%s", asys_proc.segment_dir, e->d_name);
        int fd = open(path, O_RDONLY);
        struct stat st;
        fstat(fd, &st);
        struct asys_segment_stream s;
        struct asys_err err;
        ck_assert_int_eq(
            asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, &err), 0);
        struct asys_record rec;
        while (asys_segment_stream_next(&s, &rec, &err) > 0 && out->count < MAX_RECORDS) {
            if (rec.type < ASYS_REC_PCCL_COMM || rec.type > ASYS_REC_PCCL_STATUS)
                continue;
            struct record *r = &out->r[out->count++];
            r->type = rec.type;
            r->arg = rec.arg;
            memcpy(r->data, rec.data, rec.size < sizeof r->data ? rec.size : sizeof r->data);
        }
        asys_segment_stream_close(&s);
        close(fd);
    }
    closedir(d);
    asys_tls_busy = was_busy;
}

static int count_type(const struct seen *s, unsigned type)
{
    int n = 0;
    for (int i = 0; i < s->count; i++)
        n += s->r[i].type == type;
    return n;
}

static const void *find(const struct seen *s, unsigned type, int nth)
{
    for (int i = 0; i < s->count; i++)
        if (s->r[i].type == type && nth-- == 0)
            return s->r[i].data;
    return NULL;
}

/* ---- NCCL's side ---- */
static void *start5(void *ctx, uint64_t type, void *parent, struct pccl_descr_v5 *d)
{
    d->type = type;
    d->parent = parent;
    void *h = (void *)1; /* the plugin must set it */
    ck_assert_int_eq(ncclProfiler_v5.start(ctx, &h, d), PCCL_SUCCESS);
    return h;
}

START_TEST(v5_events_and_their_parents)
{
    void *ctx = NULL;
    int mask = 0;
    ck_assert_int_eq(ncclProfiler_v5.init(&ctx, 0xabcdefull, &mask, "world", 1, 2, 1, NULL), 0);
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(mask, PCCL_EVENTS_V5);
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    void *group_api = start5(ctx, PCCL_EV_GROUP_API, NULL, &d);
    ncclProfiler_v5.record(group_api, PCCL_ST_GROUP_START_API_STOP, NULL);
    memset(&d, 0, sizeof d);
    d.coll_api.func = "AllReduce";
    d.coll_api.datatype = "ncclFloat32";
    d.coll_api.count = 1024;
    void *coll_api = start5(ctx, PCCL_EV_COLL_API, group_api, &d);
    ncclProfiler_v5.stop(coll_api);
    memset(&d, 0, sizeof d);
    void *group = start5(ctx, PCCL_EV_GROUP, NULL, &d);
    memset(&d, 0, sizeof d);
    d.rank = 1;
    d.coll.func = "AllReduce";
    d.coll.datatype = "ncclFloat32";
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    d.coll.count = 1024;
    d.coll.seq = 7;
    d.coll.channels = 2;
    d.coll.parent_group = group;
    void *coll = start5(ctx, PCCL_EV_COLL, coll_api, &d); /* its CollApi: already stopped */
    ncclProfiler_v5.stop(coll);
    ncclProfiler_v5.stop(group);
    memset(&d, 0, sizeof d);
    d.proxy_op.channel = 3;
    d.proxy_op.steps = 1;
    d.proxy_op.is_send = 1;
    d.proxy_op.peer = 0;
    void *op = start5(ctx, PCCL_EV_PROXY_OP, coll, &d); /* its Coll: stopped too */
    memset(&d, 0, sizeof d);
    d.proxy_step.step = 0;
    void *step = start5(ctx, PCCL_EV_PROXY_STEP, op, &d);
    union pccl_state_args_v4 a;
    memset(&a, 0, sizeof a);
    a.proxy_step.trans_size = 4096;
    ncclProfiler_v5.record(step, PCCL_ST_STEP_SEND_GPU_WAIT, &a);
    ncclProfiler_v5.record(step, PCCL_ST_STEP_SEND_PEER_WAIT, &a);
    ncclProfiler_v5.record(step, PCCL_ST_STEP_SEND_WAIT, &a);
    ncclProfiler_v5.stop(step);
    ncclProfiler_v5.stop(op);
    ncclProfiler_v5.record(group_api, PCCL_ST_GROUP_END_API_START, NULL);
    ncclProfiler_v5.stop(group_api);
    ncclProfiler_v5.finalize(ctx);

    struct seen s;
    read_all(&s);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_COMM), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_GROUP_API), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_CALL), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_TASK), 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_COMM_END), 1);
    const struct asys_rec_pccl_comm *c = find(&s, ASYS_REC_PCCL_COMM, 0);
    ck_assert_uint_eq(c->comm_hash, 0xabcdef);
    ck_assert_int_eq(c->rank, 1);
    ck_assert_int_eq(c->nranks, 2);
    const struct asys_rec_pccl_call *coll_api_rec = find(&s, ASYS_REC_PCCL_CALL, 0);
    const struct asys_rec_pccl_group_api *group_api_rec = find(&s, ASYS_REC_PCCL_GROUP_API, 0);
    ck_assert_uint_eq(coll_api_rec->ev.parent_id, group_api_rec->ev.event_id);
    ck_assert_uint_eq(coll_api_rec->count, 1024);
    ck_assert_uint_ne(group_api_rec->start_stop_delta, 0);
    ck_assert_uint_ge(group_api_rec->end_start_delta, group_api_rec->start_stop_delta);
    const struct asys_rec_pccl_task *task = find(&s, ASYS_REC_PCCL_TASK, 0);
    const struct asys_rec_pccl_group *g = find(&s, ASYS_REC_PCCL_GROUP, 0);
    ck_assert_uint_eq(task->ev.parent_id, coll_api_rec->ev.event_id);
    ck_assert_uint_eq(task->group_id, g->ev.event_id);
    ck_assert_uint_eq(task->seq_number, 7);
    ck_assert_int_eq(task->rank, 1);
    const struct asys_rec_pccl_proxy_op *o = find(&s, ASYS_REC_PCCL_PROXY_OP, 0);
    ck_assert_uint_eq(o->ev.parent_id, task->ev.event_id);
    const struct asys_rec_pccl_proxy_step *st = find(&s, ASYS_REC_PCCL_PROXY_STEP, 0);
    ck_assert_uint_eq(st->op_id, o->ev.event_id);
    ck_assert_uint_eq(st->channel, 3);
    ck_assert_uint_eq(st->is_send, 1);
    ck_assert_uint_eq(st->trans_size, 4096);
    for (int i = 0; i < 3; i++) /* GPU wait, peer wait, send wait: in that order */
        ck_assert_uint_ne(st->state_delta[i], 0);
    ck_assert_uint_le(st->state_delta[0], st->state_delta[1]);
    ck_assert_uint_le(st->state_delta[1], st->state_delta[2]);
    ck_assert_uint_eq(o->ev.event_id >> ASYS_PCCL_COMM_SHIFT, c->comm);
    const struct asys_rec_pccl_comm_end *end = find(&s, ASYS_REC_PCCL_COMM_END, 0);
    ck_assert_uint_eq(end->events, 6);
    ck_assert_uint_eq(end->finalized, 1);
    ck_assert_uint_eq(end->dropped_bad_handle + end->dropped_unknown + end->dropped_no_slot, 0);
}
END_TEST

START_TEST(hostile_calls_are_counted)
{
    void *ctx = NULL;
    int mask = 0;
    ck_assert_int_eq(ncclProfiler_v5.init(&ctx, 1, &mask, NULL, 1, 1, 0, NULL), 0);
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    errno = 1234;
    void *h = start5(ctx, PCCL_EV_GROUP, NULL, &d);
    ncclProfiler_v5.stop(h);
    ck_assert_int_eq(errno, 1234);
    ncclProfiler_v5.stop(h); /* twice */
    ncclProfiler_v5.record(h, PCCL_ST_CTRL_IDLE, NULL); /* on a stopped event */
    ck_assert_ptr_null(start5(ctx, (uint64_t)1 << 40, NULL, &d)); /* a type of the future */
    ck_assert_ptr_null(start5(NULL, PCCL_EV_GROUP, NULL, &d)); /* no context */
    ncclProfiler_v5.stop(NULL);
    ncclProfiler_v5.record(NULL, PCCL_ST_CTRL_IDLE, NULL);
    void *ctrl = start5(ctx, PCCL_EV_PROXY_CTRL, NULL, &d);
    ncclProfiler_v5.record(ctrl, PCCL_ST_STEP_SEND_WAIT, NULL); /* a state of another kind */
    void *open = start5(ctx, PCCL_EV_GROUP, NULL, &d); /* never stopped */
    ck_assert_ptr_nonnull(open);
    ncclProfiler_v5.stop(ctrl);
    ck_assert_int_eq(ncclProfiler_v5.finalize(ctx), PCCL_SUCCESS);
    ncclProfiler_v5.finalize(NULL);
    struct seen s;
    read_all(&s);
    const struct asys_rec_pccl_comm_end *end = find(&s, ASYS_REC_PCCL_COMM_END, 0);
    ck_assert_ptr_nonnull(end);
    ck_assert_uint_eq(end->dropped_bad_handle, 2);
    ck_assert_uint_eq(end->dropped_unknown, 2);
    ck_assert_uint_eq(end->unfinished, 1);
    const struct asys_rec_pccl_group *g = find(&s, ASYS_REC_PCCL_GROUP, 1);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(ASYS_REC_ARG(g->header), ASYS_PCCL_UNFINISHED);
    const struct asys_rec_pccl_group *done = find(&s, ASYS_REC_PCCL_GROUP, 0);
    ck_assert_uint_eq(ASYS_REC_ARG(done->header), 0);
}
END_TEST

START_TEST(slots_bound_memory_and_count_drops)
{
    /* ASYS_PCCL_SLOTS=16 (main): the 17th open event gets no slot */
    void *ctx = NULL;
    int mask = 0;
    ck_assert_int_eq(ncclProfiler_v5.init(&ctx, 1, &mask, NULL, 1, 1, 0, NULL), 0);
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    void *open[20];
    int got = 0;
    for (int i = 0; i < 20; i++)
        got += (open[i] = start5(ctx, PCCL_EV_PROXY_CTRL, NULL, &d)) != NULL;
    ck_assert_int_eq(got, 16);
    for (int i = 0; i < 20; i++)
        ncclProfiler_v5.stop(open[i]);
    ck_assert_ptr_nonnull(start5(ctx, PCCL_EV_PROXY_CTRL, NULL, &d)); /* free again */
    ncclProfiler_v5.finalize(ctx);
    struct seen s;
    read_all(&s);
    const struct asys_rec_pccl_comm_end *end = find(&s, ASYS_REC_PCCL_COMM_END, 0);
    ck_assert_uint_eq(end->dropped_no_slot, 4);
    ck_assert_uint_eq(end->unfinished, 1);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_PROXY_CTRL), 17);
}
END_TEST

START_TEST(stale_parents_are_not_misnamed)
{
    /* the host runs ahead: a task's slot is taken again before its proxy op
     * names it; the op must not take the new occupant for its parent */
    void *ctx = NULL;
    int mask = 0;
    ck_assert_int_eq(ncclProfiler_v5.init(&ctx, 1, &mask, NULL, 1, 1, 0, NULL), 0);
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    void *task = start5(ctx, PCCL_EV_COLL, NULL, &d);
    ncclProfiler_v5.stop(task);
    for (int i = 0; i < 16; i++) /* ASYS_PCCL_SLOTS=16: the ring comes round */
        ncclProfiler_v5.stop(start5(ctx, PCCL_EV_GROUP, NULL, &d));
    void *op = start5(ctx, PCCL_EV_PROXY_OP, task, &d);
    ncclProfiler_v5.stop(op);
    ncclProfiler_v5.stop(task); /* a stale handle: counted, not another event's stop */
    ncclProfiler_v5.finalize(ctx);
    struct seen s;
    read_all(&s);
    const struct asys_rec_pccl_proxy_op *o = find(&s, ASYS_REC_PCCL_PROXY_OP, 0);
    ck_assert_uint_eq(o->ev.parent_id, 0);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_GROUP), 16);
    const struct asys_rec_pccl_comm_end *end = find(&s, ASYS_REC_PCCL_COMM_END, 0);
    ck_assert_uint_eq(end->dropped_bad_handle, 1);
    ck_assert_uint_eq(end->events, 18);
}
END_TEST

START_TEST(v4_and_v3_tables)
{
    void *ctx4 = NULL, *ctx3 = NULL;
    int mask = 0;
    ck_assert_int_eq(ncclProfiler_v4.init(&ctx4, &mask, "four", 0x44, 1, 2, 0, NULL), 0);
    ck_assert_int_eq(mask, PCCL_EVENTS_V3);
    ck_assert_int_eq(ncclProfiler_v3.init(&ctx3, &mask), 0);
    /* v4: a Coll's parentObj is its group */
    struct pccl_descr_v4 d4;
    memset(&d4, 0, sizeof d4);
    d4.type = PCCL_EV_GROUP;
    void *group = NULL, *coll = NULL;
    ncclProfiler_v4.start(ctx4, &group, &d4);
    d4.type = PCCL_EV_COLL;
    d4.parent = group;
    d4.coll.func = "Broadcast";
    ncclProfiler_v4.start(ctx4, &coll, &d4);
    ncclProfiler_v4.stop(coll);
    ncclProfiler_v4.stop(group);
    /* v3: the communicator's hash and rank arrive with its first Coll */
    struct pccl_descr_v3 d3;
    memset(&d3, 0, sizeof d3);
    d3.type = PCCL_EV_COLL;
    d3.rank = 3;
    d3.coll.comm_hash = 0x33;
    d3.coll.func = "AllGather";
    void *coll3 = NULL;
    ncclProfiler_v3.start(ctx3, &coll3, &d3);
    ncclProfiler_v3.stop(coll3);
    ncclProfiler_v4.finalize(ctx4);
    ncclProfiler_v3.finalize(ctx3);
    struct seen s;
    read_all(&s);
    ck_assert_int_eq(count_type(&s, ASYS_REC_PCCL_COMM), 3);
    const struct asys_rec_pccl_comm *c4 = find(&s, ASYS_REC_PCCL_COMM, 0);
    const struct asys_rec_pccl_comm *c3 = find(&s, ASYS_REC_PCCL_COMM, 1);
    const struct asys_rec_pccl_comm *late = find(&s, ASYS_REC_PCCL_COMM, 2);
    ck_assert_uint_eq(c4->comm_hash, 0x44);
    ck_assert_uint_eq(c3->comm_hash, 0);
    ck_assert_int_eq(c3->rank, -1);
    ck_assert_uint_eq(late->comm, c3->comm);
    ck_assert_uint_eq(late->comm_hash, 0x33);
    ck_assert_int_eq(late->rank, 3);
    const struct asys_rec_pccl_task *t4 = find(&s, ASYS_REC_PCCL_TASK, 0);
    const struct asys_rec_pccl_group *g = find(&s, ASYS_REC_PCCL_GROUP, 0);
    ck_assert_uint_eq(t4->ev.parent_id, 0);
    ck_assert_uint_eq(t4->group_id, g->ev.event_id);
}
END_TEST

int main(int argc, char **argv)
{
    (void)argc;
    setenv("ASYS_PCCL_SLOTS", "16", 1);
    int status = test_run_in_session(argv, "pccl");
    if (status >= 0)
        return status;
    Suite *s = suite_create("inject_pccl");
    TCase *tc = tcase_create("pccl");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, v5_events_and_their_parents);
    tcase_add_test(tc, hostile_calls_are_counted);
    tcase_add_test(tc, slots_bound_memory_and_count_drops);
    tcase_add_test(tc, stale_parents_are_not_misnamed);
    tcase_add_test(tc, v4_and_v3_tables);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
