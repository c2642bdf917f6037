/* A library whose unwind tables are in .debug_frame only (built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables -g): the CPU sampling
 * unwinder must still find its frames (test_unwind). */
__attribute__((noinline)) int debug_frame_only(int x)
{
    volatile int v = x;
    return v * 3 + 1;
}
