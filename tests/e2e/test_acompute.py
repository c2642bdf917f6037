"""ACDNN/ACBLAS tracing (-t acdnn,acblas) on simppu's cuDNN and cuBLAS stand-ins
(tests/simppu/cudnn.c, cublas.c, cublaslt.c, cudnn_graph.c), recording
acompute_workload (tests/e2e/progs/acompute_workload.c), a program built against
the toolkit's headers.  The expected calls are the workload's own, counted in
its source; the generator is checked against an independent reading of the
headers (clang's AST, when clang is installed)."""
import json
import os
import re
import shutil
import subprocess
import unittest

import craft
import pftrace
from asys_e2e import ASYS, BIN, BUILD, AsysTestCase, prog

SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
STAND_IN = os.path.join(BUILD, 'simppu', 'libcudnn.so.9')
WORKLOAD = prog('acompute_workload')
LIBRARY = os.path.join(BUILD, 'lib', 'libasys-acompute.so')
MERGED = os.path.join(BUILD, 'lib', 'libasys-inject+acompute.so')
MERGED_OSRT = os.path.join(BUILD, 'lib', 'libasys-inject+acompute+osrt.so')
EXPORT = os.path.join(BIN, 'asys-export')
GENERATED = os.path.join(BUILD, 'recorder', 'acompute')
INCLUDE = '/usr/local/cuda/include'
HERE = os.path.dirname(os.path.abspath(__file__))

# acompute_workload blas: what it calls, and what the stand-ins call inside
BLAS_CALLS = {
    'cublasCreate_v2': 1, 'cublasSetStream_v2': 1, 'cublasSgemm_v2': 4, 'cublasDgemm_v2': 2,
    'cublasGemmEx': 1, 'cublasSgemmStridedBatched': 1, 'cublasSaxpy_v2': 1,
    'cublasDestroy_v2': 1,
    # inside cublasCreate_v2 / cublasDestroy_v2 / cublasGemmEx (stand-in cuBLAS -> cuBLASLt)
    'cublasLtCreate': 1, 'cublasLtDestroy': 1, 'cublasLtMatmulDescCreate': 1,
    'cublasLtMatrixLayoutCreate': 3, 'cublasLtMatmul': 1, 'cublasLtMatrixLayoutDestroy': 3,
    'cublasLtMatmulDescDestroy': 1,
}
BLAS_KERNELS = {'cublasSgemm_v2': 3, 'cublasDgemm_v2': 2, 'cublasLtMatmul': 1,
                'cublasSgemmStridedBatched': 1, 'cublasSaxpy_v2': 1}
DNN_CALLS = {
    'cudnnGetVersion': 1, 'cudnnCreate': 1, 'cudnnSetStream': 1,
    'cudnnCreateTensorDescriptor': 2, 'cudnnCreateFilterDescriptor': 1,
    'cudnnCreateConvolutionDescriptor': 1, 'cudnnCreateActivationDescriptor': 1,
    'cudnnSetTensor4dDescriptor': 2, 'cudnnSetFilter4dDescriptor': 1,
    'cudnnSetConvolution2dDescriptor': 1, 'cudnnSetActivationDescriptor': 1,
    'cudnnConvolutionForward': 3, 'cudnnActivationForward': 2, 'cudnnSoftmaxForward': 1,
    'cudnnBackendCreateDescriptor': 2, 'cudnnBackendSetAttribute': 3,
    'cudnnBackendFinalize': 2, 'cudnnBackendExecute': 1, 'cudnnBackendDestroyDescriptor': 2,
    'cudnnDestroyActivationDescriptor': 1, 'cudnnDestroyConvolutionDescriptor': 1,
    'cudnnDestroyFilterDescriptor': 1, 'cudnnDestroyTensorDescriptor': 2, 'cudnnDestroy': 1,
}


def have_stand_in():
    return all(os.path.exists(p) for p in (WORKLOAD, STAND_IN, LIBRARY))


class AcomputeCase(AsysTestCase):
    def record(self, mode, traces='hggc,acdnn,acblas', name='rep', options=(), extra=()):
        argv = [SIMPPU_RUN, ASYS, 'profile', '-o', self.path(name), '--force-overwrite=true',
                '-s', 'none', '-t', traces, *options, WORKLOAD, mode, *extra]
        r = self.run_cmd(argv)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))
        self.assertNoSessionLeft()
        return r

    def rows(self, sql, *params, name='rep'):
        return self.db(name).execute(sql, params).fetchall()

    def calls(self, name='rep'):
        return dict(self.rows('SELECT s.value, COUNT(*) FROM acompute_calls AS c '
                              'JOIN strings AS s ON s.id = c.name_id GROUP BY 1', name=name))


