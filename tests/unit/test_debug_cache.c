/* The decompressed copies of debug files (recorder/debug_cache.c): a copy
 * holds every section of the original, the zlib-compressed ones with the
 * data libelf decompresses them to, and no compressed section is left.
 * The search for a separate debug file: the standard one where a file could
 * be found, none (and no libdebuginfod loaded) where none could. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "debug_cache.h"
#include "test_util.h"

/* Section i's data as the file has it decompressed (a copy of libelf's). */
static Elf_Data *section_data(Elf *elf, size_t i, GElf_Shdr *shdr)
{
    Elf_Scn *scn = elf_getscn(elf, i);
    ck_assert_ptr_nonnull(scn);
    ck_assert_ptr_nonnull(gelf_getshdr(scn, shdr));
    if (shdr->sh_flags & SHF_COMPRESSED)
        ck_assert_int_eq(elf_compress(scn, 0, 0), 1);
    return shdr->sh_type == SHT_NOBITS ? NULL : elf_getdata(scn, NULL);
}

START_TEST(a_copy_has_the_sections_decompressed)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    test_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/copy.debug", dir);
    int in = open(COMPRESSED_DEBUG_LIBRARY, O_RDONLY | O_CLOEXEC);
    int out = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(in, 0);
    ck_assert_int_ge(out, 0);
    ck_assert_int_eq(asys_debug_cache_write(in, out), 0);
    elf_version(EV_CURRENT);
    Elf *a = elf_begin(in, ELF_C_READ_MMAP_PRIVATE, NULL), *b = elf_begin(out, ELF_C_READ, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    size_t na = 0, nb = 0, compressed = 0;
    ck_assert_int_eq(elf_getshdrnum(a, &na), 0);
    ck_assert_int_eq(elf_getshdrnum(b, &nb), 0);
    ck_assert_uint_eq(na, nb);
    for (size_t i = 1; i < na; i++) {
        GElf_Shdr sa, sb;
        Elf_Data *da = section_data(a, i, &sa), *db = section_data(b, i, &sb);
        compressed += (sa.sh_flags & SHF_COMPRESSED) != 0;
        ck_assert_msg(!(sb.sh_flags & SHF_COMPRESSED), "section %zu still compressed", i);
        ck_assert_uint_eq(sa.sh_name, sb.sh_name);
        ck_assert_uint_eq(sa.sh_type, sb.sh_type);
        if (!da)
            continue;
        ck_assert_ptr_nonnull(db);
        ck_assert_uint_eq(da->d_size, db->d_size);
        ck_assert_msg(!da->d_size || !memcmp(da->d_buf, db->d_buf, da->d_size),
                      "section %zu differs", i);
    }
    ck_assert_uint_gt(compressed, 0); /* the library was built with -gz=zlib */
    elf_end(a);
    elf_end(b);
    close(in);
    close(out);
    /* what is not an ELF file is refused */
    in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    out = open(path, O_RDWR | O_TRUNC | O_CLOEXEC);
    ck_assert_int_eq(asys_debug_cache_write(in, out), -1);
    close(in);
    close(out);
    unlink(path);
    test_rmdir(dir);
}
END_TEST

/* `src` copied to `dst`. */
static void copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ck_assert_int_ge(in, 0);
    ck_assert_int_ge(out, 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        ck_assert_int_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
}

static const Dwfl_Callbacks local_only = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = asys_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* asys_find_debuginfo for the module of the file at `path`: its descriptor
 * (closed here), or -1 with errno. */
static int find_for(const char *path, char **found)
{
    Dwfl *dwfl = dwfl_begin(&local_only);
    ck_assert_ptr_nonnull(dwfl);
    Dwfl_Module *mod = dwfl_report_offline(dwfl, "lib", path, -1);
    ck_assert_ptr_nonnull(mod);
    dwfl_report_end(dwfl, NULL, NULL);
    void **userdata = NULL;
    Dwarf_Addr low = 0;
    dwfl_module_info(mod, &userdata, &low, NULL, NULL, NULL, NULL, NULL);
    *found = NULL;
    errno = 0;
    int fd = asys_find_debuginfo(mod, userdata, "lib", low, path, NULL, 0, found);
    int e = errno;
    if (fd >= 0)
        close(fd);
    dwfl_end(dwfl);
    errno = e;
    return fd;
}

START_TEST(no_local_debug_file_asks_no_server)
{
    char dir[PATH_MAX], lib[PATH_MAX + 16], debug[PATH_MAX + 32];
    test_mkdtemp(dir, sizeof dir);
    snprintf(lib, sizeof lib, "%s/lib.so", dir);
    snprintf(debug, sizeof debug, "%s/lib.so.debug", dir);
    copy_file(COMPRESSED_DEBUG_LIBRARY, lib);
    unsetenv("DEBUGINFOD_URLS");
    char *found = NULL;
    /* nothing beside it, nothing under /usr/lib/debug: not found, at once */
    ck_assert_int_eq(find_for(lib, &found), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_null(found);
    setenv("DEBUGINFOD_URLS", "", 1); /* empty names no server either */
    ck_assert_int_eq(find_for(lib, &found), -1);
    ck_assert_msg(!dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD),
                  "libdebuginfod was loaded");
    /* FILE.debug beside it (the same build id): the standard search finds it */
    copy_file(COMPRESSED_DEBUG_LIBRARY, debug);
    ck_assert_int_ge(find_for(lib, &found), 0);
    ck_assert_ptr_nonnull(found);
    ck_assert_str_eq(found, debug);
    free(found);
    unsetenv("DEBUGINFOD_URLS");
    unlink(debug);
    unlink(lib);
    test_rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("debug_cache");
    TCase *tc = tcase_create("copy");
    tcase_add_test(tc, a_copy_has_the_sections_decompressed);
    tcase_add_test(tc, no_local_debug_file_asks_no_server);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
