"""Hostile reports, caches and SQL (issue 12): what an attacker or an unlucky
user hands the tools is refused with one line or read with what was skipped
in report_info; nothing crashes, hangs, or stays behind."""
import glob
import os
import random
import resource
import signal
import sqlite3
import stat
import subprocess
import tarfile
import time
import unittest

import craft
from asys_e2e import ASYS, BIN, STATS, AsysTestCase, prog

EXPORT = os.path.join(BIN, 'asys-export')
DEPS = os.path.join(BIN, 'asys-deps')


class HostileCase(AsysTestCase):
    def write(self, name, data):
        path = self.path(name)
        with open(path, 'wb') as f:
            f.write(data)
        return path

    def refused(self, argv, fragment, timeout=60):
        r = self.run_cmd(argv, timeout=timeout)
        err = r.stderr.decode(errors='replace')
        lines = err.strip().splitlines()
        self.assertNotEqual(r.returncode, 0, err)
        self.assertGreater(r.returncode, 0, 'killed by a signal: ' + err)
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(fragment, lines[0])
        self.assertNotIn('Sanitizer', err)
        return r

    def info(self, report, *extra):
        r = self.stats('-q', '-r', 'report_info', '-f', 'csv', *extra, report)
        rows = r.stdout.decode().splitlines()[1:]
        return {k: v for k, _, v in (row.partition(',') for row in rows)}

    def leftovers(self):
        return [n for n in os.listdir(self.dir) if '.tmp-' in n or
                (n.startswith('.') and n.count('.') >= 3)]


class HostileReports(HostileCase):
    def test_huge_string_ids_cost_nothing(self):
        body = craft.thread_start(7, 0x7fffffff, 5) + craft.push(0xfffe, 5) + craft.pop(5)
        seg = craft.segment_header(7, 7, 0x77) + body
        rep = self.write('ids.asys-rep', craft.report([('segments/a.seg', seg)]))
        start = time.monotonic()
        info = self.info(rep)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(info['Threads'], '1')
        self.assertEqual(info['Strings referenced but never defined'], '2')

    def test_manifest_numbers_out_of_range(self):
        m = craft.manifest(session={'start_monotonic_ns': '5',
                                    'end_monotonic_ns': '18446744073709551615',
                                    'start_realtime_ns': 1e300},
                           target={'pid': 1e19, 'exit_code': -1e300})
        rep = self.write('m.asys-rep', craft.report([('manifest.json', m)]))
        r = self.stats('-q', '-r', 'report_info', '-f', 'csv', rep)
        self.assertNotIn(b'runtime error', r.stderr)

    def test_zstd_bomb_is_refused_early(self):
        # 64 MiB of one record, a few KiB compressed: a ratio no recording reaches
        seg = craft.thread_segment(8, 8, 0x88, craft.word(craft.REC_HGTX_MARK, 1, 2) * (8 << 20))
        rep = self.write('bomb.asys-rep', craft.report([('segments/a.seg', seg)], level=19))
        self.assertLess(os.path.getsize(rep), 200000)
        start = time.monotonic()
        self.refused([STATS, '-q', rep], 'expands more than 1000 times')
        self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(self.leftovers(), [])
        self.assertFalse(os.path.exists(self.path('bomb.sqlite')))
        self.refused([EXPORT, rep], 'expands more than 1000 times')
        self.refused([DEPS, rep], 'expands more than 1000 times')
        # the limits are options: a smaller size cap stops it sooner, with its own message
        self.refused([STATS, '--max-report-size', '1M', rep], 'expands beyond 1048576 bytes')

    def test_records_per_segment_limit(self):
        self.profile([prog('hgtx_loop'), '1000'], options=['-t', 'nvtx'])
        self.refused([STATS, '--max-segment-records', '100', self.report()],
                     'more than 100 records in one segment')
        self.refused([STATS, '--max-segment-records', 'x', self.report()],
                     '--max-segment-records takes a count')

    def test_duplicate_segments_are_counted_once(self):
        body = b''.join(craft.push(2, 10) + craft.pop(10) for _ in range(30))
        seg = craft.thread_segment(9, 9, 0x99, body)
        members = [('segments/a.seg', seg), ('segments/b.seg', seg), ('segments/c.seg', seg)]
        rep = self.write('dup.asys-rep', craft.report(members))
        r = self.stats('-r', 'hgtx_sum', '-f', 'csv', rep)
        self.assertIn(b"segment 'segments/b.seg' skipped: a second copy", r.stderr)
        rows = r.stdout.decode().splitlines()
        self.assertEqual(rows[1].split(',')[2], '30')  # Instances: not 90
        info = self.info(rep)
        self.assertEqual(info['Duplicate segments skipped'], '2')
        self.assertEqual(info['Import warnings'], '2')
        self.assertIn('second copy', info['Warning 1'])

    def test_tar_tricks(self):
        seg = craft.thread_segment(10, 10, 0xaa, craft.push(2, 10) + craft.pop(10))
        specials = []
        for kind, name in ((tarfile.SYMTYPE, 'segments/link.seg'),
                           (tarfile.LNKTYPE, 'segments/hard.seg'),
                           (tarfile.CHRTYPE, 'segments/dev.seg'),
                           (tarfile.DIRTYPE, 'segments/dir.seg'),
                           (tarfile.FIFOTYPE, 'segments/fifo.seg')):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = '/etc/passwd'
            specials.append((name, info))
        rep = self.write('tricks.asys-rep',
                         craft.report([('segments/a.seg', seg)] + specials))
        info = self.info(rep)
        self.assertEqual(info['Segments'], '1')  # the special members are not segments
        for bad in ('/abs/x.seg', '../x.seg', 'segments/../../x.seg'):
            rep = self.write('bad.asys-rep', craft.report([(bad, seg)]))
            self.refused([STATS, rep], 'unsafe member name')

    def test_a_string_longer_than_the_recorders_limit_is_cut(self):
        long_name = 'y' * 200000  # a record may be 256 KiB; the recorder cuts at 64 KiB
        seg = craft.thread_segment(11, 11, 0xbb, craft.string_def(9, long_name) +
                                   craft.push(9, 10) + craft.pop(10))
        rep = self.write('long.asys-rep', craft.report([('segments/a.seg', seg)]))
        info = self.info(rep)
        self.assertIn('1 strings longer than 65536 bytes were cut', info['Warning 1'])
        r = self.stats('-q', '-r', 'hgtx_sum', '-f', 'csv', rep)
        self.assertIn(b'y' * 65536 + b'\n', r.stdout)
        self.assertNotIn(b'y' * 65537, r.stdout)

    def test_a_version_zero_segment_is_unknown_not_newer(self):
        seg = craft.thread_segment(11, 11, 0xbb, craft.push(2) + craft.pop(), version=0)
        rep = self.write('v0.asys-rep', craft.report([('segments/a.seg', seg)]))
        info = self.info(rep)
        self.assertEqual(info['Damaged segments'], '1')
        self.assertIn('segment format version 0 is unknown', info['Warning 1'])

    def test_a_damaged_segment_is_said_in_report_info(self):
        # 111: a number no record has (99 was until ACBLAS_CALL took it)
        seg = craft.thread_segment(11, 11, 0xbb, craft.push(2, 10) + craft.word(111, 1))
        rep = self.write('dmg.asys-rep', craft.report([('segments/a.seg', seg)]))
        info = self.info(rep)
        self.assertEqual(info['Damaged segments'], '1')
        self.assertIn('unknown record type 111', info['Warning 1'])


