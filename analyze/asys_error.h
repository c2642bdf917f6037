/* Error text carried up from library code to the tool, which prints it as
 * `tool: cannot VERB 'file': reason`.  Library code never prints or exits. */
#ifndef ASYS_ERROR_H
#define ASYS_ERROR_H

#include <stddef.h>

struct asys_err {
    char text[512];
};

/* Sets the reason (printf-style); returns -1 so callers can `return asys_fail(...)`. */
int asys_fail(struct asys_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints `prog: cannot VERB 'what': reason` on stderr. */
void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err);

#endif
