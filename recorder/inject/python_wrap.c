/* Python function tracing before 3.12: the functions the rules name are
 * replaced by wrappers, so untraced code runs exactly as without asys.
 *
 *   - A meta-path finder (Python code below, run once per interpreter) sees
 *     each import of a module the rules may name.  It lets the other finders
 *     find the module and wraps its loader, whose exec_module runs the real
 *     one and then wraps the module's functions and its classes' methods
 *     (static and class methods, property accessors), before the importer
 *     can bind any of them; module.__loader__ and __spec__.loader are the
 *     real loader again before the module runs.  Modules already imported
 *     when tracing starts are wrapped at once (the names they handed out
 *     earlier keep the functions themselves).
 *   - Which functions are traced is decided here, in C (asys_py_target_new,
 *     the rules of python_trace.c); Python only proposes the functions
 *     defined in the module (their __module__ is its name).  Generator and
 *     coroutine functions are left alone: calling one only creates it.
 *   - A wrapper is an object of a type made at run time with
 *     PyType_FromSpec: its call reports the start and the end around the
 *     wrapped call (vectorcall where the interpreter exports
 *     PyObject_Vectorcall, 3.11, else tp_call); it binds as a method like a
 *     function does; its attributes are the function's (name, qualname,
 *     module, doc, code, __dict__, __class__...), __wrapped__ is the function
 *     (inspect.signature follows it) and it pickles by qualified name, like
 *     the function it replaces.
 * Nested functions and lambdas, created at run time, cannot be wrapped:
 * 3.12+'s sys.monitoring traces them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "python_api.h"
#include "python_trace.h"

/* The stable ABI's type creation (Include/object.h, typeslots.h, structmember.h) */
struct py_type_slot {
    int slot;
    void *pfunc;
};
struct py_type_spec {
    const char *name;
    int basicsize;
    int itemsize;
    unsigned int flags;
    struct py_type_slot *slots;
};
struct py_member_def {
    const char *name;
    int type;
    Py_ssize_t offset;
    int flags;
    const char *doc;
};
#define PY_TP_ALLOC 47
#define PY_TP_CALL 50
#define PY_TP_DEALLOC 52
#define PY_TP_DESCR_GET 54
#define PY_TP_GETATTRO 58
#define PY_TP_METHODS 64
#define PY_TP_REPR 66
#define PY_TP_SETATTRO 69
#define PY_TP_MEMBERS 72
#define PY_TP_FREE 74
#define PY_T_OBJECT_EX 16
#define PY_T_PYSSIZET 19
#define PY_READONLY 1
#define PY_TPFLAGS_HAVE_VECTORCALL (1u << 11)
#define PY_TPFLAGS_METHOD_DESCRIPTOR (1u << 17)
#define PY_TPFLAGS_HAVE_VERSION_TAG (1u << 18) /* Py_TPFLAGS_DEFAULT */
#define PY_FILE_INPUT 257

typedef PyObject *(*py_vectorcall)(PyObject *, PyObject *const *, size_t, PyObject *);

/* After the object header (object.__basicsize__: 16 bytes, more in a
 * Py_TRACE_REFS build). */
struct wrapper_fields {
    PyObject *function; /* a reference */
    struct asys_py_target *target;
    py_vectorcall vectorcall; /* tp_vectorcall_offset points here */
};

static struct {
    const struct py_api *api;
    size_t header;
    PyObject *type;
    PyObject *(*alloc)(PyObject *, Py_ssize_t);
    void (*free)(void *);
    PyObject *(*type_from_spec)(struct py_type_spec *);
    void *(*type_get_slot)(PyObject *, int);
    PyObject *(*get_attr)(PyObject *, PyObject *);
    int (*set_attr)(PyObject *, PyObject *, PyObject *);
    PyObject *(*generic_get_attr)(PyObject *, PyObject *);
    PyObject *(*repr)(PyObject *);
    PyObject *(*method_new)(PyObject *, PyObject *);
    py_vectorcall vectorcall; /* PyObject_Vectorcall, exported from 3.11 on */
    PyObject *(*run_string)(const char *, int, PyObject *, PyObject *);
    PyObject *(*bool_from)(long);
    PyObject *(*text_from)(const char *);
} wr;

static inline struct wrapper_fields *fields(PyObject *o)
{
    return (struct wrapper_fields *)(void *)((char *)o + wr.header);
}

/* ---- the wrapper type -------------------------------------------------------------------- */

static PyObject *wrapper_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    struct wrapper_fields *f = fields(self);
    int started = asys_py_call_starts(self, f->target);
    PyObject *result = wr.api->call(f->function, args, kwargs);
    if (started)
        asys_py_call_ends(self);
    return result;
}

