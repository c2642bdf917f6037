"""asys-deps on simppu workloads built for each rule of the manual: stream and
legacy-stream order, event record -> stream wait across streams (sync ids,
the last event per stream, never the own stream), effective vs all, graph
edges, host waits, several threads on one stream, the critical path."""
import csv
import io
import json
import os
import unittest

from asys_e2e import ASYS, BIN, BUILD, AsysTestCase, prog

WORKLOAD = prog('hggc_workload')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
DEPS = os.path.join(BIN, 'asys-deps')
MS = 1000000
# long kernels: the host has launched everything long before the first ends, even on a
# loaded two-core machine under ASan, where launching a shape's dozen calls took over 2 ms
TIMES = {'step_a': 20 * MS, 'step_b': 15 * MS, 'step_c': 10 * MS, 'step_d': 5 * MS}
KERNEL_TIMES = ','.join('%s=%d' % kv for kv in TIMES.items())
STREAM, LEGACY, EVENT, GRAPH, HOST = 1, 2, 3, 4, 5


@unittest.skipUnless(os.path.exists(WORKLOAD), 'nvcc was not found when building')
class DepsCase(AsysTestCase):
    shape = None

    def setUp(self):
        super().setUp()
        env = dict(self.env, SIMPPU_KERNEL_TIMES=KERNEL_TIMES)
        r = self.run_cmd([SIMPPU_RUN, ASYS, 'profile', '-t', 'hggc', '-s', 'none',
                          '-o', self.path('rep'), '--force-overwrite=true', WORKLOAD, 'deps', self.shape], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))

    def deps(self, effective_only=False):
        """{(kind, waiter, depended)} between device activities, by kernel name (with the
        stream when asked for), e.g. (3, 'step_b', 'step_a')."""
        rows = self.db().execute(
            'SELECT d.kind, wn.name, dn.name, d.effective FROM ppu_deps AS d '
            'JOIN ppu_activity_names AS wn ON wn.id = d.activity_id '
            'JOIN ppu_activity_names AS dn ON dn.id = d.depends_on').fetchall()
        return {(k, w.rstrip('()'), d.rstrip('()')) for k, w, d, e in rows
                if e or not effective_only}

    def cli(self, *args, expect_rc=0):
        r = self.run_cmd([DEPS, '-q', *args, self.report()])
        self.assertEqual(r.returncode, expect_rc, r.stderr.decode(errors='replace'))
        return r

    def cli_rows(self, *args):
        return list(csv.DictReader(io.StringIO(self.cli('-f', 'csv', *args).stdout.decode())))


class ForkJoin(DepsCase):
    shape = 'fork-join'

    def test_edges(self):
        self.assertEqual(self.deps(), {
            (EVENT, 'step_b', 'step_a'), (EVENT, 'step_c', 'step_a'),
            (EVENT, 'step_d', 'step_b'), (EVENT, 'step_d', 'step_c'),
            (STREAM, 'step_d', 'step_a')})
        # when d was launched, a had long ended? no: everything was launched at once
        self.assertEqual(self.deps(effective_only=True), self.deps())

    def test_one_activity_with_its_calls(self):
        rows = self.cli_rows('--kernel', 'step_d')
        events = [r for r in rows if r['Kind'] == 'event']
        self.assertEqual(sorted(r['Depended Name'] for r in events), ['step_b()', 'step_c()'])
        for r in events:
            self.assertEqual(r['Record API'], 'cudaEventRecord')
            self.assertEqual(r['Wait API'], 'cudaStreamWaitEvent')
            self.assertTrue(r['Record CorrID'] and r['Wait CorrID'] and r['Wait TID'])
        # b (1.5 ms) held d back longer than c (1 ms): delays within bounds
        delay = {r['Depended Name']: int(r['Delay (ns)']) for r in events}
        self.assertGreater(delay['step_b()'], delay['step_c()'])
        # each delay runs from d's launch call to the end of what it waited for; b and c
        # both started when a ended, so they end 0.5 ms apart whatever the host's pace
        ends = dict(self.db().execute(
            'SELECT n.name, p.end_ns FROM ppu_activities AS p '
            'JOIN ppu_activity_names AS n ON n.id = p.id').fetchall())
        launch = self.db().execute(
            'SELECT p.api_start_ns FROM ppu_activities AS p JOIN ppu_activity_names AS n '
            "ON n.id = p.id WHERE n.name = 'step_d()'").fetchone()[0]
        for name in ('step_b()', 'step_c()'):
            self.assertEqual(delay[name], ends[name] - launch, delay)
        self.assertLessEqual(delay['step_b()'], TIMES['step_a'] + TIMES['step_b'] * 1.01, delay)
        self.assertAlmostEqual(delay['step_b()'] - delay['step_c()'],
                               TIMES['step_b'] - TIMES['step_c'], delta=0.2 * MS)
        # the same through the correlation id of d's launch, and as json and dot
        corr = self.db().execute('SELECT correlation_id FROM ppu_activities AS p '
                                 'JOIN ppu_activity_names AS n ON n.id = p.id '
                                 "WHERE n.name = 'step_d()'").fetchone()[0]
        self.assertEqual(len(self.cli_rows('--correlation', str(corr))), len(rows))
        data = json.loads(self.cli('-f', 'json', '--kernel', 'step_d#1').stdout)
        self.assertEqual(len(data), len(rows))
        dot = self.cli('-f', 'dot', '--kernel', 'step_d').stdout.decode()
        self.assertTrue(dot.startswith('digraph asys_deps {') and dot.rstrip().endswith('}'))
        self.assertEqual(dot.count('color=darkorange'), 2)
        self.assertEqual(dot.count('color=darkgreen'), 1)

    def test_short_options(self):
        # -f format, -o output, -q quiet (given by cli())
        self.cli('-f', 'json', '-o', self.path('deps.json'), '--kernel', 'step_d')
        with open(self.path('deps.json')) as f:
            self.assertEqual(len(json.load(f)), 3)

    def test_summary(self):
        out = self.cli().stdout.decode()
        self.assertIn('Dependencies by kind', out)
        kinds = {r['Kind']: r for r in self.cli_rows()}
        self.assertEqual(kinds['event']['All'], '4')
        self.assertEqual(kinds['stream order']['All'], '1')
        self.assertIn('host wait', kinds)  # cudaDeviceSynchronize waited on each stream


