"""asys dump: every record of a report or a segment file, decoded, one per
line; damaged input dumped up to the damage with one error line."""
import glob
import os
import re
import subprocess
import unittest

from asys_e2e import ASYS, BUILD, AsysTestCase, prog

WORKLOAD = prog('hggc_workload')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
LINE = re.compile(r'^@[0-9a-f]{8} ([A-Z0-9_]+) t=\d+( [a-z_.]+=\S.*)?$')


class Dump(AsysTestCase):
    def dump(self, *paths, expect_rc=0):
        r = self.run_cmd([ASYS, 'dump', *paths])
        if expect_rc is not None:
            self.assertEqual(r.returncode, expect_rc, r.stderr.decode(errors='replace'))
        return r

    def record_lines(self, out):
        types = {}
        for line in out.decode().splitlines():
            if line.startswith('#'):
                continue
            m = LINE.match(line)
            self.assertIsNotNone(m, 'not a record line: %r' % line)
            types[m.group(1)] = types.get(m.group(1), 0) + 1
        return types

    def test_every_record_of_a_report(self):
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx,osrt'])
        types = self.record_lines(self.dump(self.report()).stdout)
        m = self.manifest()
        # every record the report holds (pads are finalize's filler, not counted there)
        self.assertEqual(sum(n for t, n in types.items() if t != 'PAD'), m['totals']['records'])
        for t in ('STRING_DEF', 'PROCESS_INFO', 'THREAD_START', 'HGTX_PUSH', 'HGTX_POP',
                  'CLOCK_PAIR'):
            self.assertIn(t, types)

    def test_threads_take_the_launchers_calibration_pair(self):
        # a process's segment header takes the launcher's latest pair from
        # the arena instead of reading the clocks itself
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx', '-s', 'none'])
        text = self.dump(self.report()).stdout.decode()
        pairs = set(re.findall(r'CLOCK_PAIR t=\d+ ticks=(\d+) monotonic_ns=(\d+)', text))
        threads = re.findall(r'^# segment \S+: thread .* base (\d+), calibration (\d+)=(\d+)ns',
                             text, re.M)
        self.assertTrue(pairs)
        self.assertTrue(threads)
        for base, ticks, mono in threads:
            self.assertIn((ticks, mono), pairs)
            self.assertGreaterEqual(int(base), int(ticks))

    @unittest.skipUnless(os.path.exists(WORKLOAD), 'nvcc was not found when building')
    def test_hggc_records_decode(self):
        self.profile([SIMPPU_RUN, WORKLOAD, 'all'], options=['-t', 'hggc,hgtx,osrt',
                                                             '--hggcbacktrace', 'all:1'])
        out = self.dump(self.report()).stdout
        types = self.record_lines(out)
        for t in ('HGGC_API', 'HGGC_KERNEL', 'HGGC_MEMCPY', 'HGGC_MEMSET', 'HGGC_SYNC',
                  'HGGC_DEVICE', 'HGGC_CONTEXT', 'HGGC_STREAM', 'HGGC_GRAPH_NODE',
                  'HGGC_GRAPH_EXEC', 'HGGC_GRAPH_LAUNCH', 'HGGC_STATUS', 'MODULE', 'CALLCHAIN'):
            self.assertIn(t, types)
        text = out.decode()
        self.assertRegex(text, r'HGGC_KERNEL .* grid=\[\d+,\d+,\d+\]')
        self.assertRegex(text, r'CALLCHAIN .* frames=\[0x[0-9a-f]+')
        self.assertRegex(text, r'HGGC_API .* name_string_id=\d+:"cuda')

    def test_a_segment_file(self):
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-o', self.path('rep'), '-t', 'hgtx',
                          prog('hgtx_threads')], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        kept = re.search(rb"session kept in '([^']+)'", r.stderr).group(1).decode()
        self.addCleanup(subprocess.run, ['rm', '-rf', kept])
        # the threads' segments are in the session's arena, the launcher's is a file
        launcher = os.path.join(kept, 'segments', 'launcher.seg')
        arena = os.path.join(kept, 'segments', 'arena')
        out = self.dump(launcher).stdout.decode()
        self.assertEqual(out.count('# segment '), 1)
        self.assertIn('CLOCK_PAIR', out)
        out = self.dump(arena).stdout.decode()
        self.assertGreaterEqual(out.count('# segment '), 2)  # the main thread and workers
        self.assertIn('features core,hgtx', out)
        self.assertRegex(out, r'HGTX_PUSH .* message_string_id=\d+:"')
        self.assertEqual(out.count('# segment '), out.count('# end of '))

    def test_damaged_input(self):
        self.profile([prog('hgtx_loop'), '200000'], options=['-t', 'nvtx'])
        data = open(self.report(), 'rb').read()
        cut = self.path('cut.asys-rep')
        open(cut, 'wb').write(data[:len(data) // 2])
        r = self.dump(cut, expect_rc=1)
        self.assertIn(b'@', r.stdout)  # what came before the damage
        lines = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn('truncated', lines[0])
        noise = self.path('noise')
        open(noise, 'wb').write(os.urandom(4096))
        r = self.dump(noise, expect_rc=1)
        self.assertIn(b"cannot read '%s': not an asys report" % noise.encode(), r.stderr)
        r = self.dump(self.path('missing'), expect_rc=1)
        self.assertIn(b'No such file', r.stderr)
        self.assertEqual(self.dump(expect_rc=2).returncode, 2)


if __name__ == '__main__':
    unittest.main(verbosity=2)
