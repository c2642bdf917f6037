"""asys-export: the timeline as Perfetto protobuf and Chrome JSON (decoded and
checked: track tree, nesting, names, flows), loaded by a third-party consumer;
CSV and SQLite exports; options; errors that leave nothing behind."""
import csv
import glob
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

import pftrace
from asys_e2e import ASYS, BIN, BUILD, STATS, AsysTestCase, prog

EXPORT = os.path.join(BIN, 'asys-export')
JSON_CHECK = prog('json_trace_check')
WORKLOAD = prog('hggc_workload')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
HERE = os.path.dirname(os.path.abspath(__file__))
PERCENT = re.compile(r'^\d+\.\d% ')
# rows the export adds to the stream_pct tree (not percentages of it)
ADDED_ROWS = ('Kernels (all streams)', 'Memory (all streams)', 'HGTX')


def sanitized(raw):
    """What an export makes of bytes: each byte that does not start valid
    UTF-8 becomes U+FFFD (asys_utf8_sequence's rule)."""
    out, i = [], 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            chunk = raw[i:i + n]
            try:
                text = chunk.decode('utf-8')
            except UnicodeDecodeError:
                continue
            out.append(text)
            i += n
            break
        else:
            out.append('\ufffd')
            i += 1
    return ''.join(out)


class ExportCase(AsysTestCase):
    def export(self, *args, expect_rc=0, name='rep'):
        r = self.run_cmd([EXPORT, '-q', *args, self.report(name)])
        if expect_rc is not None:
            self.assertEqual(r.returncode, expect_rc, 'asys-export %s: %s'
                             % (' '.join(args), r.stderr.decode(errors='replace')))
        return r

    def pftrace(self, *args, name='rep'):
        out = self.path('out.pftrace')
        self.export('-t', 'pftrace', '-o', out, '--force-overwrite', *args, name=name)
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [], 'the pftrace does not check out')
        return trace

    def chrome_json(self, *args, name='rep'):
        out = self.path('out.json')
        self.export('-t', 'json', '-o', out, '--force-overwrite', *args, name=name)
        check = subprocess.run([JSON_CHECK, out], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, 'json_trace_check: ' + check.stdout + check.stderr)
        with open(out, 'rb') as f:
            raw = f.read()
        self.assertNotRegex(raw, rb'[\x00-\x1f]"', 'raw control character in a string')
        return json.loads(raw.decode('utf-8'), parse_constant=self.fail)  # strict UTF-8

    def assertNothingLeft(self, pattern):
        left = glob.glob(self.path(pattern)) + glob.glob(self.path('.*' + pattern))
        self.assertEqual(left, [], 'files left behind')


def json_threads(doc):
    """{(pid, tid): thread_name} of a Chrome JSON export."""
    return {(e['pid'], e['tid']): e['args']['name'] for e in doc['traceEvents']
            if e['ph'] == 'M' and e['name'] == 'thread_name'}


def json_flow_count(doc):
    v2 = sum(1 for e in doc['traceEvents'] if e.get('flow_out'))
    v1 = sum(1 for e in doc['traceEvents'] if e['ph'] == 's')
    return v1 + v2


