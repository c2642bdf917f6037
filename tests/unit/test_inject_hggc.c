/* The HGGC collector in-process (under the sanitizers of this build), driven
 * by simppu: the test is the CUDA program, links simppu's libcudart.so.13,
 * calls InitializeInjection as the driver would, and reads back the records
 * of every segment of its process. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "inject.h"
#include "segment_stream.h"
#include "test_util.h"

int InitializeInjection(void);

/* What every segment of this process holds, by record type. */
struct tally {
    unsigned by_type[ASYS_REC_TYPE_COUNT];
    unsigned status[8];
    char status_message[256];
    int api_failures;
};

static void tally_segment(const char *path, struct tally *t)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    fstat(fd, &st);
    struct asys_segment_stream s;
    struct asys_err err;
    ck_assert_int_eq(asys_segment_stream_open(&s, asys_read_fd, &fd, (uint64_t)st.st_size, &err),
                     0);
    struct asys_record rec;
    while (asys_segment_stream_next(&s, &rec, &err) > 0) {
        t->by_type[rec.type]++;
        if (rec.type == ASYS_REC_HGGC_STATUS && rec.arg < 8) {
            const struct asys_rec_hggc_status *r = (const void *)rec.data;
            t->status[rec.arg]++;
            snprintf(t->status_message, sizeof t->status_message, "%.*s", (int)r->message_length,
                     (const char *)(r + 1));
        }
        if (rec.type == ASYS_REC_HGGC_API &&
            ((const struct asys_rec_hggc_api *)(const void *)rec.data)->result != 0)
            t->api_failures++;
    }
    asys_segment_stream_close(&s);
    close(fd);
}

static void tally_process(struct tally *t)
{
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* reading is not traced */
    memset(t, 0, sizeof *t);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "p%d-", (int)getpid());
    DIR *d = opendir(asys_proc.segment_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s%s", asys_proc.segment_dir, e->d_name);
        tally_segment(path, t);
    }
    closedir(d);
    asys_tls_busy = was_busy;
}

#define CHECK_CUDA(call) ck_assert_int_eq((int)(call), (int)cudaSuccess)

/* A little of everything, then a context reset (CUPTI flushes there). */
static void small_workload(void)
{
    void *device = NULL, *pinned = NULL;
    char pageable[4096];
    memset(pageable, 1, sizeof pageable);
    cudaStream_t stream;
    cudaEvent_t event;
    CHECK_CUDA(cudaMalloc(&device, sizeof pageable));
    CHECK_CUDA(cudaMallocHost(&pinned, sizeof pageable));
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&event));
    CHECK_CUDA(cudaMemcpy(device, pageable, sizeof pageable, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpyAsync(pinned, device, sizeof pageable, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaMemsetAsync(device, 0, sizeof pageable, stream));
    CHECK_CUDA(cudaEventRecord(event, stream));
    CHECK_CUDA(cudaStreamWaitEvent(NULL, event, 0));
    CHECK_CUDA(cudaEventSynchronize(event));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    ck_assert_int_ne((int)cudaMalloc(&device, (size_t)1 << 62), (int)cudaSuccess);
    CHECK_CUDA(cudaFreeHost(pinned));
    CHECK_CUDA(cudaStreamDestroy(stream));
    CHECK_CUDA(cudaDeviceReset());
}

START_TEST(records_every_kind_through_cupti)
{
    ck_assert_int_eq(InitializeInjection(), 1);
    ck_assert_int_eq(InitializeInjection(), 1); /* idempotent */
    small_workload();
    struct tally t;
    tally_process(&t);
    ck_assert_uint_eq(t.status[ASYS_HGGC_ATTACHED], 1);
    ck_assert_uint_ge(t.by_type[ASYS_REC_HGGC_API], 14);
    ck_assert_int_eq(t.api_failures, 1);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_MEMCPY], 2);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_MEMSET], 1);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_EVENT_RECORD], 1);
    ck_assert_uint_ge(t.by_type[ASYS_REC_HGGC_SYNC], 3);
    ck_assert_uint_ge(t.by_type[ASYS_REC_HGGC_MEMORY], 3);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_DEVICE], 1);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_CONTEXT], 1);
    ck_assert_uint_ge(t.by_type[ASYS_REC_HGGC_STREAM], 1);
}
END_TEST

START_TEST(buffers_completed_inside_asys_are_kept)
{
    ck_assert_int_eq(InitializeInjection(), 1);
    void *device = NULL;
    CHECK_CUDA(cudaMalloc(&device, 4096));
    CHECK_CUDA(cudaMemset(device, 0, 4096));
    /* CUPTI completes a buffer while this thread is inside asys (as from a
     * signal handler): the buffer waits and is converted by the next flush */
    asys_tls_busy = 1;
    cuptiActivityFlushAll(0);
    asys_tls_busy = 0;
    struct tally t;
    tally_process(&t);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_MEMSET], 0);
    CHECK_CUDA(cudaDeviceReset()); /* flushes, and takes the waiting buffer along */
    tally_process(&t);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_MEMSET], 1);
}
END_TEST

START_TEST(subscriber_taken_by_another_tool)
{
    setenv("SIMPPU_CUPTI_BUSY", "1", 1);
    ck_assert_int_eq(InitializeInjection(), 1);
    small_workload();
    struct tally t;
    tally_process(&t);
    ck_assert_uint_eq(t.status[ASYS_HGGC_SUBSCRIBER_BUSY], 1);
    ck_assert_ptr_nonnull(strstr(t.status_message, "MULTIPLE_SUBSCRIBERS"));
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_API], 0);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_MEMCPY], 0);
}
END_TEST

START_TEST(no_cupti_library)
{
    setenv("ASYS_CUPTI_LIB", "/nonexistent/libcupti.so.13", 1);
    ck_assert_int_eq(InitializeInjection(), 1);
    small_workload(); /* the program runs on, untraced */
    struct tally t;
    tally_process(&t);
    ck_assert_uint_eq(t.status[ASYS_HGGC_CUPTI_UNAVAILABLE], 1);
    ck_assert_ptr_nonnull(strstr(t.status_message, "/nonexistent/libcupti.so.13"));
}
END_TEST

START_TEST(collector_off)
{
    asys_proc.features &= ~(uint64_t)ASYS_FEATURE_HGGC;
    ck_assert_int_eq(InitializeInjection(), 1);
    small_workload();
    struct tally t;
    tally_process(&t);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_STATUS], 0);
    ck_assert_uint_eq(t.by_type[ASYS_REC_HGGC_API], 0);
}
END_TEST

int main(int argc, char **argv)
{
    (void)argc;
    int status = test_run_in_session(argv, "hggc");
    if (status >= 0)
        return status;
    setenv("ASYS_CUPTI_LIB", SIMPPU_CUPTI_PATH, 0);
    Suite *s = suite_create("inject_hggc");
    TCase *tc = tcase_create("inject_hggc");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, records_every_kind_through_cupti);
    tcase_add_test(tc, buffers_completed_inside_asys_are_kept);
    tcase_add_test(tc, subscriber_taken_by_another_tool);
    tcase_add_test(tc, no_cupti_library);
    tcase_add_test(tc, collector_off);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
