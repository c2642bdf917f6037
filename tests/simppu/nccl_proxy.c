/* simppu libnccl.so.2: the proxy thread of a communicator (NCCL's progress
 * thread, src/proxy.cc and src/transport/net.cc as 2.28 drives the
 * profiler).  It takes the plans the host posts, appends their ops (ProxyOp
 * start), waits for the plan's kernel to start on the simulated device,
 * then per task: KernelCh start on its channels (the GPU timer: the
 * kernel's simulated time as CLOCK_REALTIME ns), the network ops' steps
 * (at most NCCL_STEPS posted and not done per op, the ops of all channels
 * progressed round-robin), KernelCh stop at the task's simulated end.
 * ProxyCtrl events mark sleeping, waking, appending and idle/active. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "nccl_internal.h"

/* One network op of a task: a send or receive on one channel. */
struct op {
    struct task *task;
    int channel, is_send, peer, steps;
    void *handle;
    int posted, received, transmitted, done;
    int in_progress;
    void *step[NCCL_STEPS];
};

static void ctrl_event(struct ncclComm *c, int state, int appended, void **keep)
{
    /* ncclProfilerStartProxyCtrlEvent: per event, from the current mask */
    void *h = NULL;
    if (nccl_profiler &&
        (__atomic_load_n(&nccl_profiler_mask, __ATOMIC_RELAXED) & PCCL_EV_PROXY_CTRL)) {
        struct pccl_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = PCCL_EV_PROXY_CTRL;
        nccl_profiler->start(c->profiler_ctx, &h, &d);
    }
    if (h && state) {
        union pccl_state_args_v4 a;
        memset(&a, 0, sizeof a);
        a.proxy_ctrl.appended = appended;
        nccl_profiler->record(h, state, &a);
    }
    if (keep)
        *keep = h;
    else if (h)
        nccl_profiler->stop(h);
}

static void ctrl_record_stop(void *h, int state, int appended)
{
    if (!h || !nccl_profiler)
        return;
    union pccl_state_args_v4 a;
    memset(&a, 0, sizeof a);
    a.proxy_ctrl.appended = appended;
    nccl_profiler->record(h, state, &a);
    nccl_profiler->stop(h);
}

static void step_state(struct op *o, int step, int state, size_t trans_size)
{
    void *h = o->step[step % NCCL_STEPS];
    if (nccl_profiler && o->handle && h) { /* NCCL checks the op's handle too */
        union pccl_state_args_v4 a;
        memset(&a, 0, sizeof a);
        a.proxy_step.trans_size = trans_size;
        nccl_profiler->record(h, state, &a);
    }
}

static void net_event(struct ncclComm *c, struct op *o, int step)
{
    void *parent = o->step[step % NCCL_STEPS];
    if (!nccl_profiler || !parent || !(o->task->mask & PCCL_EV_NET))
        return;
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.type = PCCL_EV_NET;
    d.parent = parent;
    d.rank = c->rank;
    d.net.id = (int64_t)((1u << 16) | 1); /* NCCL_PROFILER_NET_TYPE_IB, version 1 */
    void *h = NULL;
    nccl_profiler->start(c->profiler_ctx, &h, &d);
    if (h) {
        union pccl_state_args_v4 a;
        memset(&a, 0, sizeof a);
        nccl_profiler->record(h, PCCL_ST_NET_UPDATE, &a);
        nccl_profiler->stop(h);
    }
}

/* One pass of an op's progress (sendProxyProgress / recvProxyProgress);
 * 1 when it did something. */
static int progress_steps(struct ncclComm *c, struct op *o);

static int progress(struct ncclComm *c, struct op *o)
{
    if (o->done == o->steps)
        return 0;
    if (!o->in_progress) {
        o->in_progress = 1;
        if (nccl_profiler && o->handle)
            nccl_profiler->record(o->handle, PCCL_ST_PROXY_OP_IN_PROGRESS, NULL);
    }
    nccl_bucket = BUCKET_STEP;
    int rc = progress_steps(c, o);
    nccl_bucket = BUCKET_PROXY;
    if (o->done == o->steps && nccl_profiler && o->handle) {
        nccl_profiler->stop(o->handle);
        o->handle = NULL;
    }
    return rc;
}

