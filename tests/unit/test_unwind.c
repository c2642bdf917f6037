/* The offline unwinder's parts, on this test's own binaries: the ELF cache
 * opens a file once whatever number of mappings name it, the sorted symbol
 * table names every address as libdwfl's dwfl_module_addrname does, and the
 * CFI stepper finds the return addresses of a live call stack. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_unwind.h"
#include "elf_cache.h"
#include "perf_map.h"
#include "symbol_table.h"
#include "test_util.h"

/* The file holding a function of ours, and its bias (run time - ELF address). */
struct object {
    char path[PATH_MAX];
    uint64_t bias;
    uint64_t start, end; /* its executable segment, at run time */
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct object *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || o->start < start ||
            o->start >= start + ph->p_memsz)
            continue;
        if (info->dlpi_name[0])
            snprintf(o->path, sizeof o->path, "%s", info->dlpi_name);
        else if (readlink("/proc/self/exe", o->path, sizeof o->path - 1) < 0)
            return 0;
        o->bias = info->dlpi_addr;
        o->start = start;
        o->end = start + ph->p_memsz;
        return 1;
    }
    return 0;
}

static struct object object_of(const void *code)
{
    struct object o = {.start = (uint64_t)(uintptr_t)code};
    ck_assert_int_eq(dl_iterate_phdr(find_object, &o), 1);
    return o;
}

/* ---- the ELF cache ---------------------------------------------------------------- */

START_TEST(a_file_is_opened_once)
{
    struct object libc = object_of((const void *)(uintptr_t)&printf);
    struct asys_elf_cache *c = asys_elf_cache_new();
    ck_assert_ptr_nonnull(c);
    struct asys_elf_file *first = asys_elf_cache_get(c, libc.path, NULL, 0);
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_eq(asys_elf_cache_get(c, libc.path, NULL, 0), first);
    ck_assert_uint_eq(asys_elf_cache_files(c), 1);
    /* a build id that is not the file's: the file was replaced since the run */
    const uint8_t other[20] = {1, 2, 3};
    ck_assert_ptr_null(asys_elf_cache_get(c, libc.path, other, sizeof other));
    ck_assert_ptr_null(asys_elf_cache_get(c, "[vdso]", NULL, 0));
    ck_assert_ptr_null(asys_elf_cache_get(c, "/nonexistent/lib.so", NULL, 0));
    ck_assert_uint_eq(asys_elf_cache_files(c), 1);
    /* the mapping of libc's code (its file offsets are its addresses): the
     * bias is the loader's */
    uint64_t bias = 0, map_start = libc.start & ~0xfffull;
    ck_assert_int_eq(asys_elf_file_bias(first, map_start, map_start - libc.bias, &bias), 0);
    ck_assert_uint_eq(bias, libc.bias);
    asys_elf_cache_free(c);
}
END_TEST

/* ---- the symbol table ------------------------------------------------------------ */

static const Dwfl_Callbacks offline = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* Whether the file's address is inside one of its sections. */
static int in_a_section(Dwfl_Module *m, uint64_t address)
{
    Dwarf_Addr bias = 0;
    Elf *elf = dwfl_module_getelf(m, &bias);
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_ALLOC) && address >= shdr.sh_addr &&
            address - shdr.sh_addr < shdr.sh_size)
            return 1;
    }
    return 0;
}

/* Three global names of one function (same address, size and binding):
 * libdwfl names it after the first in the symbol table, and so must the
 * table, however it sorted them (libc's aliases check the same). */
__attribute__((used, noinline)) void unwind_test_aliased(void)
{
    __asm__ volatile("");
}
extern void unwind_test_alias_one(void) __attribute__((alias("unwind_test_aliased")));
extern void unwind_test_alias_two(void) __attribute__((alias("unwind_test_aliased")));

/* Every symbol's start and middle and a sweep of the code: the same name
 * as dwfl_module_addrname, NULL where it has none. */
static void check_names_of(const char *path, uint64_t code_start, uint64_t code_end)
{
    Dwfl *dwfl = dwfl_begin(&offline);
    ck_assert_ptr_nonnull(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *m = dwfl_report_elf(dwfl, "file", path, -1, 0, false);
    dwfl_report_end(dwfl, NULL, NULL);
    ck_assert_ptr_nonnull(m);
    struct asys_symbol_table *t = asys_symbol_table_read(m);
    ck_assert_ptr_nonnull(t);
    int n = dwfl_module_getsymtab(m), checked = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Word shndx;
        if (!dwfl_module_getsym(m, i, &sym, &shndx) || shndx == SHN_UNDEF ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC)
            continue;
        uint64_t at[2] = {sym.st_value, sym.st_value + sym.st_size / 2};
        for (int k = 0; k < 2; k++) {
            const char *want = dwfl_module_addrname(m, at[k]);
            const char *got = asys_symbol_table_name(t, at[k]);
            ck_assert_msg((!want && !got) || (want && got && !strcmp(want, got)),
                          "%s at 0x%lx: libdwfl %s, table %s", path, (unsigned long)at[k],
                          want ? want : "(none)", got ? got : "(none)");
            checked++;
        }
    }
    uint64_t step = (code_end - code_start) / 2000 + 1;
    for (uint64_t a = code_start; a < code_end; a += step, checked++) {
        if (!in_a_section(m, a))
            continue; /* padding between sections: never run, never sampled */
        const char *want = dwfl_module_addrname(m, a), *got = asys_symbol_table_name(t, a);
        ck_assert_msg((!want && !got) || (want && got && !strcmp(want, got)),
                      "%s at 0x%lx: libdwfl %s, table %s", path, (unsigned long)a,
                      want ? want : "(none)", got ? got : "(none)");
    }
    ck_assert_int_gt(checked, 100);
    asys_symbol_table_free(t);
    dwfl_end(dwfl);
}

