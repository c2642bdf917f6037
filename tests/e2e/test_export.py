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
        # -s none: these rows are HGGC's, HGTX's and OSRT's (test_cpu_sampling has the CPU's)
        r = subprocess.run([SIMPPU_RUN, ASYS, 'profile', '-t', 'hggc,hgtx,osrt', '-s', 'none',
                            '-o',
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

    def test_thread_names_row_order_units_and_late_instants(self):
        # issue 31.12: an unnamed thread has its process's name, not "thread";
        # API rows in one order; counters carry a unit; the instant a late
        # flow ends on lies beside its slice, as in the JSON
        trace = self.pftrace()
        threads = [t for t in trace.tracks.values() if t.is_thread()]
        self.assertGreater(len(threads), 1)
        self.assertNotIn('thread', {t.thread_name for t in threads})
        self.assertEqual({t.thread_name for t in threads}, {'hggc_workload'})
        order = ['HGGC API', 'OS runtime', 'HGTX']
        for parent in {t.parent for t in trace.tracks.values() if t.name in order}:
            names = [t.name for t in sorted((t for t in trace.tracks.values()
                                             if t.parent == parent and t.name in order),
                                            key=lambda t: t.rank)]
            self.assertEqual(names, [n for n in order if n in names])
        counters = [t for t in trace.tracks.values() if t.counter]
        self.assertTrue(counters)
        self.assertEqual([t.name for t in counters if not t.unit], [])
        stacks, late = {}, 0
        for e in trace.events:
            stack = stacks.setdefault(e.track, [])
            if e.type == pftrace.BEGIN:
                stack.append(e)
            elif e.type == pftrace.END:
                stack.pop()
            elif e.type == pftrace.INSTANT and e.terminating:
                late += 1
                self.assertFalse(stack and stack[-1].ts <= e.ts and
                                 self.slice_end(trace, stack[-1]) == e.ts,
                                 'a late-flow instant inside the slice it ends: %r' % e)
        self.assertGreater(late, 0)

    @staticmethod
    def slice_end(trace, begin):
        for e in trace.events[trace.events.index(begin):]:
            if e.type == pftrace.END and e.slice is begin:
                return e.ts
        return None

    def test_concurrent_device_work_is_never_nested(self):
        # issue 31.11: step_c() ran inside step_b()'s time on the graph exec and
        # "Kernels (all streams)" rows and was drawn as its child; device work
        # that overlaps goes to lanes, one inside the other too
        trace = self.pftrace()
        depth, nested = {}, []
        for e in trace.events:  # each track's events come in its order
            if e.type == pftrace.BEGIN:
                if depth.get(e.track, 0) and self.is_device_row(trace, e.track):
                    nested.append('%s in %s' % (e.name, trace.path(e.track)))
                depth[e.track] = depth.get(e.track, 0) + 1
            elif e.type == pftrace.END:
                depth[e.track] = depth.get(e.track, 1) - 1
        self.assertEqual(nested, [])
        # and there was concurrency to draw: some device row has lanes
        names = [t.name for t in trace.tracks.values() if self.is_device_row(trace, t.uuid)]
        self.assertTrue(any(names.count(n) > 1 for n in names), names)

    @staticmethod
    def is_device_row(trace, uuid):
        """A row of device work: under a PPU, not an HGTX projection."""
        t = trace.tracks[uuid]
        if t.name.startswith('HGTX') or t.counter:
            return False
        while t.parent:
            t = trace.tracks[t.parent]
            if t.name.startswith('HGTX'):
                return False
            if t.name.startswith('PPU '):
                return True
        return False

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

    def rows(self, sql):
        con = sqlite3.connect(self.path('rep.sqlite'))
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def test_pftrace_host_rows_and_counts(self):
        trace = self.pftrace()
        processes = [t for t in trace.tracks.values() if t.is_process()]
        self.assertEqual(len(processes), 1)
        self.assertEqual(processes[0].name, 'hggc_workload (%d)' % processes[0].pid)
        self.assertEqual(processes[0].process_name, 'hggc_workload')  # the UI adds the pid
        api = self.slices_under(trace, 'HGGC API')
        self.assertEqual(len(api), self.count('SELECT COUNT(*) FROM hggc_api_calls'))
        for e in api:
            self.assertEqual(trace.path(e.track)[:1], [processes[0].name])
        self.assertEqual(len(self.slices_under(trace, 'OS runtime')),
                         self.count('SELECT COUNT(*) FROM osrt_calls'))
        # every thread is a thread track, and its rows' slices are that thread's
        threads = {(t.pid, t.tid): t for t in trace.tracks.values() if t.is_thread()}
        names = dict(((pid, tid), name) for pid, tid, name in self.rows(
            'SELECT t.pid, t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id'))
        self.assertEqual(set(threads), {(pid, tid) for pid, tid in self.rows(
            'SELECT pid, tid FROM hggc_api_calls UNION SELECT pid, tid FROM osrt_calls '
            'UNION SELECT pid, tid FROM hgtx_events')})
        for key, t in threads.items():
            self.assertEqual(t.thread_name, names[key])  # without the tid: the UI adds it
            self.assertEqual(t.name, '%s (%d)' % (names[key], key[1]))
        for row, table in (('HGGC API', 'hggc_api_calls'), ('OS runtime', 'osrt_calls')):
            drawn = {}
            for e in self.slices_under(trace, row):
                scope = trace.tracks[e.track].scope
                self.assertEqual(scope[0], 'thread', row)
                drawn[scope[1:]] = drawn.get(scope[1:], 0) + 1
            self.assertEqual(drawn, {(pid, tid): n for pid, tid, n in self.rows(
                'SELECT pid, tid, COUNT(*) FROM %s GROUP BY pid, tid' % table)})
        # each call with its result and correlation id
        calls = sorted((e.ts, e.args['result'], e.args['correlation_id']) for e in api)
        self.assertEqual(calls, sorted(self.rows(
            'SELECT start_ns, result, correlation_id FROM hggc_api_calls')))
        self.assertTrue(any(result != 0 for _, result, _ in calls))  # the failing calls
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

    def test_flows_never_drawn_backwards(self):
        # device work stamped before its launch call (a real device's clock skew
        # can do that) and synchronizing calls that began before the work they
        # waited for: their flows end on an instant at the destination's end,
        # after the source began (pftrace() and json_trace_check check that no
        # flow is drawn backwards)
        con = sqlite3.connect(self.path('rep.sqlite'))
        kernel, call_start, kernel_end = con.execute(
            'SELECT p.id, a.start_ns, p.end_ns FROM ppu_activities p '
            'JOIN hggc_api_calls a ON a.id = p.api_id '
            'WHERE p.kind = 1 AND p.graph_id IS NULL ORDER BY p.id LIMIT 1').fetchone()
        con.execute('UPDATE ppu_activities SET start_ns = ? WHERE id = ?',
                    (call_start - 500, kernel))
        # the import's packed copy for the export would still draw the kernel where it was
        con.execute('DELETE FROM ppu_activity_pages')
        con.commit()
        con.close()
        trace = self.pftrace()
        late = [(s, d) for s, d in trace.flows if d.type == pftrace.INSTANT]
        for source, dest in late:
            self.assertGreater(dest.ts, source.ts)
        skewed = [(s, d) for s, d in late if trace.tracks[s.track].name == 'HGGC API'
                  and d.ts == kernel_end]
        self.assertEqual(len(skewed), 1, 'the launch flow of the skewed kernel')
        self.assertTrue(any(trace.tracks[d.track].name == 'HGGC API' for _, d in late),
                        'a host wait that began before the work it waited for')
        # every flow is still drawn: one per launched activity and effective dependency
        self.assertEqual(len(trace.flows), self.count(
            'SELECT COUNT(*) FROM ppu_activities p JOIN hggc_api_calls a ON a.id = p.api_id')
            + self.count('SELECT COUNT(*) FROM ppu_deps WHERE effective'))
        doc = self.chrome_json()
        self.assertEqual(json_flow_count(doc), len(trace.flows))
        instants = [e for e in doc['traceEvents'] if e['ph'] == 'i' and e['cat'] == 'hggc']
        self.assertEqual(len(instants), len({d.index for _, d in late}))

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
        # the threads keep their real pid and tid: the first row of each is that thread
        threads = json_threads(doc)
        for pid, tid, comm in self.rows(
                'SELECT t.pid, t.tid, s.value FROM threads t JOIN strings s ON s.id = t.name_id '
                'WHERE EXISTS (SELECT 1 FROM hggc_api_calls a WHERE a.tid = t.tid) '
                'OR EXISTS (SELECT 1 FROM osrt_calls o WHERE o.tid = t.tid)'):
            self.assertTrue(threads[(pid, tid)].startswith('%s (%d) / ' % (comm, tid)),
                            threads.get((pid, tid)))
        processes = {e['pid']: e['args']['name'] for e in doc['traceEvents']
                     if e['ph'] == 'M' and e['name'] == 'process_name'}
        (pid,) = [p for p in processes if p < 0x10000000]
        self.assertEqual(processes[pid], 'hggc_workload')  # consumers add the pid
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

    def test_pages_draw_what_the_tables_do(self):
        # issue 30.5: the import packs the activities and the calls for the export
        # (ppu_activity_pages, hggc_api_pages); without them (an older or edited database)
        # it reads ppu_activities and hggc_api_calls: the same bytes either way
        con = sqlite3.connect(self.path('rep.sqlite'))
        start = int(con.execute("SELECT value FROM session_info WHERE key = 'start_ns'")
                    .fetchone()[0])
        lo, hi = con.execute('SELECT MIN(start_ns), MAX(end_ns) FROM ppu_activities').fetchone()
        window = '%dns/%dns' % (lo + (hi - lo) // 4 - start, lo + (hi - lo) // 2 - start)
        variants = [('-t', 'pftrace'), ('-t', 'json', '--api-name-mode', 'kernel'),
                    ('-t', 'pftrace', '--group-by', 'hgtx'),
                    ('-t', 'json', '--filter-time', window, '--group-by', 'hgtx')]

        def outputs():
            drawn = []
            for i, variant in enumerate(variants):
                out = self.path('pages%d.out' % i)
                self.export(*variant, '-o', out, '--force-overwrite')
                with open(out, 'rb') as f:
                    drawn.append(f.read())
            return drawn
        self.assertGreater(self.count('SELECT COUNT(*) FROM ppu_activities WHERE graph_id > 0'), 0)
        pages = {}
        for table, packed in (('ppu_activities', 'ppu_activity_pages'),
                              ('hggc_api_calls', 'hggc_api_pages')):
            self.assertEqual(self.count('SELECT TOTAL(rows) FROM ' + packed),
                             self.count('SELECT COUNT(*) FROM ' + table))
            pages[packed] = con.execute('SELECT first_id, rows, data FROM ' + packed).fetchall()
        drawn = outputs()
        for packed in pages:
            con.execute('DELETE FROM ' + packed)
            con.commit()
            self.assertEqual(outputs(), drawn, 'without ' + packed)
        # a page is read as untrusted: one cut short is an error, not a crash or a guess
        for packed, rows in pages.items():
            first_id, count, data = rows[0]
            con.execute('INSERT INTO %s VALUES (?, ?, ?)' % packed,
                        (first_id, count, data[:len(data) // 2]))
            con.executemany('INSERT INTO %s VALUES (?, ?, ?)' % packed, rows[1:])
            con.commit()
            r = self.export('-t', 'json', '-o', self.path('cut.json'), '--force-overwrite',
                            expect_rc=None)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(packed.encode() + b': corrupt page', r.stderr)
            con.execute('DELETE FROM ' + packed)
            con.commit()
        con.close()

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
        r = self.export('-t', 'csv', '--report', 'no_such_report', expect_rc=2)
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


class ProcessParents(ExportCase):
    """Every process is in the timeline with its parent and command line, also
    without events (issue 31.10)."""

    def test_parents_and_command_lines(self):
        self.profile([prog('process_tree'), '3'], ['-t', 'osrt', '-s', 'none'])
        trace = self.pftrace()
        rows = dict(self.db().execute('SELECT pid, ppid FROM processes'))
        processes = {t.pid: t for t in trace.tracks.values() if t.is_process()}
        self.assertEqual(set(processes), set(rows))
        children = [pid for pid, ppid in rows.items() if ppid in rows]
        self.assertEqual(len(children), 3, rows)
        for pid in children:
            self.assertEqual(trace.parents[pid][0], rows[pid])
            self.assertTrue(processes[pid].cmdline.endswith('process_tree child'),
                            processes[pid].cmdline)
            self.assertEqual(trace.parents[pid][1], processes[pid].cmdline)
        out = self.path('out.json')
        self.export('-t', 'json', '-o', out)
        labels = [e for e in json.load(open(out))['traceEvents']
                  if e.get('name') == 'process_labels']
        self.assertEqual({e['pid'] for e in labels}, set(rows))

    def test_a_report_without_events_still_shows_its_process(self):
        r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-s', 'none', '-o', self.path('rep'),
                          'true'])
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = self.pftrace()
        names = [t.process_name for t in trace.tracks.values() if t.is_process()]
        self.assertEqual(names, ['true'])
        self.assertGreater(os.path.getsize(self.path('out.pftrace')), 0)


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

    def test_a_directory_is_not_a_file_name(self):
        # 'file exists (use --force-overwrite)' was the answer (issue 31.14)
        os.mkdir(self.path('adir'))
        r = self.export('-o', self.path('adir'), expect_rc=None)
        self.assertOneLine(r, "cannot write '%s': it is a directory" % self.path('adir'))

    def test_says_what_it_wrote_unless_quiet(self):
        out = self.path('said.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("asys-export: wrote '%s': " % out), lines)
        r = self.run_cmd([EXPORT, '-q', '-f', '-o', out, self.report()])
        self.assertEqual((r.returncode, r.stderr), (0, b''))

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
        cases = [(['-t', 'bmp'], "unknown type 'bmp'"),
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
            else:  # no bar, only what was written
                self.assertRegex(text, rb"^asys-export: wrote '[^']*big.pftrace': [^\n]*\n$")

    def test_asys_export_alias(self):
        r = self.run_cmd([ASYS, 'export', '-q', '-t', 'json', self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.path('rep.json')))


class Processes(ExportCase):
    """Three processes (a fork, an exec), one of them with four threads."""

    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_fork'), prog('hgtx_threads'), '3', '2', '100'],
                     options=['-t', 'hgtx', '-s', 'none'])
        self.con = self.db()

    def test_pftrace_processes_threads_and_their_order(self):
        trace = self.pftrace()  # the order checks: what the ranks ask, Perfetto shows
        self.assertEqual((trace.root.process_ordering, trace.root.thread_ordering), (1, 1))
        processes = sorted((t for t in trace.tracks.values() if t.is_process()),
                           key=lambda t: t.rank)
        expected = self.con.execute(
            'SELECT p.pid, s.value FROM processes p JOIN strings s ON s.id = p.name_id '
            'ORDER BY p.pid').fetchall()
        self.assertEqual([(t.pid, t.process_name) for t in processes], expected)
        threads = [t for t in trace.tracks.values() if t.is_thread()]
        self.assertEqual(sorted((t.pid, t.tid) for t in threads), sorted(self.con.execute(
            'SELECT DISTINCT pid, tid FROM hgtx_events').fetchall()))
        for t in threads:
            # under its process, its rows under a plain track of its name that orders them
            self.assertEqual(trace.tracks[t.parent].pid, t.pid)
            (nest,) = trace.children(t.uuid)
            self.assertEqual((nest.name, nest.child_ordering, nest.tid), (t.name, 3, None))
            for row in trace.children(nest.uuid):
                self.assertIs(pftrace.nest_parent(trace, row), nest)
                self.assertEqual(row.scope, ('thread', t.pid, t.tid))
        # the main thread first, then by tid
        by_process = {}
        for t in sorted(threads, key=lambda t: t.rank):
            by_process.setdefault(t.pid, []).append(t.tid)
        for pid, tids in by_process.items():
            self.assertEqual(tids, sorted(tids, key=lambda tid: (tid != pid, tid)))
        slices = {}
        for e in trace.events:
            if e.type in (pftrace.BEGIN, pftrace.INSTANT):
                scope = trace.tracks[e.track].scope
                slices[scope] = slices.get(scope, 0) + 1
        self.assertEqual(slices, {('thread', pid, tid): n for pid, tid, n in self.con.execute(
            'SELECT pid, tid, COUNT(*) FROM hgtx_events GROUP BY pid, tid')})

    def test_json_real_pids_and_tids(self):
        doc = self.chrome_json()
        threads = json_threads(doc)
        for pid, tid in self.con.execute('SELECT DISTINCT pid, tid FROM hgtx_events'):
            self.assertIn((pid, tid), threads)
        names = {e['pid']: e['args']['name'] for e in doc['traceEvents']
                 if e['ph'] == 'M' and e['name'] == 'process_name'}
        self.assertEqual(names, dict(self.con.execute(
            'SELECT p.pid, s.value FROM processes p JOIN strings s ON s.id = p.name_id')))
        # thread_sort_index: ranks within each process, the main thread's rows first
        order = {}
        for e in doc['traceEvents']:
            if e['ph'] == 'M' and e['name'] == 'thread_sort_index':
                order.setdefault(e['pid'], []).append((e['args']['sort_index'], e['tid']))
        for pid, ranks in order.items():
            ranks.sort()
            self.assertEqual([r for r, _ in ranks], list(range(1, len(ranks) + 1)))
            if (pid, pid) in threads:
                self.assertEqual(ranks[0][1], pid)


class Arguments(ExportCase):
    """HGTX categories, colors and payloads as the events' arguments."""

    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_features')], options=['-t', 'hgtx'])

    EXPECTED = {
        'colored': {'category': 'seven', 'color': '#FF112233', 'payload': -42},
        'io-op': {'payload': 1.5},
        'red-mark': {'color': '#FFFF0000', 'payload': 77},
        'u64-max': {'payload': 18446744073709551615},
        'eighth': {'payload': 0.125},
        'plain-mark': {},
    }

    def test_pftrace_debug_annotations(self):
        trace = self.pftrace()
        events = {}
        for e in trace.events:
            if e.type in (pftrace.BEGIN, pftrace.INSTANT):
                events.setdefault(e.name, []).append(e)
        for name, args in self.EXPECTED.items():
            (e,) = events[name]
            self.assertEqual(e.args, args, name)
            for key, value in args.items():
                self.assertIs(type(e.args[key]), type(value), (name, key))
        self.assertEqual([e.args for e in events['send']],
                         [{'category': 'net-nine', 'payload': p} for p in (0.0, 2.5, 5.0)])
        # a range without attributes carries none
        self.assertEqual(events['wide-\u00e9t\u00e9'][0].args, {})

    def test_json_args(self):
        doc = self.chrome_json()
        events = {}
        for e in doc['traceEvents']:
            if e['ph'] in ('X', 'i'):
                events.setdefault(e['name'], []).append(e)
        for name, args in self.EXPECTED.items():
            (e,) = events[name]
            self.assertEqual(e.get('args', {}), args, name)
            for key, value in args.items():
                self.assertIs(type(e['args'][key]), type(value), (name, key))
        self.assertEqual([e['args'] for e in events['send']],
                         [{'category': 'net-nine', 'payload': p} for p in (0.0, 2.5, 5.0)])
        self.assertNotIn('args', events['wide-\u00e9t\u00e9'][0])


def _pb_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def pb(*fields):
    """A protobuf message from (field, value) pairs: int -> varint, bytes or
    str -> length-delimited, ('fixed64', v) -> fixed64."""
    out = b''
    for field, value in fields:
        if isinstance(value, tuple):
            out += _pb_varint(field << 3 | 1) + value[1].to_bytes(8, 'little')
        elif isinstance(value, int):
            out += _pb_varint(field << 3) + _pb_varint(value & ((1 << 64) - 1))
        else:
            data = value.encode() if isinstance(value, str) else value
            out += _pb_varint(field << 3 | 2) + _pb_varint(len(data)) + data
    return out


class DataLoss(ExportCase):
    """Issue 29.3: what a thread lost is drawn on that thread, in pftrace and
    JSON, and the tools end with one line that says it."""

    def test_losses_are_drawn_and_said(self):
        # 3.2 MB of ranges into a 512 KiB buffer: full to the end, so no DROP
        # record could be written
        self.profile([prog('hgtx_loop'), '200000'],
                     options=['-t', 'nvtx', '-s', 'none', '--chunk-size', '512K',
                              '--max-segment-size', '512K'])
        dropped = self.manifest()['totals']['dropped_records']
        self.assertGreater(dropped, 0)
        said = 'warning: %d records lost in 1 thread; see report_info' % dropped
        for _ in range(2):  # on the import and from the cache
            r = self.run_cmd([STATS, '-q', '-r', 'hgtx_sum', self.report()])
            self.assertEqual(r.stderr.decode().strip().splitlines()[-1], 'asys-stats: ' + said)
        r = self.export('-t', 'json', '-o', self.path('x.json'))
        self.assertEqual(r.stderr.decode().strip().splitlines()[-1], 'asys-export: ' + said)

        trace = self.pftrace()
        rows = [t for t in trace.tracks.values() if t.name == 'Data loss']
        self.assertEqual(len(rows), 1)
        thread = trace.tracks[rows[0].parent]
        while thread.tid is None:
            thread = trace.tracks[thread.parent]
        self.assertEqual(thread.tid, self.manifest()['target']['pid'])
        marks = [e for e in trace.events_on(lambda t: t.name == 'Data loss')
                 if e.type == pftrace.BEGIN]
        self.assertEqual(sum(e.args['records'] for e in marks), dropped)
        self.assertEqual(marks[0].name, '%d records lost' % dropped)

        doc = self.chrome_json()
        events = doc['traceEvents'] if isinstance(doc, dict) else doc
        marks = [e for e in events if e.get('cat') == 'data loss']
        self.assertEqual(sum(e['args']['records'] for e in marks), dropped)

    def test_a_report_without_loss_says_nothing(self):
        self.profile([prog('hgtx_loop'), '1000'], options=['-t', 'nvtx', '-s', 'none'])
        r = self.run_cmd([STATS, '-q', '-r', 'hgtx_sum', self.report()])
        self.assertNotIn(b'lost', r.stderr)
        self.assertEqual([t for t in self.pftrace().tracks.values() if t.name == 'Data loss'], [])


@unittest.skipUnless(os.path.exists(WORKLOAD), 'nvcc was not found when building')
class NsysSchema(ExportCase):
    """Issue 28.6: asys-export -t sqlite --schema nsys writes nsys's export
    tables; queries written as nsys's documentation writes them give the
    asys reports' numbers."""

    def setUp(self):
        super().setUp()
        r = self.run_cmd([SIMPPU_RUN, ASYS, 'profile', '-t', 'hggc,hgtx,osrt', '-s', 'none', '-o',
                          self.path('rep'), WORKLOAD, 'all'])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.export('-t', 'sqlite', '--schema', 'nsys', '-o', self.path('nsys.sqlite'))
        self.nsys = sqlite3.connect(self.path('nsys.sqlite'))
        self.addCleanup(self.nsys.close)

    def stats_of(self, name, *extra):
        r = self.stats('-q', '-r', name, '-f', 'csv', *extra, self.report())
        return list(csv.DictReader(io.StringIO(r.stdout.decode())))

    def test_only_nsys_tables(self):
        tables = {r[0] for r in self.nsys.execute("SELECT name FROM sqlite_master "
                                                 "WHERE type = 'table'")}
        for name in ('StringIds', 'ThreadNames', 'TARGET_INFO_GPU',
                     'TARGET_INFO_SESSION_START_TIME', 'CUPTI_ACTIVITY_KIND_KERNEL',
                     'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET',
                     'CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION',
                     'NVTX_EVENTS', 'OSRT_API', 'ENUM_CUDA_MEMCPY_OPER'):
            self.assertIn(name, tables)
        self.assertEqual([t for t in tables if t.islower()], [])  # no asys table left

    def test_kernel_time_per_name_and_stream(self):
        got = dict(self.nsys.execute(
            'SELECT s.value, SUM(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k '
            'JOIN StringIds AS s ON s.id = k.demangledName GROUP BY s.value'))
        want = {r['Name']: int(r['Total Time (ns)']) for r in self.stats_of('hggc_kern_sum')}
        self.assertEqual(got, want)
        per_stream = dict(self.nsys.execute(
            'SELECT streamId, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY streamId'))
        trace = self.stats_of('hggc_gpu_trace')
        kernels = [r for r in trace if not r['Name'].startswith('[')]
        self.assertEqual(sum(per_stream.values()), len(kernels))

    def test_nvtx_ranges_to_kernels_and_api_calls(self):
        # the documentation's recipe: a range's kernels through the runtime calls
        # made inside it on its thread
        got = dict(self.nsys.execute(
            'SELECT s.value, COUNT(k.start) FROM NVTX_EVENTS AS n '
            'JOIN StringIds AS s ON s.id = n.textId '
            'JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.globalTid = n.globalTid '
            '  AND r.start BETWEEN n.start AND n.end '
            'JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON k.correlationId = r.correlationId '
            'WHERE n.eventType = 59 GROUP BY s.value'))
        want = {}
        for r in self.stats_of('hgtx_kern_sum'):
            want[r['Range']] = want.get(r['Range'], 0) + int(r['Kern Inst'])
        self.assertEqual({':' + name: count for name, count in got.items()}, want)
        calls = dict(self.nsys.execute(
            'SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r '
            'JOIN StringIds AS s ON s.id = r.nameId GROUP BY s.value'))
        self.assertEqual(calls, {r['Name']: int(r['Num Calls'])
                                 for r in self.stats_of('hggc_api_sum')})

    def test_copies_by_kind_and_thread_ids(self):
        got = dict(self.nsys.execute(
            "SELECT '[CUDA memcpy ' || e.label || ']', SUM(m.bytes) "
            'FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN ENUM_CUDA_MEMCPY_OPER AS e '
            'ON e.id = m.copyKind GROUP BY e.label'))
        want = {r['Operation']: round(float(r['Total (MB)']) * 1e6)
                for r in self.stats_of('hggc_mem_size_sum') if 'memcpy' in r['Operation']}
        self.assertEqual(set(got), set(want))
        for k in got:
            self.assertAlmostEqual(got[k], want[k], delta=1000)
        pid = self.manifest()['target']['pid']
        self.assertIn(pid, {g >> 24 for (g,) in self.nsys.execute(
            'SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME')})

    def test_refused(self):
        r = self.export('-t', 'json', '--schema', 'nsys', expect_rc=2)
        self.assertIn(b'--schema applies to sqlite', r.stderr)


class PftraceRules(unittest.TestCase):
    """The checks of pftrace.py find each way a trace misleads Perfetto."""

    # what every trace starts with: MONOTONIC and BOOTTIME related
    CLOCKS = [(6, pb((1, pb((1, 3), (2, 1000))), (1, pb((1, 6), (2, 1000)))))]

    def problems(self, *packets, clocks=True):
        fd, path = tempfile.mkstemp(suffix='.pftrace')
        with os.fdopen(fd, 'wb') as f:
            f.write(b''.join(pb((1, pb((10, 1), *p)))
                             for p in ([self.CLOCKS] if clocks else []) + list(packets)))
        try:
            return pftrace.read(path).problems
        finally:
            os.unlink(path)

    def assertProblem(self, text, *packets):
        found = self.problems(*packets)
        self.assertTrue(any(text in p for p in found), found)

    @staticmethod
    def track(uuid, name, parent=0, *extra):
        fields = [(1, uuid), (2, name)] + ([(5, parent)] if parent else []) + list(extra)
        return [(60, pb(*fields))]

    @staticmethod
    def event(ts, uuid, kind, name=None, *extra):
        fields = [(9, kind), (11, uuid)] + ([(23, name)] if name else []) + list(extra)
        return [(8, ts), (11, pb(*fields))]

    def test_a_flow_ending_on_an_earlier_slice_is_drawn_backwards(self):
        tracks = self.track(1, 'a', 0, (15, 2)), self.track(2, 'b', 0, (15, 2))
        source = [self.event(20, 1, 1, 'source', (47, ('fixed64', 7))), self.event(30, 1, 2)]
        dest = self.event(10, 2, 1, 'dest')
        self.assertProblem('drawn backwards', *tracks, dest, *source,
                           self.event(40, 2, 2, None, (48, ('fixed64', 7))))
        # on an instant at the destination's end: drawn as meant
        self.assertEqual(self.problems(*tracks, dest, *source,
                                       self.event(40, 2, 3, 'dest', (48, ('fixed64', 7))),
                                       self.event(40, 2, 2)), [])

    def test_flow_ids_stay_below_bit_63(self):
        tracks = self.track(1, 'a', 0, (15, 2))
        flow = 1 << 63 | 5
        self.assertProblem('bit 63', tracks, self.event(1, 1, 1, 'x', (47, ('fixed64', flow))),
                           self.event(2, 1, 1, 'y', (48, ('fixed64', flow))),
                           self.event(3, 1, 2), self.event(4, 1, 2))

    def test_sibling_lanes_of_one_name_are_merged_unless_none(self):
        self.assertProblem('would be merged', self.track(1, 'group'),
                           self.track(2, 'lane', 1), self.track(3, 'lane', 1, (15, 2)))
        self.assertEqual(self.problems(self.track(1, 'group'), self.track(2, 'lane', 1, (15, 2)),
                                       self.track(3, 'lane', 1, (15, 2))), [])

    def test_slices_under_a_process_need_a_thread(self):
        process = self.track(1, 'p (10)', 0, (3, pb((1, 10), (6, 'p'))))
        row = self.event(5, 3, 1, 'call'), self.event(6, 3, 2)
        self.assertProblem('of no thread', process, self.track(3, 'HGGC API', 1, (15, 2)), *row)
        thread = self.track(2, 't (11)', 1, (4, pb((1, 10), (2, 11), (5, 't'))))
        self.assertEqual(self.problems(process, thread, self.track(3, 'HGGC API', 2, (15, 2)),
                                       *row), [])

    def test_names_do_not_repeat_the_pid(self):
        self.assertProblem('repeats the pid',
                           self.track(1, 'p (10)', 0, (3, pb((1, 10), (6, 'p (10)')))))

    def test_order_needs_explicit_ordering(self):
        # by name unless the parent orders by rank
        children = self.track(2, 'b', 1, (12, 1), (15, 2)), self.track(3, 'a', 1, (12, 2),
                                                                        (15, 2))
        self.assertProblem('Perfetto shows', self.track(1, 'parent'), *children)
        self.assertEqual(self.problems(self.track(1, 'parent', 0, (11, 3)), *children), [])
        # processes by rank only when the root descriptor asks for it
        busy = [self.event(t, 3, k, 'x' if k == 1 else None) for t in range(1, 9)
                for k in (1, 2)]
        processes = (self.track(1, 'q', 0, (3, pb((1, 20), (6, 'q'))), (12, 1)),
                     self.track(2, 'p', 0, (3, pb((1, 30), (6, 'p'))), (12, 2)),
                     self.track(4, 't', 2, (4, pb((1, 30), (2, 31), (5, 't')))),
                     self.track(3, 'row', 4, (15, 2)))
        self.assertProblem('Perfetto shows', *processes, *busy)
        root = [(60, pb((1, 0), (19, 1), (20, 1)))]
        self.assertEqual(self.problems(root, *processes, *busy), [])

    def test_clocks_relate_boottime_to_monotonic(self):
        # trace_processor puts the trace on BOOTTIME: MONOTONIC alone is an
        # import error (clock_sync_unrelatable_clock_domains)
        alone = [(6, pb((1, pb((1, 3), (2, 1000)))))]
        self.assertTrue(any('does not relate BOOTTIME' in p
                            for p in self.problems(alone, clocks=False)))
        behind = [(6, pb((1, pb((1, 3), (2, 1000))), (1, pb((1, 6), (2, 900)))))]
        self.assertTrue(any('before MONOTONIC' in p for p in self.problems(behind, clocks=False)))
        self.assertEqual(self.problems(clocks=True), [])
        track = self.track(1, 'a', 0, (15, 2))
        self.assertTrue(any('no clock snapshot' in p for p in self.problems(
            track, self.event(5, 1, 3, 'x'), clocks=False)))


class JsonTraceCheck(unittest.TestCase):
    """json_trace_check finds each way a Chrome JSON trace misleads its readers."""

    def check(self, events, raw=None):
        fd, path = tempfile.mkstemp(suffix='.json')
        with os.fdopen(fd, 'wb') as f:
            f.write(raw if raw is not None else json.dumps({'traceEvents': events}).encode())
        try:
            r = subprocess.run([JSON_CHECK, path], capture_output=True, text=True)
        finally:
            os.unlink(path)
        return r.returncode, r.stdout

    META = [{'name': 'process_name', 'ph': 'M', 'pid': 7, 'args': {'name': 'p'}},
            {'name': 'thread_name', 'ph': 'M', 'pid': 7, 'tid': 8, 'args': {'name': 't'}}]

    def assertFound(self, text, events=None, raw=None):
        rc, out = self.check(events, raw)
        self.assertEqual(rc, 1, out)
        self.assertIn(text, out)

    def test_flows(self):
        dest = {'name': 'wait', 'cat': 'c', 'ph': 'X', 'ts': 1, 'dur': 10, 'pid': 7, 'tid': 8}
        source = {'name': 'work', 'cat': 'c', 'ph': 'X', 'ts': 3, 'dur': 2, 'pid': 7, 'tid': 8}
        start = {'name': 'f', 'cat': 'c', 'ph': 's', 'id': '0x1', 'ts': 3, 'pid': 7, 'tid': 8}
        inside = {'name': 'f', 'cat': 'c', 'ph': 'f', 'bp': 'e', 'id': '0x1', 'ts': 6,
                  'pid': 7, 'tid': 8}
        # ending inside a slice that began before the source: drawn backwards
        self.assertFound('drawn backwards', self.META + [dest, source, start, inside])
        # on an instant at the destination's end: drawn as meant
        instant = {'name': 'wait', 'cat': 'c', 'ph': 'i', 's': 't', 'ts': 11, 'pid': 7,
                   'tid': 8}
        self.assertEqual(self.check(self.META + [dest, source, start, instant,
                                                 dict(inside, ts=11)])[0], 0)

    def test_names_sort_indexes_and_utf8(self):
        self.assertFound('repeats the pid', [{'name': 'process_name', 'ph': 'M', 'pid': 7,
                                              'args': {'name': 'p (7)'}}])
        self.assertFound('fits an int32', self.META + [
            {'name': 'thread_sort_index', 'ph': 'M', 'pid': 7, 'tid': 8,
             'args': {'sort_index': 67000000000}}])
        self.assertFound('not valid UTF-8', raw=b'{"traceEvents":[{"name":"\xff","ph":"M",'
                                                b'"pid":1,"args":{"name":"x"}}]}')


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