class Rerecord(DepsCase):
    shape = 'rerecord'

    def test_each_wait_links_to_its_record(self):
        events = {d for d in self.deps() if d[0] == EVENT}
        self.assertEqual(events, {(EVENT, 'step_b', 'step_a'), (EVENT, 'step_d', 'step_c')})


class SameStream(DepsCase):
    shape = 'same-stream'

    def test_own_stream_event_is_not_a_dependency(self):
        self.assertEqual(self.deps(), {(STREAM, 'step_b', 'step_a')})


class Satisfied(DepsCase):
    shape = 'satisfied'

    def test_resolved_before_launch_only_in_all(self):
        self.assertIn((EVENT, 'step_b', 'step_a'), self.deps())
        self.assertNotIn((EVENT, 'step_b', 'step_a'), self.deps(effective_only=True))
        self.assertEqual([r['Kind'] for r in self.cli_rows('--kernel', 'step_b')], [])
        rows = self.cli_rows('--kernel', 'step_b', '--mode', 'all')
        self.assertEqual([(r['Kind'], r['Effective'], r['Delay (ns)']) for r in rows],
                         [('event', '0', '0')])
        # the host's event synchronize did wait for a
        host = self.db().execute('SELECT COUNT(*) FROM ppu_deps AS d JOIN ppu_syncs AS s '
                                 'ON s.id = d.sync_id WHERE d.kind = 5 AND s.type = 1 '
                                 'AND d.effective').fetchone()[0]
        self.assertEqual(host, 1)


class TwoStreams(DepsCase):
    shape = 'two-streams'

    def test_last_event_per_depended_stream(self):
        events = {d for d in self.deps() if d[0] == EVENT}
        self.assertEqual(events, {(EVENT, 'step_d', 'step_b'), (EVENT, 'step_d', 'step_c')})


class Legacy(DepsCase):
    shape = 'legacy'

    def test_legacy_stream_barrier(self):
        self.assertEqual({d for d in self.deps() if d[0] == LEGACY},
                         {(LEGACY, 'step_b', 'step_a'), (LEGACY, 'step_d', 'step_b')})
        self.assertNotIn('step_c', {d[1] for d in self.deps()} | {d[2] for d in self.deps()})


class PerThread(DepsCase):
    shape = 'per-thread'

    def test_per_thread_stream_is_blocking(self):
        # no creation record: the import takes it as a blocking stream
        self.assertEqual(self.deps(), {(LEGACY, 'step_b', 'step_a')})
        streams = self.db().execute(
            'SELECT s.non_blocking, s.is_default, s.correlation_id FROM ppu_streams AS s '
            'JOIN ppu_activities AS p ON p.pid = s.pid AND p.stream = s.stream '
            'JOIN ppu_activity_names AS n ON n.id = p.id WHERE n.name = ?', ('step_a()',)
        ).fetchall()
        self.assertEqual(streams, [(0, 0, None)])


