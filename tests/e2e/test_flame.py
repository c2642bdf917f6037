"""The call-tree reports (stack_topdown, stack_bottomup, stack_flat) and the
flame outputs of asys-export (folded, speedscope, pprof, svg), each checked by
a real consumer where one is installable: `go tool pprof -top`, speedscope's
published file-format schema, an XML parser.  The stacks are OS runtime
calls of flame_sleeps (80 ms under slow_path, 20 ms under fast_path, both
through middle); CPU samples use the same builder."""
import gzip
import json
import os
import re
import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET

from asys_e2e import BIN, BUILD, AsysTestCase, prog

EXPORT = os.path.join(BIN, 'asys-export')
SVG = '{http://www.w3.org/2000/svg}'


class FlameCase(AsysTestCase):
    def setUp(self):
        super().setUp()
        # -s none: the report without CPU samples that some requests here need
        self.profile([prog('flame_sleeps')], ['-t', 'osrt', '-s', 'none'])

    def export(self, kind, *extra, expect_rc=0):
        out = self.path('out.' + kind)
        r = self.run_cmd([EXPORT, '-q', '-t', kind, '--stacks', 'osrt', '-o', out, *extra,
                          self.report()])
        self.assertEqual(r.returncode, expect_rc, r.stderr.decode(errors='replace'))
        return out


class CallTreeReports(FlameCase):
    def test_top_down(self):
        rows = self.stats_rows('stack_topdown:osrt')
        by_name = {r['Function']: r for r in rows}
        for name in ('main', 'middle', 'slow_path', 'fast_path', 'nanosleep'):
            self.assertIn(name, by_name)
        middle = by_name['middle']
        self.assertBetween(float(middle['Total (%)']), 99.9, 100.0)
        slow = by_name['slow_path']
        self.assertEqual(slow['Parent Id'], middle['Id'])
        self.assertEqual(int(slow['Level']), int(middle['Level']) + 1)
        # 80 % asleep under slow_path; one late wake-up on a loaded machine moves it
        # (a CI run: 73 %), a stack charged to the wrong path would make it 20 %
        self.assertBetween(float(slow['Total (%)']), 65, 90, 'slow_path share')
        self.assertBetween(int(slow['Total']), 80e6, 130e6, 'slow_path ns')
        self.assertEqual(slow['Unit'], 'ns')
        # siblings by weight: slow_path before fast_path
        ids = [r['Function'] for r in rows]
        self.assertLess(ids.index('slow_path'), ids.index('fast_path'))
        # the leaves are the calls themselves, one under each path
        leaves = [r for r in rows if r['Function'] == 'nanosleep']
        self.assertEqual(len(leaves), 2)
        self.assertEqual(sum(int(r['Self']) for r in leaves),
                         sum(int(r['Total']) for r in leaves))

    def test_bottom_up_and_flat(self):
        rows = self.stats_rows('stack_bottomup:osrt')
        self.assertEqual(rows[0]['Function'], 'nanosleep')
        self.assertEqual(rows[0]['Level'], '0')
        callers = [r['Function'] for r in rows if r['Parent Id'] == rows[0]['Id']]
        self.assertEqual(callers, ['slow_path', 'fast_path'])
        flat = {r['Function']: r for r in self.stats_rows('stack_flat:osrt')}
        self.assertBetween(float(flat['nanosleep']['Self (%)']), 99.9, 100.0)
        self.assertEqual(flat['main']['Self'], '0')
        self.assertBetween(float(flat['fast_path']['Total (%)']), 10, 35, 'fast_path share')

    def test_filters(self):
        # the first 50 ms hold only slow_path's naps
        rows = self.stats_rows('stack_flat:osrt', 'rep', '--filter-time', '0/50ms')
        names = {r['Function'] for r in rows}
        self.assertIn('slow_path', names)
        self.assertNotIn('fast_path', names)
        r = self.stats('-q', '-r', 'stack_flat:osrt', '--pid', '1', self.report(), expect_rc=1)
        self.assertIn('no OS runtime calls with a call stack', r.stderr.decode())
        self.assertEqual(len(r.stderr.decode().strip().splitlines()), 1)

    def test_no_samples_is_one_line(self):
        r = self.stats('-q', '-r', 'cpu_flat', self.report(), expect_rc=None)
        self.assertNotEqual(r.returncode, 0)
        err = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(err), 1, err)
        self.assertIn('no CPU samples', err[0])
        self.assertEqual(r.stdout, b'')  # no title left without its rows
        r = self.stats('-q', '-r', 'stack_flat:gpu', self.report(), expect_rc=2)


