"""`asys profile --capture-range`: only the events inside capture windows are
recorded — from cudaProfilerStart to cudaProfilerStop (hggc-profiler-api,
nsys's cudaProfilerApi), or over an HGTX range named by --hgtx-capture — once
(stop), N times (repeat:N), or from the first trigger on (none).

tests/e2e/progs/samples/capture_ranges.cu launches kernels with a name per
phase and makes one OS runtime call per phase, so the kernel names, the
counts and the OS runtime calls (usleep) of a report show exactly which phases were
recorded."""
import os
import unittest

from asys_e2e import ASYS, BUILD, AsysTestCase

PROGRAM = os.path.join(BUILD, 'tests', 'progs', 'samples', 'capture_ranges')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')

# kernels launched per phase, in program order
PHASES = [('before_start', 3), ('inside_profiler', 5), ('between', 7), ('inside_step', 12),
          ('after_step', 3), ('inside_phase', 2), ('inside_domain_step', 6),
          ('inside_second_profiler', 2), ('at_the_end', 1)]
# OS runtime calls (usleep) per phase: one per group of launches
SLEEPS = {'before_start': 1, 'inside_profiler': 1, 'between': 1, 'inside_step': 3,
          'after_step': 3, 'inside_phase': 1, 'inside_domain_step': 1,
          'inside_second_profiler': 1, 'at_the_end': 1}


def expected(*phases, from_phase=None):
    """{kernel: count} for the given phases, or for every phase from `from_phase` on."""
    if from_phase:
        names = [p for p, _ in PHASES]
        phases = names[names.index(from_phase):]
    return {p: n for p, n in PHASES if p in phases}


@unittest.skipUnless(os.path.exists(PROGRAM),
                     'SKIPPED: nvcc was not found when building, so capture_ranges was not built')
class CaptureCase(AsysTestCase):
    def record(self, *options, trace='hggc,hgtx,osrt'):
        r = self.run_cmd([SIMPPU_RUN, ASYS, 'profile', '-t', trace, '-s', 'none',
                          '-o', self.path('rep'), '--force-overwrite=true', *options, PROGRAM])
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))
        self.assertIn(b'done\n', r.stdout)
        self.assertNoSessionLeft()

    def rows(self, sql, *params):
        return self.db().execute(sql, params).fetchall()

    def kernel_counts(self):
        return dict(self.rows('SELECT b.value, COUNT(*) FROM ppu_kernels AS k '
                              'JOIN ppu_kernel_names AS n ON n.mangled_name_id = k.mangled_name_id '
                              'JOIN strings AS b ON b.id = n.base_name_id GROUP BY b.value'))

    def sleeps(self):
        return self.rows("SELECT COUNT(*) FROM osrt_calls AS o JOIN strings AS s "
                         "ON s.id = o.name_id WHERE s.value = 'usleep'")[0][0]

    def hgtx_ranges(self):
        return sorted(r[0] for r in self.rows(
            'SELECT s.value FROM hgtx_events AS e JOIN strings AS s ON s.id = e.text_id'))

    def windows(self):
        return self.rows('SELECT window_index, trigger, (SELECT value FROM strings WHERE id = '
                         'name_id), start_ns IS NOT NULL, end_ns IS NOT NULL FROM capture_ranges '
                         'ORDER BY window_index')

    def info(self):
        return {r['Property']: r['Value'] for r in self.stats_rows('report_info')}


class WithoutCaptureRange(CaptureCase):
    def test_everything_is_recorded(self):
        self.record()
        self.assertEqual(self.kernel_counts(), dict(PHASES))
        self.assertEqual(self.sleeps(), sum(SLEEPS.values()))
        self.assertEqual(self.windows(), [])
        self.assertNotIn('Capture range', self.info())


class ProfilerApi(CaptureCase):
    def test_stop_records_the_first_window(self):
        self.record('--capture-range=cudaProfilerApi')
        self.assertEqual(self.kernel_counts(), expected('inside_profiler'))
        self.assertEqual(self.hgtx_ranges(), ['inside-profiler'])
        self.assertEqual(self.sleeps(), SLEEPS['inside_profiler'])
        self.assertEqual(self.windows(), [(0, 'hggc-profiler-api', None, 1, 1)])
        calls = [r[0] for r in self.rows('SELECT s.value FROM hggc_api_calls AS a JOIN strings '
                                         'AS s ON s.id = a.name_id ORDER BY a.start_ns')]
        self.assertEqual(calls[0], 'cudaProfilerStart')
        self.assertEqual(calls[-1], 'cudaProfilerStop')
        self.assertEqual(calls.count('cudaLaunchKernel'), 5)
        info = self.info()
        self.assertEqual(info['Capture range'], 'hggc-profiler-api')
        self.assertEqual(info['Capture windows'], '1')

    def test_repeat_records_every_window(self):
        self.record('-c', 'hggc-profiler-api', '--capture-range-end=repeat')
        self.assertEqual(self.kernel_counts(), expected('inside_profiler', 'inside_second_profiler'))
        self.assertEqual(self.windows(), [(0, 'hggc-profiler-api', None, 1, 1),
                                          (1, 'hggc-profiler-api', None, 1, 1)])

    def test_repeat_1_is_stop(self):
        self.record('--capture-range=hggc-profiler-api', '--capture-range-end=repeat:1')
        self.assertEqual(self.kernel_counts(), expected('inside_profiler'))

    def test_none_never_closes(self):
        self.record('--capture-range=hggc-profiler-api', '--capture-range-end=none')
        self.assertEqual(self.kernel_counts(), expected(from_phase='inside_profiler'))
        self.assertEqual(self.windows(), [(0, 'hggc-profiler-api', None, 1, 0)])


