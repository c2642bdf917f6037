"""--multi-node-mode true (issue 27.1): each rank's asys profile writes its
own report, named with -o's %r, and keeps the rank, local rank and world size
its launcher set (torchrun's RANK/LOCAL_RANK/WORLD_SIZE, Open MPI's
OMPI_COMM_WORLD_*, PMI_*, Slurm's SLURM_*) in the manifest and report_info.
The "ranks" are asys profile processes started here at once, each with the
variables a launcher would give it, each recording hgtx_loop."""
import json
import os
import shutil
import subprocess

import pftrace
from asys_e2e import ASYS, BIN, AsysTestCase, prog

EXPORT = os.path.join(BIN, 'asys-export')

RANK_VARIABLES = ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'OMPI_COMM_WORLD_RANK',
                  'OMPI_COMM_WORLD_LOCAL_RANK', 'OMPI_COMM_WORLD_SIZE', 'PMI_RANK', 'PMI_SIZE',
                  'MPI_LOCALRANKID', 'SLURM_PROCID', 'SLURM_LOCALID', 'SLURM_NTASKS')
OPTIONS = ['-t', 'nvtx', '-s', 'none']


class MultiNodeMode(AsysTestCase):

    def rank_env(self, **variables):
        env = {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        env.update({k: str(v) for k, v in variables.items()})
        return env

    def launch(self, envs, pattern='rep_%r', extra=()):
        """One asys profile per environment, all running at once; their results."""
        procs = [subprocess.Popen([ASYS, 'profile', '--multi-node-mode', 'true', '-o', pattern,
                                   *OPTIONS, *extra, prog('hgtx_loop')], cwd=self.dir, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for env in envs]
        results = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            results.append((p.returncode, out.decode(errors='replace'),
                            err.decode(errors='replace')))
        self.assertNoSessionLeft()
        return results

    def check_ranks(self, envs, expected, source):
        """`expected`: (rank, local rank, world size) per environment."""
        for rc, _, err in self.launch(envs):
            self.assertEqual(rc, 0, err)
        reports = sorted(n for n in os.listdir(self.dir) if n.endswith('.asys-rep'))
        self.assertEqual(reports, ['rep_%d.asys-rep' % r for r, _, _ in sorted(expected)])
        for rank, local, size in expected:
            name = 'rep_%d' % rank
            m = self.manifest(name)
            self.assertIs(m['options']['multi-node-mode'], True)
            self.assertEqual(m['multi_node'], {'rank': rank, 'local_rank': local,
                                               'world_size': size, 'source': source})
            rows = {r['Property']: r['Value'] for r in self.stats_rows('report_info', name)}
            self.assertEqual(rows['Rank'], '%d of %d, local rank %d (from %s)'
                             % (rank, size, local, source))
            # the report holds this rank's recording: hgtx_loop's ranges are there
            ranges = self.stats_rows('hgtx_sum', name)
            self.assertTrue(ranges, 'rank %d: no HGTX ranges' % rank)

    def test_four_torchrun_ranks(self):
        envs = [self.rank_env(RANK=r, LOCAL_RANK=r % 2, WORLD_SIZE=4) for r in range(4)]
        self.check_ranks(envs, [(r, r % 2, 4) for r in range(4)], 'RANK/LOCAL_RANK/WORLD_SIZE')

    def test_slurm_ranks(self):
        envs = [self.rank_env(SLURM_PROCID=r, SLURM_LOCALID=r, SLURM_NTASKS=2) for r in range(2)]
        self.check_ranks(envs, [(r, r, 2) for r in range(2)],
                         'SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS')

    def test_open_mpi_ranks_under_slurm(self):
        # mpirun inside a Slurm allocation: Open MPI's own variables win over
        # the allocation's SLURM_PROCID (0 in every rank)
        envs = [self.rank_env(OMPI_COMM_WORLD_RANK=r, OMPI_COMM_WORLD_LOCAL_RANK=r - 1,
                              OMPI_COMM_WORLD_SIZE=3, SLURM_PROCID=0, SLURM_NTASKS=1)
                for r in (1, 2)]
        self.check_ranks(envs, [(1, 0, 3), (2, 1, 3)], 'OMPI_COMM_WORLD_*')

    def test_false_keeps_no_rank(self):
        r = self.profile([prog('hgtx_loop')], options=[*OPTIONS, '--multi-node-mode', 'false'])
        self.assertNotIn('rank', r.stderr.decode())
        m = self.manifest()
        self.assertIs(m['options']['multi-node-mode'], False)
        self.assertNotIn('multi_node', m)
        self.assertNotIn('Rank', [r['Property'] for r in self.stats_rows('report_info')])

    def test_true_without_rank_is_said(self):
        env = self.rank_env()
        r = self.run_cmd([ASYS, 'profile', '--multi-node-mode', 'true', '-o', 'rep', *OPTIONS,
                          prog('hgtx_loop')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertIn('no rank in the environment', r.stderr.decode())
        self.assertEqual(self.manifest()['multi_node'], {})
        rows = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(rows['Rank'], 'none in the environment (--multi-node-mode true)')

    def test_percent_r_without_rank_is_refused(self):
        r = self.run_cmd([ASYS, 'profile', '-o', 'rep_%r', *OPTIONS, prog('hgtx_loop')],
                         env=self.rank_env())
        self.assertEqual(r.returncode, 2)
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        for name in ('RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK', 'SLURM_PROCID'):
            self.assertIn(name, lines[0])
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith('.asys-rep')], [])

    def test_percent_r_without_multi_node_mode(self):
        # %r names the report whatever the mode; PMI's variables are read too
        r = self.run_cmd([ASYS, 'profile', '-o', 'pmi_%r_of_%q{PMI_SIZE}', *OPTIONS,
                          prog('hgtx_loop')], env=self.rank_env(PMI_RANK=5, PMI_SIZE=8))
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertTrue(os.path.exists(self.path('pmi_5_of_8.asys-rep')))
        self.assertNotIn('multi_node', self.manifest('pmi_5_of_8'))

    def test_bad_rank_is_refused(self):
        for variables, said in (({'RANK': 'x'}, "RANK='x' is not a rank"),
                                ({'RANK': 4, 'WORLD_SIZE': 4}, "WORLD_SIZE='4' does not fit")):
            for argv in (['-o', 'rep_%r'], ['--multi-node-mode', 'true', '-o', 'rep']):
                r = self.run_cmd([ASYS, 'profile', *argv, *OPTIONS, prog('hgtx_loop')],
                                 env=self.rank_env(**variables))
                self.assertEqual(r.returncode, 2, r.stderr.decode())
                lines = r.stderr.decode().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(said, lines[0])
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith('.asys-rep')], [])

    def test_heap_refused(self):
        results = self.launch([self.rank_env(RANK=0, WORLD_SIZE=1)],
                              extra=['--heap-memory-usage', 'true'])
        rc, _, err = results[0]
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip().splitlines(),
                         ['asys profile: --heap-memory-usage cannot be used with --multi-node-mode'])
        self.assertFalse(os.path.exists(self.path('rep_0.asys-rep')))