@unittest.skipUnless(os.path.exists(WORKLOAD), 'nvcc was not found when building')
class Timeline(ExportCase):
    """The simppu workload with streams, graphs, copies, events and host waits."""

    @classmethod
    def setUpClass(cls):
        cls.recorded = tempfile.mkdtemp(prefix='asys-export-')
        r = subprocess.run([SIMPPU_RUN, ASYS, 'profile', '-t', 'hggc,hgtx,osrt', '-o',
                            os.path.join(cls.recorded, 'rep'), '--force-overwrite=true',
                            WORKLOAD, 'all'], capture_output=True,
                           env=dict(os.environ, TMPDIR=cls.recorded))
        assert r.returncode == 0, r.stderr
        subprocess.run([STATS, '-q', '-r', 'report_info', os.path.join(cls.recorded,
                                                                       'rep.asys-rep')],
                       check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.recorded, ignore_errors=True)

    def setUp(self):
        super().setUp()
        for f in ('rep.asys-rep', 'rep.sqlite'):
            shutil.copy2(os.path.join(self.recorded, f), self.path(f))

    def count(self, sql):
        con = sqlite3.connect(self.path('rep.sqlite'))
        try:
            return con.execute(sql).fetchone()[0]
        finally:
            con.close()

    def slices_under(self, trace, row):
        """Slices on the tracks (lanes included) named `row`."""
        return [e for e in trace.events_on(lambda t: t.name == row) if e.type == pftrace.BEGIN]

    def test_pftrace_tree_is_the_stream_percentage_tree(self):
        trace = self.pftrace()
        edges = {(trace.tracks[t.parent].name if t.parent else None, t.name)
                 for t in trace.tracks.values()}
        rows = self.stats_rows('stream_pct')
        by_id = {r['Id']: r['Node'] for r in rows}
        for r in rows:
            parent = by_id[r['Parent Id']] if r['Parent Id'] else None
            self.assertIn((parent, r['Node']), edges)
        devices = [t for t in trace.tracks.values() if t.parent == 0 and t.pid is None]
        self.assertEqual([t.name for t in devices], [r['Node'] for r in rows if r['Level'] == '0'])
        for t in trace.tracks.values():
            top = trace.path(t.uuid)
            if t.parent and top[0] in [d.name for d in devices] and not t.counter:
                self.assertTrue(PERCENT.match(t.name) or t.name in ADDED_ROWS, t.name)
        self.assertTrue(any(t.name.endswith('[All Stream]') for t in trace.tracks.values()))

    def test_pftrace_host_rows_and_counts(self):
        trace = self.pftrace()
        processes = [t for t in trace.tracks.values() if t.pid is not None]
        self.assertEqual(len(processes), 1)
        self.assertEqual(processes[0].name, 'hggc_workload (%d)' % processes[0].pid)
        api = self.slices_under(trace, 'HGGC API')
        self.assertEqual(len(api), self.count('SELECT COUNT(*) FROM hggc_api_calls'))
        for e in api:
            self.assertEqual(trace.path(e.track)[:1], [processes[0].name])
        self.assertEqual(len(self.slices_under(trace, 'OS runtime')),
                         self.count('SELECT COUNT(*) FROM osrt_calls'))
        self.assertEqual(len(self.slices_under(trace, 'Kernels (all streams)')),
                         self.count('SELECT COUNT(*) FROM ppu_activities WHERE kind = 1'))
        self.assertEqual(len(self.slices_under(trace, 'Memory (all streams)')),
                         self.count('SELECT COUNT(*) FROM ppu_activities WHERE kind IN (2, 3)'))
        kernels = {e.name for e in self.slices_under(trace, 'Kernels (all streams)')}
        self.assertIn('void ops::scale<float>(float*, float, int)', kernels)
        counters = [e for e in trace.events if e.type == pftrace.COUNTER]
        self.assertTrue(counters)
        device_memory = [e.value for e in trace.events_on(
            lambda t: t.name.startswith('Device memory'))]
        self.assertGreater(max(device_memory), 0)
        self.assertEqual(device_memory[-1], 0)  # everything freed at the end

    def test_pftrace_flows(self):
        trace = self.pftrace()
        launch = [(s, d) for s, d in trace.flows if trace.tracks[s.track].name == 'HGGC API']
        self.assertEqual(len(launch), self.count(
            'SELECT COUNT(*) FROM ppu_activities p JOIN hggc_api_calls a ON a.id = p.api_id'))
        deps = [(s, d) for s, d in trace.flows if (s, d) not in launch]
        self.assertEqual(len(deps), self.count(
            'SELECT COUNT(*) FROM ppu_deps WHERE effective'))
        self.assertTrue(any(trace.tracks[d.track].name == 'HGGC API' for _, d in deps),
                        'no host-wait dependency flow')
        for source, dest in launch:
            self.assertNotEqual(trace.path(dest.track)[0], trace.path(source.track)[0])

    def test_json_same_timeline(self):
        trace = self.pftrace()
        doc = self.chrome_json()
        xs = [e for e in doc['traceEvents'] if e['ph'] == 'X']
        self.assertEqual(len(xs), sum(1 for e in trace.events if e.type == pftrace.BEGIN))
        self.assertEqual(json_flow_count(doc), len(trace.flows))
        self.assertEqual(sum(1 for e in doc['traceEvents'] if e['ph'] == 'C'),
                         sum(1 for e in trace.events if e.type == pftrace.COUNTER))
        names = set(json_threads(doc).values())
        self.assertTrue(any(n.endswith('/ HGGC API') for n in names), names)
        self.assertTrue(any('[All Stream]' in n for n in names), names)
        # microseconds since the session start, three decimals
        con = sqlite3.connect(self.path('rep.sqlite'))
        start = con.execute("SELECT value FROM session_info WHERE key = 'start_ns'").fetchone()[0]
        first = con.execute('SELECT MIN(start_ns) FROM hggc_api_calls').fetchone()[0]
        con.close()
        api = [e for e in xs if e['cat'] == 'hggc' and e['pid'] < 0x10000000]
        self.assertAlmostEqual(min(e['ts'] for e in api), (first - int(start)) / 1000.0,
                               places=3)

    def test_json_in_a_third_party_consumer(self):
        engine = trace_engine()
        doc = self.chrome_json()
        r = subprocess.run(['node', os.path.join(HERE, 'trace_engine_load.mjs'), engine,
                            self.path('out.json')], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        loaded = json.loads(r.stdout)
        threads = json_threads(doc)
        xs_per_thread = {}
        for e in doc['traceEvents']:
            if e['ph'] == 'X':
                key = '%d/%d' % (e['pid'], e['tid'])
                xs_per_thread[key] = xs_per_thread.get(key, 0) + 1
        self.assertEqual({k: v['entries'] for k, v in loaded['threads'].items()}, xs_per_thread)
        self.assertEqual({v['name'] for v in loaded['threads'].values()},
                         {threads[tuple(map(int, k.split('/')))] for k in xs_per_thread})
        self.assertGreater(loaded['flows'], 0)

    def test_filter_time(self):
        con = sqlite3.connect(self.path('rep.sqlite'))
        start = int(con.execute("SELECT value FROM session_info WHERE key = 'start_ns'")
                    .fetchone()[0])
        lo, hi = con.execute('SELECT MIN(start_ns), MAX(end_ns) FROM ppu_activities').fetchone()
        con.close()
        lo, hi = lo + (hi - lo) // 4, lo + (hi - lo) // 2
        window = '%dns/%dns' % (lo - start, hi - start)
        trace = self.pftrace('--filter-time', window)
        for e in trace.events:
            if e.type != pftrace.COUNTER:
                self.assertBetween(e.ts, lo, hi, 'event time')
        self.assertEqual(len(self.slices_under(trace, 'Kernels (all streams)')), self.count(
            'SELECT COUNT(*) FROM ppu_activities WHERE kind = 1 AND end_ns >= %d '
            'AND start_ns <= %d' % (lo, hi)))
        self.chrome_json('--filter-time', window)

    def test_tables(self):
        trace = self.pftrace('--tables', '^hggc_api_calls$')
        self.assertEqual({t.name for t in trace.tracks.values() if t.name.endswith(')')
                          and t.parent}, {'hggc_workload (%d)' % t.pid for t in
                                          trace.tracks.values() if t.pid})
        self.assertEqual(trace.flows, [])
        self.assertFalse([t for t in trace.tracks.values() if t.name.startswith('PPU')])
        device = self.pftrace('--tables', 'ppu_activities')
        self.assertFalse([t for t in device.tracks.values() if t.name == 'HGGC API'])
        self.assertEqual(device.flows, [])
        # dependencies without the host calls: device-to-device flows only, none left
        # dangling toward a synchronizing call that is not drawn (pftrace() checks)
        deps = self.pftrace('--tables', '^ppu_')
        self.assertEqual(len(deps.flows), self.count(
            'SELECT COUNT(*) FROM ppu_deps WHERE effective AND activity_id IS NOT NULL'))
        self.chrome_json('--tables', '^ppu_')
        r = self.export('--tables', '(', expect_rc=2)
        self.assertIn(b'bad --tables', r.stderr)

    def test_group_kernels_and_api_name_mode(self):
        def kernel_groups(trace):
            return {t.name.split('% ', 1)[1] for t in trace.tracks.values()
                    if t.parent and trace.tracks[t.parent].name.endswith('% Kernels')}
        trace = self.pftrace('--group-by', 'hgtx', '--api-name-mode', 'kernel')
        groups = kernel_groups(trace)
        # the old spelling is the same option
        self.assertEqual(kernel_groups(self.pftrace('--group-kernels', 'hgtx', '--api-name-mode',
                                                    'kernel')), groups)
        rows = self.stats_rows('stream_pct', 'rep', '--group-by', 'hgtx')
        self.assertEqual(groups, {r['Node'].split('% ', 1)[1] for r in rows
                                  if r['Kind'] == 'kernel group'})
        # launches named by their kernel (those that launched one)
        api_names = [e.name for e in self.slices_under(trace, 'HGGC API')]
        host_names = [e.name for e in self.slices_under(self.pftrace(), 'HGGC API')]
        self.assertIn('void ops::scale<float>(float*, float, int)', api_names)
        self.assertNotIn('void ops::scale<float>(float*, float, int)', host_names)
        self.assertLess(api_names.count('cudaLaunchKernel'), host_names.count('cudaLaunchKernel'))

    def test_gzip(self):
        plain = self.pftrace()
        self.export('--gzip')
        with open(self.path('rep.pftrace.gz'), 'rb') as f:
            self.assertEqual(f.read(2), b'\x1f\x8b')
        packed = pftrace.read(self.path('rep.pftrace.gz'))
        self.assertEqual(packed.problems, [])
        self.assertEqual(len(packed.events), len(plain.events))
        self.export('-t', 'json', '--gzip')
        import gzip
        with gzip.open(self.path('rep.json.gz')) as f:
            self.assertIn('traceEvents', json.load(f))

    def test_csv_tables_and_reports(self):
        self.export('-t', 'csv', '--tables', '^(hggc_api_calls|strings)$')
        self.assertEqual(sorted(os.listdir(self.dir)), ['rep.asys-rep', 'rep.sqlite',
                                                        'rep_hggc_api_calls.csv',
                                                        'rep_strings.csv'])
        with open(self.path('rep_strings.csv'), newline='') as f:
            rows = list(csv.reader(f))
        self.assertEqual(len(rows) - 1, self.count('SELECT COUNT(*) FROM strings'))
        con = sqlite3.connect(self.path('rep.sqlite'))
        self.assertEqual(rows[0], [d[1] for d in con.execute('PRAGMA table_info(strings)')])
        con.close()
        self.export('-t', 'csv', '-o', self.path('r'), '--report', 'hggc_kern_sum,stream_pct')
        stats = self.stats('-q', '-r', 'hggc_kern_sum', '-f', 'csv', self.report()).stdout
        with open(self.path('r_hggc_kern_sum.csv'), 'rb') as f:
            self.assertEqual(f.read(), stats)
        self.assertTrue(os.path.exists(self.path('r_stream_pct.csv')))
        r = self.export('-t', 'csv', '--report', 'no_such_report', expect_rc=1)
        self.assertIn(b"unknown report 'no_such_report'", r.stderr)

    def test_csv_all_tables(self):
        self.export('-t', 'csv', '-o', self.path('all'))
        con = sqlite3.connect(self.path('rep.sqlite'))
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_schema WHERE type = "
                                            "'table' AND name NOT LIKE 'sqlite%'")]
        con.close()
        self.assertEqual(sorted(glob.glob(self.path('all_*.csv'))),
                         sorted(self.path('all_%s.csv' % t) for t in tables))

    def test_sqlite(self):
        self.export('-t', 'sqlite', '-o', self.path('copy.sqlite'))
        con = sqlite3.connect(self.path('copy.sqlite'))
        self.assertEqual(con.execute('SELECT COUNT(*) FROM ppu_activities').fetchone()[0],
                         self.count('SELECT COUNT(*) FROM ppu_activities'))
        self.assertTrue(con.execute('SELECT COUNT(*) FROM ppu_activity_names').fetchone()[0])
        con.close()
        self.export('-t', 'sqlite', '-o', self.path('part.sqlite'), '--tables', '^hggc_')
        con = sqlite3.connect(self.path('part.sqlite'))
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        for view, in con.execute("SELECT name FROM sqlite_schema WHERE type = 'view'"):
            con.execute('SELECT * FROM "%s" LIMIT 1' % view)  # the views left still work
        con.close()
        self.assertTrue(tables and all(t.startswith('hggc_') for t in tables), tables)
        # the default output is the analysis database itself
        r = self.export('-t', 'sqlite', '-v')
        self.assertIn(b'is the analysis database', r.stderr)