static PyObject *wrapper_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames)
{
    struct wrapper_fields *f = fields(self);
    int started = asys_py_call_starts(self, f->target);
    PyObject *result = wr.vectorcall(f->function, args, nargsf, kwnames);
    if (started)
        asys_py_call_ends(self);
    return result;
}

/* Binds like a function: the wrapper itself from the class, a method from an instance. */
static PyObject *wrapper_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == wr.api->none) {
        wr.api->incref(self);
        return self;
    }
    return wr.method_new(self, obj);
}

/* The wrapper's own attributes; every other is the function's. */
static int own_attribute(PyObject *name)
{
    static const char *const own[] = {"__wrapped__",      "__reduce__",  "__reduce_ex__",
                                      "__getattribute__", "__setattr__", "__delattr__",
                                      "__call__",         "__get__"};
    Py_ssize_t len = 0;
    const char *text = wr.api->utf8(name, &len);
    if (!text) {
        wr.api->err_clear();
        return 1; /* not a str: the generic lookup says what is wrong */
    }
    if (len < 4 || text[0] != '_' || text[1] != '_')
        return 0;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!strcmp(text, own[i]))
            return 1;
    return 0;
}

static PyObject *wrapper_getattro(PyObject *self, PyObject *name)
{
    if (own_attribute(name))
        return wr.generic_get_attr(self, name);
    return wr.get_attr(fields(self)->function, name);
}

static int wrapper_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    return wr.set_attr(fields(self)->function, name, value);
}

static PyObject *wrapper_repr(PyObject *self)
{
    return wr.repr(fields(self)->function);
}

/* pickle: a global found by the function's qualified name (the module's
 * attribute is this wrapper). */
static PyObject *wrapper_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return wr.api->get_attr(fields(self)->function, "__qualname__");
}

static void wrapper_dealloc(PyObject *self)
{
    struct wrapper_fields *f = fields(self);
    PyObject *type = wr.type;
    if (f->function)
        wr.api->decref(f->function);
    if (f->target)
        asys_py_target_free(f->target);
    wr.free(self);
    wr.api->decref(type); /* an instance of a heap type holds a reference to it */
}

