"""A library that carries its own C++ runtime (-static-libstdc++), opened with
dlopen by a C program: asys must never kill it (issue 31.1).  The allocator is
replaced only when heap tracing is on (libasys-heap.so), and then operator
new/delete forward to the library's own runtime; libc is interposed only by
the collectors chosen (with -t osrt: libasys-inject+osrt.so, or
libasys-osrt.so beside libasys-inject.so where that build is missing; the
default -t's ACDNN/ACBLAS wrappers likewise in libasys-inject+acompute.so)."""
import os
import shutil
import subprocess
import sys
import unittest

from asys_e2e import ASYS, BUILD, AsysTestCase, prog

LIBRARY = prog('libcxx_static.so')
ROUNDS = 300

# every collector off and on, alone and together
CONFIGS = {
    'none': ['-t', 'none', '-s', 'none'],
    'default': [],
    'hgtx': ['-t', 'hgtx', '-s', 'none'],
    'osrt': ['-t', 'osrt', '-s', 'none'],
    'hggc': ['-t', 'hggc', '-s', 'none'],
    'cpu sampling': ['-t', 'none', '-s', 'process-tree'],
    'heap sampled': ['-t', 'none', '-s', 'none', '--heap-memory-usage', 'true'],
    'heap every': ['-t', 'none', '-s', 'none', '--heap-memory-usage', 'true',
                   '--heap-sampling-interval-bytes', '1'],
    'all': ['-t', 'hgtx,osrt,hggc', '-s', 'process-tree', '--heap-memory-usage', 'true',
            '--host-memory-sampling', 'true', '--event-sample', 'process-tree'],
}


def expected_checksum():
    r = subprocess.run([prog('dlopen_cxx'), LIBRARY, str(ROUNDS)], capture_output=True,
                       check=True)
    return r.stdout


class StaticRuntime(AsysTestCase):
    def test_every_collector_on_and_off(self):
        expected = expected_checksum()
        for name, options in CONFIGS.items():
            with self.subTest(collectors=name):
                r = self.profile([prog('dlopen_cxx'), LIBRARY, str(ROUNDS)], options)
                self.assertEqual(r.stdout, expected, r.stderr.decode(errors='replace'))

    def test_operators_are_traced_through_the_library_runtime(self):
        self.profile([prog('dlopen_cxx'), LIBRARY, str(ROUNDS)], CONFIGS['heap every'])
        rows = self.stats_rows('heap_sum')
        by_function = {}
        for r in rows:
            if r['Call Site'] == 'cxx_static_work':
                by_function[r['Function']] = by_function.get(r['Function'], 0) + int(r['Allocations'])
        # new int, new (nothrow) int, new Wide (aligned: 64 > 16) and new int[16], per round
        self.assertEqual(by_function.get('operator new'), 3 * ROUNDS, rows)
        self.assertEqual(by_function.get('operator new[]'), ROUNDS, rows)
        # the malloc inside each operator is not counted a second time
        self.assertNotIn('malloc', by_function)
        leaks = [r for r in self.stats_rows('heap_leaks') if r['Call Site'] == 'cxx_static_work']
        self.assertEqual(leaks, [])


class Preload(AsysTestCase):
    """What the program's libc calls go through: only the chosen collectors'."""

    def preloaded(self, options):
        r = self.run_cmd([ASYS, 'profile', '-o', self.path('p'), '--force-overwrite=true', *options,
                          'sh', '-c', 'echo "$LD_PRELOAD"'])
        self.assertEqual(r.returncode, 0, r.stderr)
        return [os.path.basename(p) for p in r.stdout.decode().strip().split(':')]

    def test_libraries_per_collector(self):
        # the default -t has acdnn,acblas: their wrappers (cuDNN/cuBLAS names and
        # dlsym only, nothing of libc's the program calls) come in the build of
        # libasys-inject.so that holds them, built when the toolkit's headers were
        # there, and so do OS runtime's with -t osrt: one library preloaded
        acompute = os.path.exists(os.path.join(BUILD, 'lib', 'libasys-acompute.so'))
        self.assertEqual(self.preloaded([]),
                         ['libasys-inject+acompute.so' if acompute else 'libasys-inject.so'])
        self.assertEqual(self.preloaded(['-t', 'hggc,hgtx']), ['libasys-inject.so'])
        self.assertEqual(self.preloaded(['-t', 'osrt']), ['libasys-inject+osrt.so'])
        self.assertEqual(self.preloaded(['-t', 'cublas']),
                         ['libasys-inject+acompute.so' if acompute else 'libasys-inject.so'])
        self.assertEqual(self.preloaded(['-t', 'osrt,cublas']),
                         ['libasys-inject+acompute+osrt.so' if acompute else
                          'libasys-inject+osrt.so'])
        self.assertEqual(self.preloaded(['-t', 'none', '--host-memory-sampling', 'true']),
                         ['libasys-inject.so'])
        self.assertEqual(self.preloaded(['-t', 'osrt,hgtx', '--heap-memory-usage', 'true']),
                         ['libasys-inject+osrt.so', 'libasys-heap.so'])

    def test_separate_libraries_where_no_merged_build_is_beside(self):
        # ASYS_INJECT_LIB naming a directory that has only the separate
        # libraries (an older install): they are preloaded as before
        lib = self.path('lib')
        os.mkdir(lib)
        for name in os.listdir(os.path.join(BUILD, 'lib')):
            if name.startswith('libasys-') and '+' not in name:
                shutil.copy(os.path.join(BUILD, 'lib', name), lib)
        env = dict(self.env, ASYS_INJECT_LIB=os.path.join(lib, 'libasys-inject.so'))
        r = self.run_cmd([ASYS, 'profile', '-t', 'osrt,hgtx', '-o', self.path('p'), 'sh', '-c',
                          'echo "$LD_PRELOAD"'], env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([os.path.basename(p) for p in r.stdout.decode().strip().split(':')],
                         ['libasys-inject.so', 'libasys-osrt.so'])
        if os.path.exists(os.path.join(lib, 'libasys-acompute.so')):
            r = self.run_cmd([ASYS, 'profile', '-t', 'osrt,cudnn,cublas', '-o', self.path('q'),
                              'sh', '-c', 'echo "$LD_PRELOAD"'], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(
                [os.path.basename(p) for p in r.stdout.decode().strip().split(':')],
                ['libasys-inject.so', 'libasys-acompute.so', 'libasys-osrt.so'])


if __name__ == '__main__':
    if not os.path.exists(LIBRARY):
        print('skipped: no C++ compiler, so no libcxx_static.so')
        sys.exit(77)
    unittest.main()
