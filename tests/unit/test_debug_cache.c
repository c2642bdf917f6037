/* The decompressed copies of debug files (recorder/debug_cache.c): a copy
 * holds every section of the original, the zlib-compressed ones with the
 * data libelf decompresses them to, and no compressed section is left. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
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

int main(void)
{
    Suite *s = suite_create("debug_cache");
    TCase *tc = tcase_create("copy");
    tcase_add_test(tc, a_copy_has_the_sections_decompressed);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
