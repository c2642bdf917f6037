"""PPU metrics (--ppu-metrics-device, -set, -list, -frequency,
--check-ppu-metrics-list) on simppu: the manual's help layouts, a busy device
and an idle one, one device of two, capacity PASS and FAIL, a busy counter
owner, the NVML GPM fallback, ppu_metrics_sum/trace, report_info, the
manifest, the timeline, and bad input."""
import os
import unittest

import pftrace
from asys_e2e import ASYS, BIN
from test_hggc import SIMPPU_RUN, HggcTestCase

EXPORT = os.path.join(BIN, 'asys-export')
ACTIVE = 'ce__cycles_active.avg.pct_of_peak_sustained_elapsed'
# 500 kernels of 1 ms over four streams of device 0: ~125 ms of 100 % activity
BUSY_ENV = {'SIMPPU_DEVICES': '2', 'SIMPPU_KERNEL_NS': '1000000'}
MANUAL_CHECK = ('ce__cycles_active.avg,kvd__transaction_hit_rate.pct,'
                'pu__we_average_warps_issue_stalled_compute_sfu_raw_per_issue_active.ratio')


class PpuMetricsTestCase(HggcTestCase):
    def asys(self, *args, env=None):
        return self.run_cmd([SIMPPU_RUN, ASYS, 'profile', *args],
                            env=dict(self.env, **(env or BUSY_ENV)))

    def sums(self, *extra):
        return {(int(r['Device']), r['Metric']): r
                for r in self.stats_rows('ppu_metrics_sum', 'rep', *extra)}


class Help(PpuMetricsTestCase):
    def test_devices_help_is_the_manuals_layout(self):
        r = self.asys('--ppu-metrics-device', 'help')
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.decode().splitlines(), [
            'Possible --ppu-metrics-device values are:',
            '    all: Select all supported PPUs',
            '    none: Disable PPU Metrics [Default]',
            '    device ID list: comma separated device ID list(eg.: 0,1)',
            '',
            'Available PPU metrics sampling devices are:',
            '    0: simppu PPU, PCI Bus ID: 00000000:10:00.0',
            '    1: simppu PPU, PCI Bus ID: 00000000:11:00.0'])

    def test_sets_help_is_the_manuals_table(self):
        r = self.asys('--ppu-metrics-set', 'help')
        self.assertEqual(r.returncode, 0)
        lines = [l.rstrip() for l in r.stdout.decode().splitlines()]
        rule = ' ' + '-' * 16 + ' ' + '-' * 40 + ' ' + '-' * 44
        self.assertEqual(lines[:6], [
            'Possible --ppu-metrics-set values are:', rule,
            '  Identifier       Description                              Enabled Metrics', rule,
            '  summary          Collect clock / memory / CU activity /   '
            'ce__cycles_elapsed.avg.per_second',
            '                   Bus throughput information.              '
            'ce__cycles_active.avg.pct_of_peak_sustained_elapsed'])
        self.assertIn('  throughput       Collect DRAM / PCIe / ICN link           '
                      'kvd__transaction_hit_rate.pct', lines)
        self.assertEqual(lines[-1], rule)

    def test_list_help_describes_each_metric(self):
        r = self.asys('--ppu-metrics-list', 'help')
        self.assertEqual(r.returncode, 0)
        text = r.stdout.decode()
        self.assertTrue(text.startswith('Possible --ppu-metrics-list values are:\n\n'))
        self.assertIn('kvd__transaction_hit_rate.pct\n    Display Name:\n'
                      '        kvd__transaction_hit_rate.pct\n    Unit: %\n    Description:\n'
                      '        (%) hit rate of KVD cacheable requests\n', text)
        self.assertIn('ce__cycles_active.avg\n    Display Name:\n        ce__cycles_active.avg\n'
                      '    Unit: cycle\n    Description:\n'
                      '        # of cycles active on CE across CEs\n', text)


