"""Many reports, one analysis (issue 27.3, 27.4): asys-stats over the reports
of 8 ranks recorded here (asys profile --multi-node-mode true with RANK and
WORLD_SIZE, each rank running rank_steps: steps on one CLOCK_REALTIME
schedule, an "allreduce" HGTX range standing in for the collective, one rank
computing longer in every step), their partials and merge, the Dask path on
a LocalCluster, and the inputs refused."""
import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from asys_e2e import ASYS, STATS, AsysTestCase, prog

RANKS = 8
LATE_RANK = 5
LATE_US = 40000      # the late rank's extra compute per step
PERIOD_US = 200000   # a step; the allreduce is its third quarter
STEPS = 4
SHIFTED_RANK = 3
SHIFT_NS = 100_000_000
MULTI_REPORTS = ('rank_sum', 'pccl_skew', 'rank_outliers', 'rank_clock', 'rank_clock:hgtx')
RANK_VARIABLES = ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'OMPI_COMM_WORLD_RANK',
                  'OMPI_COMM_WORLD_LOCAL_RANK', 'OMPI_COMM_WORLD_SIZE', 'PMI_RANK', 'PMI_SIZE',
                  'MPI_LOCALRANKID', 'SLURM_PROCID', 'SLURM_LOCALID', 'SLURM_NTASKS')


