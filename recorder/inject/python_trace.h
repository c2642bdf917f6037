/* Python function tracing, shared by the tracer (python_trace.c: rules,
 * per-thread call stacks, records, sys.monitoring on 3.12+) and the
 * function wrappers used before 3.12 (python_wrap.c).  Everything here runs
 * with the GIL held. */
#ifndef ASYS_INJECT_PYTHON_TRACE_H
#define ASYS_INJECT_PYTHON_TRACE_H

#include <stdint.h>

#include "python_api.h"

#define ASYS_PY_TARGET_DOMAINS 4

/* A traced function: the domains its ranges go to, and its name. */
struct asys_py_target {
    uint8_t domain_count;
    uint8_t registered; /* its domains are, in this process image */
    uint8_t domains[ASYS_PY_TARGET_DOMAINS];
    char *name; /* "module.qualname" */
    uint32_t name_len;
    uint32_t message; /* its string id ... */
    struct asys_thread *message_thread; /* ... defined in this thread's segment */
    struct asys_py_target *next; /* the wrappers' targets (python_trace.c's list) */
};

/* Whether a rule may name functions of module `module` (the wrappers look
 * into it). */
int asys_py_trace_wants(const char *module);

/* The target for function `qualname` of module `module`, owned by the
 * tracer until asys_py_target_free; NULL when no rule names it. */
struct asys_py_target *asys_py_target_new(const char *module, const char *qualname);
void asys_py_target_free(struct asys_py_target *t);

/* A call of `t` starts: 1 when it is on the thread's stack under `key`
 * (asys_py_call_ends must follow, on this thread), 0 when not recorded. */
int asys_py_call_starts(const void *key, struct asys_py_target *t);
void asys_py_call_ends(const void *key);

/* python_wrap.c: wraps the named functions of the modules imported from now
 * on and of those already imported; 0, or -1 with a reason in `why`. */
int asys_py_wrap_start(const struct py_api *api, const char **why);

#endif
