/* Copies stdin to stdout with a prefix, writes to stderr, exits with argv[1]. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char buf[4096];
    size_t n, total = 0;
    fputs("out:", stdout);
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        fwrite(buf, 1, n, stdout);
        total += n;
    }
    fprintf(stderr, "err:%zu\n", total);
    return argc > 1 ? atoi(argv[1]) : 0;
}