@unittest.skipUnless(have_stand_in(), 'no cuDNN/cuBLAS stand-ins')
class Blas(AcomputeCase):
    def setUp(self):
        super().setUp()
        self.record('blas')

    def test_call_counts_and_nesting(self):
        self.assertEqual(self.calls(), BLAS_CALLS)
        nested = dict(self.rows(
            'SELECT s.value, p.value FROM acompute_calls AS c JOIN strings AS s ON s.id = c.name_id '
            'JOIN acompute_calls AS q ON q.id = c.parent_id JOIN strings AS p ON p.id = q.name_id '
            'WHERE c.depth = 1'))
        self.assertEqual(nested['cublasLtMatmul'], 'cublasGemmEx')
        self.assertEqual(nested['cublasLtCreate'], 'cublasCreate_v2')
        self.assertEqual(self.rows('SELECT COUNT(*) FROM acompute_calls WHERE depth = 0 AND '
                                   'library = 3')[0][0], 0, 'every cuBLASLt call is nested')

    def test_compact_records(self):
        """Calls on the handle and stream of the thread's previous call are the
        32-byte form; the database has the handle and stream either way."""
        r = self.run_cmd([ASYS, 'dump', self.report()])
        dump = r.stdout.decode()
        self.assertGreater(dump.count('ACBLAS_CALL_SAME'), 3)
        self.assertEqual(self.rows('SELECT COUNT(*) FROM acompute_calls WHERE library = 2 AND '
                                   'name_id IN (SELECT id FROM strings WHERE value LIKE '
                                   '"cublasSgemm_v2") AND status = 0 AND handle IS NULL')[0][0], 0)

    def test_failing_call_and_status(self):
        failed = self.rows('SELECT s.value, c.status, c.handle, c.unknown_handle, c.stream '
                           'FROM acompute_calls AS c JOIN strings AS s ON s.id = c.name_id '
                           'WHERE c.status != 0')
        self.assertEqual(failed, [('cublasSgemm_v2', 1, 0, 1, None)],
                         'one NULL-handle Sgemm: CUBLAS_STATUS_NOT_INITIALIZED, no stream')
        summary = {r['Name']: r for r in self.stats_rows('acblas_sum')}
        self.assertEqual(summary['cublasSgemm_v2']['Errors'], '1')
        self.assertEqual(summary['cublasSgemm_v2']['Num Calls'], '4')

    def test_stream_of_the_handle(self):
        created = self.rows('SELECT handle FROM acompute_calls AS c JOIN strings AS s '
                            'ON s.id = c.name_id WHERE s.value = "cublasCreate_v2"')[0][0]
        stream = self.rows('SELECT stream FROM acompute_calls AS c JOIN strings AS s '
                           'ON s.id = c.name_id WHERE s.value = "cublasSetStream_v2"')[0][0]
        self.assertNotEqual(stream, 0)
        gemms = self.rows('SELECT handle, stream, stream_arg FROM acompute_calls AS c '
                          'JOIN strings AS s ON s.id = c.name_id '
                          'WHERE s.value IN ("cublasSgemm_v2", "cublasDgemm_v2") AND status = 0')
        self.assertEqual(len(gemms), 5)
        self.assertEqual(set(gemms), {(created, stream, 0)})
        # cublasLtMatmul takes the stream as an argument
        lt = self.rows('SELECT stream, stream_arg FROM acompute_calls AS c JOIN strings AS s '
                       'ON s.id = c.name_id WHERE s.value = "cublasLtMatmul"')
        self.assertEqual(lt, [(stream, 1)])
        # the kernels ran on the stream the handle was set to: all on one stream
        streams = self.rows('SELECT DISTINCT w.stream FROM acompute_work AS w')
        self.assertEqual(len(streams), 1)

    def test_kernels_attributed_to_their_call(self):
        per_api = dict(self.rows(
            'SELECT s.value, COUNT(*) FROM acompute_work AS w JOIN acompute_calls AS c '
            'ON c.id = w.call_id JOIN strings AS s ON s.id = c.name_id WHERE w.kind = 1 '
            'GROUP BY 1'))
        self.assertEqual(per_api, BLAS_KERNELS)
        kernels = self.rows('SELECT COUNT(*) FROM ppu_kernels')[0][0]
        self.assertEqual(kernels, sum(BLAS_KERNELS.values()), 'every kernel has its call')
        names = dict(self.rows(
            'SELECT s.value, k.value FROM acompute_work AS w JOIN acompute_calls AS c '
            'ON c.id = w.call_id JOIN strings AS s ON s.id = c.name_id '
            'JOIN ppu_activities AS p ON p.id = w.activity_id '
            'JOIN strings AS k ON k.id = p.base_name_id'))
        self.assertEqual(names['cublasSgemm_v2'], 'ampere_sgemm_128x64_nn')
        rows = {(r['API Name'], r['Kernel Name']): r for r in self.stats_rows('acompute_kern_sum')}
        self.assertEqual(rows[('cublasSgemm_v2', 'ampere_sgemm_128x64_nn')]['Instances'], '3')
        # device time is counted once: the sums over the summary equal the kernels' total
        device = sum(int(r['Device Time (ns)']) for r in self.stats_rows('acblas_sum'))
        total = self.rows('SELECT SUM(end_ns - start_ns) FROM ppu_kernels')[0][0]
        self.assertEqual(device, total)
        # Time (%) counts nested calls once: cuBLASLt's rows are 0
        summary = {r['Name']: r for r in self.stats_rows('acblas_sum')}
        self.assertEqual(float(summary['cublasLtMatmul']['Time (%)']), 0.0)
        self.assertEqual(summary['cublasLtMatmul']['Nested'], '1')
        self.assertAlmostEqual(sum(float(r['Time (%)']) for r in summary.values()), 100.0, 3)

    def test_trace_and_info(self):
        trace = self.stats_rows('acblas_trace')
        self.assertEqual(len(trace), sum(BLAS_CALLS.values()))
        starts = [int(r['Start (ns)']) for r in trace]
        self.assertEqual(starts, sorted(starts))
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        line = [v for k, v in info.items() if k.startswith('ACDNN/ACBLAS (pid')]
        self.assertEqual(len(line), 1)
        self.assertIn('cuBLAS, cuBLASLt', line[0])
        self.assertNotIn('dlsym', line[0])

    def test_timeline(self):
        out = self.path('rep.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        begins = [e for e in trace.events if e.type == pftrace.BEGIN and
                  'acblas' in e.categories]
        self.assertEqual(len(begins), sum(BLAS_CALLS.values()))
        rows = {tuple(trace.path(e.track))[-1].split(' [')[0] for e in begins}
        self.assertEqual(rows, {'ACBLAS'})
        gemm = [e for e in begins if e.name == 'cublasSgemm_v2' and e.args.get('status') == 1]
        self.assertEqual(len(gemm), 1)
        flows = [(s, d) for s, d in trace.flows if 'acblas' in s.categories]
        self.assertEqual(len(flows), sum(BLAS_KERNELS.values()))
        for s, d in flows:
            self.assertLessEqual(s.ts, d.ts, 'a call comes before its kernel')
        js = self.path('rep.json')
        r = self.run_cmd([EXPORT, '-t', 'json', '-o', js, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(js) as f:
            events = json.load(f)
        events = events['traceEvents'] if isinstance(events, dict) else events
        slices = [e for e in events if e.get('cat') == 'acblas' and e.get('ph') == 'X']
        self.assertEqual(len(slices), sum(BLAS_CALLS.values()))
        starts = [e for e in events if e.get('name') == 'library call' and e.get('ph') == 's']
        self.assertEqual(len(starts), sum(BLAS_KERNELS.values()))


@unittest.skipUnless(have_stand_in(), 'no cuDNN/cuBLAS stand-ins')
class Dnn(AcomputeCase):
    def setUp(self):
        super().setUp()
        self.record('dnn', options=('--acompute-backtrace-threshold', '30000'))

    def test_call_counts(self):
        calls = self.calls()
        dnn = {k: v for k, v in calls.items() if k.startswith('cudnn')}
        self.assertEqual(dnn, DNN_CALLS, 'the backend calls once each: the front library\'s '
                         'lookups in its lazily loaded sub-library are not public calls')
        # the GEMM convolution calls cuBLAS: nested under cuDNN, in another domain
        nested = self.rows(
            'SELECT s.value, c.depth, c.domain, p.value FROM acompute_calls AS c '
            'JOIN strings AS s ON s.id = c.name_id JOIN acompute_calls AS q ON q.id = c.parent_id '
            'JOIN strings AS p ON p.id = q.name_id WHERE s.value = "cublasSgemm_v2"')
        self.assertEqual(nested, [('cublasSgemm_v2', 1, 2, 'cudnnConvolutionForward')])

    def test_kernels_and_stream(self):
        per_api = dict(self.rows(
            'SELECT s.value, COUNT(*) FROM acompute_work AS w JOIN acompute_calls AS c '
            'ON c.id = w.call_id JOIN strings AS s ON s.id = c.name_id WHERE w.kind = 1 '
            'GROUP BY 1'))
        # 2 implicit GEMM + 1 im2col in cudnnConvolutionForward, the GEMM in cuBLAS
        self.assertEqual(per_api, {'cudnnConvolutionForward': 3, 'cublasSgemm_v2': 1,
                                   'cudnnActivationForward': 2, 'cudnnSoftmaxForward': 1,
                                   'cudnnBackendExecute': 1})
        stream = self.rows('SELECT stream FROM acompute_calls AS c JOIN strings AS s ON '
                           's.id = c.name_id WHERE s.value = "cudnnSetStream"')[0][0]
        conv = self.rows('SELECT DISTINCT stream FROM acompute_calls AS c JOIN strings AS s '
                         'ON s.id = c.name_id WHERE s.value = "cudnnConvolutionForward"')
        self.assertEqual(conv, [(stream,)])

    def test_backtrace_threshold(self):
        """Calls of 30 us or more have a stack, shorter ones none."""
        rows = self.rows('SELECT end_ns - start_ns, callchain_id FROM acompute_calls')
        # (a tick or two of rounding either side of the threshold is left out)
        longer = [c for d, c in rows if d >= 30100]
        shorter = [c for d, c in rows if d < 29900]
        self.assertTrue(longer and shorter)
        self.assertNotIn(None, longer)
        self.assertEqual(set(shorter), {None})
        stacks = [r['Call Stack'] for r in self.stats_rows('acdnn_trace') if r['Call Stack']]
        self.assertTrue(any('main' in s for s in stacks), stacks)
        # the stacks feed the call trees and the flame exports
        tree = self.stats_rows('stack_topdown:acdnn')
        self.assertIn('main', [r['Function'].strip() for r in tree])
        folded = self.path('acdnn.folded')
        r = self.run_cmd([EXPORT, '-t', 'folded', '--stacks', 'acdnn', '-o', folded,
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(folded) as f:
            lines = f.read().splitlines()
        total = sum(int(line.rsplit(' ', 1)[1]) for line in lines)
        self.assertEqual(total, self.rows('SELECT SUM(end_ns - start_ns) FROM acompute_calls '
                                          'WHERE domain = 1 AND callchain_id IS NOT NULL')[0][0])


@unittest.skipUnless(have_stand_in(), 'no cuDNN/cuBLAS stand-ins')
class Dlsym(AcomputeCase):
    def test_dlopen_and_dlsym_traced(self):
        self.record('dlsym')
        calls = self.calls()
        self.assertEqual(calls['cublasSgemm_v2'], 2)
        self.assertEqual(calls['cublasCreate_v2'], 1)
        via = {n for (n,) in self.rows('SELECT s.value FROM acompute_apis AS a JOIN strings AS s '
                                       'ON s.id = a.name_id WHERE a.via_dlsym')}
        self.assertEqual(via, {'cublasCreate_v2', 'cublasSgemm_v2', 'cublasDestroy_v2'})
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        line = [v for k, v in info.items() if k.startswith('ACDNN/ACBLAS (pid')][0]
        self.assertIn('resolved with dlsym: ', line)
        kernels = self.rows('SELECT COUNT(*) FROM acompute_work WHERE kind = 1')[0][0]
        self.assertEqual(kernels, 2)


@unittest.skipUnless(have_stand_in(), 'no cuDNN/cuBLAS stand-ins')
class Options(AcomputeCase):
    def test_nothing_from_a_program_without_the_libraries(self):
        self.record('none')
        self.assertEqual(self.rows('SELECT COUNT(*) FROM acompute_calls')[0][0], 0)
        self.assertEqual(self.rows('SELECT COUNT(*) FROM acompute_apis')[0][0], 0)
        r = self.stats('-q', '--report', 'acblas_trace', self.report(), expect_rc=None)
        self.assertIn(b'no ACDNN/ACBLAS calls', r.stdout + r.stderr)

    def test_acblas_alone_records_only_cublas(self):
        self.record('dnn', traces='hggc,acblas')
        calls = self.calls()
        self.assertEqual({k for k in calls if k.startswith('cudnn')}, set())
        self.assertEqual(calls.get('cublasSgemm_v2'), 1, 'cuDNN\'s own cuBLAS call, at depth 1')

    def test_not_planned_any_more(self):
        r = self.record('none', traces='acdnn,acblas')
        self.assertNotIn(b'planned', r.stderr)
        m = self.manifest()
        self.assertIn('acdnn', json.dumps(m['collectors']))
        r = self.run_cmd([ASYS, 'profile', '--help'])
        self.assertIn(b'acompute-backtrace-threshold', r.stdout)

    def test_off_without_t(self):
        self.record('blas', traces='hggc')
        self.assertEqual(self.rows('SELECT COUNT(*) FROM acompute_calls')[0][0], 0)


class BadInput(AsysTestCase):
    """A crafted report: a call whose API id no API record names, an API
    record of an impossible library, a call on a handle never created, a
    duration longer than the clock."""

    def test_hostile_records(self):
        import struct

        def api(rtype, library, api_id, name_sid, delta=10):
            return craft.word(rtype, 3, library, delta) + struct.pack('<IIII', api_id, name_sid,
                                                                      0, 0)

        def call(rtype, api_id, duration, status, flags, delta=10, depth=0, handle=0x1234):
            return (craft.word(rtype, 6, depth, delta) +
                    struct.pack('<QiIIIQQ', duration, status, api_id, 0, flags, handle, 0))

        def same(rtype, api_id, duration, status, flags, delta=10, depth=0):
            return (craft.word(rtype, 4, depth, delta) +
                    struct.pack('<QiIII', duration, status, api_id, 0, flags))

        body = (craft.string_def(3, 'cublasSgemm_v2') + craft.string_def(4, 'cudnnCreate') +
                api(98, 2, 7, 3) +                   # cublasSgemm_v2 as id 7
                call(99, 7, 5, 0, 1 | 8 | 32) +       # on a handle never created: kept, said
                same(101, 7, 5, 0, 8) +               # the same handle again
                call(99, 99, 5, 0, 8) +               # id 99: no API record
                api(98, 9, 8, 3) +                    # library 9
                api(96, 2, 9, 4) +                    # a cuDNN record naming cuBLAS
                call(99, 7, 1 << 62, 1, 1 | 8))       # longer than the clock: clipped to 0
        seg = craft.thread_segment(7, 7, 0x77, body, features=1 | 32 | 64)
        # another thread whose first call repeats a handle its segment never gave
        body2 = (craft.string_def(3, 'cublasSgemm_v2') + api(98, 2, 7, 3) +
                 same(101, 7, 5, 0, 1 | 8))
        seg2 = craft.thread_segment(7, 8, 0x77, body2, features=1 | 32 | 64, thread_index=2)
        man = craft.manifest(collectors={'enabled': ['acdnn', 'acblas']})
        path = self.path('bad.asys-rep')
        with open(path, 'wb') as f:
            f.write(craft.report([('manifest.json', man), ('segments/a.seg', seg),
                                  ('segments/b.seg', seg2)]))
        r = self.stats('-q', '-r', 'report_info', '-f', 'csv', path)
        info = dict(line.split(',', 1) for line in r.stdout.decode().splitlines()[1:])
        self.assertIn('1 (an API id', info['ACDNN/ACBLAS calls skipped at import'])
        con = self.db('bad')
        rows = con.execute('SELECT tid, unknown_handle, status, end_ns - start_ns >= 0, handle '
                           'FROM acompute_calls ORDER BY tid, id').fetchall()
        self.assertEqual(rows, [(7, 1, 0, 1, 0x1234), (7, 0, 0, 1, 0x1234), (7, 0, 1, 1, 0x1234),
                                (8, 0, 0, 1, None)])
        warnings = [x[0] for x in con.execute('SELECT message FROM import_warnings')]
        self.assertEqual(sum('no API record names' in m for m in warnings), 1, warnings)
        self.assertEqual(sum('library 9' in m for m in warnings), 1, warnings)
        self.assertEqual(sum('library 2, id 9' in m for m in warnings), 1, warnings)
        self.assertEqual(sum('repeats the handle' in m for m in warnings), 1, warnings)
        for report in ('acblas_sum', 'acblas_trace', 'acompute_kern_sum'):
            self.stats('-q', '-r', report, path, expect_rc=None)
        out = self.path('bad.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(pftrace.read(out).problems, [])


class DlsymNext(AsysTestCase):
    """dlsym is interposed in every process of the default -t: dlsym(RTLD_NEXT)
    still finds what comes after its caller, from the program and from a
    library's constructor that may run before libasys-acompute.so's."""

    LIB = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
int foo(void) { return 2; }
void *next_from_l;
__attribute__((constructor)) static void init(void) { next_from_l = dlsym(RTLD_NEXT, "foo"); }
'''
    MAIN = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int foo(void) { return 1; }
extern void *next_from_l;
int main(void) {
    int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "foo");
    printf("%d %d\n", f ? f() : -1, next_from_l == NULL);
    return 0;
}
'''

    @unittest.skipUnless(shutil.which('cc') and os.path.exists(LIBRARY), 'no cc or no library')
    def test_rtld_next(self):
        for name, text in (('l.c', self.LIB), ('m.c', self.MAIN)):
            with open(self.path(name), 'w') as f:
                f.write(text)
        subprocess.run(['cc', '-shared', '-fPIC', '-o', self.path('libl.so'), self.path('l.c'),
                        '-ldl'], check=True)
        subprocess.run(['cc', '-o', self.path('m'), self.path('m.c'), '-L', self.dir, '-ll',
                        '-ldl', '-Wl,-rpath,' + self.dir], check=True)
        r = self.profile([self.path('m')], options=['-s', 'none'])
        self.assertEqual(r.stdout.decode().split(), ['2', '1'],
                         "the program's RTLD_NEXT finds the library's foo, the library's none")


class Generator(unittest.TestCase):
    """Every function the installed headers declare is wrapped or listed as not
    wrappable, counted against clang's reading of the same headers."""

    @unittest.skipUnless(os.path.exists(os.path.join(GENERATED, 'acompute_table.c')),
                         'the wrappers were not generated (no headers)')
    @unittest.skipUnless(shutil.which('clang') and os.path.exists(INCLUDE + '/cudnn.h'),
                         'no clang or no headers')
    def test_every_declared_function(self):
        with open(os.path.join(GENERATED, 'acompute_table.c')) as f:
            table = f.read()
        names = table[table.index('acompute_api_text'):table.index('acompute_api_name_at')]
        wrapped = set(re.findall(r'"\\0" "((?:cudnn|cublas)\w*)"', names))
        unwrappable = set(re.findall(r'\{"(\w+)", "', table))
        declared = set()
        for header in ('cudnn.h', 'cublas.h', 'cublasLt.h', 'cublasXt.h'):
            out = subprocess.run(['clang', '-Xclang', '-ast-dump=json', '-fsyntax-only', '-x', 'c',
                                  '-I', INCLUDE, '-'], input='#include <%s>\n' % header,
                                 capture_output=True, text=True, check=True)
            ast = json.loads(out.stdout)
            for node in ast.get('inner', []):
                if node.get('kind') != 'FunctionDecl':
                    continue
                name = node.get('name', '')
                loc = node.get('loc', {})
                path = loc.get('file') or loc.get('includedFrom', {}).get('file', '')
                if re.match(r'(cudnn|cublas)', name) and not node.get('storageClass') == 'static':
                    declared.add(name)
        self.assertGreater(len(declared), 900)
        self.assertEqual(declared - wrapped - unwrappable, set(), 'declared, neither wrapped '
                         'nor listed')
        self.assertEqual(wrapped - declared, set(), 'wrapped but not declared')
        # the library of its own and the builds of libasys-inject.so that hold it
        for library in (LIBRARY, MERGED, MERGED_OSRT):
            exported = subprocess.run(['nm', '-D', '--defined-only', library],
                                      capture_output=True, text=True, check=True).stdout
            self.assertEqual({l.split()[-1] for l in exported.splitlines()
                              if re.search(r' T (cudnn|cublas)', l)}, wrapped, library)


if __name__ == '__main__':
    if not have_stand_in():  # ctest counts exit code 77 as skipped, not passed
        print('SKIPPED: no cudnn.h/cublas headers when building: no stand-ins, no ACDNN/ACBLAS '
              'tests')
        raise SystemExit(77)
    unittest.main(verbosity=2)
