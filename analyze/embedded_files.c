#include "embedded_files.h"

#include <string.h>

const char *asys_schema_text(const char *name)
{
    for (const struct asys_embedded_file *f = asys_schema_files; f->name; f++)
        if (!strcmp(f->name, name))
            return f->text;
    return NULL;
}
