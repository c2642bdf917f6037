/* Separate debug files whose DWARF is compressed, kept decompressed (debug_cache.h). */
#define _GNU_SOURCE
#include "debug_cache.h"
#include "hex.h"
#include "write_all.h"

#include <elfutils/libdwelf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUILD_ID_MAX 64

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* ---- writing the decompressed copy ----------------------------------------- */

/* Section i's header as the copy has it: a zlib-compressed section's data
 * decompressed and written at *end (then past it), the others unchanged. */
static int section_out(Elf *elf, size_t i, GElf_Shdr *shdr, int out, uint64_t *end)
{
    Elf_Scn *scn = elf_getscn(elf, i);
    if (!scn || !gelf_getshdr(scn, shdr))
        return -1;
    GElf_Chdr chdr;
    if (!(shdr->sh_flags & SHF_COMPRESSED) || shdr->sh_type == SHT_NOBITS ||
        !gelf_getchdr(scn, &chdr) || chdr.ch_type != ELFCOMPRESS_ZLIB)
        return 0; /* zstd or none: libdw reads it as the original has it */
    if (elf_compress(scn, 0, 0) != 1)
        return -1;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || data->d_size != chdr.ch_size)
        return -1;
    uint64_t align = chdr.ch_addralign > 1 ? chdr.ch_addralign : 1;
    uint64_t at = (*end + align - 1) / align * align;
    if (data->d_size && asys_pwrite_all(out, data->d_buf, data->d_size, at) != 0)
        return -1;
    shdr->sh_offset = at;
    shdr->sh_size = data->d_size;
    shdr->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
    shdr->sh_addralign = chdr.ch_addralign;
    *end = at + data->d_size;
    return 0;
}

int asys_debug_cache_write(int in, int out)
{
    int rc = -1;
    GElf_Shdr *shdrs = NULL;
    elf_version(EV_CURRENT);
    /* private: libelf updates the headers of the sections it decompresses */
    Elf *elf = elf_begin(in, ELF_C_READ_MMAP_PRIVATE, NULL);
    size_t size = 0, count = 0;
    const char *image = elf ? elf_rawfile(elf, &size) : NULL;
    Elf64_Ehdr ehdr;
    if (!image || size < sizeof ehdr || elf_kind(elf) != ELF_K_ELF ||
        image[EI_CLASS] != ELFCLASS64 || image[EI_DATA] != HOST_DATA ||
        elf_getshdrnum(elf, &count) != 0 || !count)
        goto out;
    memcpy(&ehdr, image, sizeof ehdr);
    shdrs = calloc(count, sizeof *shdrs);
    /* the original's bytes first, before libelf touches its headers */
    if (!shdrs || ehdr.e_shentsize != sizeof(Elf64_Shdr) ||
        asys_pwrite_all(out, image, size, 0) != 0)
        goto out;
    uint64_t end = size;
    for (size_t i = 0; i < count; i++)
        if (section_out(elf, i, &shdrs[i], out, &end) != 0)
            goto out;
    ehdr.e_shoff = (end + 7) & ~7ull;
    if (asys_pwrite_all(out, shdrs, count * sizeof *shdrs, ehdr.e_shoff) != 0 ||
        asys_pwrite_all(out, &ehdr, sizeof ehdr, 0) != 0)
        goto out;
    rc = 0;
out:
    free(shdrs);
    elf_end(elf);
    return rc;
}

/* ---- the cache ------------------------------------------------------------- */

/* Whether a section of the file is zlib-compressed. */
static int zlib_compressed(Elf *elf)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        GElf_Chdr chdr;
        if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED) &&
            shdr.sh_type != SHT_NOBITS && gelf_getchdr(scn, &chdr) &&
            chdr.ch_type == ELFCOMPRESS_ZLIB)
            return 1;
    }
    return 0;
}

/* The file's build id in hex; 0 without one. */
static int build_id_hex(Elf *elf, char out[2 * BUILD_ID_MAX + 1])
{
    const void *id = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    if (n <= 0 || n > BUILD_ID_MAX)
        return 0;
    asys_hex_encode(id, (size_t)n, out);
    return 1;
}

/* The cache directory's name, and in *base the length of what must exist
 * already (the user's cache or home directory, the named one's parent);
 * 0 when there is none. */