class Capacity(PpuMetricsTestCase):
    def test_the_manuals_list_passes(self):
        r = self.asys('--check-ppu-metrics-list', MANUAL_CHECK)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stdout.decode(), 'Check sampling metrics list result: PASS.\n'
                         'Metrics list is suitable for PPU sampling capacity.\n')

    def test_too_many_counters_fail_naming_what_exceeds(self):
        # simppu: 20 counters per pass; summary (14) + the throughput set's hit rates (6) fit,
        # the two PCIe metrics after them do not
        names = ['ce__cycles_elapsed.avg.per_second', ACTIVE,
                 'gd__dispatch_count.avg.pct_of_peak_sustained_elapsed',
                 'ce__warps_active_accumulated.avg.pct_of_peak_sustained_elapsed',
                 'ce__warps_inactive_cu_active_accumulated.avg.pct_of_peak_sustained_elapsed',
                 'ce__warps_inactive_cu_idle_accumulated.avg.pct_of_peak_sustained_elapsed',
                 'cu__cycles_active.avg.pct_of_peak_sustained_elapsed',
                 'cu__ws_issue_active.avg.pct_of_peak_sustained_elapsed',
                 'cu__we_pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed',
                 'dram__exclude_hbm_bytes_read.sum.pct_of_peak_sustained_elapsed',
                 'dram__exclude_hbm_bytes_write.sum.pct_of_peak_sustained_elapsed',
                 'kvd__transaction_hit_rate.pct', 'ksd__transaction_hit_rate.pct',
                 'l2__transaction_hit_rate.pct',
                 'pcie__read_bytes.avg.pct_of_peak_sustained_elapsed',
                 'pcie__write_bytes.avg.pct_of_peak_sustained_elapsed']
        r = self.asys('--check-ppu-metrics-list', ','.join(names))
        self.assertEqual(r.returncode, 1, r.stderr.decode())
        out = r.stdout.decode().splitlines()
        self.assertEqual(out[0], 'Check sampling metrics list result: FAIL.')
        self.assertIn('needs 2 passes', out[1])
        self.assertEqual(out[2], 'The first 14 metrics fit; these exceed the capacity: '
                         'pcie__read_bytes.avg.pct_of_peak_sustained_elapsed, '
                         'pcie__write_bytes.avg.pct_of_peak_sustained_elapsed')

    def test_a_set_over_capacity_is_recorded_not_sampled(self):
        self.record('bulk', '40', '0', '1', env=BUSY_ENV,
                    options=['--ppu-metrics-device', '0', '--ppu-metrics-list',
                             'kvd__transaction_hit_rate.pct,ksd__transaction_hit_rate.pct,'
                             'l2__transaction_hit_rate.pct,pcie__read_bytes.sum.per_second'])
        (status, reason), = self.rows('SELECT status, reason FROM ppu_metric_devices')
        self.assertEqual(status, 'over capacity')
        self.assertIn('2 passes', reason)