START_TEST(names_are_libdwfls)
{
    struct object self = object_of((const void *)(uintptr_t)&object_of);
    check_names_of(self.path, self.start - self.bias, self.end - self.bias);
    struct object libc = object_of((const void *)(uintptr_t)&printf);
    check_names_of(libc.path, libc.start - libc.bias, libc.end - libc.bias);
}
END_TEST

/* ---- the CFI stepper --------------------------------------------------------------- */

/* The stack as the kernel would have copied it at the sample: from the
 * stack pointer up to a bound in the test's own frame. */
struct live_stack {
    uint64_t low, high;
    uint8_t copy[1 << 16];
    struct object objects[2];
};

static struct asys_elf_cache *cache;
static struct live_stack live;
static uint64_t want_returns[3]; /* each level's return address, innermost first */
static struct asys_unwind_regs captured;

static struct asys_elf_file *live_file(void *arg, uint64_t address, uint64_t *bias)
{
    struct live_stack *s = arg;
    for (int i = 0; i < 2; i++)
        if (address >= s->objects[i].start && address < s->objects[i].end) {
            *bias = s->objects[i].bias;
            return asys_elf_cache_get(cache, s->objects[i].path, NULL, 0);
        }
    return NULL;
}

static int live_read(void *arg, uint64_t address, uint64_t *value)
{
    const struct live_stack *s = arg;
    if (address < s->low || address > s->high - 8)
        return -1;
    memcpy(value, s->copy + (address - s->low), 8);
    return 0;
}

/* Plain loads: the frames' bytes are not objects of this function. */
__attribute__((no_sanitize_address)) static void copy_stack(uint64_t sp)
{
    ck_assert_uint_le(live.high - sp, sizeof live.copy);
    for (uint64_t a = sp; a < live.high; a += 8)
        memcpy(live.copy + (a - sp), (const void *)(uintptr_t)a, 8);
    live.low = sp;
}

