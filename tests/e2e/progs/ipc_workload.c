/* CUDA IPC in the style of NVIDIA's simpleIPC (tests/e2e/test_driver_api.py):
 * the parent allocates device memory and an interprocess event, passes their
 * handles to a child it starts (its own program, "child HEX HEX"), which opens
 * both, sets the memory, records the event, copies the bytes back and closes
 * the mapping.  Opening a handle in the process that made it fails, as in
 * CUDA.  Prints "done" at the end. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BYTES (1u << 20)

#define CHECK(call) \
    do { \
        cudaError_t rc_ = (call); \
        if (rc_ != cudaSuccess) { \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)rc_); \
            exit(1); \
        } \
    } while (0)

static void to_hex(const void *bytes, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", ((const unsigned char *)bytes)[i]);
}

static int from_hex(const char *in, void *bytes, size_t n)
{
    if (strlen(in) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(in + 2 * i, "%2x", &v) != 1)
            return -1;
        ((unsigned char *)bytes)[i] = (unsigned char)v;
    }
    return 0;
}

static int child(const char *mem_hex, const char *event_hex)
{
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t event_handle;
    if (from_hex(mem_hex, &mem, sizeof mem) ||
        from_hex(event_hex, &event_handle, sizeof event_handle))
        return 2;
    void *p = NULL;
    cudaEvent_t event;
    CHECK(cudaIpcOpenMemHandle(&p, mem, cudaIpcMemLazyEnablePeerAccess));
    CHECK(cudaIpcOpenEventHandle(&event, event_handle));
    CHECK(cudaMemset(p, 0x5a, BYTES));
    CHECK(cudaEventRecord(event, 0));
    CHECK(cudaEventSynchronize(event));
    unsigned char *back = malloc(BYTES);
    CHECK(cudaMemcpy(back, p, BYTES, cudaMemcpyDeviceToHost));
    int ok = back[0] == 0x5a && back[BYTES - 1] == 0x5a;
    free(back);
    CHECK(cudaIpcCloseMemHandle(p));
    CHECK(cudaEventDestroy(event));
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "child"))
        return child(argv[2], argv[3]);
    void *p = NULL;
    cudaEvent_t event;
    CHECK(cudaMalloc(&p, BYTES));
    CHECK(cudaEventCreateWithFlags(&event, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t event_handle;
    CHECK(cudaIpcGetMemHandle(&mem, p));
    CHECK(cudaIpcGetEventHandle(&event_handle, event));
    void *self = NULL;
    if (cudaIpcOpenMemHandle(&self, mem, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess) {
        fprintf(stderr, "opened its own handle\n");
        return 1;
    }
    char mem_hex[2 * sizeof mem + 1], event_hex[2 * sizeof event_handle + 1];
    to_hex(&mem, sizeof mem, mem_hex);
    to_hex(&event_handle, sizeof event_handle, event_hex);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", mem_hex, event_hex, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child failed (status %d)\n", status);
        return 1;
    }
    CHECK(cudaEventDestroy(event));
    CHECK(cudaFree(p));
    printf("done\n");
    return 0;
}
