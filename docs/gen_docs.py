#!/usr/bin/env python3
"""The generated parts of docs/*.md: each command's --help and the report
catalogue, printed by the built tools from their registries (collector
options, report catalogue), so the pages cannot drift from the code.

    docs/gen_docs.py BUILD_DIR            rewrite the generated blocks
    docs/gen_docs.py --check BUILD_DIR    exit 1, naming each stale page (or a
                                          README over 15 KB)

A generated block sits between two markers in a page:

    <!-- generated: NAME (docs/gen_docs.py; do not edit) -->
    ...
    <!-- end generated: NAME -->
"""
import os
import re
import subprocess
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
BEGIN = '<!-- generated: %s (docs/gen_docs.py; do not edit) -->'
END = '<!-- end generated: %s -->'
# the README a newcomer reads stays short (issue 29.1)
README_LIMIT = 15000


def run(argv):
    # a fixed environment: no terminal width, no locale or TMPDIR of the caller
    env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'LC_ALL': 'C'}
    r = subprocess.run(argv, capture_output=True, env=env, timeout=60)
    if r.returncode != 0:
        raise SystemExit('gen_docs: %s failed (%d): %s' %
                         (' '.join(argv), r.returncode, r.stderr.decode(errors='replace')))
    return r.stdout.decode()


def fenced(text):
    return '```\n' + text.rstrip('\n') + '\n```'


def help_of(*argv):
    return lambda bin_dir: fenced(run([os.path.join(bin_dir, argv[0])] + list(argv[1:])))


def report_catalogue(bin_dir):
    """Every report of asys-stats --help-reports, each described by itself."""
    stats = os.path.join(bin_dir, 'asys-stats')
    listing = run([stats, '--help-reports'])
    parts = [fenced(listing)]
    for line in listing.splitlines():
        m = re.match(r'^\s*\*?\s+([a-z][a-z0-9_]*)\s{2,}(.+)$', line)
        if not m:
            continue
        name, title = m.group(1), re.sub(r' \(alias.*\)$', '', m.group(2))
        parts.append('### `%s`: %s\n\n%s' % (name, title,
                                              fenced(run([stats, '--help-reports', name]))))
    return '\n\n'.join(parts)


# page -> its generated blocks, by name
PAGES = {
    'asys-profile.md': {'options': help_of('asys', 'profile', '--help')},
    'asys-stats.md': {'options': help_of('asys-stats', '--help'), 'reports': report_catalogue},
    'asys-export.md': {'options': help_of('asys-export', '--help')},
    'asys-deps.md': {'options': help_of('asys-deps', '--help')},
    'asys-dump.md': {'finalize': help_of('asys', 'finalize', '--help'),
                     'dump': help_of('asys', 'dump', '--help')},
}


def regenerate(text, page, blocks, bin_dir):
    for name, make in blocks.items():
        begin, end = BEGIN % name, END % name
        pattern = re.compile(re.escape(begin) + r'\n.*?' + re.escape(end), re.S)
        if not pattern.search(text):
            raise SystemExit('gen_docs: docs/%s has no block "%s" (add its two markers)' %
                             (page, name))
        body = make(bin_dir)
        text = pattern.sub(lambda _: begin + '\n' + body + '\n' + end, text)
    return text


def main(argv):
    check = '--check' in argv
    rest = [a for a in argv if a != '--check']
    if len(rest) != 1:
        raise SystemExit('usage: docs/gen_docs.py [--check] BUILD_DIR')
    bin_dir = os.path.join(rest[0], 'bin')
    stale = []
    for page, blocks in PAGES.items():
        path = os.path.join(DOCS, page)
        with open(path) as f:
            old = f.read()
        new = regenerate(old, page, blocks, bin_dir)
        if new == old:
            continue
        stale.append(page)
        if not check:
            with open(path + '.tmp', 'w') as f:
                f.write(new)
            os.replace(path + '.tmp', path)
    readme = os.path.join(os.path.dirname(DOCS), 'README.md')
    if check and os.path.getsize(readme) > README_LIMIT:
        print('gen_docs: README.md is %d bytes; keep it under %d (detail goes to docs/)' %
              (os.path.getsize(readme), README_LIMIT))
        return 1
    if check and stale:
        print('gen_docs: stale generated docs: %s (run docs/gen_docs.py %s)' %
              (', '.join('docs/' + p for p in stale), rest[0]))
        return 1
    if not check:
        print('gen_docs: %s' % (('rewrote ' + ', '.join(stale)) if stale else 'all current'))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
