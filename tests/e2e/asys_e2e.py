"""Helpers for the end-to-end tests: run asys on the test programs, read the
reports back through asys-stats and the analysis database."""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

BUILD = os.environ.get('ASYS_BUILD_DIR') or os.path.join(os.path.dirname(__file__), '..', '..', 'build')
BIN = os.path.join(BUILD, 'bin')
PROGS = os.path.join(BUILD, 'tests', 'progs')
ASYS = os.path.join(BIN, 'asys')
STATS = os.path.join(BIN, 'asys-stats')


def prog(name):
    return os.path.join(PROGS, name)


class AsysTestCase(unittest.TestCase):
    """Each test runs in a fresh directory, which is also $TMPDIR, so a test
    can check that no session directory is left behind."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='asys-e2e-')
        self.env = dict(os.environ, TMPDIR=self.dir)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_cmd(self, argv, input=None, timeout=300, env=None):
        return subprocess.run(argv, cwd=self.dir, env=env or self.env, input=input,
                              capture_output=True, timeout=timeout)

    def profile(self, program_argv, options=(), expect_rc=0, name='rep', input=None):
        """Records program_argv into NAME.asys-rep; returns the CompletedProcess."""
        argv = [ASYS, 'profile', '-o', self.path(name), '--force-overwrite=true', *options,
                *program_argv]
        r = self.run_cmd(argv, input=input)
        if expect_rc is not None:
            self.assertEqual(r.returncode, expect_rc,
                             'asys profile exited %d\nstdout: %s\nstderr: %s'
                             % (r.returncode, r.stdout.decode(errors='replace'),
                                r.stderr.decode(errors='replace')))
        self.assertNoSessionLeft()
        return r

    def report(self, name='rep'):
        return self.path(name + '.asys-rep')

    def stats(self, *args, expect_rc=0):
        r = self.run_cmd([STATS, *args])
        if expect_rc is not None:
            self.assertEqual(r.returncode, expect_rc,
                             'asys-stats %s exited %d: %s' % (' '.join(args), r.returncode,
                                                              r.stderr.decode(errors='replace')))
        return r

    def stats_rows(self, report_name, name='rep', *extra):
        """A report as a list of dicts (csv output)."""
        r = self.stats('-q', '--report', report_name, '--format', 'csv', *extra, self.report(name))
        return list(csv.DictReader(io.StringIO(r.stdout.decode())))

    def db(self, name='rep'):
        """The analysis database (built by asys-stats when missing)."""
        self.stats('-q', '--report', 'report_info', self.report(name))
        con = sqlite3.connect(self.path(name + '.sqlite'))
        self.addCleanup(con.close)
        return con

    def manifest(self, name='rep'):
        out = subprocess.run(['tar', '--zstd', '-xOf', self.report(name), 'manifest.json'],
                             capture_output=True, check=True)
        return json.loads(out.stdout)

    def assertNoSessionLeft(self):
        left = [n for n in os.listdir(self.dir) if n.startswith('asys-') and
                os.path.isdir(os.path.join(self.dir, n))]
        self.assertEqual(left, [], 'session directories left behind')

    def assertBetween(self, value, low, high, what=''):
        self.assertTrue(low <= value <= high, '%s %r not in [%r, %r]' % (what, value, low, high))
