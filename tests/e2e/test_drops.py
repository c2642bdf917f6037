"""A full per-thread buffer drops records and counts every one of them; a
damaged session says what finalize could not read (issue 32.3)."""
import os
import shutil
import struct
import sys
import unittest

from asys_e2e import ASYS, AsysTestCase, prog


class Drops(AsysTestCase):
    def totals(self, name):
        m = self.manifest(name)
        return m['totals']['records'], m['totals']['dropped_records']

    def test_exact_drop_count(self):
        # how many records a run makes besides the ranges (process, thread, strings)
        self.profile([prog('hgtx_loop'), '10'], options=['-t', 'nvtx', '-s', 'none'], name='small')
        records, dropped = self.totals('small')
        self.assertEqual(dropped, 0)
        launcher = [s for s in self.manifest('small')['segments'] if s['collector'] == 'launcher'][0]
        fixed = records - launcher['records'] - 20

        pairs = 200000  # 3.2 MB of records into one 512 KiB chunk
        self.profile([prog('hgtx_loop'), str(pairs)], name='full',
                     options=['-t', 'nvtx', '-s', 'none', '--chunk-size', '512K',
                              '--max-segment-size', '512K'])
        m = self.manifest('full')
        launcher = [s for s in m['segments'] if s['collector'] == 'launcher'][0]
        records, dropped = m['totals']['records'] - launcher['records'], m['totals']['dropped_records']
        self.assertGreater(dropped, 0)
        self.assertEqual(records + dropped, 2 * pairs + fixed)
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info', 'full')}
        self.assertEqual(int(info['Dropped records']), dropped)
        # by cause: all of them for want of room, none another way
        self.assertEqual(int(info['Dropped records (buffer full)']), dropped)
        self.assertNotIn('Dropped records (re-entry inside the tool)', info)
        self.assertNotIn('Dropped records (cause not recorded)', info)
        causes = [s['dropped_by_cause'] for s in m['segments'] if s['dropped_records']]
        self.assertEqual(sum(c['full'] for c in causes), dropped)
        # the same counters in the one list, each with its severity
        stats = {name: (severity, value) for name, severity, value in self.db('full').execute(
            'SELECT name, severity, value FROM report_stats ORDER BY id')}
        self.assertEqual(stats['dropped_records'], ('data_loss', dropped))
        self.assertEqual(stats['dropped_buffer_full'], ('data_loss', dropped))
        self.assertNotIn('dropped_reentry', stats)
        self.assertEqual(stats['records'][0], 'info')
        self.assertEqual(stats['threads'], ('info', int(info['Threads'])))
        self.assertLessEqual({s for s, _ in stats.values()}, {'info', 'data_loss', 'error'})

    def test_released_slots_are_read_back(self):
        # the slots compressed while the program runs are given back to the
        # file system (a hole after their header page); the report still holds
        # every range, read back from the frames
        pairs = 4000000  # 64 MB of records: 60-odd 1 MiB slots
        env = dict(self.env, ASYS_ARENA_COMPRESS='eager', ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-o', self.path('released'), '-t', 'nvtx', '-s', 'none',
                          prog('hgtx_loop'), str(pairs)], env=env)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        session = [os.path.join(self.dir, n) for n in os.listdir(self.dir)
                   if n.startswith('asys-')][0]
        with open(os.path.join(session, 'arena-frames.idx'), 'rb') as f:
            index = f.read()
        entries = [struct.unpack_from('<QQQII', index, at) for at in range(0, len(index), 32)]
        released = [e[0] for e in entries if e[4] & 1]
        self.assertGreater(len(released), 0, 'no slot compressed while the program ran')
        arena = os.path.join(session, 'segments', 'arena')
        fd = os.open(arena, os.O_RDONLY)
        try:
            page = os.sysconf('SC_PAGE_SIZE')
            for slot in released:  # nothing from the page after the header to the next slot
                try:
                    data = os.lseek(fd, slot + page, os.SEEK_DATA)
                except OSError:
                    data = os.fstat(fd).st_size
                self.assertGreater(data, slot + page, 'slot at %d not released' % slot)
        finally:
            os.close(fd)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'released')}
        self.assertEqual(int(rows[':r']['Instances']), pairs)
        self.assertNotIn('damage', self.manifest('released'))
        # finalize of the kept session again, by hand: the same ranges
        r = self.run_cmd([ASYS, 'finalize', session, '-o', self.path('again')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'again')}
        self.assertEqual(int(rows[':r']['Instances']), pairs)
        # without the frames those slots are lost, and the report says so
        os.unlink(os.path.join(session, 'arena-frames.idx'))
        r = self.run_cmd([ASYS, 'finalize', session, '-o', self.path('lost')])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertIn('damaged', r.stderr.decode())
        damage = self.manifest('lost')['damage']
        self.assertEqual(damage['slots_released_unreadable'], len(set(released)))

    def test_no_drops_at_default_settings(self):
        pairs = 1000000
        self.profile([prog('hgtx_loop'), str(pairs)], options=['-t', 'nvtx', '-s', 'none'],
                     name='big')
        records, dropped = self.totals('big')
        self.assertEqual(dropped, 0)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'big')}
        self.assertEqual(int(rows[':r']['Instances']), pairs)


