#include "asys_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The chain in one line, outermost cause first; an elided middle shows as "...". */
static void render(struct asys_err *err)
{
    size_t used = 0, room = sizeof err->text;
    err->text[0] = '\0';
    for (unsigned i = err->cause_count; i-- > 0;) {
        const char *sep = used ? ": " : "";
        if (i == ASYS_ERR_CAUSES - 2 && err->causes_elided) {
            used += (size_t)snprintf(err->text + used, room - used, "%s...", sep);
            sep = ": ";
        }
        used +=
            (size_t)snprintf(err->text + used, room - used, "%s%s", sep, err->causes[i].message);
        if (used >= room)
            break; /* cannot happen: text holds every cause whole */
    }
}

static void set_message(struct asys_err_cause *c, const char *module, int line, const char *fmt,
                        va_list ap)
{
    c->module = module;
    c->line = line;
    int n = vsnprintf(c->message, sizeof c->message, fmt, ap);
    if (n >= (int)sizeof c->message) /* say that the message was cut */
        memcpy(c->message + sizeof c->message - 4, "...", 4);
}

/* The root cause: a new chain. */
static int set(struct asys_err *err, int kind, int errnum, const char *module, int line,
               const char *fmt, va_list ap)
{
    if (err) {
        err->cause_count = 1;
        err->causes_elided = 0;
        set_message(&err->causes[0], module, line, fmt, ap);
        err->kind = kind;
        err->sys_errno = errnum;
        render(err);
    }
    return -1;
}

void asys_err_clear(struct asys_err *err)
{
    if (!err)
        return;
    err->cause_count = err->causes_elided = 0;
    err->kind = err->sys_errno = 0;
    err->text[0] = '\0';
}

int asys_fail_at(struct asys_err *err, const char *module, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(err, ASYS_ERR_FAILED, 0, module, line, fmt, ap);
    va_end(ap);
    return -1;
}

int asys_fail_kind_at(struct asys_err *err, enum asys_err_kind kind, const char *module, int line,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set(err, (int)kind, 0, module, line, fmt, ap);
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

int asys_fail_errno_at(struct asys_err *err, int errnum, const char *module, int line,
                       const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    set(err, (int)asys_err_kind_of_errno(errnum), errnum, module, line, fmt, ap);
    va_end(ap);
    struct asys_err_cause *root = &err->causes[0];
    size_t used = strlen(root->message);
    /* one wording for ENOSPC, EDQUOT and EFBIG, which a full disk gives alike */
    const char *reason =
        err->kind == ASYS_ERR_NO_SPACE ? "no space left on device" : strerror(errnum);
    snprintf(root->message + used, sizeof root->message - used, "%s%s", used ? ": " : "", reason);
    render(err);
    return -1;
}

int asys_err_wrap_at(struct asys_err *err, const char *module, int line, const char *fmt, ...)
{
    if (!err)
        return -1;
    if (err->cause_count == ASYS_ERR_CAUSES) { /* the outermost slot is reused */
        err->cause_count--;
        err->causes_elided++;
    }
    va_list ap;
    va_start(ap, fmt);
    set_message(&err->causes[err->cause_count++], module, line, fmt, ap);
    va_end(ap);
    if (!err->kind)
        err->kind = ASYS_ERR_FAILED;
    render(err);
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

/* "analyze/import.c" of "/src/asys/analyze/import.c": where in the tree */
static const char *short_module(const char *path)
{
    const char *last = strrchr(path, '/');
    if (!last)
        return path;
    const char *p = last;
    while (p > path && p[-1] != '/')
        p--;
    return p > path ? p : path;
}

void asys_err_print_causes(FILE *out, const struct asys_err *err)
{
    if (!err)
        return;
    for (unsigned i = err->cause_count; i-- > 0;) {
        const struct asys_err_cause *c = &err->causes[i];
        fprintf(out, "  %s:%d: %s\n", c->module ? short_module(c->module) : "?", c->line,
                c->message);
        if (i == ASYS_ERR_CAUSES - 1 && err->causes_elided)
            fprintf(out, "  (%u more)\n", err->causes_elided);
    }
}

void asys_err_print(const char *prog, const char *verb, const char *what,
                    const struct asys_err *err)
{
    fprintf(stderr, "%s: cannot %s '%s': %s\n", prog, verb, what,
            err && err->text[0] ? err->text : "unknown error");
    if (err && getenv("ASYS_DEBUG"))
        asys_err_print_causes(stderr, err);
}
