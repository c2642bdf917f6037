#include "asys_error.h"

#include <stdarg.h>
#include <stdio.h>

int asys_fail(struct asys_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err)
{
    fprintf(stderr, "%s: cannot %s '%s': %s\n", prog, verb, what,
            err && err->text[0] ? err->text : "unknown error");
}