class HostileSessions(HostileCase):
    """asys finalize of a session directory someone tampered with (issue
    31.13): nothing hangs, nothing crashes, nothing stays behind."""

    def kept_session(self):
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-s', 'none', '-f', 'true', '-o',
                          self.path('first'), prog('hgtx_loop'), '2000'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        sessions = [n for n in os.listdir(self.dir) if n.startswith('asys-')]
        self.assertEqual(len(sessions), 1)
        return self.path(sessions[0])

    def test_fifos_where_files_belong(self):
        for name in ('segments/arena', 'session.json'):
            with self.subTest(name=name):
                session = self.kept_session()
                os.unlink(os.path.join(session, name))
                os.mkfifo(os.path.join(session, name))
                r = self.run_cmd([ASYS, 'finalize', '-f', session, '-o', self.path('again')],
                                 timeout=60)  # it used to wait for a writer forever
                # the arena is the recording: refused, and said why; without a
                # session.json the report is written from the segments
                if name == 'segments/arena':
                    self.assertIn('not a regular file', r.stderr.decode())
                else:
                    self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn('Sanitizer', r.stderr.decode())
                subprocess.run(['rm', '-rf', session])

    def test_a_wild_calibration_value(self):
        # calib_mono_ns = INT64_MAX in a thread segment's header: the report is
        # written and read without a crash or a negative time (and nothing left)
        session = self.kept_session()
        arena = os.path.join(session, 'segments', 'arena')
        with open(arena, 'r+b') as f:
            data = f.read()
            at = data.find(b'ASYSSEG\0')
            self.assertGreater(at, 0)
            f.seek(at + 80)
            f.write((2 ** 63 - 1).to_bytes(8, 'little'))
        r = self.run_cmd([ASYS, 'finalize', '-f', session, '-o', self.path('wild')])
        self.assertEqual(r.returncode, 0, r.stderr)
        for report in ('hgtx_sum', 'hgtx_trace'):
            r = self.stats('-q', '-r', report, '-f', 'csv', self.report('wild'), expect_rc=None)
            self.assertIn(r.returncode, (0, 1), r.stderr)
            self.assertNotIn(b'Sanitizer', r.stderr)
            self.assertNotIn(b',-', r.stdout)
        self.assertEqual(self.leftovers(), [])


