"""asys and the analysis tools start again once with glibc's malloc asking
for transparent huge pages (common/allocator_tuning.c); the programs they
start see the user's GLIBC_TUNABLES as given."""
import os
import re
import subprocess
import sys
import unittest

from asys_e2e import ASYS, BIN, BUILD, AsysTestCase, prog

PROBE = prog('allocator_probe')


def sanitizer_build():
    with open(os.path.join(BUILD, 'CMakeCache.txt')) as f:
        return re.search(r'^ASYS_SANITIZE:BOOL=(ON|TRUE|1)$', f.read(), re.M) is not None


def huge_pages_offered():
    try:
        with open('/sys/kernel/mm/transparent_hugepage/enabled') as f:
            return '[never]' not in f.read()
    except OSError:
        return False


class AllocatorTuning(AsysTestCase):
    def probe(self, **env):
        e = dict(self.env)
        e.pop('GLIBC_TUNABLES', None)
        e.pop('ASYS_NO_HUGE_PAGES', None)
        e.update(env)
        p = subprocess.Popen([PROBE], cwd=self.dir, env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        now, started, saved, pid = out.decode().splitlines()
        self.assertEqual(saved, 'clean')
        self.assertEqual(int(pid), p.pid)  # started again in place (exec), not forked
        return now, started

    def expect_tuned(self):
        return huge_pages_offered() and not sanitizer_build()

    def test_tunable_in_effect_and_user_value_back(self):
        self.assertEqual(self.probe(), ('-', 'tuned' if self.expect_tuned() else 'as started'))
        now, started = self.probe(GLIBC_TUNABLES='glibc.malloc.check=0')
        self.assertEqual(now, 'glibc.malloc.check=0')
        self.assertEqual(started, 'tuned' if self.expect_tuned() else 'as started')

    def test_user_choices_respected(self):
        self.assertEqual(self.probe(ASYS_NO_HUGE_PAGES='1'), ('-', 'as started'))
        self.assertEqual(self.probe(GLIBC_TUNABLES='glibc.malloc.hugetlb=0'),
                         ('glibc.malloc.hugetlb=0', 'as started'))

    def test_profiled_program_sees_the_users_environment(self):
        script = 'echo "${GLIBC_TUNABLES-unset}|${ASYS_USER_GLIBC_TUNABLES-unset}"'
        for given in (None, 'glibc.malloc.check=0'):
            env = dict(self.env)
            env.pop('GLIBC_TUNABLES', None)
            if given:
                env['GLIBC_TUNABLES'] = given
            r = self.run_cmd([ASYS, 'profile', '-t', 'none', '-s', 'none', '-o', self.path('rep'),
                              '--force-overwrite=true', 'sh', '-c', script], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.decode().strip(), '%s|unset' % (given or 'unset'))

    def test_tools_still_run_and_exit_as_before(self):
        for tool in ('asys', 'asys-stats', 'asys-export', 'asys-deps'):
            r = self.run_cmd([os.path.join(BIN, tool), '--version'])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(b'0.', r.stdout)
            r = self.run_cmd([os.path.join(BIN, tool), self.path('missing.asys-rep')])
            self.assertNotEqual(r.returncode, 0)
            self.assertEqual(len(r.stderr.decode().strip().splitlines()), 1, r.stderr)


if __name__ == '__main__':
    if not os.path.exists(PROBE):
        print('skipped: allocator_probe not built')
        sys.exit(77)
    unittest.main()
