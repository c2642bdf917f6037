/* fork and exec: the children are traced too.
 * usage: hgtx_fork EXEC_PROGRAM [ARGS...]
 * The parent records "parent" ranges; a fork child uses the parent's
 * registered string and domain; a second child execs EXEC_PROGRAM.
 * HGTX_FORK_TITLE=same rewrites the arguments in place before the fork
 * (setproctitle's way), =long also the NUL after the last one; the fork
 * child prints "cmdline HEX" of /proc/self/cmdline as it reads then. */
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_cmdline(void)
{
    unsigned char buf[4096];
    ssize_t n = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (fd >= 0)
        n = read(fd, buf, sizeof buf);
    printf("cmdline ");
    for (ssize_t i = 0; i < n; i++)
        printf("%02x", buf[i]);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    nvtxDomainHandle_t dom = nvtxDomainCreateA("forkdom");
    nvtxStringHandle_t inherited = nvtxDomainRegisterStringA(dom, "inherited-name");
    nvtxRangePushA("parent");
    const char *title = getenv("HGTX_FORK_TITLE");
    char *last_nul = argv[argc - 1] + strlen(argv[argc - 1]);
    if (title)
        memset(argv[0], 'T', strlen(argv[0]));
    if (title && !strcmp(title, "long"))
        *last_nul = 'Y';
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
        print_cmdline();
        _exit(0);
    }
    *last_nul = '\0'; /* the exec below gets its arguments as they were */
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