class OutOfDescriptors(AsysTestCase):
    """A program that takes away every free descriptor (RLIMIT_NOFILE 3):
    its threads and fork children record through the arena descriptor they
    inherit; when the program closed that one too, every thread, process and
    event it loses is counted with its own cause (issues 12.10, 32.1)."""

    def nofile(self, threads, ranges, mode, main_kept=True):
        r = self.profile([prog('hgtx_nofile'), str(threads), str(ranges), mode],
                         options=['-t', 'nvtx', '-s', 'none'])
        info = {row['Property']: row['Value'] for row in self.stats_rows('report_info')}
        ranges = {row['Range']: row for row in self.stats_rows('hgtx_sum')}
        if main_kept:
            self.assertEqual(ranges[':main']['Instances'], '1')  # recorded before the limit
        return int(r.stdout.decode()), r.stderr.decode(), info, ranges

    def test_threads_record_through_the_inherited_descriptor(self):
        made, err, info, ranges = self.nofile(4, 20000, 'threads')
        self.assertEqual(made, 160000)
        self.assertEqual(ranges[':lost']['Instances'], '80000')
        self.assertEqual(info['Dropped records'], '0')
        self.assertNotIn('could not record', err)

    def test_a_fork_child_records_through_it(self):
        made, err, info, ranges = self.nofile(1, 20000, 'fork')
        self.assertEqual(ranges[':lost']['Instances'], '20000')
        self.assertEqual(info['Processes'], '2')

    def test_threads_that_get_no_segment_are_counted(self):
        made, err, info, _ = self.nofile(4, 20000, 'closeall')
        self.assertIn('warning: 4 threads could not record (Too many open files): their '
                      '160000 events are lost', err)
        self.assertEqual(info['Threads that could not record'], '4 (160000 events lost)')
        m = self.manifest()
        self.assertEqual(m['totals']['lost_threads'], 4)
        self.assertEqual(m['totals']['lost_thread_records'], 160000)

    def test_a_fork_child_that_gets_no_segment_is_counted(self):
        made, err, info, _ = self.nofile(1, 20000, 'closeall-fork')
        self.assertEqual(made, 40000)
        self.assertIn('warning: 1 process could not record (Too many open files; the last: '
                      'pid ', err)
        self.assertIn('their 40000 events are lost', err)
        self.assertTrue(info['Processes that could not record'].startswith(
            '1 (40000 events lost; Too many open files; the last: pid '),
            info['Processes that could not record'])
        self.assertEqual(self.manifest()['totals']['lost_process_records'], 40000)

    def test_a_segment_that_cannot_grow_says_why(self):
        made, err, info, ranges = self.nofile(0, 200000, 'closeall', main_kept=False)
        kept = int(ranges.get(':lost', {'Instances': '0'})['Instances'])
        dropped = int(info['Dropped records'])
        self.assertGreater(dropped, 0)
        self.assertEqual(
            int(info['Dropped records (the session could not grow: Too many open files)']),
            dropped)
        self.assertNotIn('Dropped records (buffer full)', info)
        # every event kept or counted (and the few records of the thread's end)
        self.assertLessEqual(made, 2 * kept + dropped)
        self.assertLess(2 * kept + dropped, made + 10)
        self.assertIn('records were lost because the session could not grow '
                      '(Too many open files)', err)


@unittest.skipUnless(os.geteuid() == 0, 'setuid needs root')
class PrivilegesDropped(AsysTestCase):
    """A child that drops privileges before exec cannot open the session by
    path; it records through the descriptor it inherited (issue 32.2)."""

    def test_a_setuid_child_is_recorded(self):
        script = ('import os, sys; os.setgid(65534); os.setuid(65534); '
                  'os.execv(sys.argv[1], [sys.argv[1], "2500"])')
        self.profile([sys.executable, '-c', script, prog('hgtx_loop')],
                     options=['-t', 'nvtx', '-s', 'none'])
        ranges = {row['Range']: row for row in self.stats_rows('hgtx_sum')}
        self.assertEqual(ranges[':r']['Instances'], '2500')


