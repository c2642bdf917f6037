/* Collectors of the manual this asys does not build yet.  Their -t names
 * and options are accepted, reported once and recorded as unavailable, so
 * scripts written for the manual run; a collector leaves this file for a
 * collector_NAME.c of its own when it is built. */
#include "asys_format.h"
#include "collector.h"

#define PLANNED(option_name, meta, def, text)                                                      \
    {                                                                                              \
        .name = option_name, .type = ASYS_OPT_TEXT, .metavar = meta, .default_value = def,         \
        .help = text, .planned = 1                                                                 \
    }
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

const struct asys_collector asys_collector_hgvideo = {
    .name = "hgvideo",
    .alias = "nvvideo",
    .feature = ASYS_FEATURE_HGVIDEO,
    .traced = 1,
    .summary = "video decode and encode",
};
