/* The symbolizer's inline chains from cu_scopes.c read the same as from
 * dwarf_getscopes: at every few bytes of a library built -O2 -g with
 * functions inlined in blocks and into each other, and of libc when its
 * DWARF (libc6-dbg) is found, the inlined instances the chain takes (up to
 * the first function) are the same DIEs. */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_scopes.h"
#include "test_util.h"

static const Dwfl_Callbacks offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* What the inline chain takes of the scopes: the inlined instances before
 * the first function. */
static void chain_of(Dwarf_Die *scopes, int n, char *out, size_t size)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < n && k < size; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram)
            break;
        if (tag == DW_TAG_inlined_subroutine)
            k += (size_t)snprintf(out + k, size - k, " %llx",
                                  (unsigned long long)dwarf_dieoffset(&scopes[i]));
    }
}

/* Compares the two at every `step` bytes of .text; the number of addresses
 * with an inlined instance (0 when the file has no DWARF). */
static long compare_file(const char *path, unsigned step)
{
    Dwfl *dwfl = dwfl_begin(&offline);
    ck_assert_ptr_nonnull(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *m = dwfl_report_elf(dwfl, "file", path, -1, 0, false);
    dwfl_report_end(dwfl, NULL, NULL);
    ck_assert_ptr_nonnull(m);
    struct asys_cu_scopes *c = asys_cu_scopes_new();
    Dwarf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(m, &bias);
    size_t names = 0;
    ck_assert_int_eq(elf_getshdrstrndx(elf, &names), 0);
    long inlined = 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || strcmp(elf_strptr(elf, names, sh.sh_name), ".text"))
            continue;
        for (Dwarf_Addr pc = sh.sh_addr; pc < sh.sh_addr + sh.sh_size; pc += step) {
            Dwarf_Addr cu_bias = 0;
            Dwarf_Die *cu = dwfl_module_addrdie(m, pc, &cu_bias);
            if (!cu)
                continue;
            Dwarf_Die *want = NULL, *got = NULL;
            int nw = dwarf_getscopes(cu, pc - cu_bias, &want);
            int ng = asys_cu_getscopes(c, cu, pc - cu_bias, &got);
            char a[512], b[512];
            chain_of(want, nw, a, sizeof a);
            chain_of(got, ng, b, sizeof b);
            ck_assert_msg(!strcmp(a, b), "%s at 0x%llx: dwarf_getscopes [%s], ours [%s]", path,
                          (unsigned long long)pc, a, b);
            inlined += a[0] != '\0';
            free(want);
            free(got);
        }
    }
    asys_cu_scopes_free(c);
    dwfl_end(dwfl);
    return inlined;
}

START_TEST(inline_chains_read_as_dwarf_getscopes_reads_them)
{
    ck_assert_int_gt(compare_file(INLINES_LIBRARY, 1), 0);
    /* libc (this process's): where libc6-dbg is installed, thousands of
     * inlined addresses; without its DWARF, none */
    Dl_info libc;
    ck_assert_int_ne(dladdr((const void *)(uintptr_t)&printf, &libc), 0);
    compare_file(libc.dli_fname, 61);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cu_scopes");
    TCase *tc = tcase_create("chains");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, inline_chains_read_as_dwarf_getscopes_reads_them);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
