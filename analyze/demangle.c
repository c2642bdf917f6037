#include "demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the Itanium C++ ABI entry point). */
char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *asys_demangle(const char *mangled)
{
    if (!mangled || strncmp(mangled, "_Z", 2) != 0)
        return NULL;
    /* an inlined function's frame: "MANGLED (inlined)" */
    size_t len = strlen(mangled), mark = strlen(ASYS_INLINED_SUFFIX);
    int inlined = len > mark && !strcmp(mangled + len - mark, ASYS_INLINED_SUFFIX);
    char *name = inlined ? strndup(mangled, len - mark) : NULL;
    if (inlined && !name)
        return NULL;
    int status = 0;
    char *text = __cxa_demangle(inlined ? name : mangled, NULL, NULL, &status);
    free(name);
    if (status != 0 || !text) {
        free(text);
        return NULL;
    }
    if (!inlined)
        return text;
    size_t n = strlen(text) + mark + 1;
    char *with = malloc(n);
    if (with)
        snprintf(with, n, "%s%s", text, ASYS_INLINED_SUFFIX);
    free(text);
    return with;
}

static int opens(char c)
{
    return c == '(' || c == '<' || c == '[' || c == '{';
}

static int closes(char c)
{
    return c == ')' || c == '>' || c == ']' || c == '}';
}

/* Index of the bracket that opens the group closed at `end` (text[end] closes). */
static size_t group_start(const char *text, size_t end)
{
    int depth = 0;
    for (size_t i = end + 1; i-- > 0;) {
        if (closes(text[i]))
            depth++;
        else if (opens(text[i]) && --depth == 0)
            return i;
    }
    return 0;
}

/* Drops trailing cv/ref qualifiers of a member function: " const", " &&"... */
static size_t strip_qualifiers(const char *text, size_t n)
{
    static const char *const qualifiers[] = {" const", " volatile", " &&", " &", " noexcept"};
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < sizeof qualifiers / sizeof qualifiers[0]; i++) {
            size_t q = strlen(qualifiers[i]);
            if (n > q && !memcmp(text + n - q, qualifiers[i], q)) {
                n -= q;
                again = 1;
            }
        }
    }
    return n;
}

size_t asys_base_name(const char *demangled, char *out, size_t size)
{
    size_t n = strip_qualifiers(demangled, strlen(demangled));
    if (n && demangled[n - 1] == ')') /* the parameter list */
        n = group_start(demangled, n - 1);
    /* after the return type: the last space outside brackets (not "operator new") */
    size_t begin = 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = demangled[i];
        if (opens(c))
            depth++;
        else if (closes(c))
            depth--;
        else if (depth == 0 && c == ' ' && !(i >= 8 && !memcmp(demangled + i - 8, "operator", 8)))
            begin = i + 1;
    }
    if (begin >= n) /* nothing left: keep what there is */
        begin = 0;
    size_t length = n - begin;
    if (size) {
        size_t copy = length < size - 1 ? length : size - 1;
        memcpy(out, demangled + begin, copy);
        out[copy] = '\0';
    }
    return length;
}
