"""Programs that start many processes (tests/e2e/progs/process_tree.c): every
process is in the report, every call stack of every process is symbolized
exactly as in a run of one process of the same binary, and symbols.json holds
each binary's symbol table once, whatever number of processes loaded it."""
import json
import os
import re
import shutil
import subprocess
import unittest

from asys_e2e import ASYS, AsysTestCase, prog

SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'fuzz-seed')

CHILDREN = 200


def symbols_json(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'symbols.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


def frames_by_event(con, table, join=''):
    """{(pid, event id): [function names, innermost first]} of the call chains of
    a table's rows (osrt_calls, cpu_samples), `join` narrowing them."""
    rows = con.execute(
        "SELECT e.pid, e.id, s.value FROM %s AS e %s "
        "JOIN callchain_frames AS cf ON cf.callchain_id = e.callchain_id "
        "JOIN frames AS f ON f.id = cf.frame_id LEFT JOIN strings AS s ON s.id = f.function_id "
        "ORDER BY e.pid, e.id, cf.level" % (table, join)).fetchall()
    events = {}
    for pid, event, function in rows:
        events.setdefault((pid, event), []).append(function or '?')
    return events


class ProcessTree(AsysTestCase):
    def stacks(self, name='rep'):
        """{pid: [function names, innermost first]} of each usleep call with a stack."""
        stacks = {}
        usleep = "JOIN strings AS n ON n.id = e.name_id AND n.value = 'usleep'"
        for (pid, _), names in frames_by_event(self.db(name), 'osrt_calls', usleep).items():
            stacks.setdefault(pid, []).extend(names)
        return stacks

    def test_every_process_and_every_stack(self):
        r = self.profile([prog('process_tree'), str(CHILDREN)], options=['-t', 'osrt'])
        self.assertIn(b'children %d failed 0' % CHILDREN, r.stdout)
        info = {x['Property']: x['Value'] for x in self.stats_rows('report_info')}
        self.assertEqual(info['Processes'], str(CHILDREN + 1))
        self.assertEqual(info['Dropped records'], '0')
        tree = self.stacks()
        self.assertEqual(len(tree), CHILDREN)

        # the same binary run alone: its stack is the reference
        self.profile([prog('process_tree'), 'child'], options=['-t', 'osrt'], name='one')
        (reference,) = self.stacks('one').values()
        self.assertEqual(reference[:2], ['child_blocking_call', 'child_work'])
        self.assertIn('main', reference)
        for pid, stack in tree.items():
            self.assertEqual(stack, reference, 'process %d' % pid)

        # one symbol table per binary, shared by the images that mapped it
        symbols = symbols_json(self.report())
        self.assertEqual(symbols['version'], 2)
        paths = [m['path'] for m in symbols['modules']]
        keys = [(m['path'], m.get('build_id')) for m in symbols['modules']]
        self.assertEqual(len(keys), len(set(keys)), 'a binary listed twice')
        tree_binary = [p for p in paths if p.endswith('/process_tree')]
        self.assertEqual(len(tree_binary), 1, paths)
        self.assertGreaterEqual(len(symbols['images']), CHILDREN)
        self.assertLess(len(symbols['modules']), 20)
        # every child's frames and the parent's (its waits are long enough for stacks too)
        count = self.db().execute("SELECT COUNT(DISTINCT pid) FROM frames").fetchone()[0]
        self.assertEqual(count, CHILDREN + 1)


class SampledProcessTree(AsysTestCase):
    """The same with CPU samples: each child burns ~10 ms of CPU two named
    functions deep; the unwinder and the symbolizer open each binary once."""

    def spin_stacks(self, name='rep'):
        """{pid: set of the stacks (names, innermost first) of its samples in child_spin}."""
        samples = frames_by_event(self.db(name), 'cpu_samples')
        stacks = {}
        for (pid, _), names in samples.items():
            names = [n for n in names if n != '[kernel]']
            if names and names[0] == 'child_spin':
                stacks.setdefault(pid, set()).add(tuple(names))
        return stacks

    def test_every_process_and_every_stack(self):
        saved, self.env = self.env, dict(self.env, ASYS_DEBUG='1')  # says what it opened
        try:
            r = self.profile([prog('process_tree'), str(CHILDREN), 'burn'],
                             options=['-t', 'none', '-s', 'process-tree'])
        finally:
            self.env = saved
        self.assertIn(b'children %d failed 0' % CHILDREN, r.stdout)
        info = {x['Property']: x['Value'] for x in self.stats_rows('report_info')}
        self.assertEqual(info['Processes'], str(CHILDREN + 1))
        tree = self.spin_stacks()
        self.assertEqual(len(tree), CHILDREN, 'children with samples in child_spin')

        self.profile([prog('process_tree'), 'burn'], options=['-t', 'none', '-s', 'process-tree'],
                     name='one')
        (reference,) = self.spin_stacks('one').values()
        self.assertEqual(len(reference), 1, reference)
        (reference,) = reference
        self.assertEqual(reference[:3], ('child_spin', 'child_burn', 'main'))
        for pid, stacks in tree.items():
            self.assertEqual(stacks, {reference}, 'process %d' % pid)

        # the unwinder opened each binary once per thread: a few files for 400 images
        opened = [line for line in r.stderr.decode().splitlines()
                  if 'files opened for the unwinder' in line]
        self.assertEqual(len(opened), 1, r.stderr[-2000:])
        images, threads, files = re.search(r'(\d+) images on (\d) threads?, (\d+) files',
                                           opened[0]).groups()
        self.assertGreaterEqual(int(images), CHILDREN)
        self.assertIn(int(threads), (1, 2))
        self.assertLess(int(files), 10 * int(threads), opened[0])
        symbols = symbols_json(self.report())
        paths = [m['path'] for m in symbols['modules']]
        self.assertEqual(len([p for p in paths if p.endswith('/process_tree')]), 1, paths)
        self.assertLess(len(symbols['modules']), 20)
        self.assertGreaterEqual(len(symbols['images']), CHILDREN)


class LibcReadDuringTheRun(AsysTestCase):
    """A run longer than 150 ms: the launcher reads its libc's symbols and line
    tables while the program runs, and finalize's symbols are those a finalize
    reading libc itself gives, byte for byte."""

    def symbols(self, name):
        return subprocess.run(['tar', '--zstd', '-xOf', self.report(name), 'symbols.json'],
                              capture_output=True, check=True).stdout

    def test_same_symbols_as_finalize_alone(self):
        env = dict(self.env, ASYS_KEEP_SESSION='1', ASYS_DEBUG='1')
        r = self.run_cmd([ASYS, 'profile', '-o', self.path('rep'), '-t', 'osrt', '-s', 'none',
                          'sh', '-c', 'sleep 0.4; ls / >/dev/null; ls / >/dev/null'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertRegex(r.stderr.decode(), r'symbols: \S*libc\S* was read while the program ran')
        session = [os.path.join(self.dir, n) for n in os.listdir(self.dir)
                   if n.startswith('asys-')][0]
        r = self.run_cmd([ASYS, 'finalize', session, '-o', self.path('again')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        shutil.rmtree(session)
        during = self.symbols('rep')
        self.assertEqual(during, self.symbols('again'))
        libc = [m for m in json.loads(during)['modules'] if 'libc.so' in m['path']]
        self.assertTrue(libc and any(f[1] for f in libc[0]['frames']), libc)


class FirstSymbolsFormat(AsysTestCase):
    def test_a_report_with_per_image_frames_still_symbolizes(self):
        # recorded before symbols.json kept one table per binary
        shutil.copy(os.path.join(SEEDS, 'osrt_stack.report'), self.report())
        self.assertNotIn('version', symbols_json(self.report()))
        rows = self.stats_rows('osrt_trace')
        stacks = [r['Call Stack'] for r in rows if r['Name'] == 'usleep']
        self.assertEqual(len(stacks), 1)
        self.assertTrue(stacks[0].startswith(
            'wait_in_named_function <- outer_named_function <- main'), stacks)


if __name__ == '__main__':
    unittest.main()