class InheritedDescriptor(AsysTestCase):
    def test_a_stray_write_to_it_harms_nothing(self):
        # the program writes to the number asys's descriptor has (as a test of
        # an invalid descriptor might): the bytes land after the records
        script = ('import os, subprocess, sys\n'
                  'fd = int(os.environ["ASYS_ARENA_FD"].split(":")[0])\n'
                  'os.write(fd, b"garbage" * 1000)\n'
                  'subprocess.run([sys.argv[1], "1000"], check=True)\n'
                  'os.write(fd, b"more")\n')
        self.profile([sys.executable, '-c', script, prog('hgtx_loop')],
                     options=['-t', 'nvtx', '-s', 'none'])
        ranges = {row['Range']: row for row in self.stats_rows('hgtx_sum')}
        self.assertEqual(ranges[':r']['Instances'], '1000')
        self.assertNotIn('damage', self.manifest())


class SessionDamage(AsysTestCase):
    """A session whose arena was cut, scribbled on or removed is finalized
    with exit 0, one warning line and report_info saying what was lost."""

    def setUp(self):
        super().setUp()
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-s', 'none', '--chunk-size', '1M',
                          '-o', self.path('whole'), prog('hgtx_loop'), '300000'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b'damaged', r.stderr)
        self.assertNotIn('damage', self.manifest('whole'))
        self.session = self.path([n for n in os.listdir(self.dir) if n.startswith('asys-')][0])
        with open(os.path.join(self.session, 'segments', 'arena'), 'rb') as f:
            arena = f.read()
        self.slot_size, self.next_slot = struct.unpack_from('<QQ', arena, 16)
        # (slot, sequence) of the slots of the thread that made the ranges
        headers = [(i,) + struct.unpack_from('<IIII', arena, i * self.slot_size + 16)
                   for i in range(1, len(arena) // self.slot_size)]
        biggest_tid = max((h[2] for h in headers), key=lambda t: sum(h[2] == t for h in headers))
        self.ranges_slots = [(h[0], h[4]) for h in headers if h[2] == biggest_tid]
        self.assertGreaterEqual(len(self.ranges_slots), 4, 'the test needs a segment of 4+ slots')

    def finalize(self, name):
        r = self.run_cmd([ASYS, 'finalize', '-f', self.session, '-o', self.path(name)])
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = [l for l in r.stderr.decode().splitlines() if 'warning' in l]
        self.assertEqual(len(warnings), 1, r.stderr)
        info = {row['Property']: row['Value'] for row in self.stats_rows('report_info', name)}
        return warnings[0], self.manifest(name)['damage'], info

    def arena(self):
        return os.path.join(self.session, 'segments', 'arena')

    def test_a_cut_arena(self):
        kept = 3  # the control block and two slots
        os.truncate(self.arena(), kept * self.slot_size)
        warning, damage, info = self.finalize('cut')
        lost = self.next_slot - kept
        self.assertEqual(damage['slots_cut_off'], lost)
        self.assertEqual(damage['bytes'], lost * self.slot_size)
        self.assertIn('%d slots' % lost, warning)
        self.assertIn('%d slots cut off' % lost, info['Session damage (finalize could not read)'])
        whole = self.manifest('whole')['totals']['records']
        self.assertLess(self.manifest('cut')['totals']['records'], whole)

    def test_a_scribbled_slot_header(self):
        # the second slot of the ranges' segment: it and every later one of
        # that segment are lost (records run across slots), the first is read
        slot = [s for s, seq in self.ranges_slots if seq == 1][0]
        later = sum(seq > 1 for _, seq in self.ranges_slots)
        with open(self.arena(), 'r+b') as f:
            f.seek(slot * self.slot_size)
            f.write(b'XXXXXXXX')
        warning, damage, info = self.finalize('scribbled')
        self.assertEqual((damage['slots_unreadable'], damage['slots_out_of_sequence'],
                          damage['slots_after_a_gap']), (1, 1, later))
        self.assertIn('%d slots' % (1 + later), warning)
        self.assertIn('1 unreadable', info['Session damage (finalize could not read)'])
        # nothing read past the hole: only whole ranges, every one closed
        rows = self.stats_rows('hgtx_sum', 'scribbled')
        self.assertGreater(sum(int(r['Instances']) for r in rows), 0)

    def test_a_missing_arena(self):
        os.unlink(self.arena())
        warning, damage, info = self.finalize('gone')
        self.assertTrue(damage['arena_missing'])
        self.assertIn('arena is missing', warning)
        self.assertIn('arena is missing', info['Session damage (finalize could not read)'])

    def tearDown(self):
        shutil.rmtree(self.session, ignore_errors=True)
        super().tearDown()


if __name__ == '__main__':
    unittest.main(verbosity=2)
