/* The CPU sampling unwinder's second source of unwind tables: a file whose
 * frames are described in .debug_frame alone (none in .eh_frame) is read
 * there.  The unwinder looks for a .debug_frame in the file and in its
 * separate debug file before it lets libdwfl open the DWARF (which
 * decompresses every debug section): that look must see this one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "elf_cache.h"
#include "test_util.h"

START_TEST(debug_frame_is_read_where_eh_frame_has_nothing)
{
    void *lib = dlopen(DEBUG_FRAME_ONLY_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    const void *fn = dlsym(lib, "debug_frame_only");
    ck_assert_ptr_nonnull(fn);
    Dl_info info;
    ck_assert_int_ne(dladdr(fn, &info), 0);
    struct asys_elf_cache *c = asys_elf_cache_new();
    struct asys_elf_file *f = asys_elf_cache_get(c, DEBUG_FRAME_ONLY_LIBRARY, NULL, 0);
    ck_assert_ptr_nonnull(f);
    /* an address inside the function, as the file numbers it */
    uint64_t at = (uint64_t)(uintptr_t)fn - (uint64_t)(uintptr_t)info.dli_fbase + 1;
    Dwarf_Frame *frame = NULL;
    ck_assert_int_eq(asys_elf_file_frame(f, at, &frame), 0);
    ck_assert_ptr_nonnull(frame);
    free(frame);
    asys_elf_cache_free(c);
    dlclose(lib);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("debug_frame");
    TCase *tc = tcase_create("unwind");
    tcase_add_test(tc, debug_frame_is_read_where_eh_frame_has_nothing);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
