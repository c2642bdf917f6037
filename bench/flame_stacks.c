/* Many short OS runtime calls under varied call stacks, for the flame-output
 * benchmark: call i reads one byte of /dev/zero at recursion depth i % 16
 * through one of four leaf functions. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int zero_fd;
static char byte;

#define LEAF(name) \
    __attribute__((noinline)) void name(void) \
    { \
        if (read(zero_fd, &byte, 1) != 1) \
            abort(); \
        __asm__ volatile("" ::: "memory"); \
    }
LEAF(leaf_a)
LEAF(leaf_b)
LEAF(leaf_c)
LEAF(leaf_d)

static void (*const leaves[])(void) = {leaf_a, leaf_b, leaf_c, leaf_d};

__attribute__((noinline)) void descend(int depth, int leaf)
{
    if (depth > 0)
        descend(depth - 1, leaf);
    else
        leaves[leaf]();
    __asm__ volatile("" ::: "memory"); /* no tail call: every level stays on the stack */
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    zero_fd = open("/dev/zero", O_RDONLY);
    if (zero_fd < 0)
        return 1;
    for (long i = 0; i < calls; i++)
        descend((int)(i % 16), (int)(i / 16 % 4));
    printf("%ld\n", calls);
    return 0;
}
