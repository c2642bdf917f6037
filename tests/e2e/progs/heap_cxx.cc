// C++ allocations for the heap tracing tests: 100 new/delete, 50 new[]/delete[]
// (sized delete included), 10 nothrow new, 10 aligned new, all freed, in cxx_site.
#include <cstddef>
#include <new>

struct alignas(64) Aligned {
    char bytes[64];
};

__attribute__((noinline)) void cxx_site()
{
    for (int i = 0; i < 100; i++) {
        int *volatile p = new int[1]{i};
        (void)p;
        delete[] p;
    }
    for (int i = 0; i < 100; i++) {
        double *volatile p = new double(i);
        delete p;
    }
    for (int i = 0; i < 50; i++) {
        char *volatile p = new char[100 + i];
        delete[] p;
    }
    for (int i = 0; i < 10; i++) {
        long *volatile p = new (std::nothrow) long(i);
        delete p;
    }
    for (int i = 0; i < 10; i++) {
        Aligned *volatile p = new Aligned;
        delete p;
    }
}

int main()
{
    cxx_site();
    return 0;
}
