#include "asys_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int set(struct asys_err *err, int kind, int errnum, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        err->kind = kind;
        err->sys_errno = errnum;
    }
    return -1;
}

int asys_fail(struct asys_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(err, ASYS_ERR_FAILED, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int asys_fail_kind(struct asys_err *err, enum asys_err_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(err, (int)kind, 0, fmt, ap);
    va_end(ap);
    return -1;
}

enum asys_err_kind asys_err_kind_of_errno(int errnum)
{
    switch (errnum) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return ASYS_ERR_NO_SPACE;
    case ENOMEM:
        return ASYS_ERR_NOMEM;
    case ENOENT:
    case ENOTDIR:
        return ASYS_ERR_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS:
        return ASYS_ERR_PERMISSION;
    default:
        return ASYS_ERR_IO;
    }
}

int asys_fail_errno(struct asys_err *err, int errnum, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    set(err, (int)asys_err_kind_of_errno(errnum), errnum, fmt, ap);
    va_end(ap);
    size_t used = strlen(err->text);
    /* one wording for ENOSPC, EDQUOT and EFBIG, which a full disk gives alike */
    const char *reason =
        err->kind == ASYS_ERR_NO_SPACE ? "no space left on device" : strerror(errnum);
    snprintf(err->text + used, sizeof err->text - used, "%s%s", used ? ": " : "", reason);
    return -1;
}

int asys_err_wrap(struct asys_err *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char context[sizeof err->text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    /* context first, then ": " and as much of the inner reason as fits */
    size_t clen = strlen(context), ilen = strlen(err->text);
    size_t sep = ilen ? 2 : 0;
    if (clen > sizeof err->text - 1)
        clen = sizeof err->text - 1;
    size_t keep = ilen;
    if (clen + sep + keep > sizeof err->text - 1)
        keep = sizeof err->text - 1 - clen - (clen + sep < sizeof err->text - 1 ? sep : 0);
    if (clen + sep >= sizeof err->text - 1)
        sep = keep = 0;
    memmove(err->text + clen + sep, err->text, keep);
    memcpy(err->text, context, clen);
    if (sep)
        memcpy(err->text + clen, ": ", 2);
    err->text[clen + sep + keep] = '\0';
    if (!err->kind)
        err->kind = ASYS_ERR_FAILED;
    return -1;
}

int asys_exit_code(const struct asys_err *err)
{
    switch (err ? err->kind : ASYS_ERR_FAILED) {
    case ASYS_ERR_NONE:
        return ASYS_EXIT_OK;
    case ASYS_ERR_USAGE:
        return ASYS_EXIT_USAGE;
    default:
        return ASYS_EXIT_FAILURE;
    }
}

int asys_exec_exit_code(const struct asys_err *err)
{
    switch (err ? err->kind : ASYS_ERR_FAILED) {
    case ASYS_ERR_NOT_FOUND:
        return ASYS_EXIT_NOT_FOUND;
    case ASYS_ERR_PERMISSION:
        return ASYS_EXIT_CANNOT_RUN;
    default:
        return asys_exit_code(err);
    }
}

void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err)
{
    fprintf(stderr, "%s: cannot %s '%s': %s\n", prog, verb, what,
            err && err->text[0] ? err->text : "unknown error");
}