static struct py_method_def wrapper_methods[] = {
    {"__reduce__", wrapper_reduce, PY_METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static int make_type(void)
{
    static struct py_member_def members[3];
    static struct py_type_slot slots[11];
    int with_vectorcall = wr.vectorcall != NULL;
    members[0] = (struct py_member_def){
        "__wrapped__", PY_T_OBJECT_EX,
        (Py_ssize_t)(wr.header + offsetof(struct wrapper_fields, function)), PY_READONLY, NULL};
    members[1] = (struct py_member_def){
        "__vectorcalloffset__", PY_T_PYSSIZET,
        (Py_ssize_t)(wr.header + offsetof(struct wrapper_fields, vectorcall)), PY_READONLY, NULL};
    if (!with_vectorcall)
        members[1] = (struct py_member_def){NULL, 0, 0, 0, NULL};
    size_t n = 0;
    slots[n++] = (struct py_type_slot){PY_TP_CALL, (void *)wrapper_call};
    slots[n++] = (struct py_type_slot){PY_TP_DESCR_GET, (void *)wrapper_get};
    slots[n++] = (struct py_type_slot){PY_TP_GETATTRO, (void *)wrapper_getattro};
    slots[n++] = (struct py_type_slot){PY_TP_SETATTRO, (void *)wrapper_setattro};
    slots[n++] = (struct py_type_slot){PY_TP_REPR, (void *)wrapper_repr};
    slots[n++] = (struct py_type_slot){PY_TP_DEALLOC, (void *)wrapper_dealloc};
    slots[n++] = (struct py_type_slot){PY_TP_METHODS, wrapper_methods};
    slots[n++] = (struct py_type_slot){PY_TP_MEMBERS, members};
    slots[n] = (struct py_type_slot){0, NULL};
    struct py_type_spec spec = {"asys.traced_function",
                                (int)(wr.header + sizeof(struct wrapper_fields)), 0,
                                PY_TPFLAGS_HAVE_VERSION_TAG | PY_TPFLAGS_METHOD_DESCRIPTOR |
                                    (with_vectorcall ? PY_TPFLAGS_HAVE_VECTORCALL : 0),
                                slots};
    wr.type = wr.type_from_spec(&spec); /* kept for good */
    if (!wr.type)
        return -1;
    *(void **)&wr.alloc = wr.type_get_slot(wr.type, PY_TP_ALLOC);
    *(void **)&wr.free = wr.type_get_slot(wr.type, PY_TP_FREE);
    return wr.alloc && wr.free ? 0 : -1;
}

/* ---- what Python calls ------------------------------------------------------------------- */

/* _wrap(function, module, qualname): a wrapper when a rule names it, else the function. */
static PyObject *wrap_function(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    const struct py_api *a = wr.api;
    char module[256], qualname[512];
    if (n != 3) {
        a->incref(a->none);
        return a->none;
    }
    PyObject *function = args[0];
    struct asys_py_target *target = NULL;
    PyObject *wrapper = NULL;
    if (asys_python_text(a, args[1], module, sizeof module) &&
        asys_python_text(a, args[2], qualname, sizeof qualname))
        target = asys_py_target_new(module, qualname);
    if (target)
        wrapper = wr.alloc(wr.type, 0);
    if (!wrapper) {
        if (target)
            asys_py_target_free(target);
        a->err_clear();
        a->incref(function);
        return function;
    }
    struct wrapper_fields *f = fields(wrapper);
    a->incref(function);
    f->function = function;
    f->target = target;
    f->vectorcall = wr.vectorcall ? wrapper_vectorcall : NULL;
    return wrapper;
}

/* _wants(module): whether a rule may name its functions. */
static PyObject *wants_module(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    char module[256];
    int wanted = n == 1 && asys_python_text(wr.api, args[0], module, sizeof module) &&
                 asys_py_trace_wants(module);
    return wr.bool_from(wanted);
}

static const char import_hook[] =
    "import sys\n"
    "_function = type(lambda: None)\n"
    "_LAZY = 0x20 | 0x80 | 0x100 | 0x200  # generators, coroutines: a call only makes them\n"
    "\n"
    "def _wrapped(f, module):\n"
    "    if type(f) is not _function or getattr(f, '__module__', None) != module:\n"
    "        return f\n"
    "    if f.__code__.co_flags & _LAZY:\n"
    "        return f\n"
    "    return _wrap(f, module, f.__qualname__)\n"
    "\n"
    "def _wrapped_member(m, module):\n"
    "    t = type(m)\n"
    "    if t is _function:\n"
    "        return _wrapped(m, module)\n"
    "    if t is staticmethod or t is classmethod:\n"
    "        w = _wrapped(m.__func__, module)\n"
    "        return m if w is m.__func__ else t(w)\n"
    "    if t is property:\n"
    "        parts = (m.fget, m.fset, m.fdel)\n"
    "        new = tuple(p if p is None else _wrapped(p, module) for p in parts)\n"
    "        if all(p is q for p, q in zip(parts, new)):\n"
    "            return m\n"
    "        return property(*new, m.__doc__)\n"
    "    return m\n"
    "\n"
    "def _defined_class(value, module, qualname):\n"
    "    return (issubclass(type(value), type) and\n"
    "            value.__dict__.get('__module__') == module and\n"
    "            getattr(value, '__qualname__', None) == qualname)\n"
    "\n"
    "def _wrap_class(cls, module, seen):\n"
    "    if id(cls) in seen:\n"
    "        return\n"
    "    seen.add(id(cls))\n"
    "    for key, member in list(cls.__dict__.items()):\n"
    "        try:\n"
    "            if _defined_class(member, module, cls.__qualname__ + '.' + key):\n"
    "                _wrap_class(member, module, seen)\n"
    "                continue\n"
    "            new = _wrapped_member(member, module)\n"
    "            if new is not member:\n"
    "                setattr(cls, key, new)\n"
    "        except Exception:\n"
    "            pass\n"
    "\n"
    "def _wrap_module(mod):\n"
    "    try:\n"
    "        d = vars(mod)\n"
    "        name = d.get('__name__')\n"
    "        if type(name) is not str or not _wants(name):\n"
    "            return\n"
    "    except Exception:\n"
    "        return\n"
    "    seen = set()\n"
    "    for key, value in list(d.items()):\n"
    "        try:\n"
    "            if _defined_class(value, name, key):\n"
    "                _wrap_class(value, name, seen)\n"
    "                continue\n"
    "            new = _wrapped_member(value, name)\n"
    "            if new is not value:\n"
    "                d[key] = new\n"
    "        except Exception:\n"
    "            pass\n"
    "\n"
    "class _Loader:\n"
    "    def __init__(self, loader):\n"
    "        self._asys_loader = loader\n"
    "\n"
    "    def __getattr__(self, name):\n"
    "        if name == '_asys_loader':  # not set up (a copy): no recursion\n"
    "            raise AttributeError(name)\n"
    "        return getattr(self._asys_loader, name)\n"
    "\n"
    "    def create_module(self, spec):\n"
    "        create = getattr(self._asys_loader, 'create_module', None)\n"
    "        return create(spec) if create is not None else None\n"
    "\n"
    "    def exec_module(self, module):\n"
    "        loader = self._asys_loader\n"
    "        spec = getattr(module, '__spec__', None)\n"
    "        if spec is not None and spec.loader is self:\n"
    "            spec.loader = loader\n"
    "        if getattr(module, '__loader__', None) is self:\n"
    "            module.__loader__ = loader\n"
    "        loader.exec_module(module)\n"
    "        _wrap_module(module)\n"
    "\n"
    "class _Finder:\n"
    "    def __init__(self):\n"
    "        self._busy = set()\n"
    "\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name in self._busy or not _wants(name):\n"
    "            return None\n"
    "        self._busy.add(name)\n"
    "        try:\n"
    "            spec = None\n"
    "            for finder in sys.meta_path:\n"
    "                find = getattr(finder, 'find_spec', None)\n"
    "                if finder is not self and find is not None:\n"
    "                    spec = find(name, path, target)\n"
    "                    if spec is not None:\n"
    "                        break\n"
    "        finally:\n"
    "            self._busy.discard(name)\n"
    "        if spec is not None and hasattr(spec.loader, 'exec_module'):\n"
    "            spec.loader = _Loader(spec.loader)\n"
    "        return spec\n"
    "\n"
    "sys.meta_path.insert(0, _Finder())\n"
    "for _module in list(sys.modules.values()):\n"
    "    _wrap_module(_module)\n"
    "del _module\n";

static struct py_method_def wrap_def, wants_def;

/* Runs import_hook in a namespace of its own holding _wrap and _wants. */
static int install_import_hook(void)
{
    const struct py_api *a = wr.api;
    int rc = -1;
    PyObject *globals = a->dict_new();
    PyObject *builtins = globals ? a->import("builtins") : NULL;
    wrap_def = (struct py_method_def){"_wrap", (py_cfunction)(void (*)(void))wrap_function,
                                      PY_METH_FASTCALL, NULL};
    wants_def = (struct py_method_def){"_wants", (py_cfunction)(void (*)(void))wants_module,
                                       PY_METH_FASTCALL, NULL};
    PyObject *wrap = builtins ? a->cfunction_new(&wrap_def, NULL, NULL) : NULL;
    PyObject *wants = wrap ? a->cfunction_new(&wants_def, NULL, NULL) : NULL;
    PyObject *name = wants ? wr.text_from("asys") : NULL;
    if (name && a->dict_set_item_string(globals, "__builtins__", builtins) == 0 &&
        a->dict_set_item_string(globals, "__name__", name) == 0 &&
        a->dict_set_item_string(globals, "_wrap", wrap) == 0 &&
        a->dict_set_item_string(globals, "_wants", wants) == 0) {
        PyObject *r = wr.run_string(import_hook, PY_FILE_INPUT, globals, globals);
        if (r) {
            a->decref(r);
            rc = 0;
        }
    }
    PyObject *owned[] = {name, wants, wrap, builtins, globals}; /* the hook keeps what it needs */
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (owned[i])
            a->decref(owned[i]);
    a->err_clear();
    return rc;
}

#define RESOLVE(field, symbol) (*(void **)&wr.field = dlsym(RTLD_DEFAULT, symbol))

int asys_py_wrap_start(const struct py_api *api, const char **why)
{
    wr.api = api;
    int resolved =
        RESOLVE(type_from_spec, "PyType_FromSpec") && RESOLVE(type_get_slot, "PyType_GetSlot") &&
        RESOLVE(get_attr, "PyObject_GetAttr") && RESOLVE(set_attr, "PyObject_SetAttr") &&
        RESOLVE(generic_get_attr, "PyObject_GenericGetAttr") && RESOLVE(repr, "PyObject_Repr") &&
        RESOLVE(method_new, "PyMethod_New") && RESOLVE(run_string, "PyRun_String") &&
        RESOLVE(bool_from, "PyBool_FromLong") && RESOLVE(text_from, "PyUnicode_FromString");
    RESOLVE(vectorcall, "PyObject_Vectorcall");
    PyObject *object_type = dlsym(RTLD_DEFAULT, "PyBaseObject_Type");
    PyObject *basicsize =
        resolved && object_type ? api->get_attr(object_type, "__basicsize__") : NULL;
    long header = basicsize ? api->as_long(basicsize) : -1;
    if (basicsize)
        api->decref(basicsize);
    api->err_clear();
    if (!resolved || header < 16 || header > 64 || header % 8) {
        *why = "the interpreter lacks a C API function the function wrappers use";
        return -1;
    }
    wr.header = (size_t)header;
    if (make_type() != 0) {
        api->err_clear();
        *why = "the function wrappers' type could not be made";
        return -1;
    }
    if (install_import_hook() != 0) {
        *why = "the import hook could not be set";
        return -1;
    }
    return 0;
}