static int progress_steps(struct ncclComm *c, struct op *o)
{
    const struct task *t = o->task;
    if (o->posted < o->steps && o->posted < o->done + NCCL_STEPS) {
        void **h = &o->step[o->posted % NCCL_STEPS];
        *h = NULL;
        if (nccl_profiler && (t->mask & (PCCL_EV_PROXY_STEP | PCCL_EV_NET))) {
            struct pccl_descr_v5 d;
            memset(&d, 0, sizeof d);
            d.type = PCCL_EV_PROXY_STEP;
            d.parent = o->handle;
            d.rank = c->rank;
            d.proxy_step.step = o->posted;
            nccl_profiler->start(c->profiler_ctx, h, &d);
        }
        step_state(o, o->posted, o->is_send ? PCCL_ST_STEP_SEND_GPU_WAIT : PCCL_ST_STEP_RECV_WAIT,
                   0);
        o->posted++;
        return 1;
    }
    if (o->is_send && o->transmitted < o->posted) {
        step_state(o, o->transmitted, PCCL_ST_STEP_SEND_PEER_WAIT, 0);
        if (nccl_settings.net_events)
            net_event(c, o, o->transmitted);
        step_state(o, o->transmitted, PCCL_ST_STEP_SEND_WAIT, (size_t)t->step_bytes);
        o->transmitted++;
        return 1;
    }
    if (!o->is_send && o->received < o->posted) {
        if (nccl_settings.net_events)
            net_event(c, o, o->received);
        step_state(o, o->received, PCCL_ST_STEP_RECV_FLUSH_WAIT, (size_t)t->step_bytes);
        o->received++;
        return 1;
    }
    if (!o->is_send && o->transmitted < o->received) {
        step_state(o, o->transmitted, PCCL_ST_STEP_RECV_GPU_WAIT, (size_t)t->step_bytes);
        o->transmitted++;
        return 1;
    }
    if (o->done < o->transmitted) {
        void **h = &o->step[o->done % NCCL_STEPS];
        if (nccl_profiler && *h)
            nccl_profiler->stop(*h);
        *h = NULL;
        o->done++;
        return 1;
    }
    return 0;
}

/* The ops of a plan: per task, per channel, a send and a receive. */
static struct op *plan_ops(struct plan *p, int *count)
{
    int n = 0;
    for (int i = 0; i < p->ntasks; i++)
        n += p->tasks[i].channels * ((p->tasks[i].send_steps > 0) + (p->tasks[i].recv_steps > 0));
    struct op *ops = calloc(n ? (size_t)n : 1, sizeof *ops);
    if (!ops)
        return NULL;
    n = 0;
    for (int i = 0; i < p->ntasks; i++) {
        struct task *t = &p->tasks[i];
        for (int ch = t->channel0; ch < t->channel0 + t->channels; ch++) {
            if (t->send_steps > 0)
                ops[n++] = (struct op){.task = t,
                                       .channel = ch,
                                       .is_send = 1,
                                       .peer = t->send_peer,
                                       .steps = t->send_steps};
            if (t->recv_steps > 0)
                ops[n++] = (struct op){.task = t,
                                       .channel = ch,
                                       .is_send = 0,
                                       .peer = t->recv_peer,
                                       .steps = t->recv_steps};
        }
    }
    *count = n;
    return ops;
}

/* ProxyAppend: each op's ProxyOp event starts when the proxy takes it. */
static void append(struct ncclComm *c, struct op *ops, int count)
{
    static pid_t pid; /* NCCL keeps the pid it loaded the plugin in */
    if (!pid)
        pid = getpid();
    void *ctrl = NULL;
    ctrl_event(c, PCCL_ST_CTRL_APPEND, 0, &ctrl);
    for (int i = 0; i < count; i++) {
        struct op *o = &ops[i];
        o->handle = NULL;
        if (!nccl_profiler ||
            !(o->task->mask & (PCCL_EV_PROXY_OP | PCCL_EV_PROXY_STEP | PCCL_EV_NET)))
            continue;
        struct pccl_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = PCCL_EV_PROXY_OP;
        d.parent = o->task->handle;
        d.rank = c->rank;
        d.proxy_op.pid = pid;
        d.proxy_op.channel = (uint8_t)o->channel;
        d.proxy_op.peer = o->peer;
        d.proxy_op.steps = o->steps;
        d.proxy_op.chunk_size = o->task->step_bytes;
        d.proxy_op.is_send = o->is_send;
        nccl_profiler->start(c->profiler_ctx, &o->handle, &d);
    }
    ctrl_record_stop(ctrl, PCCL_ST_CTRL_APPEND_END, count);
}