def record_ranks(directory, env, shift=None):
    """The 8 ranks' reports in DIRECTORY/runs (rep_0 ... rep_7), recorded at
    once; `shift`: (rank, ns) whose recorded clock offset a test knob moves."""
    runs = os.path.join(directory, 'runs')
    os.makedirs(runs, exist_ok=True)
    t0 = time.time_ns() + 2_000_000_000  # every rank started by then
    procs = []
    for rank in range(RANKS):
        e = {k: v for k, v in env.items() if k not in RANK_VARIABLES}
        e.update(RANK=str(rank), WORLD_SIZE=str(RANKS))
        if shift and shift[0] == rank:
            e['ASYS_TEST_REALTIME_SHIFT_NS'] = str(shift[1])
        procs.append(subprocess.Popen(
            [ASYS, 'profile', '--multi-node-mode', 'true', '-t', 'nvtx', '-s', 'none',
             '-o', os.path.join(runs, 'rep_%r'), prog('rank_steps'), str(STEPS), str(t0),
             str(PERIOD_US), str(LATE_RANK), str(LATE_US)],
            cwd=directory, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=300)
        if p.returncode != 0:
            raise RuntimeError('asys profile failed: %s' % err.decode(errors='replace'))
    return runs


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


class RankSet(AsysTestCase):
    """A class's 8 ranks, recorded once (copied into each test's directory)."""
    shift = None

    @classmethod
    def setUpClass(cls):
        cls.recorded = tempfile.mkdtemp(prefix='asys-e2e-ranks-')
        env = dict(os.environ, TMPDIR=cls.recorded)
        cls.recorded_runs = record_ranks(cls.recorded, env, cls.shift)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.recorded, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.runs = self.path('runs')
        shutil.copytree(self.recorded_runs, self.runs)

    def multi(self, *args, expect_rc=0):
        r = self.stats('-q', *args, expect_rc=expect_rc)
        return r.stdout.decode()

    def csv(self, report, *inputs, extra=()):
        return self.multi('-f', 'csv', '-r', report, *extra, *(inputs or (self.runs,)))

    def report_path(self, rank):
        return os.path.join(self.runs, 'rep_%d.asys-rep' % rank)


class ManyReports(RankSet):

    def test_rank_sum_sums_equal_single_runs(self):
        summary = rows(self.csv('rank_sum'))
        self.assertEqual([int(r['Rank']) for r in summary], list(range(RANKS)))
        for r in summary:
            rank = int(r['Rank'])
            single = rows(self.csv('hgtx_sum', self.report_path(rank)))
            self.assertEqual(int(r['HGTX Time (ns)']),
                             sum(int(s['Total Time (ns)']) for s in single), rank)
            self.assertEqual(r['Host'], os.uname().nodename)
            self.assertTrue(r['Clock'].startswith('realtime'), r['Clock'])
            self.assertEqual(int(r['Kernel Time (ns)']), 0)

    def test_existing_reports_gain_rank_and_host(self):
        merged = rows(self.csv('hgtx_sum'))
        self.assertEqual(list(merged[0])[:2], ['Rank', 'Host'])
        for rank in range(RANKS):
            single = rows(self.csv('hgtx_sum', self.report_path(rank)))
            mine = [{k: v for k, v in r.items() if k not in ('Rank', 'Host')}
                    for r in merged if int(r['Rank']) == rank]
            self.assertEqual(mine, single, rank)

    def test_single_report_output_is_unchanged(self):
        # one report: the output of asys-stats as before, and its partial
        # merged alone gives the same bytes
        for fmt in ('csv', 'column', 'json'):
            single = self.multi('-f', fmt, '-r', 'hgtx_sum,report_info', self.report_path(0))
            self.multi('--partial', self.path('p0'), '-r', 'hgtx_sum,report_info',
                       self.report_path(0))
            merged = self.multi('--merge', '-f', fmt, '-r', 'hgtx_sum,report_info',
                                self.path('p0'))
            if fmt == 'column':  # the title names the input: the partial here
                merged = merged.replace(self.path('p0'), self.report_path(0))
            self.assertEqual(merged, single, fmt)

    def test_pccl_skew_names_the_late_rank(self):
        skew = rows(self.csv('pccl_skew'))
        allreduce = [r for r in skew if r['Collective'] == ':allreduce']
        self.assertEqual(len(allreduce), STEPS)
        for r in allreduce:
            self.assertEqual(int(r['Straggler']), LATE_RANK, r)
            self.assertEqual(int(r['Ranks']), RANKS)
            self.assertEqual(r['Source'], 'hgtx')
            self.assertGreater(int(r['Skew (ns)']), LATE_US * 1000 // 2, r)

    def test_rank_outliers_names_the_late_rank(self):
        out = rows(self.csv('rank_outliers'))
        flagged = {(int(r['Rank']), r['Name']) for r in out}
        self.assertIn((LATE_RANK, ':compute'), flagged)
        # a k large enough flags nothing
        self.assertEqual(rows(self.csv('rank_outliers:1000000')), [])

    def test_jobs_and_partials_agree(self):
        reports = ','.join(MULTI_REPORTS + ('hgtx_sum',))
        one = self.multi('-j', '1', '-f', 'csv', '-r', reports, self.runs)
        four = self.multi('-j', '4', '-f', 'csv', '-r', reports, self.runs)
        self.assertEqual(one, four)
        partials = []
        for rank in range(RANKS):
            partials.append(self.path('rank%d.partial' % rank))
            self.multi('--partial', partials[-1], '-r', reports, self.report_path(rank))
        self.assertEqual(self.multi('--merge', '-f', 'csv', '-r', reports, *partials), one)
        # the same reports named one by one, in another order: ranks in order
        named = [self.report_path(r) for r in reversed(range(RANKS))]
        self.assertEqual(self.multi('-f', 'csv', '-r', reports, *named), one)

    def test_each_report_imported_once(self):
        self.multi('-r', 'rank_sum', self.runs)
        caches = {n: os.stat(os.path.join(self.runs, n)).st_mtime_ns
                  for n in os.listdir(self.runs) if n.endswith('.sqlite')}
        self.assertEqual(len(caches), RANKS)
        self.multi('-r', 'rank_sum,pccl_skew', self.runs)
        self.assertEqual({n: os.stat(os.path.join(self.runs, n)).st_mtime_ns
                          for n in caches}, caches)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('asys-stats-')], [])

    def test_partials_kept_beside_the_reports(self):
        first = self.csv('rank_sum,pccl_skew')
        kept = sorted(n for n in os.listdir(self.runs) if n.endswith('.asys-partial'))
        self.assertEqual(kept, sorted('.rep_%d.asys-partial' % r for r in range(RANKS)))
        self.assertEqual(self.csv('rank_sum,pccl_skew'), first)
        # a damaged one is made again; a report recorded again is read again
        with open(os.path.join(self.runs, '.rep_0.asys-partial'), 'wb') as f:
            f.write(b'SQLite format 3\0' + b'\0' * 100)
        st = os.stat(self.report_path(1))
        os.utime(self.report_path(1), ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        self.assertEqual(self.csv('rank_sum,pccl_skew'), first)
        # another request is another partial
        self.assertNotEqual(self.csv('rank_sum', extra=('--filter-time', '0/100ms')),
                            self.csv('rank_sum'))

    def test_json_and_files(self):
        import json
        doc = json.loads(self.multi('-f', 'json', '-r', 'rank_sum,pccl_skew', self.runs))
        self.assertEqual(sorted(doc), ['pccl_skew', 'rank_sum'])
        self.assertEqual(len(doc['rank_sum']), RANKS)
        self.multi('-r', 'rank_sum', '-o', self.path('out'), self.runs)
        with open(self.path('out_rank_sum.csv')) as f:
            self.assertEqual(len(rows(f.read())), RANKS)


class ShiftedClock(RankSet):
    """Rank 3's recorded REALTIME-MONOTONIC offset moved by a test knob: its
    host's clock seems 100 ms off; the departures from the allreduce find
    it."""
    shift = (SHIFTED_RANK, SHIFT_NS)

    def test_rank_clock_finds_the_shift(self):
        plain = {int(r['Rank']): r for r in rows(self.csv('rank_clock'))}
        refined = {int(r['Rank']): r for r in rows(self.csv('rank_clock:hgtx'))}
        self.assertIn('shifted %d ns by a test' % SHIFT_NS, plain[SHIFTED_RANK]['Clock'])
        for rank in range(RANKS):
            self.assertEqual(plain[rank]['Method'], 'realtime')
            self.assertEqual(plain[rank]['Correction (ns)'], '')
            r = refined[rank]
            self.assertEqual(r['Method'], 'realtime+hgtx')
            self.assertEqual(int(r['Instances']), STEPS)
            expected = -SHIFT_NS if rank == SHIFTED_RANK else 0
            bound = float(r['Refined Error (ns)']) + 20_000_000  # scheduling on a busy host
            self.assertLess(abs(float(r['Correction (ns)']) - expected), bound, r)
            # the others: aligned within their stated error (and the scheduling)
            if rank != SHIFTED_RANK and r['Error (ns)']:
                self.assertLess(abs(float(r['Correction (ns)'])),
                                int(r['Error (ns)']) + 20_000_000)

    def test_pccl_skew_corrects_the_shifted_clock(self):
        # the stand-in's ranks do not wait for each other, so the PCCL rows
        # of each rank's partial are written here as NCCL's would be: every
        # rank leaves each all-reduce at the same moment, rank 1 arrives 3 ms
        # before that, the others 10 ms; the shifted rank's times carry its
        # clock's 100 ms
        import sqlite3
        partials = []
        for rank in range(RANKS):
            path = self.path('p%d' % rank)
            self.multi('--partial', path, '-r', 'pccl_skew', self.report_path(rank))
            with sqlite3.connect(path) as db:
                db.execute('DELETE FROM partial_rows_0')
                for seq in range(5):
                    leave = 2_000_000_000_000_000_000 + seq * 100_000_000
                    arrive = leave - (3_000_000 if rank == 1 else 10_000_000)
                    moved = SHIFT_NS if rank == SHIFTED_RANK else 0
                    db.execute('INSERT INTO partial_rows_0 (c0, c1, c2, c3, c4, c5) '
                               "VALUES ('pccl', '00000000000000ab', 'AllReduce', ?, ?, ?)",
                               (seq, arrive + moved, leave + moved))
            partials.append(path)
        skew = rows(self.multi('--merge', '-f', 'csv', '-r', 'pccl_skew', *partials))
        self.assertEqual(len(skew), 5)
        for r in skew:
            self.assertEqual((r['Source'], r['Collective'], r['Ranks']), ('pccl', 'AllReduce', '8'))
            self.assertEqual(r['Straggler'], '1')  # not the host whose clock is off
            self.assertEqual(int(r['Skew (ns)']), 7_000_000)

    def test_rank_sum_shows_the_offset(self):
        # Start (ns) is each rank's start on the REALTIME axis; less its start on
        # CLOCK_MONOTONIC (one clock for every rank of this host), what is left is
        # its clock offset, the same for all but the shifted rank (the ranks
        # themselves start tens of ms apart on a loaded machine)
        import sqlite3
        start = {int(r['Rank']): int(r['Start (ns)']) for r in rows(self.csv('rank_sum'))}
        offset = {}
        for rank, realtime in start.items():
            db = self.report_path(rank)[:-len('.asys-rep')] + '.sqlite'
            with sqlite3.connect(db) as c:
                monotonic = c.execute("SELECT value FROM session_info "
                                      "WHERE key = 'start_ns'").fetchone()[0]
            offset[rank] = realtime - int(monotonic)
        others = sorted(v for k, v in offset.items() if k != SHIFTED_RANK)
        self.assertLess(others[-1] - others[0], 1_000_000, offset)
        self.assertLess(abs(offset[SHIFTED_RANK] - others[len(others) // 2] - SHIFT_NS), 1_000_000,
                        offset)


class BadInputs(RankSet):

    def refused(self, argv, said, rc=1):
        before = self.caches()
        r = self.stats(*argv, expect_rc=None)
        self.assertEqual(r.returncode, rc, r.stderr.decode())
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(said, lines[0])
        self.assertEqual(r.stdout, b'')
        # nothing half-written, no cache lost
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('asys-stats-')], [])
        for name, mtime in before.items():
            self.assertEqual(os.stat(os.path.join(self.runs, name)).st_mtime_ns, mtime, name)
        return lines[0]

    def caches(self):
        return {n: os.stat(os.path.join(self.runs, n)).st_mtime_ns
                for n in os.listdir(self.runs) if n.endswith('.sqlite')}

    def test_foreign_file_in_directory(self):
        self.stats('-q', '-r', 'rank_sum', self.runs)
        with open(os.path.join(self.runs, 'notes.txt'), 'w') as f:
            f.write('not a report\n')
        line = self.refused(['-q', '-r', 'rank_sum', self.runs], 'notes.txt')
        self.assertIn('not an asys report', line)

    def test_interrupted_leaves_nothing(self):
        # SIGINT while the workers make their partials: the temporary directory
        # goes with the run (the handler empties and removes it)
        for attempt in range(20):
            p = subprocess.Popen([STATS, '-q', '-j', '2', '--force-export', '-r', 'rank_sum',
                                  self.runs], env=self.env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            seen = False
            while p.poll() is None and not seen:
                seen = any(n.startswith('asys-stats-') for n in os.listdir(self.dir))
                time.sleep(0.002)
            if seen:
                p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=120)
            if seen and p.returncode != 0:
                break
        self.assertTrue(seen and p.returncode != 0, 'never caught the run in its workers')
        self.assertIn(b'interrupted', err)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('asys-stats-')], [])

    def test_two_reports_of_one_rank(self):
        self.stats('-q', '-r', 'rank_sum', self.runs)
        shutil.copy(self.report_path(2), os.path.join(self.runs, 'again.asys-rep'))
        line = self.refused(['-q', '-r', 'rank_sum', self.runs], 'rank 2 is also the rank of')

    def test_reports_of_different_format_versions(self):
        import json
        old = self.path('old')
        os.mkdir(old)
        subprocess.run(['tar', '--zstd', '-xf', self.report_path(7), '-C', old], check=True)
        manifest = os.path.join(old, 'manifest.json')
        with open(manifest) as f:
            m = json.load(f)
        m['format_version'] = m['format_version'] - 1
        with open(manifest, 'w') as f:
            json.dump(m, f)
        os.unlink(self.report_path(7))
        members = sorted(os.listdir(old))
        members.remove('manifest.json')
        subprocess.run(['tar', '--zstd', '-cf', self.report_path(7), '-C', old, 'manifest.json',
                        *members], check=True)
        line = self.refused(['-q', '-r', 'rank_sum', self.runs], 'report format version')
        self.assertIn('rep_7', line)

    def test_a_report_that_cannot_be_read(self):
        with open(os.path.join(self.runs, 'rep_8.asys-rep'), 'wb') as f:
            f.write(b'garbage')
        self.refused(['-q', '-r', 'rank_sum', self.runs], 'rep_8.asys-rep')

    def test_bad_partial(self):
        with open(self.path('bad.partial'), 'wb') as f:
            f.write(b'SQLite format 3\0' + b'\0' * 100)
        self.refused(['-q', '--merge', '-r', 'rank_sum', self.path('bad.partial')],
                     'not an asys partial')
        partial = self.path('p.partial')
        self.stats('-q', '--partial', partial, '-r', 'hgtx_sum', self.report_path(0))
        self.refused(['-q', '--merge', '-r', 'rank_sum', partial],
                     "holds no partial of report 'rank_sum'")

    def test_partial_refuses_several_reports(self):
        self.refused(['-q', '--partial', self.path('x'), '-r', 'rank_sum', self.report_path(0),
                      self.report_path(1)], '--partial takes one report', rc=2)
        self.assertFalse(os.path.exists(self.path('x')))


