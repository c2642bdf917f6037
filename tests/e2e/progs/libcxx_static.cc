// A library that carries its own C++ runtime (linked -static-libstdc++), as
// Python wheels and vendor plugins do: opened with dlopen by a C program,
// nothing in the global scope defines operator new/delete.  Each call uses
// every kind of operator once and throws and catches an exception (the
// runtime's own allocator for it).
#include <new>
#include <stdexcept>

struct alignas(64) Wide {
    char bytes[64];
};

extern "C" int cxx_static_work(int round)
{
    int *one = new int(round);
    int *many = new int[16];
    many[3] = *one;
    int *quiet = new (std::nothrow) int(2);
    Wide *wide = new Wide;
    wide->bytes[0] = 1;
    int sum = *one + many[3] + *quiet + wide->bytes[0];
    delete wide;
    delete quiet;
    delete[] many;
    delete one;
    try {
        throw std::runtime_error("caught inside the library");
    } catch (const std::exception &) {
        sum += 1;
    }
    return sum;
}