class Diamond(DepsCase):
    shape = 'diamond'

    def test_graph_edges(self):
        self.assertEqual(self.deps(), {
            (GRAPH, 'step_b', 'step_a'), (GRAPH, 'step_c', 'step_a'),
            (GRAPH, 'step_d', 'step_b'), (GRAPH, 'step_d', 'step_c'),
            (STREAM, 'step_a', 'empty_kernel')})


class HostNode(DepsCase):
    shape = 'host-node'

    def test_edges_through_a_node_without_device_work(self):
        # a -> host function -> {b, c}: b and c wait for a through it, not for the
        # work before the launch (they are not roots of the launch)
        self.assertEqual(self.deps(), {
            (GRAPH, 'step_b', 'step_a'), (GRAPH, 'step_c', 'step_a'),
            (STREAM, 'step_a', 'empty_kernel')})
        calls = [r[0] for r in self.db().execute(
            "SELECT s.value FROM hggc_api_calls AS a JOIN strings AS s ON s.id = a.name_id "
            "WHERE s.value = 'cudaLaunchHostFunc'")]
        self.assertEqual(len(calls), 2)


class TwoThreads(DepsCase):
    shape = 'two-threads'

    def test_warning(self):
        r = self.cli('--kernel', 'step_a')
        self.assertIn('driven by 2 threads', r.stderr.decode())
        self.assertIn('may be inaccurate', r.stderr.decode())


class CriticalPath(DepsCase):
    shape = 'path'

    def test_known_path(self):
        steps = self.cli_rows('--critical-path')
        self.assertEqual([s['Name'] for s in steps], ['step_a()', 'step_b()', 'step_c()'])
        self.assertTrue(steps[0]['Waited On'].startswith('host launch'))
        self.assertTrue(steps[1]['Waited On'].startswith('event: kernel on stream'))
        self.assertTrue(steps[2]['Waited On'].startswith('event: kernel on stream'))
        for s in steps[1:]:
            self.assertLess(int(s['Waited (ns)']), 50000)  # each started as the one before ended
        for s, name in zip(steps, ['step_a', 'step_b', 'step_c']):
            self.assertLessEqual(abs(int(s['Duration (ns)']) - TIMES[name]), TIMES[name] // 100)
        dot = self.cli('--critical-path', '-f', 'dot').stdout.decode()
        self.assertEqual(dot.count(' [label='), 3)  # the three steps
        self.assertEqual(dot.count('color=darkorange'), 2)  # a -> b -> c

    def test_window(self):
        db = self.db()
        start = db.execute("SELECT value FROM session_info WHERE key = 'start_ns'").fetchone()[0]
        b_start = db.execute('SELECT p.start_ns FROM ppu_activities AS p '
                             'JOIN ppu_activity_names AS n ON n.id = p.id '
                             "WHERE n.name = 'step_b()'").fetchone()[0]
        steps = self.cli_rows('--critical-path', '--filter-time', '%d/' % (b_start - start + 1000))
        self.assertEqual([s['Name'] for s in steps], ['step_b()', 'step_c()'])


class BadSelectors(DepsCase):
    shape = 'fork-join'

    def test_one_line_errors(self):
        for args, message in [
                (('--kernel', 'nosuch'), "no kernel 'nosuch' #1"),
                (('--kernel', 'step_a#2'), "no kernel 'step_a' #2"),
                (('--activity', '999999'), 'no activity 999999'),
                (('--correlation', '999999'), 'no device activity with correlation id 999999')]:
            r = self.cli(*args, expect_rc=1)
            err = r.stderr.decode().strip()
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(message, err)
        for args, message in [(('--kernel', 'a#0'), 'NAME#N'), (('--mode', 'some'), '--mode'),
                              (('--activity', 'x'), 'takes a number'),
                              (('--activity', '1', '--kernel', 'a'), 'give one of'),
                              (('-f', 'svg'), "unknown format 'svg'")]:
            r = self.cli(*args, expect_rc=2)
            self.assertIn(message, r.stderr.decode())
        out = self.path('deps.csv')
        self.cli('--kernel', 'nosuch', '-o', out, expect_rc=1)
        self.assertFalse(os.path.exists(out))  # nothing half-written


if __name__ == '__main__':
    if not os.path.exists(WORKLOAD):
        print('SKIPPED: nvcc was not found when building; the dependency tests need the CUDA '
              'workload tests/e2e/progs/hggc_workload.cu')
        raise SystemExit(77)
    unittest.main(verbosity=2)
