/* Code with functions inlined into others, in blocks and nested (built -O2 -g):
 * test_cu_scopes compares the inline chains read from its DWARF. */
static inline __attribute__((always_inline)) int square(int x)
{
    return x * x;
}

static inline __attribute__((always_inline)) int sum_squares(const int *v, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        int sq = square(v[i]);
        s += sq > 100 ? sq / 3 : sq;
    }
    return s;
}

__attribute__((noinline)) int inlines_entry(const int *v, int n)
{
    int total = 0;
    for (int round = 0; round < 3; round++) {
        int part = sum_squares(v, n - round);
        if (part & 1) {
            int odd = square(part % 7);
            total += odd;
        }
        total += part;
    }
    return total;
}
