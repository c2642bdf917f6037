"""Event sampling (--event-sample with --cpu-core-events, --os-events and
their sets): the help outputs, bad indexes, counts of OS events a program is
known to cause (page faults, context switches) in the process tree and
system-wide, CPU core events that a virtual machine cannot count, and the
per-thread series of --event-sample process-tree (reports and timeline)."""
import os
import struct
import subprocess

import craft
import pftrace
from asys_e2e import AsysTestCase, BIN, prog

WORKLOAD = prog('event_workload')
THREADS = prog('event_threads')
EXPORT = os.path.join(BIN, 'asys-export')
JSON_CHECK = prog('json_trace_check')
PAGES, SLEEPS = 4096, 100
FEATURE_EVENTS = 1 << 13
REC_EVENT_STATUS, REC_EVENT_THREAD_COUNT = 68, 94
PAGE_FAULTS = 103  # the event id of page-faults (OS event 3)


class Help(AsysTestCase):
    def test_lists_and_sets(self):
        for option, words in (('--cpu-core-events=help', ['Index', '1', 'cycles']),
                              ('--os-events=help', ['page-faults', 'context-switches']),
                              ('--cpu-core-events-set=help', ['Identifier', 'cache', 'ipc']),
                              ('--os-events-set=help', ['fault', 'sched', '3 page-faults'])):
            r = self.profile([], [option], expect_rc=0)
            out = r.stdout.decode()
            for word in words:
                self.assertIn(word, out, option)
            self.assertFalse(os.path.exists(self.report()))

    def test_bad_values(self):
        for option, what in (('--os-events=42', "'42' is not an event index"),
                             ('--cpu-core-events=1,x', 'is not an event index'),
                             ('--os-events-set=nothing', "no event set 'nothing'"),
                             ('--event-sample-frequency=0', 'event-sample-frequency')):
            r = self.profile(['/bin/true'], ['--event-sample', 'process-tree', option],
                             expect_rc=2)
            err = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(err), 1, err)
            self.assertIn(what, err[0])


