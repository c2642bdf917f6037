#!/usr/bin/env python3
"""Reads schema/FORMAT.md and writes C assertions that compare its tables with
schema/asys_format.h: every '### constants' row (name = value) and every
'### struct NAME (N bytes)' row (offset, size, field).  Fields must tie
together without gaps and end at the struct's size, so a field added to the
header but not to the spec fails the test too.

usage: gen_format_checks.py FORMAT.md OUTPUT.c
"""
import re
import sys


def parse(text):
    constants, structs, problems, osrt = [], [], [], []
    section, current = None, None
    for line in text.splitlines():
        heading = re.match(r'^###\s+(.*)$', line)
        if heading:
            title = heading.group(1).strip()
            m = re.match(r'^struct\s+(\w+)\s+\((\d+)\s+bytes\)$', title)
            if title == 'constants':
                section, current = 'constants', None
            elif title == 'osrt functions':
                section, current = 'osrt', None
            elif m:
                current = {'name': m.group(1), 'size': int(m.group(2)), 'fields': []}
                structs.append(current)
                section = 'struct'
            else:
                section, current = None, None
            continue
        if not line.startswith('|') or re.match(r'^\|[\s:|-]+\|$', line):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if (section == 'constants' and len(cells) >= 2 and re.match(r'^ASYS_[A-Z0-9_]+$', cells[0])
                and re.match(r'^(0x[0-9a-fA-F]+|[0-9]+)$', cells[1])):
            constants.append((cells[0], cells[1]))
        elif section == 'osrt' and len(cells) >= 2 and cells[0].isdigit():
            osrt.append((int(cells[0]), cells[1]))
        elif section == 'struct' and len(cells) >= 3 and cells[0].isdigit():
            current['fields'].append((int(cells[0]), int(cells[1]), cells[2]))
    for s in structs:
        end = 0
        for off, size, name in s['fields']:
            if off != end:
                problems.append('%s.%s: documented at offset %d, previous field ends at %d'
                                % (s['name'], name, off, end))
            end = off + size
        if end != s['size']:
            problems.append('%s: documented fields end at %d, not at its size %d'
                            % (s['name'], end, s['size']))
    for i, (fid, _) in enumerate(osrt):
        if fid != i + 1:
            problems.append('osrt functions: id %d is at position %d' % (fid, i + 1))
    return constants, structs, problems, osrt


def main():
    src, out = sys.argv[1], sys.argv[2]
    constants, structs, problems, osrt = parse(open(src, encoding='utf-8').read())
    lines = ['/* generated from schema/FORMAT.md by gen_format_checks.py */',
             '#include <stddef.h>', '#include "asys_format.h"', '#include "format_checks.h"', '',
             'void asys_format_doc_checks(struct format_check_sink *sink)', '{']
    for name, value in constants:
        lines.append('    FORMAT_CHECK(sink, (unsigned long long)(%s) == %sull, "%s = %s");'
                     % (name, value, name, value))
    for s in structs:
        t = 'struct ' + s['name']
        lines.append('    FORMAT_CHECK(sink, sizeof(%s) == %d, "sizeof(%s) == %d");'
                     % (t, s['size'], t, s['size']))
        for off, size, name in s['fields']:
            lines.append('    FORMAT_CHECK(sink, offsetof(%s, %s) == %d, "offsetof(%s, %s) == %d");'
                         % (t, name, off, t, name, off))
            lines.append('    FORMAT_CHECK(sink, sizeof(((%s *)0)->%s) == %d, "sizeof(%s.%s) == %d");'
                         % (t, name, size, t, name, size))
    for p in problems:
        lines.append('    FORMAT_CHECK(sink, 0, "%s");' % p.replace('"', "'"))
    lines.append('}')
    lines.append('')
    lines.append('const char *const asys_documented_constants[] = {')
    for name, _ in constants:
        lines.append('    "%s",' % name)
    lines.append('    0,')
    lines.append('};')
    lines.append('const unsigned long long asys_documented_values[] = {')
    for name, value in constants:
        lines.append('    %sull,' % value)
    lines.append('};')
    lines.append('const int asys_documented_struct_count = %d;' % len(structs))
    lines.append('const char *const asys_documented_osrt_functions[] = {')
    for _, name in osrt:
        lines.append('    "%s",' % name)
    lines.append('    0,')
    lines.append('};')
    open(out, 'w', encoding='utf-8').write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