class HgtxRange(CaptureCase):
    def test_push_pop_range_in_the_default_domain(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=step')
        self.assertEqual(self.kernel_counts(), {'inside_step': 4})
        self.assertEqual(self.hgtx_ranges(), ['step'])
        self.assertEqual(self.sleeps(), 1)
        self.assertEqual(self.windows(), [(0, 'hgtx', 'step', 1, 1)])

    def test_repeat_n(self):
        self.record('--capture-range=nvtx', '--hgtx-capture=step', '--capture-range-end=repeat:2')
        self.assertEqual(self.kernel_counts(), {'inside_step': 8})
        self.assertEqual(len(self.windows()), 2)

    def test_repeat_every_range_of_the_name(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=step', '--capture-range-end=repeat')
        self.assertEqual(self.kernel_counts(), {'inside_step': 12})
        self.assertEqual(self.hgtx_ranges(), ['step'] * 3)

    def test_named_domain_and_a_registered_string(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=step@mydomain')
        self.assertEqual(self.kernel_counts(), {'inside_domain_step': 6})

    def test_any_domain(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=step@*', '--capture-range-end=repeat')
        self.assertEqual(self.kernel_counts(), {'inside_step': 12, 'inside_domain_step': 6})

    def test_start_end_range(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=phase')
        self.assertEqual(self.kernel_counts(), {'inside_phase': 2})
        self.assertEqual(self.hgtx_ranges(), ['phase'])

    def test_a_range_that_never_comes_records_nothing_and_says_so(self):
        self.record('--capture-range=hgtx', '--hgtx-capture=no such range')
        self.assertEqual(self.kernel_counts(), {})
        self.assertEqual(self.sleeps(), 0)
        info = self.info()
        self.assertEqual(info['Capture windows'], '0')
        warnings = [v for k, v in info.items() if k.startswith('Warning')]
        self.assertTrue(any('no capture window opened' in w for w in warnings), warnings)


class RangesAcrossTheWindowEdge(AsysTestCase):
    """demo_pipeline's loader thread pushes ranges before a window opens and
    pops them inside it: those pops are left out with their pushes, so the
    report has no unmatched pop to warn about (issue 31.6)."""

    def test_no_unmatched_pops(self):
        from asys_e2e import STATS, prog
        self.profile([prog('demo_pipeline')], ['-t', 'hgtx', '-s', 'none', '-c', 'nvtx',
                                               '--hgtx-capture', 'epoch',
                                               '--capture-range-end', 'repeat'])
        r = self.run_cmd([STATS, '-r', 'hgtx_sum', '-f', 'csv', self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.decode(), '')
        self.assertIn(b',:epoch', r.stdout)
        self.assertEqual(self.db().execute(
            "SELECT COUNT(*) FROM hgtx_events AS e JOIN strings AS s ON s.id = e.text_id "
            "WHERE s.value = 'epoch'").fetchone()[0], 3)


class BadCaptureOptions(AsysTestCase):
    def refused(self, *options):
        r = self.run_cmd([ASYS, 'profile', *options, 'true'])
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        return lines[0]

    def test_each_mistake_is_one_line(self):
        self.assertIn('needs --hgtx-capture', self.refused('--capture-range=hgtx'))
        self.assertIn('only with --capture-range=hgtx', self.refused('--hgtx-capture=x'))
        self.assertIn('needs -t hggc',
                      self.refused('-t', 'hgtx', '--capture-range=cudaProfilerApi'))
        self.assertIn('needs -t hgtx',
                      self.refused('-t', 'hggc', '--capture-range=hgtx', '--hgtx-capture=x'))
        self.assertIn("not 'gpu'", self.refused('--capture-range=gpu'))
        self.assertIn("not 'repeat:0'", self.refused('--capture-range-end=repeat:0'))
        self.assertIn('RANGE@DOMAIN', self.refused('--capture-range=hgtx', '--hgtx-capture=x@'))


if __name__ == '__main__':
    unittest.main()
