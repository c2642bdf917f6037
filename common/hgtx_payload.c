#include "hgtx_payload.h"

#define T(size, align, kind) \
    { \
        size, align, ASYS_HGTX_VALUE_##kind \
    }

/* nvToolsExtPayload.h's predefined types 1..80 on LP64. */
static const struct asys_hgtx_type_info types[] = {
    [1] = T(1, 1, SIGNED), /* char */
    [2] = T(1, 1, UNSIGNED), /* unsigned char */
    [3] = T(2, 2, SIGNED),
    [4] = T(2, 2, UNSIGNED),
    [5] = T(4, 4, SIGNED),
    [6] = T(4, 4, UNSIGNED),
    [7] = T(8, 8, SIGNED),
    [8] = T(8, 8, UNSIGNED),
    [9] = T(8, 8, SIGNED),
    [10] = T(8, 8, UNSIGNED),
    [11] = T(1, 1, SIGNED),
    [12] = T(1, 1, UNSIGNED),
    [13] = T(2, 2, SIGNED),
    [14] = T(2, 2, UNSIGNED),
    [15] = T(4, 4, SIGNED),
    [16] = T(4, 4, UNSIGNED),
    [17] = T(8, 8, SIGNED),
    [18] = T(8, 8, UNSIGNED),
    [19] = T(4, 4, FLOAT),
    [20] = T(8, 8, FLOAT),
    [21] = T(16, 16, FLOAT), /* long double: x87 80-bit in 16 bytes */
    [22] = T(8, 8, UNSIGNED), /* size_t */
    [23] = T(8, 8, ADDRESS),
    [24] = T(4, 4, CHAR), /* wchar_t */
    [25] = T(1, 1, CHAR),
    [26] = T(2, 2, CHAR),
    [27] = T(4, 4, CHAR),
    [32] = T(1, 1, BYTES),
    [33] = T(16, 16, BYTES),
    [34] = T(16, 16, BYTES),
    [42] = T(2, 2, FLOAT),
    [43] = T(4, 4, FLOAT),
    [44] = T(8, 8, FLOAT),
    [45] = T(16, 16, BYTES),
    [50] = T(2, 2, FLOAT),
    [52] = T(4, 4, FLOAT),
    [68] = T(4, 4, UNSIGNED), /* category */
    [69] = T(4, 4, UNSIGNED), /* color ARGB */
    [70] = T(8, 8, UNSIGNED), /* scope id */
    [71] = T(4, 4, UNSIGNED),
    [72] = T(8, 8, UNSIGNED),
    [73] = T(4, 4, UNSIGNED),
    [74] = T(8, 8, UNSIGNED),
    [75] = T(1, 1, STRING),
    [76] = T(1, 1, STRING),
    [77] = T(2, 2, STRING),
    [78] = T(4, 4, STRING),
    [80] = T(8, 8, REGISTERED_STRING), /* nvtxStringHandle_t */
};

int asys_hgtx_type_info(uint64_t type, struct asys_hgtx_type_info *out)
{
    if (type >= sizeof types / sizeof types[0] || !types[type].size)
        return 0;
    *out = types[type];
    return 1;
}

int asys_hgtx_is_string_pointer(const struct asys_hgtx_layout_entry *e)
{
    return (e->flags & ASYS_NVTX_FLAG_POINTER) && e->type >= ASYS_NVTX_TYPE_CSTRING &&
           e->type <= ASYS_NVTX_TYPE_CSTRING_UTF32;
}

int asys_hgtx_entry_extent(const struct asys_hgtx_layout_entry *e, asys_hgtx_schema_size_fn size_of,
                           void *ctx, uint64_t *size, uint64_t *align)
{
    if (e->flags & ASYS_NVTX_FLAG_POINTER) { /* the pointer itself */
        *size = 8;
        *align = 8;
        return 0;
    }
    uint64_t array = e->flags & ASYS_NVTX_FLAG_ARRAY_MASK;
    uint64_t element, element_align;
    struct asys_hgtx_type_info info;
    if (asys_hgtx_type_info(e->type, &info)) {
        element = info.size;
        element_align = info.align;
        /* a string type with a length and no array flag is a fixed-size string */
        if (info.kind == ASYS_HGTX_VALUE_STRING && !array) {
            if (!e->detail)
                return -1;
            array = ASYS_NVTX_FLAG_ARRAY_FIXED;
        }
    } else if (!size_of || !size_of(ctx, e->type, &element, &element_align)) {
        return -1;
    }
    if (array == ASYS_NVTX_FLAG_ARRAY_FIXED) {
        if (e->detail > (UINT64_C(1) << 32) || (element && e->detail > UINT64_MAX / element))
            return -1;
        element *= e->detail;
    } else if (array) {
        return -1; /* its length is in the data */
    }
    *size = element;
    *align = element_align ? element_align : 1;
    return 0;
}

uint64_t asys_hgtx_entry_offset(const struct asys_hgtx_layout_entry *e, size_t index, uint64_t end,
                                uint64_t align, uint64_t pack_align)
{
    if (e->offset || index == 0)
        return e->offset;
    if (pack_align && pack_align < align)
        align = pack_align;
    if (align > 1 && end % align)
        end += align - end % align;
    return end;
}