static uint64_t gpu_timer(uint64_t monotonic_ns)
{
    return (uint64_t)((int64_t)monotonic_ns + nccl_settings.realtime_offset_ns);
}

static void run_plan(struct ncclComm *c, struct plan *p)
{
    int count = 0;
    struct op *ops = plan_ops(p, &count);
    if (ops)
        append(c, ops, count);
    pthread_mutex_lock(&c->lock);
    while (!p->decided)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
    uint64_t start = p->start_ns ? p->start_ns : nccl_now_ns();
    ctrl_event(c, PCCL_ST_CTRL_ACTIVE, 0, NULL);
    void *kernel_ch[MAX_CHANNELS];
    for (int i = 0; i < p->ntasks; i++) {
        struct task *t = &p->tasks[i];
        uint64_t t_start = start + t->offset_ns, t_end = t_start + t->duration_ns;
        nccl_sleep_until(t_start);
        for (int ch = 0; ch < t->channels; ch++) {
            kernel_ch[ch] = NULL;
            if (!nccl_profiler || !(t->mask & PCCL_EV_KERNEL_CH))
                continue;
            struct pccl_descr_v5 d;
            memset(&d, 0, sizeof d);
            d.type = PCCL_EV_KERNEL_CH;
            d.parent = t->handle;
            d.kernel_ch.channel = (uint8_t)(t->channel0 + ch);
            d.kernel_ch.ptimer = gpu_timer(t_start);
            nccl_profiler->start(c->profiler_ctx, &kernel_ch[ch], &d);
        }
        for (int busy = 1; busy && ops;) {
            busy = 0;
            for (int k = 0; k < count; k++)
                if (ops[k].task == t)
                    busy |= progress(c, &ops[k]);
        }
        nccl_sleep_until(t_end);
        for (int ch = 0; ch < t->channels; ch++) {
            if (!kernel_ch[ch])
                continue;
            union pccl_state_args_v4 a;
            memset(&a, 0, sizeof a);
            a.kernel_ch.ptimer = gpu_timer(t_end);
            nccl_profiler->record(kernel_ch[ch], PCCL_ST_KERNEL_CH_STOP, &a);
            nccl_profiler->stop(kernel_ch[ch]);
        }
    }
    if (p->end_ns)
        nccl_sleep_until(p->end_ns);
    free(ops);
}

static void *proxy_main(void *arg)
{
    struct ncclComm *c = arg;
    char name[24];
    snprintf(name, sizeof name, "NCCL Progress%2d", c->device % 100);
    name[15] = '\0'; /* a thread name's limit */
    prctl(PR_SET_NAME, name);
    nccl_bucket = BUCKET_PROXY;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        if (!c->head && !c->stop) {
            void *ctrl = NULL;
            pthread_mutex_unlock(&c->lock);
            ctrl_event(c, PCCL_ST_CTRL_SLEEP, 0, &ctrl);
            pthread_mutex_lock(&c->lock);
            while (!c->head && !c->stop)
                pthread_cond_wait(&c->cond, &c->lock);
            pthread_mutex_unlock(&c->lock);
            ctrl_record_stop(ctrl, PCCL_ST_CTRL_WAKEUP, 0);
            pthread_mutex_lock(&c->lock);
        }
        struct plan *p = c->head;
        if (!p) { /* stopping, and nothing left */
            pthread_mutex_unlock(&c->lock);
            break;
        }
        c->head = p->next;
        if (!c->head)
            c->tail = NULL;
        c->busy = 1;
        pthread_mutex_unlock(&c->lock);
        run_plan(c, p);
        if (!c->head)
            ctrl_event(c, PCCL_ST_CTRL_IDLE, 0, NULL);
        plan_release(p);
        pthread_mutex_lock(&c->lock);
        c->busy = 0;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

int proxy_start(struct ncclComm *c)
{
    if (pthread_create(&c->proxy, NULL, proxy_main, c) != 0)
        return -1;
    c->proxy_running = 1;
    return 0;
}

void proxy_post(struct ncclComm *c, struct plan *p)
{
    pthread_mutex_lock(&c->lock);
    p->next = NULL;
    if (c->tail)
        c->tail->next = p;
    else
        c->head = p;
    c->tail = p;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

void proxy_drain(struct ncclComm *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->head || c->busy)
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

void proxy_stop(struct ncclComm *c)
{
    if (!c->proxy_running)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->proxy, NULL);
    c->proxy_running = 0;
}
