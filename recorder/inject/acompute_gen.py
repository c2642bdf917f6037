#!/usr/bin/env python3
"""Generates the ACDNN/ACBLAS wrappers from the installed cuDNN and cuBLAS headers.

    acompute_gen.py --cc CC --include DIR --out DIR [--only cudnn|cublas]

Parser: the C compiler's own preprocessor (CC -E) expands every macro,
include and #if of the headers exactly as a program that includes them sees
them; a small tokenizer then reads the top-level declarations of the
preprocessed text.  The headers' declarations are plain C prototypes, so
this is enough, and it needs nothing beyond the compiler the build already
uses (pycparser does not take GNU extensions in the system headers; clang's
AST dump needs clang at build time).  The generated file includes the same
headers, so the compiler checks every wrapper against its declaration: a
prototype read wrongly fails the build, it is never wrapped wrongly.

Every function whose name starts with cudnn or cublas and that is declared
in a cudnn*.h or cublas*.h file is either wrapped or listed as not
wrappable (variadic), in the build output and in the generated table.

Outputs in DIR: acompute_api.h (ids, counts), acompute_table.c (names,
libraries, flags, the not-wrappable list), acompute_wrap_GROUP.c (one per
header group: cuDNN, cuBLAS with the legacy API, cuBLASLt, cuBLASXt)."""
import argparse
import os
import re
import subprocess
import sys

# (group, library id, header to include, file-name prefix of the declarations)
GROUPS = [
    ("cudnn", 1, "cudnn.h", "cudnn"),
    ("cublas", 2, "cublas.h", "cublas"),  # the legacy API and cublas_api.h (_v2, _64)
    ("cublaslt", 3, "cublasLt.h", "cublasLt"),
    ("cublasxt", 4, "cublasXt.h", "cublasXt"),
]
LIBRARY_OF_PREFIX = [("cublasLt", 3), ("cublasXt", 4), ("cublas", 2), ("cudnn", 1)]

TOKEN = re.compile(r'\s+|[A-Za-z_]\w*|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|"(?:\\.|[^"\\])*"|'
                   r"'(?:\\.|[^'\\])*'|\.\.\.|->|<<|>>|[^\sA-Za-z_0-9]")
KEYWORDS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "unsigned", "signed",
            "int", "char", "short", "long", "float", "double", "void", "struct", "union", "enum",
            "_Bool", "__int128", "__extension__", "__const"}
HANDLE_TYPES = {"cudnnHandle_t", "cublasHandle_t", "cublasLtHandle_t", "cublasXtHandle_t"}
STATUS_FAIL = {"cudnnStatus_t": "CUDNN_STATUS_NOT_INITIALIZED",
               "cublasStatus_t": "CUBLAS_STATUS_NOT_INITIALIZED"}
NOT_STATUS = {"float", "double", "cuComplex", "cuDoubleComplex", "cuFloatComplex"}


def preprocess(cc, include, header):
    src = "#include <%s>\n" % header
    out = subprocess.run([cc, "-E", "-x", "c", "-I", include, "-"], input=src, text=True,
                         capture_output=True)
    if out.returncode != 0:
        sys.exit("acompute_gen: %s -E of %s failed:\n%s" % (cc, header, out.stderr[-2000:]))
    return out.stdout


def declarations(text):
    """Yields (file, tokens) for each top-level declaration."""
    current = "?"
    tokens, depth_paren, depth_brace, skip_body = [], 0, 0, False
    for line in text.split("\n"):
        if line.startswith("#"):
            m = re.match(r'#\s*(?:line\s+)?\d+\s+"([^"]*)"', line)
            if m:
                current = m.group(1)
            continue
        for m in TOKEN.finditer(line):
            t = m.group(0)
            if t.isspace():
                continue
            if depth_brace:
                if t == "{":
                    depth_brace += 1
                elif t == "}":
                    depth_brace -= 1
                    if depth_brace == 0:
                        tokens.append("}")
                        if skip_body:  # a function body ends the declaration
                            tokens, skip_body = [], False
                continue
            if t == "{":
                depth_brace = 1
                skip_body = depth_paren == 0 and bool(tokens) and tokens[-1] == ")"
                tokens.append("{")
                continue
            if t == "(":
                depth_paren += 1
            elif t == ")":
                depth_paren -= 1
            if t == ";" and depth_paren == 0:
                if tokens:
                    yield current, tokens
                tokens = []
                continue
            tokens.append(t)


