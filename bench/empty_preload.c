/* A preloaded library with nothing in it: what loading any one more library
 * costs a process (bench/processes.py, --only process_cost). */
int asys_bench_empty_preload(void);

int asys_bench_empty_preload(void)
{
    return 0;
}
