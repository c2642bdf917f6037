/* Separate debug files whose DWARF is compressed, kept decompressed.
 *
 * libdw inflates every compressed debug section of a file when it opens its
 * DWARF (libc6-dbg's libc: 4 MiB of zlib, 46 ms on the 2-vCPU VM), in every
 * recording that samples libc.  The first time, the decompressed copy is
 * written to $ASYS_DEBUG_CACHE_DIR, else $XDG_CACHE_HOME/asys/debug, else
 * ~/.cache/asys/debug (a directory of the user's own, 0700), named by the
 * build id; later recordings open that copy, whose sections libdw maps as
 * they are.  ASYS_DEBUG_CACHE_DIR set empty: no cache. */
#ifndef ASYS_DEBUG_CACHE_H
#define ASYS_DEBUG_CACHE_H

#include <elfutils/libdwfl.h>

/* A libdwfl find_debuginfo callback: dwfl_standard_find_debuginfo, unless
 * no server is named (DEBUGINFOD_URLS) and no file it would look for on this
 * machine exists.  Then -1 (errno ENOENT) at once: elfutils 0.188 loads
 * libdebuginfod, and curl, GnuTLS, Kerberos and LDAP with it (3 ms), the
 * first time its local search finds nothing, even with no server to ask. */
int asys_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name);

/* A libdwfl find_debuginfo callback: asys_find_debuginfo's file,
 * or its decompressed copy in the cache (made on first use).  Any failure of
 * the cache gives the standard file. */
int asys_debug_cache_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Writes a copy of the ELF file open on `in` to `out` (empty, writable)
 * with its zlib-compressed sections decompressed: the file's bytes, then
 * each such section's data, then a new section header table.  0, or -1
 * (ELFCLASS32, another byte order, a section libelf cannot decompress). */
int asys_debug_cache_write(int in, int out);

#endif