class BusyAndIdle(PpuMetricsTestCase):
    def setUp(self):
        super().setUp()
        r = self.record('bulk', '500', '0', '1', env=BUSY_ENV,
                        options=['-t', 'hggc', '--ppu-metrics-device', 'all'])
        self.stderr = r.stderr.decode()

    def test_busy_device_shows_activity_idle_one_none(self):
        sums = self.sums()
        busy, idle = sums[(0, ACTIVE)], sums[(1, ACTIVE)]
        self.assertGreater(float(busy['Max']), 99.0)
        self.assertGreater(float(busy['Average']), 5.0)  # ~125 ms busy in a run of a few hundred
        self.assertEqual(float(idle['Max']), 0.0)
        self.assertGreater(float(sums[(0, 'cu__cycles_active.avg.pct_of_peak_sustained_elapsed')]
                                 ['Average']), float(idle['Average']))
        self.assertEqual(len({m for (d, m) in sums if d == 0}), 11)  # the summary set

    def test_samples_every_millisecond_and_report_info_says_the_rate(self):
        trace = [r for r in self.stats_rows('ppu_metrics_trace')
                 if r['Metric'] == ACTIVE and r['Device'] == '0']
        self.assertGreater(len(trace), 50)
        self.assertTrue(all(int(r['Duration (ns)']) == 1000000 for r in trace))
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertRegex(info['PPU metrics (device 0)'],
                         r'^CUPTI PM sampling, every 1 ms \(1000 Hz\); achieved 9\d\d\.\d|'
                         r'^CUPTI PM sampling, every 1 ms \(1000 Hz\); achieved 1000\.\d')

    def test_filter_time_narrows_the_window(self):
        all_samples = int(self.sums()[(0, ACTIVE)]['Samples'])
        # 30 ms from the first sample (sampling starts a while into a loaded run)
        start = min(int(r['Time (ns)']) for r in self.stats_rows('ppu_metrics_trace')
                    if r['Metric'] == ACTIVE and r['Device'] == '0')
        window = '%dns/%dns' % (start, start + 30000000)
        first = int(self.sums('--filter-time', window)[(0, ACTIVE)]['Samples'])
        self.assertLess(first, all_samples)
        self.assertGreater(first, 0)

    def test_manifest_and_timeline(self):
        devices = self.manifest()['ppu-metrics']['devices']
        self.assertEqual([(d['device'], d['status'], d['backend']) for d in devices],
                         [(0, 'sampled', 'CUPTI PM sampling'), (1, 'sampled', 'CUPTI PM sampling')])
        out = self.path('out.pftrace')
        r = self.run_cmd([EXPORT, '-q', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        names = {t.name for t in trace.tracks.values() if t.counter}
        self.assertIn(ACTIVE + ' (%)', names)
        self.assertIn('ce__cycles_elapsed.avg.per_second (cycle/second)', names)
        groups = {t.name for t in trace.tracks.values()}
        self.assertIn('PPU metrics: device 0 (simppu PPU)', groups)
        self.assertIn('PPU metrics: device 1 (simppu PPU)', groups)


class VisibleDevices(PpuMetricsTestCase):
    def test_metrics_follow_the_physical_device(self):
        # the program's device 0 is the machine's device 1: its kernels show there
        self.record('bulk', '500', '0', '1', env=dict(BUSY_ENV, CUDA_VISIBLE_DEVICES='1'),
                    options=['-t', 'hggc', '--ppu-metrics-device', 'all'])
        sums = self.sums()
        self.assertGreater(float(sums[(1, ACTIVE)]['Max']), 99.0)
        self.assertEqual(float(sums[(0, ACTIVE)]['Max']), 0.0)
        self.assertEqual(self.rows('SELECT device, physical_index FROM ppu_devices'), [(0, 1)])


class Choices(PpuMetricsTestCase):
    def test_one_device_of_two_with_the_set_and_list_merged(self):
        self.record('bulk', '40', '0', '1', env=BUSY_ENV,
                    options=['--ppu-metrics-device', '1', '--ppu-metrics-set', 'none',
                             '--ppu-metrics-list', ACTIVE + ',kvd__transaction_hit_rate.pct',
                             '--ppu-metrics-frequency', '200'])
        self.assertEqual(self.rows('SELECT device, interval_ns FROM ppu_metric_devices'),
                         [(1, 5000000)])
        self.assertEqual(self.rows('SELECT name FROM ppu_metrics ORDER BY slot'),
                         [(ACTIVE,), ('kvd__transaction_hit_rate.pct',)])

    def test_busy_counters_leave_the_run_going(self):
        r = self.record('bulk', '40', '0', '1', env=dict(BUSY_ENV, SIMPPU_PM_BUSY='1'),
                        options=['-t', 'hggc', '--ppu-metrics-device', '0'])
        self.assertIn("dcgmi profile --pause", r.stderr.decode())
        self.assertEqual(self.rows('SELECT status FROM ppu_metric_devices'), [('busy',)])
        self.assertGreater(self.count('ppu_kernels'), 0)  # the rest of the report is there
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertTrue(info['PPU metrics (device 0)'].startswith('busy ('))
        devices = self.manifest()['ppu-metrics']['devices']
        self.assertEqual(devices[0]['status'], 'busy')

    def test_gpm_where_pm_sampling_is_missing(self):
        r = self.record('bulk', '800', '0', '1', env=dict(BUSY_ENV, SIMPPU_PM_SAMPLING='0'),
                        options=['--ppu-metrics-device', '0'])
        self.assertIn('NVML GPM samples every 100 ms', r.stderr.decode())
        (backend, interval, reason), = self.rows(
            'SELECT backend, interval_ns, reason FROM ppu_metric_devices')
        self.assertEqual((backend, interval), ('NVML GPM', 100000000))
        self.assertIn('gd__dispatch_count', reason)  # no GPM counterpart
        names = [n for (n,) in self.rows('SELECT name FROM ppu_metrics ORDER BY slot')]
        self.assertIn(ACTIVE, names)
        self.assertNotIn('gd__dispatch_count.avg.pct_of_peak_sustained_elapsed', names)


class BadInput(PpuMetricsTestCase):
    def assertRefused(self, args, text):
        r = self.asys('-o', self.path('bad'), *args, 'true')
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(text, err)
        self.assertFalse(os.path.exists(self.path('bad.asys-rep')))
        self.assertNoSessionLeft()

    def test_each_bad_option_is_one_line(self):
        self.assertRefused(['--ppu-metrics-device', '0', '--ppu-metrics-list', 'nope'],
                           "unknown PPU metric 'nope'")
        self.assertRefused(['--ppu-metrics-device', '0', '--ppu-metrics-set', 'nope'],
                           "no metric set 'nope'")
        self.assertRefused(['--ppu-metrics-device', '9'], 'no device 9 (this machine has 2')
        self.assertRefused(['--ppu-metrics-device', '0', '--ppu-metrics-frequency', '0'],
                           'ppu-metrics-frequency')
        self.assertRefused(['--ppu-metrics-device', '0', '--ppu-metrics-frequency', '200000'],
                           'ppu-metrics-frequency')
        self.assertRefused(['--ppu-metrics-device', 'x'], 'not all, none or a list')


if __name__ == '__main__':
    unittest.main()