class FlameOutputs(FlameCase):
    def test_folded_lines_parse(self):
        with open(self.export('folded')) as f:
            lines = f.read().splitlines()
        weights = {}
        for line in lines:
            m = re.fullmatch(r'(\S.*) (\d+)', line)
            self.assertIsNotNone(m, line)
            frames = m.group(1).split(';')
            self.assertEqual(frames[-1], 'nanosleep')
            weights[frames[-2]] = int(m.group(2))
            self.assertEqual(frames[-3], 'middle')
            self.assertIn('main', frames)
        self.assertEqual(set(weights), {'slow_path', 'fast_path'})
        # 8 naps of 10 ms against 2: a loaded machine oversleeps some (a CI run: 3.41)
        self.assertBetween(weights['slow_path'] / weights['fast_path'], 2.0, 6.0, 'ratio')

    def test_pprof_loads_in_go_tool_pprof(self):
        out = self.export('pprof')
        with gzip.open(out) as f:
            self.assertGreater(len(f.read()), 0)
        if not shutil.which('go'):
            self.skipTest('go not installed (Debian golang-go): no pprof consumer')
        env = dict(self.env, HOME=self.dir, GOCACHE=self.path('gocache'), PPROF_TMPDIR=self.dir)
        r = self.run_cmd(['go', 'tool', 'pprof', '-top', '-nodecount=20', out], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))
        text = r.stdout.decode()
        rows = [l.split() for l in text.splitlines() if re.match(r'\s*[0-9.]+\w* +[0-9.]+% ', l)]
        self.assertTrue(rows, text)
        self.assertEqual(rows[0][-1], 'nanosleep', text)  # flat: all time is in the call
        cum = {row[-1]: row for row in rows}
        self.assertIn('slow_path', cum)
        self.assertIn('Type: time', text)
        # threads as labels: -tagfocus on the tid keeps everything
        r = self.run_cmd(['go', 'tool', 'pprof', '-tags', out], env=env)
        self.assertIn('tid', r.stdout.decode())
        # calls and their time, the real mappings and addresses (issue 31.4)
        r = self.run_cmd(['go', 'tool', 'pprof', '-raw', out], env=env)
        raw = r.stdout.decode()
        self.assertIn('calls/count time/nanoseconds', raw)
        mappings = raw.split('Mappings')[1].strip().splitlines()
        self.assertTrue(mappings[0].split()[2].endswith('/flame_sleeps'), mappings)
        self.assertRegex(mappings[0], r'^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ \S+ [0-9a-f]{40} ')
        self.assertNotIn('Main binary filename not available', r.stderr.decode() + raw)
        r = self.run_cmd(['go', 'tool', 'pprof', '-addresses', '-top', out], env=env)
        self.assertRegex(r.stdout.decode(), r'\n +\S+ +[0-9.]+% .* [0-9a-f]{8,} slow_path ')
        r = self.run_cmd(['go', 'tool', 'pprof', '-list', 'slow_path', out], env=env)
        self.assertIn('ROUTINE', r.stdout.decode())
        self.assertIn('nap_ms(10);', r.stdout.decode())  # the binary's own source, by line

    def test_speedscope_matches_the_published_schema(self):
        out = self.export('speedscope')
        with open(out) as f:
            doc = json.load(f)
        frames = [fr['name'] for fr in doc['shared']['frames']]
        profile = doc['profiles'][0]
        self.assertEqual(profile['type'], 'sampled')
        self.assertEqual(profile['unit'], 'nanoseconds')
        self.assertEqual(len(profile['samples']), len(profile['weights']))
        self.assertEqual(sum(profile['weights']), profile['endValue'])
        # outermost frame first; in time order slow_path's naps come first
        first = [frames[i] for i in profile['samples'][0]]
        self.assertEqual(first[-1], 'nanosleep')
        self.assertEqual(first[-2], 'slow_path')
        self.assertLess(first.index('main'), first.index('middle'))
        modules = speedscope_modules()
        r = self.run_cmd(['node', os.path.join(os.path.dirname(__file__), 'speedscope_check.js'),
                          modules, out])
        self.assertEqual(r.returncode, 0, r.stdout.decode() + r.stderr.decode())

    def test_svg_is_xml_with_the_hot_path_widest(self):
        root = ET.parse(self.export('svg')).getroot()
        self.assertEqual(root.tag, SVG + 'svg')
        widths = {}
        for g in root.iter(SVG + 'g'):
            title = g.find(SVG + 'title').text
            rect = g.find(SVG + 'rect')
            name = title.split(' (')[0]
            widths[name] = max(widths.get(name, 0), float(rect.get('width')))
            self.assertRegex(title, r'\(\d+ ns, [0-9.]+%\)$')
        self.assertGreater(widths['slow_path'], 2 * widths['fast_path'])  # 4x asleep, see above
        leaf_functions = {k: v for k, v in widths.items() if k in ('slow_path', 'fast_path')}
        self.assertEqual(max(leaf_functions, key=leaf_functions.get), 'slow_path')
        self.assertAlmostEqual(widths['all'], widths['middle'], delta=1)

    def test_svg_zooms_and_searches(self):
        # click to zoom, reset, search: driven in jsdom (issue 31.4)
        svg = self.export('svg')
        modules = jsdom_modules()
        r = self.run_cmd(['node', os.path.join(os.path.dirname(__file__), 'svg_check.js'),
                          modules, svg, 'slow_path', 'fast'])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        seen = json.loads(r.stdout)
        self.assertAlmostEqual(seen['zoomed']['target'], seen['before']['all'], delta=0.5)
        self.assertIn('fast_path', seen['zoomed']['hidden'])
        self.assertEqual(seen['zoomed']['unzoom'], '1')
        self.assertAlmostEqual(seen['reset']['target'], seen['before']['target'], delta=0.01)
        self.assertEqual(seen['marked'], ['fast_path'])
        share = float(re.fullmatch(r'Matched: ([0-9.]+)%', seen['matched']).group(1))
        self.assertBetween(share, 10, 35, 'fast_path share')

    def test_bad_requests_leave_nothing(self):
        r = self.run_cmd([EXPORT, '-q', '-t', 'svg', '--stacks', 'gpu', self.report()])
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown --stacks 'gpu'", r.stderr.decode())
        r = self.run_cmd([EXPORT, '-q', '-t', 'json', '--stacks', 'osrt', self.report()])
        self.assertEqual(r.returncode, 2)
        self.assertIn('applies to the flame types', r.stderr.decode())
        out = self.path('none.svg')
        r = self.run_cmd([EXPORT, '-q', '-t', 'svg', '-o', out, self.report()])  # cpu: none
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.decode().strip().splitlines()), 1)
        self.assertIn('no CPU samples', r.stderr.decode())
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith('none')], [])
        r = self.run_cmd([EXPORT, '-q', '-t', 'pprof', '--gzip', '--stacks', 'osrt',
                          self.report()])
        self.assertEqual(r.returncode, 2)


