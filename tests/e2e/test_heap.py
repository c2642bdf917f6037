"""Heap tracing (--heap-memory-usage): the wrappers in the traced program, the
heap_allocations table, heap_sum, heap_leaks, the heap/leaks call trees and
flame outputs, on heap_workload (known sites, sizes and counts) and heap_cxx
(C++ operators)."""
import collections
import json
import os
import re
import shutil
import subprocess

import pftrace
from asys_e2e import ASYS, BIN, PROGS, AsysTestCase, prog

EXPORT = os.path.join(BIN, 'asys-export')
JSON_CHECK = os.path.join(PROGS, 'json_trace_check')
EVERY = ['-t', 'none', '--heap-memory-usage', 'true', '--heap-sampling-interval-bytes', '1']
SAMPLED = ['-t', 'none', '--heap-memory-usage', 'true']


class HeapCase(AsysTestCase):
    def site(self, rows, name, function='malloc'):
        found = [r for r in rows if r['Call Site'] == name and r['Function'] == function]
        self.assertEqual(len(found), 1, (name, rows))
        return found[0]


class EveryAllocation(HeapCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('heap_workload'), 'leak'], EVERY)

    def test_leak_is_named_with_exact_bytes(self):
        leaks = self.stats_rows('heap_leaks')
        leak = self.site(leaks, 'leaky_site')
        self.assertEqual(int(leak['Leaked Bytes']), 100 * 1000)
        self.assertEqual(int(leak['Allocations']), 100)
        self.assertIn('main', leak['Call Stack'])
        self.assertEqual(leaks[0]['Call Site'], 'leaky_site')  # the largest leak first
        self.assertFalse([r for r in leaks if r['Call Site'] == 'balanced_site'])

    def test_records_are_the_short_forms(self):
        # interval 1: 24-byte allocations, 16-byte frees (schema/FORMAT.md)
        out = self.run_cmd([ASYS, 'dump', self.report()]).stdout.decode()
        kinds = collections.Counter(re.findall(r' (HEAP_\w+) t=', out))
        self.assertGreater(kinds['HEAP_ALLOC_EVERY'], 20000, kinds)
        self.assertGreater(kinds['HEAP_FREE_EVERY'], 20000, kinds)
        self.assertEqual(kinds['HEAP_ALLOC'] + kinds['HEAP_FREE'], 0, kinds)

    def test_sums_and_frees_on_another_thread(self):
        rows = self.stats_rows('heap_sum')
        balanced = self.site(rows, 'balanced_site')
        self.assertEqual(int(balanced['Allocations']), 20000)
        self.assertEqual(int(balanced['Sampled']), 20000)
        self.assertEqual(balanced['Bytes'], balanced['Freed Bytes'])
        self.assertEqual(int(balanced['Live Bytes']), 0)
        db = self.db()
        threads = db.execute(
            "SELECT COUNT(DISTINCT free_tid), SUM(free_tid <> tid) FROM heap_allocations "
            "WHERE size BETWEEN 16 AND 2015 AND free_tid IS NOT NULL").fetchone()
        self.assertEqual(threads[0], 2)
        self.assertGreaterEqual(threads[1], 10000)  # the handed-off half
        functions = {r['Function'] for r in rows}
        for fn in ('calloc', 'realloc', 'posix_memalign', 'aligned_alloc', 'memalign', 'valloc'):
            self.assertIn(fn, functions)
        # realloc: the calloc'd block freed by realloc, the new block by free
        frees = dict(db.execute(
            "SELECT s.value, COUNT(*) FROM heap_allocations AS a JOIN strings AS s "
            "ON s.id = a.free_function_id GROUP BY s.value").fetchall())
        self.assertGreaterEqual(frees.get('realloc', 0), 1)

    def test_peak_per_process_and_when(self):
        # heap_process_sum's peak against the live bytes walked here, event by event
        events = []
        for start, end, size in self.db().execute(
                'SELECT start_ns, end_ns, size FROM heap_allocations'):
            events.append((start, 1, size))
            if end is not None:
                events.append((end, 0, -size))
        live, peak, peak_at = 0, 0, None
        for ns, _, delta in sorted(events):
            live += delta
            if live > peak:
                peak, peak_at = live, ns
        rows = self.stats_rows('heap_process_sum')
        self.assertEqual(len(rows), 1, rows)
        self.assertEqual(rows[0]['Process'], 'heap_workload')
        self.assertEqual(int(rows[0]['Peak Bytes']), peak)
        start = self.db().execute(
            "SELECT value FROM session_info WHERE key = 'start_ns'").fetchone()[0]
        self.assertEqual(int(rows[0]['Peak At (ns)']), peak_at - start)
        self.assertGreaterEqual(peak, 100 * 1000)  # the leak at least
        self.assertEqual(int(rows[0]['Live Bytes']),
                         sum(r[0] for r in self.db().execute(
                             'SELECT size FROM heap_allocations WHERE end_ns IS NULL')))

    def test_flame_units_are_bytes_and_allocations(self):
        # pprof called them nanoseconds, speedscope 'none' (issue 31.4)
        import gzip
        out = self.path('heap.speedscope.json')
        r = self.run_cmd([EXPORT, '-q', '-t', 'speedscope', '--stacks', 'heap', '-o', out,
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(out) as f:
            self.assertEqual({p['unit'] for p in json.load(f)['profiles']}, {'bytes'})
        for stacks, kind in (('heap', 'alloc'), ('leaks', 'inuse')):
            out = self.path(stacks + '.pb.gz')
            r = self.run_cmd([EXPORT, '-q', '-t', 'pprof', '--stacks', stacks, '-o', out,
                              self.report()])
            self.assertEqual(r.returncode, 0, r.stderr.decode())
            with gzip.open(out) as f:
                self.assertIn(b'%s_space' % kind.encode(), f.read())
            if not shutil.which('go'):
                continue
            env = dict(self.env, HOME=self.dir, GOCACHE=self.path('gocache'))
            r = self.run_cmd(['go', 'tool', 'pprof', '-raw', out], env=env)
            self.assertIn('%s_objects/count %s_space/bytes' % (kind, kind), r.stdout.decode())
            r = self.run_cmd(['go', 'tool', 'pprof', '-top', '-sample_index=%s_space' % kind, out],
                             env=env)
            if stacks == 'leaks':  # the 100 leaked blocks of 1000 bytes, exactly
                self.assertRegex(r.stdout.decode(), r'97\.66kB .* leaky_site')

    def test_report_info_and_call_trees(self):
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(info['Heap allocations sampled'].split()[1:], ['(interval', '1', 'bytes)'])
        self.assertGreaterEqual(int(info['Heap still allocated at the end (bytes, estimated)']),
                                100000)
        flat = {r['Function']: r for r in self.stats_rows('stack_flat:leaks')}
        self.assertGreaterEqual(int(flat['leaky_site']['Total']), 100000)
        top = self.stats_rows('stack_topdown:heap')
        self.assertIn('balanced_site', {r['Function'] for r in top})
        out = self.path('leaks.folded')
        r = self.run_cmd([EXPORT, '-q', '-t', 'folded', '--stacks', 'leaks', '-o', out,
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(out) as f:
            lines = [l for l in f.read().splitlines() if ';leaky_site;malloc ' in l]
        self.assertEqual(len(lines), 1)
        self.assertEqual(int(lines[0].rsplit(' ', 1)[1]), 100000)


class Timeline(HeapCase):
    def export(self, kind):
        out = self.path('out.' + kind)
        r = self.run_cmd([EXPORT, '-q', '-t', kind, '-o', out, '--force-overwrite',
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return out

    def test_heap_and_rss_tracks(self):
        self.profile([prog('heap_workload'), 'leak'],
                     EVERY + ['--host-memory-sampling', 'true',
                              '--host-memory-sampling-frequency', '50'])
        trace = pftrace.read(self.export('pftrace'))
        self.assertEqual(trace.problems, [])
        names = {t.name for t in trace.tracks.values()}
        for name in ('Heap memory (bytes, estimated)', 'RSS (bytes)', 'High-water mark (bytes)',
                     'Heap'):
            self.assertIn(name, names)
        self.assertEqual({t.axis for t in trace.tracks.values() if t.counter}, {None})
        out = self.path('unified.pftrace')
        r = self.run_cmd([EXPORT, '-q', '--unified-memory-scale', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        unified = pftrace.read(out)
        self.assertEqual(unified.problems, [])
        axes = {t.name: t.axis for t in unified.tracks.values() if t.counter}
        self.assertEqual(axes['RSS (bytes)'], axes['Heap memory (bytes, estimated)'])
        self.assertIsNotNone(axes['RSS (bytes)'])
        heap = [e for e in trace.events_on(lambda t: t.name == 'Heap memory (bytes, estimated)')
                if e.type == pftrace.COUNTER]
        self.assertGreater(len(heap), 40000)  # every allocation and free of the run
        out = self.export('json')
        check = subprocess.run([JSON_CHECK, out], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        with open(out) as f:
            events = json.load(f)['traceEvents']
        leaks = [e for e in events if e.get('cat') == 'heap' and 'leaky_site' in
                 e['args'].get('stack', '') and 'lifetime_ns' not in e['args']]
        self.assertEqual(len(leaks), 100)
        self.assertEqual({e['args']['size'] for e in leaks}, {1000})


class Window(HeapCase):
    def test_filter_and_zoom(self):
        self.profile([prog('heap_workload'), 'window'], EVERY)
        # the whole run: early_site's blocks were freed
        self.assertFalse([r for r in self.stats_rows('heap_leaks')
                          if r['Call Site'] == 'early_site'])
        # the first 150 ms: allocated there and not freed by its end
        leaks = self.stats_rows('heap_leaks', 'rep', '--filter-time', '0/150ms')
        early = self.site(leaks, 'early_site')
        self.assertEqual(int(early['Leaked Bytes']), 10 * 4096)


class Aggregated(HeapCase):
    """--heap-report-interval: sums per call stack and interval instead of events."""
    SUMMED = EVERY + ['--heap-report-interval', '100']
    SITES = ('balanced_site', 'leaky_site')
    COLUMNS = ('Bytes', 'Allocations', 'Freed Bytes', 'Live Bytes', 'Sampled', 'Largest')

    def sums(self, name):
        rows = self.stats_rows('heap_sum', name)
        return {site: {c: int(self.site(rows, site)[c]) for c in self.COLUMNS}
                for site in self.SITES}

    def test_leak_exact_and_totals_as_per_event(self):
        # spread: 6 rounds 60 ms apart, frees on other threads and in later intervals
        self.profile([prog('heap_workload'), 'spread'], EVERY, name='events')
        self.profile([prog('heap_workload'), 'spread'], self.SUMMED, name='sums')
        leak = self.site(self.stats_rows('heap_leaks', 'sums'), 'leaky_site')
        self.assertEqual(int(leak['Leaked Bytes']), 6 * 10 * 1000)
        self.assertEqual(int(leak['Allocations']), 60)
        self.assertFalse([r for r in self.stats_rows('heap_leaks', 'sums')
                          if r['Call Site'] == 'balanced_site'])
        self.assertEqual(self.sums('sums'), self.sums('events'))
        db = self.db('sums')
        rows, events, cross = db.execute(
            "SELECT COUNT(*), SUM(samples), SUM(free_tid <> tid) FROM heap_allocations "
            "WHERE address IS NULL").fetchone()
        self.assertEqual(events, db.execute("SELECT SUM(samples) FROM heap_allocations")
                         .fetchone()[0])  # no row of its own per event
        self.assertLess(rows, 100)
        self.assertGreaterEqual(cross, 6)  # each round's kept half, freed by a thread
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info', 'sums')}
        per_event = {r['Property']: r['Value'] for r in self.stats_rows('report_info', 'events')}
        self.assertEqual(info['Heap data aggregated'], 'per 100 ms (--heap-report-interval)')
        self.assertNotIn('Heap data aggregated', per_event)
        still = 'Heap still allocated at the end (bytes, estimated)'
        self.assertEqual(info[still], per_event[still])
        self.assertEqual(info['Heap allocations sampled'], per_event['Heap allocations sampled'])
        # the flame data and the usage track come from the sums too
        out = self.path('leaks.folded')
        r = self.run_cmd([EXPORT, '-q', '-t', 'folded', '--stacks', 'leaks', '-o', out,
                          self.report('sums')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(out) as f:
            lines = [l for l in f.read().splitlines() if ';leaky_site;malloc ' in l]
        self.assertEqual([int(l.rsplit(' ', 1)[1]) for l in lines], [60000])
        top = {r['Function']: r for r in self.stats_rows('stack_flat:heap', 'sums')}
        self.assertEqual(int(top['balanced_site']['Total']),
                         self.sums('events')['balanced_site']['Bytes'])
        out = self.path('sums.pftrace')
        r = self.run_cmd([EXPORT, '-q', '-t', 'pftrace', '-o', out, self.report('sums')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        heap = [e for e in trace.events_on(lambda t: t.name == 'Heap memory (bytes, estimated)')
                if e.type == pftrace.COUNTER]
        self.assertBetween(len(heap), 6, 100, 'usage changes (per interval, not per event)')
        self.assertEqual(int(heap[-1].value), int(info[still]))

    def test_window_at_interval_granularity(self):
        self.profile([prog('heap_workload'), 'window'], self.SUMMED)
        leaks = self.stats_rows('heap_leaks', 'rep', '--filter-time', '0/150ms')
        self.assertEqual(int(self.site(leaks, 'early_site')['Leaked Bytes']), 10 * 4096)
        self.assertFalse([r for r in self.stats_rows('heap_leaks')
                          if r['Call Site'] == 'early_site'])

    def test_threads_storm_and_fork_exact(self):
        # 5 ms: many intervals per thread, sums written at each thread's exit
        options = EVERY + ['--heap-report-interval', '5']
        self.profile([prog('heap_workload'), 'storm'], options)
        site = self.site(self.stats_rows('heap_sum'), 'storm_site')
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(int(site['Allocations']) + int(info['Dropped records']), 160000)
        self.assertEqual(int(site['Live Bytes']), 0)
        self.profile([prog('heap_workload'), 'fork'], options)
        leak = self.site(self.stats_rows('heap_leaks'), 'leaky_site')
        self.assertEqual(int(leak['Leaked Bytes']), 100000)
        balanced = self.site(self.stats_rows('heap_sum'), 'balanced_site')
        self.assertEqual(int(balanced['Allocations']), 20000)
        self.assertEqual(int(balanced['Live Bytes']), 0)

    def test_sums_of_a_thread_running_at_exit_are_counted(self):
        # an interval longer than the run: the thread's sums are still unwritten at exit
        self.profile([prog('heap_workload'), 'exitlive'],
                     EVERY + ['--heap-report-interval', '60000'])
        leak = self.site(self.stats_rows('heap_leaks'), 'leaky_site')
        self.assertEqual(int(leak['Leaked Bytes']), 10 * 1000)  # main's, written at exit
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertGreater(int(info.get('Dropped records', 0)), 0)

    def test_report_much_smaller_on_a_long_run(self):
        # 1 M allocations and frees: 2 M events, or a few sums per 10 ms
        self.profile([prog('heap_workload'), 'estimate'], EVERY, name='events')
        r = self.profile([prog('heap_workload'), 'estimate'],
                         EVERY + ['--heap-report-interval', '10'], name='sums')
        total = int(r.stdout.decode().split()[0])
        site = self.site(self.stats_rows('heap_sum', 'sums'), 'mixed_site')
        self.assertEqual(int(site['Bytes']), total)
        self.assertEqual(int(site['Allocations']), 1000000)
        self.assertEqual(int(site['Live Bytes']), 0)
        ratio = os.path.getsize(self.report('events')) / os.path.getsize(self.report('sums'))
        self.assertGreater(ratio, 50, 'per-event report size / aggregated')


class Sampled(HeapCase):
    def test_estimate_of_total_bytes(self):
        r = self.profile([prog('heap_workload'), 'estimate'], SAMPLED)
        total = int(r.stdout.decode().split()[0])
        site = self.site(self.stats_rows('heap_sum'), 'mixed_site')
        self.assertBetween(int(site['Bytes']) / total, 0.95, 1.05, 'estimated bytes / allocated')
        self.assertLess(int(site['Sampled']), 20000)  # sampled, not every one of 1 M
        out = self.run_cmd([ASYS, 'dump', self.report()]).stdout.decode()
        self.assertNotIn(' HEAP_ALLOC_EVERY ', out)  # their interval is in the record
        self.assertIn(' HEAP_ALLOC ', out)

    def test_aggregated_estimate(self):
        r = self.profile([prog('heap_workload'), 'estimate'],
                         SAMPLED + ['--heap-report-interval', '10'])
        total = int(r.stdout.decode().split()[0])
        site = self.site(self.stats_rows('heap_sum'), 'mixed_site')
        self.assertBetween(int(site['Bytes']) / total, 0.95, 1.05, 'estimated bytes / allocated')
        self.assertBetween(int(site['Allocations']) / 1e6, 0.9, 1.1, 'estimated allocations')
        self.assertLess(int(site['Sampled']), 20000)

    def test_big_leak_at_the_default_interval(self):
        self.profile([prog('heap_workload'), 'bigleak'], SAMPLED)
        leak = self.site(self.stats_rows('heap_leaks'), 'leaky_site')
        # 1000 blocks of 256 KiB at a 512 KiB interval: each is sampled with
        # p = 1 - e^-0.5 = 0.39, so the estimate's relative deviation is
        # sqrt((1 - p) / (1000 p)) = 3.9 %; +-16 % is 4 deviations (+-10 %
        # failed about one run in a hundred)
        self.assertBetween(int(leak['Leaked Bytes']) / (1000 * 256 * 1024), 0.84, 1.16,
                           'leaked bytes estimate')

    def test_exact_at_interval_one(self):
        r = self.profile([prog('heap_workload'), 'estimate'], EVERY)
        total = int(r.stdout.decode().split()[0])
        site = self.site(self.stats_rows('heap_sum'), 'mixed_site')
        self.assertEqual(int(site['Bytes']), total)
        self.assertEqual(int(site['Allocations']), 1000000)


class EarlyCompression(HeapCase):
    """1 M allocations at interval 1 (40 MB of segments): the slots compressed
    while the program ran make the same report as compressing them at the end."""

    def test_report_as_without_frames(self):
        argv = [ASYS, 'profile', '-o', self.path('rep'), *EVERY, '-s', 'none',
                '--chunk-size', '1M', prog('heap_workload'), 'estimate']
        r = self.run_cmd(argv, env=dict(self.env, ASYS_ARENA_COMPRESS='all',
                                        ASYS_KEEP_SESSION='1'))
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        total = int(r.stdout.decode().split()[0])
        session = [os.path.join(self.dir, n) for n in os.listdir(self.dir)
                   if n.startswith('asys-')][0]
        index = os.path.join(session, 'arena-frames.idx')
        frames = os.path.getsize(index) // 32
        self.assertGreaterEqual(frames, 30, 'slots compressed while recording')
        early = self.stats_rows('heap_sum')
        site = self.site(early, 'mixed_site')
        self.assertEqual(int(site['Bytes']), total)
        self.assertEqual(int(site['Allocations']), 1000000)
        os.unlink(index)
        r = self.run_cmd([ASYS, 'finalize', session, '-o', self.path('plain')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(self.stats_rows('heap_sum', 'plain'), early)
        shutil.rmtree(session)


class Programs(HeapCase):
    def test_cxx_operators(self):
        path = prog('heap_cxx')
        if not os.path.exists(path):
            self.skipTest('no C++ compiler: heap_cxx not built')
        self.profile([path], EVERY)
        rows = self.stats_rows('heap_sum')
        arrays = self.site(rows, 'cxx_site()', 'operator new[]')
        single = self.site(rows, 'cxx_site()', 'operator new')
        self.assertEqual(int(arrays['Allocations']), 150)
        self.assertEqual(int(single['Allocations']), 120)
        self.assertEqual(int(arrays['Live Bytes']) + int(single['Live Bytes']), 0)
        # operator new's own malloc is not counted again
        self.assertFalse([r for r in rows if r['Function'] == 'malloc'
                          and r['Call Site'] == 'cxx_site()'])

    def test_threads_storm(self):
        self.profile([prog('heap_workload'), 'storm'], EVERY)
        site = self.site(self.stats_rows('heap_sum'), 'storm_site')
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(int(site['Allocations']) + int(info['Dropped records']), 160000)
        self.assertEqual(int(site['Live Bytes']), 0)

    def test_fork_and_exec(self):
        self.profile([prog('heap_workload'), 'fork'], EVERY)
        db = self.db()
        pids = db.execute("SELECT DISTINCT a.pid FROM heap_allocations AS a").fetchall()
        self.assertGreaterEqual(len(pids), 1)
        leaks = self.stats_rows('heap_leaks')
        leak = self.site(leaks, 'leaky_site')
        self.assertEqual(int(leak['Leaked Bytes']), 100000)
        child = db.execute("SELECT pid FROM processes WHERE pid <> "
                           "(SELECT value FROM session_info WHERE key = 'target_pid')").fetchall()
        self.assertIn(child[0], pids)

    def test_off_by_default(self):
        self.profile([prog('heap_workload'), 'leak'], ['-t', 'osrt'])
        r = self.stats('-q', '-r', 'heap_sum', self.report())
        self.assertEqual(r.stderr, b'')
        self.assertIn('SKIPPED', r.stdout.decode())
        self.assertIn('no heap allocations', r.stdout.decode())


class HostMemory(HeapCase):
    def test_rss_rises_falls_and_the_peak_stays(self):
        self.profile([prog('heap_workload'), 'rss'],
                     ['-t', 'none', '--host-memory-sampling', 'true',
                      '--host-memory-sampling-frequency', '20'])
        rows = self.stats_rows('host_mem_trace')
        by_pid = {}
        for r in rows:
            by_pid.setdefault(r['PID'], []).append(r)
        self.assertEqual(len(by_pid), 2, list(by_pid))  # the program and its child
        child = max(by_pid.values(), key=lambda rs: max(float(r['RSS (MiB)']) for r in rs))
        rss = [float(r['RSS (MiB)']) for r in child]
        hwm = [float(r['High-Water Mark (MiB)']) for r in child]
        peak = max(rss)
        # the child is found by a scan of /proc, maybe after it touched its memory: the
        # peak is absolute (200 MiB over a baseline of about 1 MiB)
        self.assertBetween(peak, 200, 216, 'RSS peak (MiB)')
        after = rss[rss.index(peak):]
        self.assertLess(min(after), peak - 190)  # given back
        self.assertBetween(hwm[-1], peak - 1, peak + 5, 'high-water mark keeps the peak')
        times = [int(r['Time (ns)']) for r in child]
        self.assertEqual(times, sorted(times))

    def test_off_with_system_wide_sampling_and_bad_frequency(self):
        r = self.profile(['/bin/true'], ['--host-memory-sampling', 'true',
                                         '--host-memory-sampling-frequency', '0'], expect_rc=2)
        self.assertIn('host-memory-sampling-frequency', r.stderr.decode())
        r = self.stats('-q', '-r', 'host_mem_trace', self.report(), expect_rc=None)
        self.assertNotEqual(r.returncode, 0)


class BadOptions(AsysTestCase):
    def test_refused_in_one_line(self):
        for options, what in (
                (['--heap-memory-usage', 'true', '--heap-sampling-interval-bytes', '0'],
                 'heap-sampling-interval-bytes'),
                (['--heap-memory-usage', 'true', '--multi-node-mode', 'true'],
                 'cannot be used with --multi-node-mode'),
                (['--heap-memory-usage=maybe'], 'true or false')):
            r = self.profile(['/bin/true'], options, expect_rc=2)
            err = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(err), 1, err)
            self.assertIn(what, err[0])
            self.assertFalse(os.path.exists(self.report()))


if __name__ == '__main__':
    import unittest
    unittest.main(verbosity=2)
