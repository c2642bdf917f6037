"""The bad-report fixtures of tests/data/bad (its README says what each one
is and what the tools must do), run through every analysis tool."""
import os
import re
import shutil
import unittest

from asys_e2e import BIN, STATS, AsysTestCase

EXPORT = os.path.join(BIN, 'asys-export')
DEPS = os.path.join(BIN, 'asys-deps')
BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'bad')


def fixtures():
    rows = []
    with open(os.path.join(BAD, 'README.md')) as f:
        for line in f:
            m = re.match(r'^\| (\S+\.report) \| .* \| (refused|read): (.*) \|$', line)
            if m:
                rows.append(m.groups())
    return rows


class BadFixtures(AsysTestCase):
    def test_every_fixture_is_listed(self):
        listed = {name for name, _, _ in fixtures()}
        present = {n for n in os.listdir(BAD) if n.endswith('.report')}
        self.assertEqual(listed, present)
        self.assertGreaterEqual(len(listed), 20)

    def tools(self, path):
        return [[STATS, '-q', '-r', 'report_info', '-f', 'csv', path],
                [EXPORT, '-q', '--force-overwrite', '-o', self.path('out.pftrace'), path],
                [EXPORT, '-q', '--force-overwrite', '-t', 'json', '-o', self.path('out.json'),
                 path],
                [DEPS, '-q', path]]

    def test_each_is_refused_or_read_as_its_readme_says(self):
        for name, outcome, detail in fixtures():
            with self.subTest(fixture=name):
                path = self.path(name)
                shutil.copy(os.path.join(BAD, name), path)
                for argv in self.tools(path):
                    r = self.run_cmd(argv, timeout=120)
                    err = r.stderr.decode(errors='replace')
                    self.assertGreaterEqual(r.returncode, 0, '%s killed: %s' % (argv[0], err))
                    self.assertNotIn('Sanitizer', err)
                    if outcome == 'refused':
                        lines = err.strip().splitlines()
                        self.assertEqual(r.returncode, 1, err)
                        self.assertEqual(len(lines), 1, lines)
                        self.assertIn("cannot open '%s'" % path, lines[0])
                        self.assertIn(detail, lines[0])
                    else:
                        self.assertEqual(r.returncode, 0, '%s: %s' % (argv[0], err))
                    if argv[0] == STATS and outcome == 'read' and detail != '-':
                        prop, value = detail.split(' = ')
                        info = dict(line.split(',', 1) for line in
                                    r.stdout.decode().splitlines()[1:])
                        self.assertEqual(info.get(prop), value, info)
                left = [n for n in os.listdir(self.dir) if '.tmp-' in n or n.startswith('.')]
                self.assertEqual(left, [])
                for n in os.listdir(self.dir):
                    os.unlink(self.path(n))


if __name__ == '__main__':
    unittest.main(verbosity=2)