/* The registers at this point of the innermost function (DWARF numbers). */
__attribute__((noinline)) static void capture(void)
{
    uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
    __asm__ volatile("lea 0(%%rip), %0\n\t"
                     "mov %%rsp, %1\n\t"
                     "mov %%rbp, %2\n\t"
                     "mov %%rbx, %3\n\t"
                     "mov %%r12, %4\n\t"
                     "mov %%r13, %5\n\t"
                     "mov %%r14, %6\n\t"
                     "mov %%r15, %7"
                     : "=r"(ip), "=r"(sp), "=m"(bp), "=m"(bx), "=m"(r12), "=m"(r13), "=m"(r14),
                       "=m"(r15));
    captured.value[ASYS_UNWIND_RA] = ip;
    captured.value[ASYS_UNWIND_SP] = sp;
    captured.value[ASYS_UNWIND_FP] = bp;
    captured.value[3] = bx;
    captured.value[12] = r12;
    captured.value[13] = r13;
    captured.value[14] = r14;
    captured.value[15] = r15;
    captured.valid =
        1u << ASYS_UNWIND_RA | 1u << ASYS_UNWIND_SP | 1u << ASYS_UNWIND_FP | 1u << 3 | 0xfu << 12;
    want_returns[0] =
        (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
    copy_stack(sp);
}

__attribute__((noinline)) static int level_two(int x)
{
    capture();
    want_returns[1] =
        (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
    return x + 1;
}

__attribute__((noinline)) static int level_one(int x)
{
    int r = level_two(x) * 3;
    want_returns[2] =
        (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
    return r + 1;
}

START_TEST(a_live_stack_unwinds_to_its_callers)
{
    volatile char top_of_test[64];
    top_of_test[0] = 1;
    live.high = (uint64_t)(uintptr_t)top_of_test + sizeof top_of_test;
    live.objects[0] = object_of((const void *)(uintptr_t)&capture);
    live.objects[1] = object_of((const void *)(uintptr_t)&printf);
    cache = asys_elf_cache_new();
    ck_assert_int_eq(level_one(1), 7);
    struct asys_unwind_source src = {live_file, live_read, &live};
    uint64_t frames[8];
    uint32_t n = asys_unwind(&src, &captured, frames, 8);
    ck_assert_uint_ge(n, 4);
    ck_assert_uint_eq(frames[0], captured.value[ASYS_UNWIND_RA]);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(frames[i + 1] == want_returns[i], "frame %d: 0x%lx, want 0x%lx", i + 1,
                      (unsigned long)frames[i + 1], (unsigned long)want_returns[i]);
    /* again: the same frames from the rules the files kept, none read again */
    uint64_t rules = asys_elf_cache_rules(cache);
    ck_assert_uint_ge(rules, 3);
    uint64_t again[8];
    ck_assert_uint_eq(asys_unwind(&src, &captured, again, 8), n);
    ck_assert_mem_eq(again, frames, n * sizeof *frames);
    ck_assert_uint_eq(asys_elf_cache_rules(cache), rules);
    /* the stack cut short (the kernel copied less): the frames up to the cut */
    live.high = live.low + 16;
    ck_assert_uint_lt(asys_unwind(&src, &captured, frames, 8), 4);
    asys_elf_cache_free(cache);
}
END_TEST

/* ---- JIT maps ------------------------------------------------------------------- */

START_TEST(a_jit_map_is_read_as_untrusted_text)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    test_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/perf-1.map", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("1000 100 first\n"
          "0x2000 0x10 with prefix\n"
          "garbage line\n"
          "3000 0 empty size\n"
          "ffffffffffffff00 1000 wraps\n"
          "4000 zz not hex\n"
          "1080 10 later overlap\n"
          "5000 10\n",
          f);
    fclose(f);
    struct asys_err err = {0};
    struct asys_perf_map *m = asys_perf_map_read(path, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(asys_perf_map_name(m, 0x1000), "first");
    ck_assert_str_eq(asys_perf_map_name(m, 0x1088), "later overlap"); /* the later line wins */
    ck_assert_str_eq(asys_perf_map_name(m, 0x10ff), "first");
    ck_assert_ptr_null(asys_perf_map_name(m, 0x1100));
    ck_assert_str_eq(asys_perf_map_name(m, 0x200f), "with prefix");
    ck_assert_ptr_null(asys_perf_map_name(m, 0x3000));
    ck_assert_ptr_null(asys_perf_map_name(m, 0x4000));
    ck_assert_ptr_null(asys_perf_map_name(m, 0x5000)); /* no name */
    ck_assert_ptr_null(asys_perf_map_name(m, 0xffffffffffffff80ull));
    uint64_t start, end;
    asys_perf_map_span(m, &start, &end);
    ck_assert_uint_eq(start, 0x1000);
    ck_assert_uint_eq(end, 0x2010);
    asys_perf_map_free(m);
    ck_assert_ptr_null(asys_perf_map_read("/nonexistent/perf-2.map", &err));
    ck_assert_ptr_nonnull(strstr(err.text, "cannot open"));
    /* what another user could plant at the path: a FIFO (reading it would
     * wait for a writer), a link to some other file */
    char planted[PATH_MAX + 32];
    snprintf(planted, sizeof planted, "%s/perf-3.map", dir);
    ck_assert_int_eq(mkfifo(planted, 0600), 0);
    ck_assert_ptr_null(asys_perf_map_read(planted, &err));
    ck_assert_ptr_nonnull(strstr(err.text, "not a regular file"));
    snprintf(planted, sizeof planted, "%s/perf-4.map", dir);
    ck_assert_int_eq(symlink(path, planted), 0);
    ck_assert_ptr_null(asys_perf_map_read(planted, &err));
    /* kallsyms: text symbols only, each up to the next one */
    snprintf(path, sizeof path, "%s/kallsyms", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("ffffffff81000000 T _stext\n"
          "ffffffff81000100 t helper\n"
          "ffffffff81000180 D some_data\n"
          "0000000000000000 T hidden\n"
          "ffffffff81000200 W weak_one\t[a_module]\n"
          "ffffffff81000300 T last\n",
          f);
    fclose(f);
    m = asys_kallsyms_read(path, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(asys_perf_map_name(m, 0xffffffff81000000ull), "_stext");
    ck_assert_str_eq(asys_perf_map_name(m, 0xffffffff810001f0ull), "helper"); /* data skipped */
    ck_assert_str_eq(asys_perf_map_name(m, 0xffffffff81000250ull), "weak_one");
    ck_assert_ptr_null(asys_perf_map_name(m, 0x10));
    asys_perf_map_free(m);
    ck_assert(asys_kallsyms_readable(path));
    ck_assert(!asys_kallsyms_readable("/nonexistent/kallsyms"));
    ck_assert(asys_is_perf_map_path("/tmp/perf-123.map"));
    ck_assert(!asys_is_perf_map_path("/tmp/perf-.map"));
    ck_assert(!asys_is_perf_map_path("/tmp/perf-12x.map"));
    ck_assert(!asys_is_perf_map_path("/usr/lib/libc.so.6"));
    test_rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("unwind");
    TCase *tc = tcase_create("offline");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_file_is_opened_once);
    tcase_add_test(tc, names_are_libdwfls);
    tcase_add_test(tc, a_live_stack_unwinds_to_its_callers);
    tcase_add_test(tc, a_jit_map_is_read_as_untrusted_text);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