static int cache_dir(char *out, size_t size, size_t *base)
{
    const char *dir = getenv("ASYS_DEBUG_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;
    if (dir) {
        n = snprintf(out, size, "%s", dir);
        const char *slash = strrchr(dir, '/');
        *base = slash ? (size_t)(slash - dir) : 0;
    } else if (xdg && xdg[0] == '/') {
        n = snprintf(out, size, "%s/asys/debug", xdg);
        *base = strlen(xdg);
    } else if (home && home[0] == '/') {
        n = snprintf(out, size, "%s/.cache/asys/debug", home);
        *base = strlen(home);
    }
    return n > 0 && (size_t)n < size && out[0] == '/';
}

/* Makes the directories below the first `base` characters (which must name
 * one already: a missing home is not made), 0700; 0 when the last is the
 * user's own and no one else may write there. */
static int private_dir(char *dir, size_t base)
{
    for (char *p = strchr(dir + base + 1, '/');; p = strchr(p + 1, '/')) {
        if (p)
            *p = '\0';
        int made = mkdir(dir, 0700) == 0 || errno == EEXIST;
        if (p)
            *p = '/';
        if (!made)
            return -1;
        if (!p)
            break;
    }
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
                   !(st.st_mode & (S_IWGRP | S_IWOTH))
               ? 0
               : -1;
}

/* The copy at `path`, when it is the user's own regular file holding the
 * build id `id` without compressed sections; its descriptor, or -1. */
static int open_copy(const char *path, const char *id)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return -1;
    Elf *elf = NULL;
    char copy_id[2 * BUILD_ID_MAX + 1];
    int good = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
               (elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL && build_id_hex(elf, copy_id) &&
               !strcmp(copy_id, id) && !zlib_compressed(elf);
    elf_end(elf);
    if (!good) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes the copy of `in` under a temporary name, then renames it to `path`
 * (a concurrent recording writing the same one: either wins, the same bytes). */
static int make_copy(int in, const char *dir, const char *id, const char *path)
{
    char temp[PATH_MAX];
    int n = snprintf(temp, sizeof temp, "%s/.%s.XXXXXX", dir, id);
    if (n < 0 || (size_t)n >= sizeof temp)
        return -1;
    int out = mkostemp(temp, O_CLOEXEC);
    if (out < 0)
        return -1;
    int rc = asys_debug_cache_write(in, out);
    if (close(out) != 0)
        rc = -1;
    if (rc == 0)
        rc = rename(temp, path);
    if (rc != 0)
        unlink(temp);
    return rc;
}

/* The module's build id in hex (its debug file's too); 0 without one. */
static int module_build_id_hex(Dwfl_Module *mod, char out[2 * BUILD_ID_MAX + 1])
{
    const unsigned char *bits = NULL;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    if (n <= 0 || n > BUILD_ID_MAX)
        return 0;
    asys_hex_encode(bits, (size_t)n, out);
    return 1;
}

/* Where the copy of one build id goes. */
struct cache_place {
    char dir[PATH_MAX];
    char path[PATH_MAX];
    size_t base; /* the part of dir that must exist already */
};

/* The copy's place for the build id; 0 when there is no cache. */
static int copy_place(const char *id, struct cache_place *at)
{
    if (!cache_dir(at->dir, sizeof at->dir, &at->base))
        return 0;
    int n = snprintf(at->path, sizeof at->path, "%s/%s.debug", at->dir, id);
    return n > 0 && (size_t)n < sizeof at->path;
}

/* Writes the copy of the debug file open on `fd` when it has zlib-compressed
 * sections and the build id `id` (what the next recording opens). */
static void keep_copy(int fd, const char *id, struct cache_place *at)
{
    char file_id[2 * BUILD_ID_MAX + 1];
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf && zlib_compressed(elf) && build_id_hex(elf, file_id) && !strcmp(file_id, id) &&
        private_dir(at->dir, at->base) == 0)
        make_copy(fd, at->dir, id, at->path);
    elf_end(elf);
}

/* ---- the standard search, without a server that cannot answer ---------- */

/* Whether dir + sub + "/" + name names a file. */
static int file_exists(const char *dir, const char *sub, const char *name)
{
    char path[PATH_MAX];
    int n = name[0] == '/' ? snprintf(path, sizeof path, "%s", name)
                           : snprintf(path, sizeof path, "%s%s/%s", dir, sub, name);
    return n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0;
}

/* Whether `name` lies where libdwfl's default debuginfo_path
 * (":.debug:/usr/lib/debug") looks beside the module's file: the file's
 * directory, its .debug, and that directory under /usr/lib/debug. */
static int in_debug_path(const char *file, const char *name)
{
    char dir[PATH_MAX], under[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(under, sizeof under, "/usr/lib/debug%s%s", dir[0] == '/' ? "" : "/", dir);
    return file_exists(dir, "", name) || file_exists(dir, "/.debug", name) ||
           file_exists(under, "", name);
}

/* Whether a separate debug file of the module may be on this machine: by
 * its build id, else by its debug link (or FILE.debug), beside the file as
 * named and as resolved.  A yes that is wrong costs only the standard
 * search; a no must be right, so every place that search reads is here. */
static int local_debug_file_possible(Dwfl_Module *mod, const char *file_name,
                                     const char *debuglink_file)
{
    char id[2 * BUILD_ID_MAX + 1];
    char path[PATH_MAX];
    if (module_build_id_hex(mod, id) && strlen(id) > 2) {
        snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
        if (access(path, F_OK) == 0)
            return 1;
    }
    if (!file_name || !*file_name)
        return debuglink_file && debuglink_file[0] == '/' && access(debuglink_file, F_OK) == 0;
    const char *base = strrchr(file_name, '/');
    base = base ? base + 1 : file_name;
    char own[PATH_MAX];
    const char *name = debuglink_file;
    if (!name || !*name) {
        snprintf(own, sizeof own, "%s.debug", base);
        name = own;
    }
    if (in_debug_path(file_name, name))
        return 1;
    return realpath(file_name, path) && strcmp(path, file_name) && in_debug_path(path, name);
}

int asys_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name)
{
    const char *servers = getenv("DEBUGINFOD_URLS");
    if ((servers && *servers) || local_debug_file_possible(mod, file_name, debuglink_file))
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                            debuglink_crc, debuginfo_file_name);
    errno = ENOENT; /* what the standard search says of a file it did not find */
    return -1;
}

int asys_debug_cache_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    char id[2 * BUILD_ID_MAX + 1];
    struct cache_place at;
    int cached = module_build_id_hex(mod, id) && copy_place(id, &at);
    /* before the standard search: it hands libdwfl the file it opens
     * (checking its build id), which would then be used whatever we return */
    int copy = cached ? open_copy(at.path, id) : -1;
    char *name = copy >= 0 ? strdup(at.path) : NULL;
    if (name) {
        *debuginfo_file_name = name;
        return copy;
    }
    if (copy >= 0)
        close(copy);
    int fd = asys_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                 debuglink_crc, debuginfo_file_name);
    if (fd >= 0 && cached) {
        keep_copy(fd, id, &at);
        lseek(fd, 0, SEEK_SET);
    }
    return fd;
}
