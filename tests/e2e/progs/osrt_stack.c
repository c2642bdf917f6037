/* A blocking call two named functions deep, for the call stack tests.  Built
 * twice: with and without frame pointers. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int wait_in_named_function(int ms)
{
    int rc = usleep((useconds_t)ms * 1000);
    return rc + 1; /* no tail call: this frame stays on the stack */
}

__attribute__((noinline)) int outer_named_function(int ms)
{
    int rc = wait_in_named_function(ms);
    return rc * 2;
}

int main(void)
{
    int r = outer_named_function(120);
    printf("%d\n", r);
    return r - 2;
}
