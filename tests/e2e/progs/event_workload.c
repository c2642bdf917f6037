/* Known event counts for the event sampling tests: touches 4096 new pages
 * (at least 4096 page faults) and sleeps 50 times (at least 50 context
 * switches), in the process or, with "child", in a child it waits for.
 * Prints "faults MINOR MAJOR", the kernel's own count of the faults it and
 * its child had (getrusage), which the counters must agree with. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

static void print_faults(void)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    printf("faults %ld %ld\n", self.ru_minflt + children.ru_minflt,
           self.ru_majflt + children.ru_majflt);
}

int main(int argc, char **argv)
{
    int rc;
    if (argc > 1 && !strcmp(argv[1], "child")) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(work());
        int status = 0;
        waitpid(pid, &status, 0);
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    } else {
        rc = work();
    }
    print_faults();
    return rc;
}