class Hostile(ExportCase):
    """Names with quotes, controls and invalid UTF-8; overlapping ranges."""

    RAW = [b'quote" backslash\\ slash/', b'tab\t newline\n return\r',
           b'controls \x01\x02\x1b\x1f del\x7f', b'bad utf8 \xff\xfe lone \x80 truncated \xc3',
           b'overlong \xc0\xaf surrogate \xed\xa0\x80 end',
           b'"},{"ph":"X","name":"injected', b'comma, "csv"\nrow',
           b'multi-byte \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e', b'']

    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_hostile')], options=['-t', 'hgtx'])

    def test_names_survive_pftrace(self):
        trace = self.pftrace()
        slices = [e.name for e in trace.events if e.type == pftrace.BEGIN]
        marks = [e.name for e in trace.events if e.type == pftrace.INSTANT]
        for raw in self.RAW:
            self.assertIn(sanitized(raw), slices)
            self.assertIn(sanitized(raw), marks)
        self.assertIn('x' * 9999, slices)
        names = {t.name for t in trace.tracks.values()}
        self.assertIn('HGTX: dom"ain\\ \ufffd', names)
        self.assertTrue(any(n.startswith('th"re\\ad (') for n in names), names)
        # the start/end range overlaps the long push/pop range: a second lane
        hgtx = [t for t in trace.tracks.values() if t.name == 'HGTX']
        self.assertEqual(len(hgtx), 2)

    def test_names_survive_json(self):
        doc = self.chrome_json()
        xs = [e['name'] for e in doc['traceEvents'] if e['ph'] == 'X']
        marks = [e['name'] for e in doc['traceEvents'] if e['ph'] == 'i']
        for raw in self.RAW:
            self.assertIn(sanitized(raw), xs)
            self.assertIn(sanitized(raw), marks)
        threads = set(json_threads(doc).values())
        self.assertTrue(any(n.endswith('/ HGTX: dom"ain\\ \ufffd') for n in threads), threads)
        self.assertTrue(any(n.endswith('/ HGTX [lane 2]') for n in threads), threads)

    def test_stats_outputs_are_valid_utf8(self):
        # asys-stats writes names as the exports do: each byte that does not
        # start valid UTF-8 becomes U+FFFD, in every format
        names = [sanitized(raw) for raw in self.RAW]
        for fmt in ('column', 'table', 'csv', 'tsv', 'json'):
            out = self.stats('-q', '-r', 'hgtx_trace', '-f', fmt, self.report()).stdout
            text = out.decode('utf-8')  # strict: raises on invalid UTF-8
            self.assertIn('\\ufffd' if fmt == 'json' else '\ufffd', text, '%s: no U+FFFD' % fmt)
            if fmt == 'json':
                rows = json.loads(text, strict=True)
                self.assertLessEqual(set(names), {r['Name'] for r in rows})
            elif fmt == 'csv':
                rows = list(csv.DictReader(io.StringIO(text, newline='')))
                self.assertLessEqual(set(names), {r['Name'] for r in rows})
        # csv tables through asys-export, the same
        self.export('-t', 'csv', '--tables', '^strings$')
        with open(self.path('rep_strings.csv'), 'rb') as f:
            values = {r[1] for r in csv.reader(io.StringIO(f.read().decode('utf-8'), newline=''))}
        self.assertLessEqual(set(names), values)

    def test_csv_quoting(self):
        self.export('-t', 'csv', '--tables', '^strings$')
        with open(self.path('rep_strings.csv'), 'rb') as f:
            values = [r[1] for r in csv.reader(io.StringIO(f.read().decode('utf-8', 'replace'),
                                                           newline=''))][1:]
        self.assertIn('comma, "csv"\nrow', values)
        self.assertIn('"},{"ph":"X","name":"injected', values)


