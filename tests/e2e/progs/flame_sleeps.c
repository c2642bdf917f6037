/* Known call-stack weights for the flame outputs: 80 ms of sleeping in
 * slow_path and 20 ms in fast_path, both called through middle, in 10 ms
 * steps (each an OS runtime call with its stack). */
#include <time.h>

/* A macro: the sleeping call's caller is slow_path or fast_path itself (an
 * inlined helper would be a frame of its own, as perf --inline shows it). */
#define nap_ms(ms) \
    do { \
        struct timespec ts_ = {0, (ms)*1000000L}; \
        nanosleep(&ts_, NULL); \
    } while (0)

__attribute__((noinline)) void slow_path(void)
{
    for (int i = 0; i < 8; i++)
        nap_ms(10);
}

__attribute__((noinline)) void fast_path(void)
{
    for (int i = 0; i < 2; i++)
        nap_ms(10);
}

__attribute__((noinline)) void middle(int slow)
{
    if (slow)
        slow_path();
    else
        fast_path();
    __asm__ volatile("" ::: "memory"); /* no tail call: middle stays on the stack */
}

int main(void)
{
    middle(1);
    middle(0);
    return 0;
}
