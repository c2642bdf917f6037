/* Known call-stack weights for the flame outputs: 80 ms of sleeping in
 * slow_path and 20 ms in fast_path, both called through middle, in 10 ms
 * steps (each an OS runtime call with its stack). */
#include <time.h>

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

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