class Counts(AsysTestCase):
    def counts(self):
        return {r['Event']: r for r in self.stats_rows('event_sample_sum')}

    def test_process_tree(self):
        r = self.profile([WORKLOAD, 'child'],
                         ['-t', 'none', '-s', 'none', '--event-sample', 'process-tree',
                          '--os-events-set', 'fault', '--os-events', '6', '--cpu-core-events',
                          '1'])
        rows = self.counts()
        # 4096 pages touched, plus the loader's and (under ASan) the shadow memory's: an
        # ASan CI run counted 11130, one on a loaded machine 23622
        faults = int(rows['page-faults']['Count'])
        self.assertGreaterEqual(faults, 4096, 'page faults')
        # the minor and major faults served are the kernel's own count (getrusage of the
        # program and its child), less those before the counters opened (between fork
        # and exec) and after the program printed it (exit)
        minor, major = (int(v) for v in r.stdout.decode().split('faults ')[1].split()[:2])
        served = int(rows['minor-faults']['Count']) + int(rows['major-faults']['Count'])
        self.assertBetween(served, minor + major - 300, minor + major + 300, 'faults served')
        # page-faults counts each fault's entry: a fault retried (waiting for a page under
        # I/O or a lock on a loaded machine) is one served and two entries (a loaded run:
        # 5109 = 5101 minor + 8)
        self.assertBetween(faults, served, served + max(200, served // 10), 'page faults')
        self.assertGreaterEqual(int(rows['context-switches']['Count']), 50)
        cycles = rows['cycles']
        if cycles['Status'] == 'counted':  # a machine with a PMU
            self.assertGreater(int(cycles['Count']), 0)
        else:
            self.assertEqual(cycles['Status'], 'not on this machine')
            self.assertIn('CPU core event 1 (cycles) is not counted', r.stderr.decode())
        db = self.db()
        cpus = db.execute("SELECT COUNT(DISTINCT cpu) FROM event_samples").fetchone()[0]
        self.assertEqual(cpus, os.cpu_count())

    def test_default_sets_and_system_wide(self):
        self.profile([WORKLOAD], ['-t', 'none', '--event-sample', 'system-wide'])
        rows = self.counts()
        for name in ('page-faults', 'minor-faults', 'major-faults', 'context-switches',
                     'cpu-migrations', 'sched-wakeups'):
            self.assertIn(name, rows)
        self.assertGreaterEqual(int(rows['page-faults']['Count']), 4096)

    def test_none_records_nothing(self):
        self.profile([WORKLOAD], ['-t', 'none'])
        # a report without its data is SKIPPED with the reason, exit 0 (issue 28.5)
        r = self.stats('-q', '-r', 'event_sample_sum', self.report())
        self.assertIn('SKIPPED', r.stdout.decode())
        self.assertIn('no event samples', r.stdout.decode())
        r = self.stats('-q', '-r', 'event_sample_thread_sum', self.report())
        self.assertIn('no per-thread event samples', r.stdout.decode())
        self.assertEqual(self.db().execute('SELECT COUNT(*) FROM event_thread_samples')
                         .fetchone()[0], 0)


class PerThread(AsysTestCase):
    """A toucher thread (PAGES page faults), a sleeper thread (SLEEPS context
    switches), and a forked child's own toucher, each counted on its own."""

    def record(self, *extra):
        r = self.profile([THREADS, str(PAGES), str(SLEEPS), 'fork'],
                         ['-t', 'none', '-s', 'none', '--event-sample', 'process-tree',
                          '--os-events-set', 'fault', '--os-events', '6', *extra])
        workers = [line.split() for line in r.stdout.decode().splitlines()
                   if line.split()[:1] in (['toucher'], ['sleeper'])]
        self.assertEqual(len(workers), 3, r.stdout.decode())
        # (pid, toucher, sleeper, child pid, child's toucher); the parent's two
        # print in either order, the child's after them
        (pid,) = {int(p) for role, p, _ in workers if role == 'sleeper'}
        tids = {(role, int(p) == pid): int(t) for role, p, t in workers}
        (child,) = {int(p) for _, p, _ in workers if int(p) != pid}
        return pid, tids[('toucher', True)], tids[('sleeper', True)], child, \
            tids[('toucher', False)]

    def per_thread(self, *extra):
        """(event, tid) -> row of event_sample_thread_sum."""
        return {(r['Event'], int(r['TID'])): r
                for r in self.stats_rows('event_sample_thread_sum', 'rep', *extra)}

    def test_counts_per_thread(self):
        pid, toucher, sleeper, child, child_toucher = self.record()
        rows = self.per_thread()

        def count(event, tid):
            return int(rows[(event, tid)]['Count'])
        # each worker sleeps 100 ms before its work: its counters are open by then
        self.assertBetween(count('page-faults', toucher), PAGES, PAGES + 4096, 'toucher faults')
        self.assertLess(count('page-faults', sleeper), PAGES // 4, 'sleeper faults')
        # (the toucher's own switches are preemptions: as many as the machine's load makes)
        self.assertGreaterEqual(count('context-switches', sleeper), SLEEPS)
        # the forked child's thread, under its own pid
        self.assertNotEqual(child, pid)
        self.assertEqual(int(rows[('page-faults', child_toucher)]['PID']), child)
        self.assertGreaterEqual(count('page-faults', child_toucher), PAGES)
        self.assertIn(('page-faults', child), rows)  # the child's main thread
        self.assertIn(('page-faults', pid), rows)
        # each thread's counters open after it started: the threads' sum is at
        # most the per-CPU one (which counts from the start), and holds the work
        totals = {r['Event']: r for r in self.stats_rows('event_sample_sum')}
        for event, least in (('page-faults', 2 * PAGES), ('context-switches', SLEEPS)):
            threads = sum(int(r['Count']) for (e, _), r in rows.items() if e == event)
            self.assertBetween(threads, least, int(totals[event]['Count']), event)
            self.assertEqual(int(totals[event]['Threads']), 5, event)
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(info['Event sampling per thread'], '5 threads counted, 0 not followed')
        # --tid keeps one thread; --filter-time before the work counts none of it
        only = self.per_thread('--tid', str(sleeper))
        self.assertEqual({tid for _, tid in only}, {sleeper})
        self.assertEqual(only[('context-switches', sleeper)]['Count'],
                         rows[('context-switches', sleeper)]['Count'])
        early = self.per_thread('--filter-time', '0/50ms')
        self.assertLess(int(early.get(('page-faults', toucher), {'Count': 0})['Count']), PAGES)

    def test_timeline_tracks(self):
        pid, toucher, _, _, _ = self.record()
        out = self.path('out.pftrace')
        r = self.run_cmd([EXPORT, '-q', '-t', 'pftrace', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        counters = {t.uuid: t for t in trace.tracks.values() if t.counter}
        per_cpu = [t for t in counters.values()
                   if trace.path(t.uuid)[0] == 'CPU Group' and t.name.endswith('(CPU 0)')]
        self.assertIn('page-faults/s (CPU 0)', {t.name for t in per_cpu})
        mine = [t for t in counters.values()
                if t.name == 'page-faults/s' and t.scope == ('thread', pid, toucher)]
        self.assertEqual(len(mine), 1, [(t.name, t.scope) for t in counters.values()])
        # the rates, integrated over their intervals, give the thread's count
        values = sorted((e.ts, e.value) for e in trace.events
                        if e.track == mine[0].uuid and e.type == pftrace.COUNTER)
        self.assertEqual(values[-1][1], 0)
        area = sum(v * (b[0] - a[0]) / 1e9 for (a, b), v in
                   ((pair, pair[0][1]) for pair in zip(values, values[1:])))
        db = self.db()
        count = db.execute("SELECT SUM(delta) FROM event_thread_samples AS s JOIN event_types AS t"
                           " ON t.id = s.event WHERE t.name = 'page-faults' AND s.tid = ?",
                           (toucher,)).fetchone()[0]
        self.assertBetween(area, count * 0.99, count * 1.01, 'integrated rate')
        out = self.path('out.json')
        r = self.run_cmd([EXPORT, '-q', '-t', 'json', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        check = subprocess.run([JSON_CHECK, out], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn('page-faults/s (CPU 0)', text)
        self.assertIn('/ page-faults/s', text)

    def test_system_wide_stays_per_cpu(self):
        self.profile([THREADS, '64', '2'],
                     ['-t', 'none', '-s', 'none', '--event-sample', 'system-wide'])
        r = self.stats('-q', '-r', 'event_sample_thread_sum', self.report())
        self.assertIn('no per-thread event samples', r.stdout.decode())
        totals = {r['Event']: r for r in self.stats_rows('event_sample_sum')}
        self.assertEqual(totals['page-faults']['Threads'], '0')

    def test_threads_off(self):
        self.profile([THREADS, '64', '2'], ['-t', 'none', '-s', 'none', '--event-sample',
                                            'process-tree', '--event-sample-threads=false'])
        r = self.stats('-q', '-r', 'event_sample_thread_sum', self.report())
        self.assertIn('no per-thread event samples', r.stdout.decode())
        self.assertGreater(int({r['Event']: r for r in self.stats_rows('event_sample_sum')}
                               ['page-faults']['Count']), 64)

    def test_threads_past_the_cap(self):
        """An open-file limit that leaves room for some threads' counters
        only: the others are counted as not followed, the recording goes on."""
        cpus = os.cpu_count()
        argv = ['prlimit', '--nofile=%d:%d' % (400 + 8 * cpus, 400 + 8 * cpus),
                os.path.join(BIN, 'asys'), 'profile', '-o', self.path('rep'), '-t', 'none', '-s',
                'none', '--event-sample', 'process-tree', THREADS, 'hold', '80']
        r = self.run_cmd(argv)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        counted, rest = info['Event sampling per thread'].split(' threads counted, ')
        missed = int(rest.split()[0])
        # about (400 - 128 - the launcher's own) / 6 events fit: ~40 of the 81 threads
        self.assertBetween(int(counted), 10, 70, 'threads counted')
        self.assertEqual(int(counted) + missed, 81, 'threads seen')
        self.assertIn('past the cap', rest)


class HostileThreadCounts(AsysTestCase):
    """Per-thread readings a recorder never writes: no pid or tid, an unknown
    event, a count past 2^63, a tid counted again from 0 (a new thread)."""

    def test_bounded(self):
        def reading(event, pid, tid, value, delta=1000):
            return craft.word(REC_EVENT_THREAD_COUNT, 5, event, delta) + \
                struct.pack('<IIQQQ', pid, tid, value, 10, 10)
        body = (reading(PAGE_FAULTS, 0, 9, 5) + reading(PAGE_FAULTS, 9, 0, 5) +
                reading(999, 9, 9, 5) + reading(PAGE_FAULTS, 9, 9, 2 ** 64 - 1) +
                reading(PAGE_FAULTS, 9, 9, 10) + reading(PAGE_FAULTS, 9, 9, 25) +
                reading(PAGE_FAULTS, 9, 9, 5) +
                craft.word(REC_EVENT_STATUS, 2, 0, 1000) + struct.pack('<iI', 24, 3))
        seg = craft.segment_header(9, 9, 0x99, features=1 | FEATURE_EVENTS,
                                   collector=craft.LAUNCHER, thread_index=3) + body
        with open(self.report(), 'wb') as f:
            f.write(craft.report([('segments/events.seg', seg)]))
        rows = self.stats_rows('event_sample_thread_sum')
        self.assertEqual([(r['Event'], r['PID'], r['TID'], r['Count']) for r in rows],
                         [('page-faults', '9', '9', '30')])  # 10, 15, then 5 of a new counter
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertTrue(info['Event sampling per thread'].startswith(
            '1 threads counted, 3 not followed ('), info)
        self.assertIn('errno 24', info['Event sampling per thread'])
        self.assertEqual(info['Import warnings'], '4')

if __name__ == '__main__':
    import unittest
    unittest.main(verbosity=2)