def dask_python():
    """An interpreter that imports distributed, or None."""
    for python in (sys.executable, '/usr/bin/python3'):
        if python and os.path.exists(python) and subprocess.run(
                [python, '-c', 'import dask, distributed'], capture_output=True).returncode == 0:
            return python
    return None


CLUSTER = '''
import sys
from distributed import LocalCluster
if __name__ == '__main__':
    c = LocalCluster(n_workers=2, threads_per_worker=1, host='127.0.0.1',
                     dashboard_address=None, processes=True)
    print(c.scheduler_address, flush=True)
    sys.stdin.read()
    c.close()
'''


class DaskCluster(RankSet):
    """A LocalCluster of 2 worker processes over loopback."""

    def start_cluster(self, env):
        python = dask_python()
        script = self.path('cluster.py')
        with open(script, 'w') as f:
            f.write(CLUSTER)
        proc = subprocess.Popen([python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env, cwd=self.dir)
        self.addCleanup(self.stop_cluster, proc)
        address = proc.stdout.readline().decode().strip()
        self.assertTrue(address.startswith('tcp://127.0.0.1:'), address)
        return python, address

    @staticmethod
    def stop_cluster(proc):
        try:
            proc.stdin.close()
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def dask_stats(self, python, address, *args):
        env = dict(self.env, ASYS_PYTHON=python)
        return subprocess.run([STATS, '-q', '--scheduler', address, *args], cwd=self.dir,
                              env=env, capture_output=True, timeout=300)

    def test_identical_to_the_local_path(self):
        python, address = self.start_cluster(self.env)
        for report in MULTI_REPORTS + ('hgtx_sum',):
            local = self.csv(report)
            r = self.dask_stats(python, address, '-f', 'csv', '-r', report, self.runs)
            self.assertEqual(r.returncode, 0, r.stderr.decode())
            self.assertEqual(r.stdout.decode(), local, report)
        # DASK_SCHEDULER_ADDRESS names it too
        env = dict(self.env, ASYS_PYTHON=python, DASK_SCHEDULER_ADDRESS=address)
        r = subprocess.run([STATS, '-q', '-f', 'csv', '-r', 'rank_sum', self.runs], cwd=self.dir,
                           env=env, capture_output=True, timeout=300)
        self.assertEqual(r.stdout.decode(), self.csv('rank_sum'))

    def test_unreachable_scheduler(self):
        r = self.dask_stats(dask_python(), 'tcp://127.0.0.1:9', '-r', 'rank_sum', self.runs)
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("cannot reach the Dask scheduler 'tcp://127.0.0.1:9'", lines[0])
        self.assertEqual(r.stdout, b'')

    def test_worker_dies_mid_run(self):
        # the workers kill themselves on rep_4 (a test knob of asys_dask)
        env = dict(self.env, ASYS_TEST_DASK_KILL_WORKER='rep_4.asys-rep',
                   DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES='0')
        python, address = self.start_cluster(env)
        r = self.dask_stats(python, address, '-r', 'rank_sum', self.runs)
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("': its Dask worker died", lines[0])  # rep_4, or one it held
        self.assertEqual(r.stdout, b'')
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith('asys-stats-')], [])

    def test_a_refused_report_on_a_worker(self):
        python, address = self.start_cluster(self.env)
        with open(os.path.join(self.runs, 'rep_9.asys-rep'), 'wb') as f:
            f.write(b'garbage')
        r = self.dask_stats(python, address, '-r', 'rank_sum', self.runs)
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn('rep_9.asys-rep', lines[0])


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'DaskCluster' and not dask_python():
        print('SKIPPED: dask and distributed are not importable (python3-distributed)')
        raise SystemExit(77)
    unittest.main(verbosity=2)