class HostileCaches(HostileCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx'])
        self.stats('-q', self.report())
        self.cache = self.path('rep.sqlite')

    def inode(self):
        return os.stat(self.cache).st_ino

    def test_extra_objects_rebuild_it(self):
        first = self.inode()
        con = sqlite3.connect(self.cache)
        con.executescript(
            'CREATE VIEW forever AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 '
            'FROM c) SELECT n FROM c;'
            'CREATE TRIGGER t AFTER INSERT ON strings BEGIN DELETE FROM threads; END;')
        con.close()
        r = self.run_cmd([STATS, '-q', self.report()], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotEqual(self.inode(), first)
        con = sqlite3.connect(self.cache)
        names = {n for (n,) in con.execute("SELECT name FROM sqlite_schema")}
        con.close()
        self.assertNotIn('forever', names)
        self.assertNotIn('t', names)
        r = self.run_cmd([EXPORT, '-t', 'sqlite', '-o', self.path('out.sqlite'), self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        con = sqlite3.connect(self.path('out.sqlite'))
        self.assertEqual(con.execute("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'"
                                     ).fetchone()[0], 0)
        con.close()

    def test_a_huge_string_rebuilds_it(self):
        # issue 32.7: a 50 MB name made every range or stack naming it that
        # long (stack reports past 1 GiB); a cache holding a text longer
        # than an import writes is rebuilt from the report
        first = self.inode()
        con = sqlite3.connect(self.cache)
        (sid,) = con.execute("SELECT text_id FROM hgtx_events WHERE text_id IS NOT NULL LIMIT 1").fetchone()
        con.execute("UPDATE strings SET value = ? WHERE id = ?", ('x' * 50000000, sid))
        con.commit()
        con.close()
        r = self.stats('-q', '-r', 'hgtx_sum', '-f', 'csv', self.report())
        self.assertNotEqual(self.inode(), first)
        self.assertLess(len(r.stdout), 100000)
        self.assertNotIn(b'xxxx', r.stdout)

    def test_a_fifo_is_replaced_not_read(self):
        os.unlink(self.cache)
        os.mkfifo(self.cache)
        r = self.stats('-q', '-r', 'report_info', self.report())  # would block reading a FIFO
        self.assertEqual(r.returncode, 0)
        self.assertTrue(stat.S_ISREG(os.stat(self.cache).st_mode))

    def test_a_garbage_journal_does_not_matter(self):
        first = self.inode()
        with open(self.cache + '-journal', 'wb') as f:
            f.write(os.urandom(4096))
        r = self.stats('-q', '-r', 'report_info', self.report())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.inode(), first)  # still the cache it was

    def test_null_where_the_schema_says_not_null(self):
        # the schema text stays exactly ours; the rows break its promises
        con = sqlite3.connect(self.cache)
        (ddl,) = con.execute("SELECT sql FROM sqlite_schema WHERE name = 'strings'").fetchone()
        con.execute('PRAGMA writable_schema = ON')
        con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'strings'",
                    (ddl.replace('NOT NULL', ''),))
        con.commit()
        con.close()
        con = sqlite3.connect(self.cache)
        con.execute('UPDATE strings SET value = NULL')
        con.execute('PRAGMA writable_schema = ON')
        con.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'strings'", (ddl,))
        con.commit()
        con.close()
        for argv in ([STATS, '-q', self.report()],
                     [EXPORT, '-q', '-o', self.path('n.pftrace'), self.report()],
                     [EXPORT, '-q', '-t', 'json', '-o', self.path('n.json'), self.report()],
                     [DEPS, '-q', self.report()]):
            r = self.run_cmd(argv)
            self.assertGreaterEqual(r.returncode, 0, r.stderr)  # not killed by a signal
            self.assertNotIn(b'Sanitizer', r.stderr)


class HostileSql(HostileCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx'])
        self.reports = self.path('reports')
        os.mkdir(self.reports)

    def custom(self, sql, *extra, name='mine'):
        with open(os.path.join(self.reports, name + '.sql'), 'w') as f:
            f.write('-- name: %s\n-- columns: x\n%s' % (name, sql))
        return [STATS, '--report-dir', self.reports, '-r', name, *extra, self.report()]

    def test_writes_and_risky_functions_are_not_authorized(self):
        self.refused(self.custom('DELETE FROM strings;'), 'not authorized')
        self.refused(self.custom("SELECT fts3_tokenizer('simple', x'4141414141414141');"),
                     'not authorized')
        self.refused(self.custom("ATTACH DATABASE '/tmp/x.db' AS x;"), 'not authorized')
        self.refused(self.custom('PRAGMA writable_schema = ON;'), 'not authorized')

    def test_a_runaway_query_stops(self):
        argv = self.custom('WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) '
                           'SELECT MAX(n) AS x FROM c;', '--query-timeout', '1')
        start = time.monotonic()
        self.refused(argv, 'ran longer than --query-timeout (1 s)')
        self.assertLess(time.monotonic() - start, 20)

    def test_one_statement_per_file(self):
        self.refused(self.custom('SELECT 1 AS x; SELECT 2 AS x;'),
                     'holds more than one SQL statement')
        self.refused(self.custom('-- nothing here\n'), 'holds no SQL statement')


def near_the_ratio_bomb(mib):
    """`mib` MiB of marks at a ratio far under the cap (about 150x): a seed
    in every 64th record keeps zstd from squeezing it further."""
    rng = random.Random(1)
    same = craft.word(craft.REC_HGTX_MARK, 1, 2) * 63
    body = b''.join(same + craft.word(craft.REC_HGTX_MARK, 1, rng.randrange(3, 60000))
                    for _ in range((mib << 20) // 512))
    return craft.report([('segments/a.seg', craft.thread_segment(8, 8, 0x88, body))])


class DecompressionCeiling(HostileCase):
    """Issue 31.13: a report under the ratio cap that expands past what the
    disk can hold stops early with its reason, and a long import says how far
    it has come."""

    @unittest.skipUnless(os.geteuid() == 0, 'mounting a small tmpfs needs root')
    def test_the_free_space_caps_what_a_report_expands_to(self):
        rep_data = near_the_ratio_bomb(64)
        small = self.path('small')
        os.mkdir(small)
        if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64M', 'tmpfs', small],
                          capture_output=True).returncode != 0:
            self.skipTest('cannot mount a tmpfs here')
        try:
            rep = os.path.join(small, 'near.asys-rep')
            with open(rep, 'wb') as f:
                f.write(rep_data)
            start = time.monotonic()
            self.refused([STATS, '-q', rep], 'a quarter of the free space where its analysis '
                         'database goes')
            self.assertLess(time.monotonic() - start, 30)
            self.assertEqual(os.listdir(small), ['near.asys-rep'])
            # the user's own ceiling wins over the free space
            self.refused([STATS, '-q', '--max-report-size', '8M', rep],
                         'report expands beyond 8388608 bytes (a damaged')
        finally:
            subprocess.run(['umount', '-l', small])

    def test_a_long_import_shows_its_progress_on_a_terminal(self):
        rep = self.write('near.asys-rep', near_the_ratio_bomb(128))
        log = self.path('terminal.log')
        # script(1) gives the tool a terminal; the import runs for seconds
        # (the line shows from 2 s on: 12 M marks, 6 s on a 2-core VM) before
        # the size cap stops it
        subprocess.run(['script', '-q', '-e', '-c', '%s --max-report-size 100M %s' % (STATS, rep),
                        log], capture_output=True, timeout=120, cwd=self.dir)
        with open(log, 'rb') as f:
            seen = f.read().decode(errors='replace')
        self.assertRegex(seen, r'\rasys-stats: importing near\.asys-rep: +\d+% '
                               r'\([0-9.]+ M records, \d+ s\)')
        self.assertIn('\r\033[K', seen)  # the line is cleared before the verdict
        self.assertIn('report expands beyond 104857600 bytes', seen)
        # no terminal, or --quiet: no progress line
        r = self.run_cmd([STATS, '--max-report-size', '100M', rep])
        self.assertNotIn(b'importing near', r.stderr)


class SqliteOption(HostileCase):
    def test_only_an_analysis_database_is_replaced(self):
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx'])
        text = self.write('notes.txt', b'my notes\n')
        self.refused([STATS, '--sqlite', text, self.report()],
                     'is not an asys analysis database (use --force-overwrite')
        self.assertEqual(open(text, 'rb').read(), b'my notes\n')
        r = self.stats('-q', '--sqlite', text, '--force-overwrite', self.report())
        self.assertEqual(r.returncode, 0)
        self.assertEqual(open(text, 'rb').read(16), b'SQLite format 3\0')
        # an analysis database (of any report) is replaced without asking
        self.stats('-q', '--sqlite', text, self.report())


class TempFiles(HostileCase):
    def big_report(self):
        self.profile([prog('hgtx_loop'), '3000000'], options=['-t', 'nvtx'])
        return self.report()

    def test_a_signal_during_import_leaves_nothing(self):
        rep = self.big_report()
        for sig in (signal.SIGTERM, signal.SIGINT):
            p = subprocess.Popen([STATS, '-q', rep], cwd=self.dir, env=self.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 20
            while not glob.glob(self.path('rep.sqlite.tmp-*')) and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)
            p.send_signal(sig)
            p.wait(timeout=60)
            p.stderr.close()
            self.assertEqual(p.returncode, -sig)
            self.assertEqual(glob.glob(self.path('rep.sqlite*')), [])

    def test_a_signal_during_export_leaves_nothing(self):
        rep = self.big_report()
        self.stats('-q', '-r', 'report_info', rep)
        p = subprocess.Popen([EXPORT, '-q', '-t', 'json', rep], cwd=self.dir, env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not glob.glob(self.path('.rep.json.*')) and time.monotonic() < deadline:
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        self.assertEqual(glob.glob(self.path('.rep.json.*')), [])
        self.assertFalse(os.path.exists(self.path('rep.json')))

    def test_a_killed_finalize_leaves_nothing_a_later_one_keeps(self):
        # issue 32.9: SIGKILL inside finalize leaves .NAME.PID.XXXXXX; the
        # next finalize (or profile) of that name removes it
        env = dict(self.env, ASYS_KEEP_SESSION='1')
        r = self.run_cmd([ASYS, 'profile', '-t', 'nvtx', '-s', 'none', '-o', self.path('first'),
                          prog('hgtx_loop'), '3000000'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        session = self.path([n for n in os.listdir(self.dir) if n.startswith('asys-')][0])
        temporaries = []
        for attempt in range(10):  # the temporary lives for a few tens of milliseconds
            p = subprocess.Popen([ASYS, 'finalize', '-f', session, '-o', self.path('killed')],
                                 cwd=self.dir, env=self.env, stderr=subprocess.DEVNULL)
            while p.poll() is None and not temporaries:
                temporaries = glob.glob(self.path('.killed.asys-rep.*'))
            p.kill()
            p.wait()
            if temporaries:
                break
        self.assertTrue(temporaries, 'finalize was never caught with its temporary file')
        self.assertFalse(os.path.exists(self.report('killed')))
        r = self.run_cmd([ASYS, 'finalize', '-f', session, '-o', self.path('killed')])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(glob.glob(self.path('.killed.asys-rep.*')), [])
        self.assertTrue(os.path.exists(self.report('killed')))
        subprocess.run(['rm', '-rf', session])

    def test_a_failed_csv_export_leaves_nothing(self):
        # issue 32.9: the file size limit fails the large hgtx_events table
        # after smaller tables were written; none of them stays
        rep = self.big_report()
        self.stats('-q', '-r', 'report_info', rep)  # the cache, before the limit

        def limited():
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        r = subprocess.run([EXPORT, '-t', 'csv', '-o', self.path('t'), rep], cwd=self.dir,
                           env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=limited)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b'hgtx_events', r.stderr)
        self.assertNotIn(b'wrote', r.stderr)
        self.assertEqual([n for n in os.listdir(self.dir) if n.startswith(('t_', '.t_'))], [])

    def test_stale_temporaries_of_dead_programs_are_removed(self):
        self.profile([prog('hgtx_threads')], options=['-t', 'hgtx'])
        dead = subprocess.run(['true'])  # a pid that is gone now
        stale = [self.write('rep.sqlite.tmp-999999-abcdef', b'x'),
                 self.write('.rep.pftrace.999999.abcdef', b'x')]
        mine = self.write('rep.sqlite.tmp-%d-abcdef' % os.getpid(), b'x')  # alive: kept
        del dead
        self.stats('-q', self.report())
        r = self.run_cmd([EXPORT, '-q', self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        for path in stale:
            self.assertFalse(os.path.exists(path), path)
        self.assertTrue(os.path.exists(mine))


if __name__ == '__main__':
    unittest.main(verbosity=2)
