/* Known event counts for the event sampling tests: touches 4096 new pages
 * (at least 4096 page faults) and sleeps 50 times (at least 50 context
 * switches), in the process or, with "child", in a child it waits for. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int work(void)
{
    size_t size = 4096u * 4096u;
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < size; i += 4096)
        p[i] = 1;
    munmap(p, size);
    struct timespec pause = {0, 2000000};
    for (int i = 0; i < 50; i++)
        nanosleep(&pause, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(work());
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return work();
}