LAUNCHER = """#!/bin/sh
# a launcher on one node (torchrun, mpirun): starts its ranks with their variables
n=$1; shift
r=0
while [ $r -lt $n ]; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n "$@" $((1000 * (r + 1))) &
    r=$((r + 1))
done
wait
"""


class LauncherRanks(AsysTestCase):
    """Issue 27.1: one asys profile around a launcher that starts several
    ranks writes one report per rank (named by -o's %r, else NAME_rankN);
    the launcher's own processes go with the lowest rank; a fork child keeps
    its parent's rank."""

    def launch(self, output, ranks=3, program=('hgtx_loop',), env=None):
        launcher = self.path('launch.sh')
        with open(launcher, 'w') as f:
            f.write(LAUNCHER)
        os.chmod(launcher, 0o755)
        env = env or {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        r = self.run_cmd([ASYS, 'profile', '--multi-node-mode', 'true', '-o', output, *OPTIONS,
                          launcher, str(ranks), *[prog(p) for p in program]], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertNoSessionLeft()
        return r.stderr.decode()

    def ranges(self, name):
        return {row['Range']: int(row['Instances']) for row in self.stats_rows('hgtx_sum', name)}

    def test_one_report_per_rank(self):
        err = self.launch('rep_%r')
        self.assertIn('3 reports, one per rank', err)
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.endswith('.asys-rep')),
                         ['rep_0.asys-rep', 'rep_1.asys-rep', 'rep_2.asys-rep'])
        ids = set()
        for rank in range(3):
            name = 'rep_%d' % rank
            m = self.manifest(name)
            self.assertEqual(m['multi_node'], {'rank': rank, 'local_rank': rank, 'world_size': 3,
                                               'source': 'RANK/LOCAL_RANK/WORLD_SIZE',
                                               'split_from_launcher': True,
                                               'launcher_processes': rank == 0})
            ids.add(m['report_id'])
            # each rank's own ranges only: rank r ran hgtx_loop 1000*(r+1)
            self.assertEqual(self.ranges(name), {':r': 1000 * (rank + 1)})
            with self.db(name) as db:
                names = sorted(n for n, in db.execute(
                    'SELECT s.value FROM processes p JOIN strings s ON s.id = p.name_id'))
            # the launcher (the shell) is in rank 0's report only
            self.assertEqual(len(names), 2 if rank == 0 else 1, names)
            self.assertEqual(names.count('hgtx_loop'), 1, names)
        self.assertEqual(len(ids), 3)

    def test_names_without_percent_r_and_fork_children(self):
        # hgtx_fork's fork child never execs: it keeps its parent's rank
        self.launch('run', ranks=2, program=('hgtx_fork', 'hgtx_loop'))
        for rank in range(2):
            rows = self.ranges('run_rank%d' % rank)
            self.assertEqual(rows['forkdom:inherited-name'], 4)
            self.assertEqual(rows[':child-own'], 1)
            self.assertEqual(rows[':r'], 1000 * (rank + 1))

    def test_processes_without_ranks_keep_one_report(self):
        env = {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        r = self.run_cmd([ASYS, 'profile', '--multi-node-mode', 'true', '-o', 'rep_%r', *OPTIONS,
                          prog('hgtx_loop')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith('.asys-rep')],
                         ['rep_all.asys-rep'])

    def test_a_literal_percent_r_stays(self):
        # '%%r' is a '%' and an 'r': only a multi-node session's name keeps %r
        r = self.run_cmd([ASYS, 'profile', '-o', 'lit%%r', *OPTIONS, prog('hgtx_loop')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith('.asys-rep')],
                         ['lit%r.asys-rep'])

    def test_finalize_of_a_kept_session_splits_too(self):
        env = {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        env['ASYS_KEEP_SESSION'] = '1'
        launcher = self.path('launch.sh')
        with open(launcher, 'w') as f:
            f.write(LAUNCHER)
        os.chmod(launcher, 0o755)
        r = self.run_cmd([ASYS, 'profile', '--multi-node-mode', 'true', '-o', 'rep_%r', *OPTIONS,
                          launcher, '2', prog('hgtx_loop')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        session = [n for n in os.listdir(self.dir) if n.startswith('asys-')][0]
        for rank in range(2):
            os.unlink(self.path('rep_%d.asys-rep' % rank))
        r = self.run_cmd([ASYS, 'finalize', self.path(session)], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        for rank in range(2):
            self.assertEqual(self.ranges('rep_%d' % rank), {':r': 1000 * (rank + 1)})


class RankTimeline(AsysTestCase):
    """Issue 27.3: asys-export of several reports (or a directory) draws one
    timeline: each rank its own processes on one time axis, the hosts'
    CLOCK_REALTIME, with every event of every report there once."""

    SHIFT = 3_000_000_000  # rank 1's host clock, 3 s off

    def record(self, rank, shift):
        env = {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        env.update(RANK=str(rank), WORLD_SIZE='2', ASYS_TEST_REALTIME_SHIFT_NS=str(shift))
        simppu = os.path.join(os.path.dirname(BIN), 'simppu', 'simppu-run')
        r = self.run_cmd([simppu, ASYS, 'profile', '--multi-node-mode', 'true', '-t', 'hggc,hgtx',
                          '-s', 'none', '-o', self.path('runs/rep_%r'), prog('hggc_workload'),
                          'all'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())

    def events(self, *inputs, out):
        r = self.run_cmd([EXPORT, '-q', '-t', 'json', '-o', self.path(out), *inputs])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(self.path(out)) as f:
            data = json.load(f)
        return data['traceEvents'] if isinstance(data, dict) else data

    def test_ranks_on_one_axis(self):
        os.mkdir(self.path('runs'))
        self.record(0, 0)
        self.record(1, self.SHIFT)
        both = self.events(self.path('runs'), out='all.json')
        owner = {}  # pid -> rank, from the process names
        for e in both:
            if e['ph'] == 'M' and e['name'] == 'process_name':
                self.assertRegex(e['args']['name'], r'^rank [01] \(')
                owner[e['pid']] = int(e['args']['name'].split()[1])
        self.assertEqual(set(owner.values()), {0, 1})
        info = []
        for rank in (0, 1):
            with self.db('runs/rep_%d' % rank) as db:
                info.append(dict(db.execute('SELECT key, value FROM session_info')))
        shift = [i['realtime_minus_monotonic_ns'] - info[0]['realtime_minus_monotonic_ns']
                 for i in info]
        self.assertLess(abs(shift[1] - self.SHIFT), 50_000_000)  # the clock was 3 s off
        start = min(i['start_ns'] + d for i, d in zip(info, shift))
        for rank in (0, 1):
            single = sorted((e['ts'], e['name'], e.get('dur', 0)) for e in
                            self.events(self.report('runs/rep_%d' % rank), out='%d.json' % rank)
                            if e['ph'] in ('X', 'i', 'I', 'C'))
            mine = sorted((e['ts'], e['name'], e.get('dur', 0)) for e in both
                          if e['ph'] in ('X', 'i', 'I', 'C') and owner.get(e['pid']) == rank)
            # every event of the rank once, each moved by what the clocks say
            self.assertEqual(len(mine), len(single))
            self.assertGreater(len(mine), 100)
            moved = (info[rank]['start_ns'] + shift[rank] - start) / 1000
            for (ts, name, dur), (ts1, name1, dur1) in zip(mine, single):
                self.assertEqual((name, dur), (name1, dur1))
                self.assertAlmostEqual(ts - ts1, moved, delta=0.002)
        # and the Perfetto trace of the same reports loads as one
        r = self.run_cmd([EXPORT, '-q', '-o', self.path('all.pftrace'), self.report('runs/rep_1'),
                          self.report('runs/rep_0')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        trace = pftrace.read(self.path('all.pftrace'))
        self.assertEqual(trace.problems, [])
        tops = [t.name for t in trace.tracks.values() if not t.parent and t.name]
        self.assertTrue(any(n.startswith('rank 0 (') for n in tops), tops)
        self.assertTrue(any(n.startswith('rank 1 (') for n in tops), tops)
        self.assertTrue(trace.flows)

    def test_deps_per_rank(self):
        # asys-deps over a directory: one section per report, each what the
        # report alone gives
        os.mkdir(self.path('runs'))
        self.record(0, 0)
        self.record(1, self.SHIFT)
        deps = os.path.join(BIN, 'asys-deps')
        r = self.run_cmd([deps, '-q', self.path('runs')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        expected = ''
        for rank in (0, 1):
            one = self.run_cmd([deps, '-q', self.report('runs/rep_%d' % rank)])
            self.assertEqual(one.returncode, 0, one.stderr.decode())
            self.assertIn('Dependencies by kind', one.stdout.decode())
            expected += '%s== %s (rank %d) ==\n%s' % ('\n' if rank else '',
                                                      self.report('runs/rep_%d' % rank), rank,
                                                      one.stdout.decode())
        self.assertEqual(r.stdout.decode(), expected)
        r = self.run_cmd([deps, '-f', 'csv', self.path('runs')])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.decode().strip().splitlines()), 1)

    def test_bad_sets(self):
        os.mkdir(self.path('runs'))
        self.record(0, 0)
        shutil.copy(self.report('runs/rep_0'), self.path('runs/copy.asys-rep'))
        for argv, said in (
                ([self.path('runs')], "are both rank 0"),
                (['-t', 'csv', self.path('runs')], 'one timeline: -t pftrace or json'),
                ([self.path('empty')], "the directory holds no report"),
        ):
            os.makedirs(self.path('empty'), exist_ok=True)
            r = self.run_cmd([EXPORT, '-o', self.path('x.pftrace'), *argv])
            self.assertNotEqual(r.returncode, 0)
            lines = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(said, lines[0])
            self.assertFalse(os.path.exists(self.path('x.pftrace')))
        with open(self.path('runs/foreign.asys-rep'), 'w') as f:
            f.write('not a report')
        os.unlink(self.path('runs/copy.asys-rep'))
        r = self.run_cmd([EXPORT, '-o', self.path('x.pftrace'), self.path('runs')])
        self.assertEqual(r.returncode, 1)
        self.assertIn('foreign.asys-rep', r.stderr.decode())
        self.assertFalse(os.path.exists(self.path('x.pftrace')))


class ClockAlignment(AsysTestCase):
    """Issue 27.2: each rank's report says how far its CLOCK_REALTIME can be
    trusted (adjtimex's state and maximum error, the offset's spread over the
    run), and a test can shift a rank's clock by a known amount."""

    def record(self, name, shift):
        env = {k: v for k, v in self.env.items() if k not in RANK_VARIABLES}
        env.update(RANK='1', WORLD_SIZE='2')
        if shift is not None:
            env['ASYS_TEST_REALTIME_SHIFT_NS'] = str(shift)
        r = self.run_cmd([ASYS, 'profile', '--multi-node-mode', 'true', '-o', name, *OPTIONS,
                          prog('hgtx_loop')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with self.db(name) as db:
            return dict(db.execute('SELECT key, value FROM session_info'))

    def test_state_error_and_shift(self):
        plain = self.record('plain', None)
        shifted = self.record('shifted', 250_000_000)
        # the shift moves the recorded offset (and nothing else) by what was asked
        moved = shifted['realtime_minus_monotonic_ns'] - plain['realtime_minus_monotonic_ns']
        self.assertLess(abs(moved - 250_000_000), 20_000_000, moved)
        # the kernel's own view, as adjtimex gives it to anyone
        m = self.manifest('plain')['clock']
        sync = m['sync']
        expected = int(sync['maxerror_ns']) + int(m['realtime_offsets']['max_ns']) - \
            int(m['realtime_offsets']['min_ns'])
        self.assertGreaterEqual(m['realtime_offsets']['samples'], 2)
        self.assertEqual(plain['clock_error_ns'], expected)
        state = 'synchronized' if sync['synchronized'] else 'not synchronized'
        self.assertEqual(plain['clock_method'], 'realtime, %s (adjtimex)' % state)
        self.assertEqual(shifted['clock_method'],
                         'realtime, %s (adjtimex), shifted 250000000 ns by a test' % state)
        rows = {r['Property']: r['Value'] for r in self.stats_rows('report_info', 'plain')}
        self.assertEqual(rows['Clock alignment'], 'realtime, %s (adjtimex), error up to %.3f ms'
                         % (state, expected / 1e6))

    def test_hostile_clock_facts(self):
        # wild clock facts in a manifest: no error bound claimed, no crash
        import craft
        clock = {'kind': 'monotonic', 'realtime_minus_monotonic_ns': '5',
                 'sync': {'synchronized': 'yes', 'maxerror_ns': '-5'},
                 'realtime_offsets': {'samples': 2, 'min_ns': '9223372036854775807',
                                      'max_ns': '-9223372036854775808'}}
        with open(self.path('rep.asys-rep'), 'wb') as f:
            f.write(craft.report([('manifest.json', craft.manifest(clock=clock))]))
        with self.db('rep') as db:
            info = dict(db.execute('SELECT key, value FROM session_info'))
        self.assertNotIn('clock_error_ns', info)
        self.assertNotIn('realtime_offset_spread_ns', info)
        self.assertEqual(info['clock_method'], 'realtime, not synchronized (adjtimex)')


if __name__ == '__main__':
    import unittest
    unittest.main(verbosity=2)