_MODULES = {}


def speedscope_modules():
    """speedscope (its published schema) and ajv (a JSON-schema validator)
    from npm, installed once under the build directory; the test is skipped,
    saying why, where npm cannot get them."""
    if 'dir' in _MODULES:
        return _MODULES['dir']
    target = os.path.join(BUILD, 'npm-speedscope')
    schema = os.path.join(target, 'node_modules', 'speedscope', 'dist', 'release',
                          'file-format-schema.json')
    if not os.path.exists(schema) or not os.path.exists(os.path.join(target, 'node_modules',
                                                                     'ajv')):
        if not shutil.which('npm') or not shutil.which('node'):
            raise unittest.SkipTest('node/npm not installed: no speedscope schema')
        os.makedirs(target, exist_ok=True)
        r = subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--prefix', target,
                            'speedscope@1.25.0', 'ajv@8'], capture_output=True, timeout=300)
        if r.returncode != 0:
            raise unittest.SkipTest('npm could not install speedscope: %s'
                                    % r.stderr.decode(errors='replace').strip()[-200:])
    _MODULES['dir'] = target
    return target


def jsdom_modules():
    """jsdom from npm, installed once under the build directory; the test is
    skipped, saying why, where npm cannot get it."""
    if 'jsdom' in _MODULES:
        return _MODULES['jsdom']
    target = os.path.join(BUILD, 'npm-jsdom')
    if not os.path.exists(os.path.join(target, 'node_modules', 'jsdom')):
        if not shutil.which('npm') or not shutil.which('node'):
            raise unittest.SkipTest('node/npm not installed: no jsdom to drive the SVG')
        os.makedirs(target, exist_ok=True)
        r = subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--prefix', target,
                            'jsdom@24'], capture_output=True, timeout=300)
        if r.returncode != 0:
            raise unittest.SkipTest('npm could not install jsdom: %s'
                                    % r.stderr.decode(errors='replace').strip()[-200:])
    _MODULES['jsdom'] = target
    return target


if __name__ == '__main__':
    unittest.main(verbosity=2)