class Errors(ExportCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_loop'), '20000'], options=['-t', 'hgtx'])

    def assertOneLine(self, r, text, rc=1):
        self.assertEqual(r.returncode, rc, r.stderr)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(text, lines[0])
        self.assertTrue(lines[0].startswith('asys-export: '), lines[0])

    def test_output_below_a_file(self):
        with open(self.path('file'), 'w'):
            pass
        r = self.export('-o', self.path('file/x.pftrace'), expect_rc=None)
        self.assertOneLine(r, "cannot write '%s': Not a directory" % self.path('file/x.pftrace'))

    def test_read_only_directory(self):
        os.mkdir(self.path('ro'))
        os.chmod(self.path('ro'), 0o500)
        if os.access(self.path('ro'), os.W_OK):
            self.skipTest('running as a user who can write anywhere')
        r = self.export('-o', self.path('ro/x.pftrace'), expect_rc=None)
        self.assertOneLine(r, "cannot write '%s'" % self.path('ro/x.pftrace'))
        self.assertEqual(os.listdir(self.path('ro')), [])

    def test_missing_directory(self):
        for kind in ('pftrace', 'json', 'sqlite'):
            r = self.export('-t', kind, '-o', self.path('nodir/x'), expect_rc=None)
            self.assertOneLine(r, 'No such file or directory')
        r = self.export('-t', 'csv', '-o', self.path('nodir/x'), expect_rc=None)
        self.assertOneLine(r, 'No such file or directory')

    def test_existing_file_needs_force(self):
        self.export()
        r = self.export(expect_rc=None)
        self.assertOneLine(r, 'file exists (use --force-overwrite)')
        self.export('--force-overwrite')
        self.assertNothingLeft('rep.pftrace.*')

    def test_write_failure_leaves_nothing(self):
        # a file size limit makes writes fail midway, as a full disk would
        def limit():
            import resource
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
        self.db()  # imported before the limit
        for kind in ('pftrace', 'json', 'csv'):
            r = subprocess.run([EXPORT, '-q', '-t', kind, '-o', self.path('big'),
                                self.report()], cwd=self.dir, capture_output=True,
                               preexec_fn=limit)
            self.assertOneLine(r, 'File too large')
            self.assertEqual(sorted(os.listdir(self.dir)), ['rep.asys-rep', 'rep.sqlite'])

    def test_short_options(self):
        # as nsys export: -t type, -o output, -f force-overwrite, -q, plus -v, -r, -h
        out = self.path('short.json')
        for _ in range(2):  # the second run replaces the file: -f
            r = self.run_cmd([EXPORT, '-t', 'json', '-o', out, '-f', '-q', '-v', self.report()])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(b"wrote '%s'" % out.encode(), r.stderr)
        json.load(open(out))
        r = self.run_cmd([EXPORT, '-q', '-o', out, '-f', 'false', self.report()])
        self.assertNotEqual(r.returncode, 0)  # -f false: an existing file is kept
        r = self.run_cmd([EXPORT, '-q', '-t', 'csv', '-r', 'hgtx_sum', '-o', self.path('s'),
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.path('s_hgtx_sum.csv')))
        usage = self.run_cmd([EXPORT, '-h']).stdout.decode()
        for option in ('-t, --type', '-o, --output', '-f, --force-overwrite', '-q, --quiet',
                       '-v, --verbose', '-r, --report', '-h, --help'):
            self.assertIn(option, usage)

    def test_bad_options(self):
        cases = [(['-t', 'svg'], "unknown type 'svg'"),
                 (['--api-name-mode', 'x'], '--api-name-mode takes host or kernel'),
                 (['--group-kernels', 'x'], '--group-kernels takes base or hgtx'),
                 (['--group-by', 'x'], '--group-by takes base or hgtx'),
                 (['--filter-time', 'x'], "bad --filter-time 'x'"),
                 (['-t', 'sqlite', '--gzip'], '--gzip does not apply to sqlite'),
                 (['-t', 'sqlite', '--filter-time', '1s/'], '--filter-time applies to'),
                 (['--report', 'hgtx_sum'], '--report needs --type csv'),
                 (['--bogus'], "unknown option '--bogus'")]
        for args, text in cases:
            r = self.export(*args, expect_rc=None)
            self.assertOneLine(r, text, rc=2)
        self.assertNothingLeft('rep.pftrace*')

    def test_bad_report(self):
        with open(self.path('foreign.asys-rep'), 'wb') as f:
            f.write(b'not a report at all\n' * 10)
        r = self.export(name='foreign', expect_rc=None)
        self.assertOneLine(r, "cannot open '%s'" % self.path('foreign.asys-rep'))
        self.assertNothingLeft('foreign.pftrace*')
        r = self.export(name='missing', expect_rc=None)
        self.assertOneLine(r, "cannot open '%s'" % self.path('missing.asys-rep'))

    def test_progress_bar_on_a_terminal(self):
        import pty
        self.profile([prog('hgtx_loop'), '300000'], options=['-t', 'hgtx'], name='big')
        self.db('big')
        for tty in (True, False):
            master, slave = pty.openpty()
            err = slave if tty else subprocess.PIPE
            p = subprocess.Popen([EXPORT, '--force-overwrite', self.report('big')], cwd=self.dir,
                                 stdout=subprocess.DEVNULL, stderr=err)
            os.close(slave)
            if tty:
                chunks = []
                while True:
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    chunks.append(chunk)
                text = b''.join(chunks)
            else:
                text = p.stderr.read()
            self.assertEqual(p.wait(), 0)
            os.close(master)
            if tty:
                self.assertRegex(text, rb'asys-export: exporting \[#+\.*\] +\d+%')
            else:
                self.assertEqual(text, b'')

    def test_asys_export_alias(self):
        r = self.run_cmd([ASYS, 'export', '-q', '-t', 'json', self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.path('rep.json')))


_ENGINE = {}


def trace_engine():
    """DevTools' trace model from npm, installed once under the build
    directory; the test is skipped, saying why, where npm cannot get it."""
    if 'dir' in _ENGINE:
        return _ENGINE['dir']
    target = os.path.join(BUILD, 'npm-trace-engine')
    engine = os.path.join(target, 'node_modules', '@paulirish', 'trace_engine')
    if not os.path.exists(os.path.join(engine, 'models', 'trace', 'trace.js')):
        if not shutil.which('npm') or not shutil.which('node'):
            raise unittest.SkipTest('node/npm not installed: no third-party JSON consumer')
        os.makedirs(target, exist_ok=True)
        r = subprocess.run(['npm', 'install', '--no-audit', '--no-fund', '--prefix', target,
                            '@paulirish/trace_engine@0.0.65'], capture_output=True, timeout=300)
        if r.returncode != 0:
            raise unittest.SkipTest('npm could not install @paulirish/trace_engine: %s'
                                    % r.stderr.decode(errors='replace').strip()[-200:])
    _ENGINE['dir'] = engine
    return engine


if __name__ == '__main__':
    unittest.main(verbosity=2)
