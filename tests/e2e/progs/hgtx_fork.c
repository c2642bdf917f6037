/* fork and exec: the children are traced too.
 * usage: hgtx_fork EXEC_PROGRAM [ARGS...]
 * The parent records "parent" ranges; a fork child uses the parent's
 * registered string and domain; a second child execs EXEC_PROGRAM. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    nvtxDomainHandle_t dom = nvtxDomainCreateA("forkdom");
    nvtxStringHandle_t inherited = nvtxDomainRegisterStringA(dom, "inherited-name");
    nvtxRangePushA("parent");
    pid_t child = fork();
    if (child == 0) {
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof a);
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = inherited;
        for (int i = 0; i < 4; i++) {
            nvtxDomainRangePushEx(dom, &a);
            usleep(1000);
            nvtxDomainRangePop(dom);
        }
        nvtxRangePushA("child-own");
        nvtxRangePop();
        _exit(0);
    }
    pid_t execed = fork();
    if (execed == 0) {
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int s1, s2;
    waitpid(child, &s1, 0);
    waitpid(execed, &s2, 0);
    nvtxRangePop();
    printf("children %d %d\n", s1, s2); /* raw statuses: a crash would show */
    return s1 || s2;
}