def strip_attributes(tokens):
    out, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("__attribute__", "__declspec", "__asm__", "__asm") and i + 1 < len(tokens) \
                and tokens[i + 1] == "(":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += tokens[i] == "("
                depth -= tokens[i] == ")"
                i += 1
                if depth == 0:
                    break
            continue
        if t in ("extern", "__extension__", "__inline", "__inline__", "inline"):
            i += 1
            continue
        out.append(t)
        i += 1
    return out


def split_params(tokens):
    params, cur, depth = [], [], 0
    for t in tokens:
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        if t == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        params.append(cur)
    return params


def join(tokens):
    s = ""
    for t in tokens:
        if s and (re.match(r"\w", t) and re.search(r"\w$", s)):
            s += " "
        elif s and t not in ",)[]" and not s.endswith(("(", "[", "*")):
            s += " "
        s += t
    return s


def param_info(tokens, index, typedefs):
    """(text with a name, name, type text) of one parameter."""
    # a function pointer: ... ( * NAME ) ( ... )
    for i in range(len(tokens) - 2):
        if tokens[i] == "(" and tokens[i + 1] == "*":
            j = i + 2
            while j < len(tokens) and tokens[j] in ("const", "volatile", "__restrict"):
                j += 1
            if j < len(tokens) and re.match(r"[A-Za-z_]\w*$", tokens[j]) and tokens[j + 1] == ")":
                name = tokens[j]
                typ = tokens[:j] + tokens[j + 1:]
                return join(tokens), name, join(typ)
            name = "a%d" % index
            t = tokens[:j] + [name] + tokens[j:]
            return join(t), name, join(tokens)
    base = list(tokens)
    arrays = []
    while base and base[-1] == "]":
        k = len(base) - 1
        while base[k] != "[":
            k -= 1
        arrays = base[k:] + arrays
        base = base[:k]
    last = base[-1] if base else ""
    named = (re.match(r"[A-Za-z_]\w*$", last) and last not in KEYWORDS and last not in typedefs
             and len([t for t in base[:-1] if t not in ("const", "volatile")]) > 0)
    if named:
        name = last
        typ = base[:-1] + (["*"] if arrays else [])
        return join(base + arrays), name, join(typ)
    name = "a%d" % index
    typ = base + (["*"] if arrays else [])
    return join(base + [name] + arrays), name, join(typ)


def collect_typedefs(text):
    names = set()
    for _, toks in declarations(text):
        if toks and toks[0] == "typedef":
            toks = strip_attributes(toks)
            m = None
            for i in range(len(toks) - 2):
                if toks[i] == "(" and toks[i + 1] == "*" and re.match(r"\w+$", toks[i + 2]):
                    m = toks[i + 2]
                    break
            if m is None:
                k = len(toks) - 1
                while k > 0 and toks[k] == "]":
                    while toks[k] != "[":
                        k -= 1
                    k -= 1
                m = toks[k]
            names.add(m)
    return names


def library_of(name):
    for prefix, lib in LIBRARY_OF_PREFIX:
        if name.startswith(prefix):
            return lib
    return 0


def parse_group(cc, include, header, prefix):
    text = preprocess(cc, include, header)
    typedefs = collect_typedefs(text)
    funcs, unwrappable = [], []
    for path, toks in declarations(text):
        base = os.path.basename(path)
        if not (base.startswith("cudnn") or base.startswith("cublas")):
            continue
        if not toks or toks[0] in ("typedef", "static", "struct", "enum", "union"):
            continue
        toks = strip_attributes(toks)
        # NAME ( params ) at the top level, NAME a cudnn/cublas identifier
        for i, t in enumerate(toks):
            if re.match(r"(cudnn|cublas)\w*$", t) and i + 1 < len(toks) and toks[i + 1] == "(" \
                    and i > 0:
                break
        else:
            continue
        name, ret = toks[i], toks[:i]
        depth, j = 0, i + 1
        while j < len(toks):
            depth += toks[j] == "("
            depth -= toks[j] == ")"
            if depth == 0:
                break
            j += 1
        if j != len(toks) - 1 or "(" in ret:
            unwrappable.append((name, base, "not a plain prototype"))
            continue
        plist = split_params(toks[i + 2:j])
        if len(plist) == 1 and plist[0] == ["void"]:
            plist = []
        if any(p == ["..."] for p in plist):
            unwrappable.append((name, base, "variadic"))
            continue
        params = [param_info(p, k, typedefs) for k, p in enumerate(plist)]
        funcs.append({"name": name, "ret": join(ret), "params": params, "file": base})
    return funcs, unwrappable


