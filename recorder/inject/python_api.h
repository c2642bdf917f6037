/* The part of the Python C API the injected library uses (python.c and
 * the function tracer), resolved with dlsym from the interpreter at run
 * time: asys links no libpython, and one build serves every version from
 * 3.8 on.  Only the public API; its types are opaque here, except
 * PyMethodDef, whose layout every version shares. */
#ifndef ASYS_INJECT_PYTHON_API_H
#define ASYS_INJECT_PYTHON_API_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asys_format.h"

typedef struct py_object PyObject;
typedef ssize_t Py_ssize_t;
typedef PyObject *(*py_cfunction)(PyObject *, PyObject *);
struct py_method_def {
    const char *name;
    py_cfunction meth;
    int flags;
    const char *doc;
};
#define PY_METH_NOARGS 0x0004
#define PY_METH_VARARGS 0x0001
#define PY_METH_FASTCALL 0x0080

struct py_api {
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    int (*add_pending_call)(int (*)(void *), void *);
    PyObject *(*sys_get_object)(const char *);
    PyObject *(*call_object)(PyObject *, PyObject *);
    PyObject *(*call)(PyObject *, PyObject *, PyObject *);
    int (*dict_next)(PyObject *, Py_ssize_t *, PyObject **, PyObject **);
    PyObject *(*dict_get_item_string)(PyObject *, const char *);
    PyObject *(*dict_new)(void);
    int (*dict_set_item_string)(PyObject *, const char *, PyObject *);
    PyObject *(*tuple_new)(Py_ssize_t);
    int (*tuple_set_item)(PyObject *, Py_ssize_t, PyObject *); /* steals the item */
    PyObject *(*list_get_item)(PyObject *, Py_ssize_t);
    Py_ssize_t (*list_size)(PyObject *);
    PyObject *(*get_attr)(PyObject *, const char *);
    const char *(*utf8)(PyObject *, Py_ssize_t *);
    long (*as_long)(PyObject *);
    unsigned long (*as_ulong)(PyObject *);
    void (*incref)(PyObject *);
    void (*decref)(PyObject *);
    void (*err_clear)(void);
    PyObject *(*import)(const char *);
    PyObject *(*cfunction_new)(struct py_method_def *, PyObject *, PyObject *);
    const char *(*get_version)(void);
    /* 3.9+: faster than the attributes */
    PyObject *(*frame_back)(PyObject *);
    PyObject *(*frame_code)(PyObject *);
    int (*frame_line)(PyObject *);
    PyObject *none;
    /* --python-backtrace=hggc */
    int (*gil_check)(void); /* PyGILState_Check */
    PyObject *(*eval_get_frame)(void); /* PyEval_GetFrame: borrowed */
    PyObject *(*dict_get_item)(PyObject *, PyObject *); /* PyDict_GetItem: borrowed */
    PyObject *(*long_from_ulong)(unsigned long);
};

/* Fills *a from the running interpreter; 0, or -1 when a required function
 * is missing (the optional ones are left NULL). */
int asys_python_api_resolve(struct py_api *a);

/* The UTF-8 text of str object `v` (or of attribute `name` of `o`) into
 * `out`, cut to fit; its length (0, error cleared, when there is none). */
size_t asys_python_text(const struct py_api *a, PyObject *v, char *out, size_t size);
size_t asys_python_attr_text(const struct py_api *a, PyObject *o, const char *name, char *out,
                             size_t size);

/* A PYTHON_STATUS record in the calling thread's segment (python.c). */
void asys_python_write_status(enum asys_python_status status, uint32_t version, const char *text);

/* Function tracing (python_trace.c).  init: at process start, once the API
 * is resolved: 1 when a spec is given (ASYS_PYTHON_TRACE_RULES), 0 when
 * none, -1 when it cannot trace; start: once, with the GIL held, when the
 * interpreter is up (the sampler's first turn). */
int asys_python_trace_init(const struct py_api *api, uint32_t version_hex);
void asys_python_trace_start(void);

#endif
