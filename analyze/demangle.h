/* Kernel names for reports: C++ demangling (the C++ runtime's own
 * __cxa_demangle, so names read as the compiler's toolchain writes them) and
 * the base name kernels are grouped by. */
#ifndef ASYS_DEMANGLE_H
#define ASYS_DEMANGLE_H

#include <stddef.h>

/* What follows the name of a function inlined into its caller, in the
 * frames of a call stack (perf report --inline's spelling). */
#define ASYS_INLINED_SUFFIX " (inlined)"

/* The demangled form of `mangled` (malloc'd; an inlined frame's suffix
 * kept), or NULL when it is not a mangled C++ name (plain C names stay as
 * they are). */
char *asys_demangle(const char *mangled);

/* The name without return type and parameter list (kernels group by it):
 * "void ns::scale<float>(float*)" -> "ns::scale<float>".
 * Writes at most `size` bytes (NUL included) and returns the length. */
size_t asys_base_name(const char *demangled, char *out, size_t size);

#endif