def return_kind(ret):
    r = ret.replace("const ", "").strip()
    if r == "void":
        return "void"
    if "*" in r:
        return "pointer"
    if r in NOT_STATUS:
        return "value"
    return "status"


def wrapper(f, api_id):
    name, ret, params = f["name"], f["ret"], f["params"]
    kind = return_kind(ret)
    args = ", ".join(p[1] for p in params)
    decl = "%s %s(%s)" % (ret, name, ", ".join(p[0] for p in params) or "void")
    handle, stream, flags = "0", "0", []
    ptypes = [p[2] for p in params]
    if ptypes and ptypes[0] in HANDLE_TYPES:
        handle = "(uint64_t)(uintptr_t)%s" % params[0][1]
        flags.append("ACOMPUTE_HAS_HANDLE")
    elif ptypes and ptypes[0].replace(" ", "") in (t + "*" for t in HANDLE_TYPES) \
            and re.search(r"Create(_v2)?$", name) and kind == "status":
        flags.append("ACOMPUTE_CREATES")
        handle = "(r_ == 0 && %s) ? (uint64_t)(uintptr_t)*%s : 0" % (params[0][1], params[0][1])
    for p in params:
        if p[2] == "cudaStream_t":
            stream = "(uint64_t)(uintptr_t)%s" % p[1]
            flags.append("ACOMPUTE_STREAM_ARG")
            break
    if "ACOMPUTE_HAS_HANDLE" in flags and "ACOMPUTE_STREAM_ARG" in flags and \
            re.search(r"SetStream(_v2)?$", name) and len(params) == 2:
        flags.append("ACOMPUTE_SETS_STREAM")
    if "ACOMPUTE_HAS_HANDLE" in flags and re.search(r"Destroy(_v2)?$", name) and len(params) == 1:
        flags.append("ACOMPUTE_DESTROYS")
    if kind == "status":
        flags.append("ACOMPUTE_STATUS" if ret in STATUS_FAIL else "ACOMPUTE_RESULT")
    flag_text = " | ".join(flags) or "0"
    if kind == "void":
        fail = "return"
    elif kind == "status":
        fail = "return %s" % STATUS_FAIL.get(ret, "(%s)0" % ret)
    elif kind == "pointer":
        fail = "return (%s)0" % ret
    elif ret in ("float", "double"):
        fail = "return 0"
    else:
        fail = "return (%s){0}" % ret
    lines = [decl, "{",
             "    __typeof__(&%s) real_ = (__typeof__(&%s))acompute_real(%d);" % (name, name, api_id),
             "    if (ASYS_UNLIKELY(!real_))",
             "        %s;" % fail,
             "    struct acompute_frame f_;",
             "    if (ASYS_LIKELY(!acompute_enter(&f_, %d)))" % api_id]
    if kind == "void":
        lines += ["    {", "        real_(%s);" % args, "        return;", "    }",
                  "    real_(%s);" % args,
                  "    acompute_leave(&f_, %d, %s, 0, %s, %s);" % (api_id, flag_text, handle,
                                                                   stream)]
    else:
        lines += ["        return real_(%s);" % args,
                  "    %s r_ = real_(%s);" % (ret, args)]
        status = "(int64_t)r_" if kind == "status" else "0"
        lines += ["    acompute_leave(&f_, %d, %s, %s, %s, %s);" % (api_id, flag_text, status,
                                                                   handle, stream),
                  "    return r_;"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--groups", default="cudnn,cublas,cublaslt,cublasxt")
    a = ap.parse_args()
    wanted = a.groups.split(",")
    os.makedirs(a.out, exist_ok=True)
    seen, per_group, unwrappable = {}, {}, {}
    for group, lib, header, prefix in GROUPS:
        if group not in wanted:
            continue
        funcs, bad = parse_group(a.cc, a.include, header, prefix)
        per_group[group] = []
        for f in funcs:
            if f["name"] not in seen:
                seen[f["name"]] = f
                per_group[group].append(f)
        for name, base, why in bad:
            unwrappable.setdefault(name, (base, why))
    for name in list(unwrappable):
        if name in seen:
            del unwrappable[name]
    names = sorted(seen)
    ids = {n: i + 1 for i, n in enumerate(names)}  # 0: no API
    count = len(names)

    with open(os.path.join(a.out, "acompute_api.h"), "w") as h:
        h.write("/* generated by recorder/inject/acompute_gen.py from %s: do not edit */\n"
                % a.include)
        h.write("#ifndef ACOMPUTE_API_H\n#define ACOMPUTE_API_H\n#include <stdint.h>\n")
        h.write("#define ACOMPUTE_API_COUNT %du /* ids 1..COUNT, sorted by name */\n" % count)
        h.write("#define ACOMPUTE_UNWRAPPABLE_COUNT %du\n" % len(unwrappable))
        h.write("/* the names, one string each in acompute_api_text (offsets, not pointers: a\n"
                " * table of pointers is a relocation per name at every process's start) */\n")
        h.write("extern const char acompute_api_text[];\n")
        h.write("extern const uint32_t acompute_api_name_at[ACOMPUTE_API_COUNT + 1];\n")
        h.write("static inline const char *acompute_api_name(uint32_t id)\n{\n"
                "    return acompute_api_text + acompute_api_name_at[id];\n}\n")
        h.write("extern const uint8_t acompute_api_library[ACOMPUTE_API_COUNT + 1];\n")
        h.write("/* not wrapped: name and why */\n")
        h.write("extern const char *const acompute_unwrappable[ACOMPUTE_UNWRAPPABLE_COUNT + 1][2];\n")
        for group in per_group:
            h.write("void acompute_wrappers_%s(void **table);\n" % group)
        h.write("#endif\n")

    with open(os.path.join(a.out, "acompute_table.c"), "w") as c:
        c.write("/* generated by recorder/inject/acompute_gen.py: do not edit */\n")
        c.write('#include "acompute_api.h"\n\n')
        c.write("const char acompute_api_text[] =\n    \"\"\n")
        at, offsets = 1, [0]
        for n in names:
            c.write('    "\\0" "%s"\n' % n)  # apart: a name's digits are no octal escape's
            offsets.append(at)
            at += len(n) + 1
        c.write("    ;\n\nconst uint32_t acompute_api_name_at[ACOMPUTE_API_COUNT + 1] = {\n")
        for n, off in zip([""] + names, offsets):
            c.write("    %d, /* %s */\n" % (off, n))
        c.write("};\n\nconst uint8_t acompute_api_library[ACOMPUTE_API_COUNT + 1] = {\n    0,\n")
        for n in names:
            c.write("    %d, /* %s */\n" % (library_of(n), n))
        c.write("};\n\nconst char *const acompute_unwrappable[ACOMPUTE_UNWRAPPABLE_COUNT + 1][2] "
                "= {\n")
        for n in sorted(unwrappable):
            c.write('    {"%s", "%s: %s"},\n' % (n, unwrappable[n][0], unwrappable[n][1]))
        c.write("    {0, 0},\n};\n")

    for group, lib, header, prefix in GROUPS:
        if group not in per_group:
            continue
        path = os.path.join(a.out, "acompute_wrap_%s.c" % group)
        with open(path, "w") as c:
            c.write("/* generated by recorder/inject/acompute_gen.py from <%s>: do not edit */\n"
                    % header)
            c.write("#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n")
            c.write("#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n")
            c.write("#include \"acompute.h\"\n")
            c.write("/* the wrappers are the library's exports */\n")
            c.write("#pragma GCC visibility push(default)\n")
            c.write("#include <%s>\n\n" % header)
            for f in per_group[group]:
                c.write(wrapper(f, ids[f["name"]]))
                c.write("\n")
            # the table takes each wrapper's address through a hidden alias: the
            # exported name's would be a GOT entry, relocated at every start
            for f in per_group[group]:
                c.write("extern __typeof__(%s) acompute_local_%s\n"
                        "    __attribute__((alias(\"%s\"), visibility(\"hidden\")));\n"
                        % (f["name"], f["name"], f["name"]))
            c.write("\nvoid acompute_wrappers_%s(void **table)\n{\n" % group)
            for f in per_group[group]:
                c.write("    table[%d] = (void *)(uintptr_t)&acompute_local_%s;\n"
                        % (ids[f["name"]], f["name"]))
            c.write("}\n")

    by_lib = {}
    for n in names:
        by_lib[library_of(n)] = by_lib.get(library_of(n), 0) + 1
    print("acompute_gen: %d entry points wrapped (cuDNN %d, cuBLAS %d, cuBLASLt %d, cuBLASXt %d)"
          % (count, by_lib.get(1, 0), by_lib.get(2, 0), by_lib.get(3, 0), by_lib.get(4, 0)))
    for n in sorted(unwrappable):
        print("acompute_gen: not wrapped: %s (%s: %s)" % (n, unwrappable[n][0], unwrappable[n][1]))


if __name__ == "__main__":
    main()
