"""Bad input gets one clear line naming the file and the problem, a non-zero
exit status, and leaves nothing half-written behind."""
import os
import subprocess
import tarfile
import io
import unittest

from asys_e2e import ASYS, STATS, AsysTestCase, prog


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

    def test_path_escape(self):
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 1}'), ('../x', b'boo')]))
        self.check_refused('escape.asys-rep', content, "unsafe member name '../x'")

    def test_future_format_version(self):
        content = zstd(tar_bytes([('manifest.json', b'{"format_version": 99}')]))
        self.check_refused('future.asys-rep', content, 'format version 99 is newer')

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
        if os.geteuid() == 0:
            target = '/proc/asys-test/x'
        else:
            os.mkdir(self.path('ro'), 0o500)
            target = self.path('ro/x')
        self.one_line_error([ASYS, 'profile', '-o', target, 'true'], 'is not writable')
        self.assertNoSessionLeft()

    def test_stats_output_not_writable_leaves_nothing(self):
        self.profile(['true'], options=['-t', 'none'])
        r = self.run_cmd([STATS, '-q', '--report', 'report_info', '--output',
                          self.path('missing-dir/base'), self.report()])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot write '%s" % self.path('missing-dir/base_report_info.csv'), r.stderr.decode())


if __name__ == '__main__':
    unittest.main(verbosity=2)
