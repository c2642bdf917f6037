"""Bad input gets one clear line naming the file and the problem, a non-zero
exit status, and leaves nothing half-written behind."""
import os
import subprocess
import tarfile
import io
import unittest

from asys_e2e import ASYS, BIN, STATS, AsysTestCase, prog


def zstd(data):
    return subprocess.run(['zstd', '-q', '-c'], input=data, capture_output=True, check=True).stdout


def tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class BadReports(AsysTestCase):
    def check_refused(self, name, content, reason):
        path = self.path(name)
        with open(path, 'wb') as f:
            f.write(content)
        before = set(os.listdir(self.dir))
        r = self.run_cmd([STATS, path])
        lines = r.stderr.decode().strip().splitlines()
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("asys-stats: cannot open '%s': " % path), lines[0])
        self.assertIn(reason, lines[0])
        self.assertEqual(r.stdout, b'')
        self.assertEqual(set(os.listdir(self.dir)), before, 'files left behind')

    def test_empty_file(self):
        self.check_refused('empty.asys-rep', b'', 'empty file')

    def test_random_bytes(self):
        self.check_refused('noise.asys-rep', os.urandom(8192), 'not an asys report')

    def test_truncated_archive(self):
        self.profile([prog('hgtx_loop'), '200000'], options=['-t', 'nvtx'], name='good')
        data = open(self.report('good'), 'rb').read()
        self.assertGreater(len(data), 20000)  # compressed during the run or at finalize
        self.check_refused('cut.asys-rep', data[:len(data) // 2], 'truncated')

    def test_zstd_text_is_not_a_report(self):
        # it used to be called a truncated report (issue 31.14)
        self.check_refused('text.asys-rep', zstd(b'hello\n' * 10),
                           'not an asys report (zstd-compressed, but not a tar archive)')

    def test_damaged_report_is_called_damaged(self):
        # 16 bytes overwritten inside the first frame: an asys report, damaged
        self.profile([prog('hgtx_loop'), '2000'], options=['-t', 'nvtx', '-s', 'none'],
                     name='good')
        with open(self.report('good'), 'rb') as f:
            data = bytearray(f.read())
        data[200:216] = b'\xde\xad\xbe\xef' * 4
        self.check_refused('damaged.asys-rep', bytes(data), 'damaged asys report')

    def test_path_escape(self):
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 1}'), ('../x', b'boo')]))
        self.check_refused('escape.asys-rep', content, "unsafe member name '../x'")

    def test_future_format_version(self):
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 99}')]))
        self.check_refused('future.asys-rep', content, 'format version 99 is newer')

    def test_format_version_zero_is_unknown_not_newer(self):
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 0}')]))
        self.check_refused('zero.asys-rep', content, 'format version 0 is unknown')

    def test_missing_file(self):
        r = self.run_cmd([STATS, self.path('nope.asys-rep')])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot open '%s': No such file" % self.path('nope.asys-rep'), r.stderr.decode())

    def test_damaged_segment_is_skipped_not_fatal(self):
        bad_segment = b'ASYSSEG\0' + b'\xff' * 300
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 1}'),
                                  ('segments/x.seg', bad_segment)]))
        path = self.path('damaged.asys-rep')
        open(path, 'wb').write(content)
        r = self.run_cmd([STATS, '--report', 'report_info', '--format', 'csv', path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"warning: segment 'segments/x.seg' skipped", r.stderr)
        self.assertIn(b'Damaged segments,1', r.stdout)


class BadCommands(AsysTestCase):
    def one_line_error(self, argv, fragment, rc=None):
        r = self.run_cmd(argv)
        self.assertNotEqual(r.returncode, 0)
        if rc is not None:
            self.assertEqual(r.returncode, rc)
        lines = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(fragment, lines[0])
        return r

    def test_missing_program(self):
        self.one_line_error([ASYS, 'profile', '-o', 'x', './no-such-program'],
                            "cannot run './no-such-program': No such file or directory", rc=127)
        self.assertFalse(os.path.exists(self.path('x.asys-rep')))
        self.assertNoSessionLeft()

    def test_missing_inject_library(self):
        self.env['ASYS_INJECT_LIB'] = self.path('no-such-lib.so')
        self.one_line_error([ASYS, 'profile', '-t', 'osrt', '-o', 'x', 'true'],
                            "cannot read '%s' (ASYS_INJECT_LIB)" % self.path('no-such-lib.so'),
                            rc=1)
        self.assertFalse(os.path.exists(self.path('x.asys-rep')))
        self.assertNoSessionLeft()

    def test_unknown_trace_name(self):
        self.one_line_error([ASYS, 'profile', '-t', 'nvtx,gpu', 'true'],
                            "unknown --trace value 'gpu' (valid: hggc/cuda, hgtx/nvtx", rc=2)

    def test_unknown_option(self):
        self.one_line_error([ASYS, 'profile', '--frobnicate', 'true'], "unknown option '--frobnicate'", rc=2)

    def test_unknown_report(self):
        self.profile(['true'], options=['-t', 'none'])
        self.one_line_error([STATS, '--report', 'bogus_sum', self.report()],
                            "unknown report 'bogus_sum'", rc=2)
        self.assertFalse(os.path.exists(self.path('rep.sqlite')))

    def test_values_that_would_saturate_or_vanish(self):
        # issue 32.11: 2^64 and beyond used to become UINT64_MAX; an empty
        # report list printed the default reports
        self.one_line_error([ASYS, 'profile', '--max-segment-size', '99999999999999999999', 'true'],
                            "--max-segment-size needs a size", rc=2)
        self.profile(['true'], options=['-t', 'none'])
        for value in ('', 'hgtx_sum,', 'hgtx_sum,,osrt_sum'):
            self.one_line_error([STATS, '-r', value, self.report()], "-r needs a name", rc=2)
        self.one_line_error([os.path.join(BIN, 'asys-deps'), '--kernel',
                             'k#99999999999999999999', self.report()], 'k#99999999999999999999')

    def test_bad_stats_options(self):
        self.profile(['true'], options=['-t', 'none'])
        self.one_line_error([STATS, '--format', 'xml', self.report()], "unknown format 'xml'", rc=2)
        self.one_line_error([STATS, '--timeunit', 'hours', self.report()], "unknown time unit", rc=2)
        self.one_line_error([STATS, '--filter-time', '5s', self.report()], "bad --filter-time", rc=2)

    def test_existing_report_is_kept(self):
        open(self.path('keep.asys-rep'), 'w').write('precious')
        self.one_line_error([ASYS, 'profile', '-o', self.path('keep'), 'true'], 'file exists (use --force-overwrite)')
        self.assertEqual(open(self.path('keep.asys-rep')).read(), 'precious')

    def test_unwritable_output_directory(self):
        if os.geteuid() == 0:  # root writes anywhere but a read-only file system
            target, why = '/proc/asys-test/x', "directory '/proc/asys-test' does not exist"
        else:
            os.mkdir(self.path('ro'), 0o500)
            target, why = self.path('ro/x'), 'is not writable'
        self.one_line_error([ASYS, 'profile', '-o', target, 'true'], why)
        self.assertNoSessionLeft()

    def test_finalize_says_what_is_wrong_with_the_directory(self):
        os.mkdir(self.path('plain'))
        for target, why in ((self.path('plain'), 'not an asys session directory'),
                            (self.path('missing'), 'No such file or directory')):
            with self.subTest(target=target):
                r = self.run_cmd([ASYS, 'finalize', target])
                self.assertEqual(r.returncode, 1)
                lines = r.stderr.decode().strip().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertEqual(lines[0], "asys finalize: cannot open '%s': " % target + why
                                 if why.startswith('No') else lines[0])
                self.assertIn(why, lines[0])
        self.assertFalse(os.path.exists(self.path('recovered.asys-rep')))

    def test_output_paths_checked_before_the_program_runs(self):
        # each found before the program runs (it would print 'ran'), one line each (issue 32.10)
        os.mkdir(self.path('adir'))
        os.mkdir(self.path('isdir.asys-rep'))
        os.symlink('/nonexistent/x', self.path('dangling.asys-rep'))
        cases = [(['-o', self.path('missing/x')], 'does not exist'),
                 (['-o', self.path('dangling')], 'symbolic link to nothing'),
                 (['-f', 'true', '-o', self.path('isdir')], 'it is a directory'),
                 (['-o', self.path('n' * 250)], 'report name is too long')]
        for options, why in cases:
            with self.subTest(options=options):
                r = self.run_cmd([ASYS, 'profile', *options, 'sh', '-c', 'echo ran'])
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(r.stdout, b'')
                lines = r.stderr.decode().strip().splitlines()
                self.assertEqual(len(lines), 1, lines)
                self.assertIn(why, lines[0])
        # a directory: the first free reportN in it, not 'dir/.asys-rep'
        r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-s', 'none', '-o',
                          self.path('adir') + '/', 'true'])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(self.path('adir')), ['report1.asys-rep'])
        self.assertNoSessionLeft()

    def test_stats_output_not_writable_leaves_nothing(self):
        self.profile(['true'], options=['-t', 'none'])
        r = self.run_cmd([STATS, '-q', '--report', 'report_info', '--output',
                          self.path('missing-dir/base'), self.report()])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot write '%s" % self.path('missing-dir/base_report_info.csv'), r.stderr.decode())


if __name__ == '__main__':
    unittest.main(verbosity=2)
