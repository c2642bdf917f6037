/* dlopen_cxx LIBRARY ROUNDS: a C program (no C++ runtime of its own) that
 * opens a library carrying a static C++ runtime and calls it ROUNDS times;
 * prints the checksum, which is the same with and without asys. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dlopen_cxx LIBRARY ROUNDS\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_cxx: %s\n", dlerror());
        return 2;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "cxx_static_work");
    if (!work) {
        fprintf(stderr, "dlopen_cxx: %s\n", dlerror());
        return 2;
    }
    long rounds = atol(argv[2]), sum = 0;
    for (long i = 0; i < rounds; i++)
        sum += work((int)(i % 7));
    printf("checksum %ld\n", sum);
    dlclose(lib);
    return 0;
}
