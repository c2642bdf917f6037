"""Device and pinned memory (--hggc-memory-usage) on simppu: hggc_workload
memory's known call sites, sizes and counts, a failed allocation, frees on
another thread, memory left allocated at exit, a block freed after main
returned (not collected, as the manual says); devmem_sum, pinned_sum,
devmem_trace, report_info, the device/pinned call trees and flame outputs."""
import os

import pftrace
from asys_e2e import BIN
from test_hggc import HggcTestCase

EXPORT = os.path.join(BIN, 'asys-export')
KIB, MIB = 1 << 10, 1 << 20


class DeviceMemory(HggcTestCase):
    def setUp(self):
        super().setUp()
        self.record('memory', options=['-t', 'hggc', '--hggc-memory-usage', 'device,pinned'])

    def by_site(self, report):
        return {(r['API'], r['Call Site']): r for r in self.stats_rows(report)}

    def test_device_sums_per_call_site(self):
        rows = self.by_site('devmem_sum')
        small = rows[('cudaMalloc', 'site_small()')]
        self.assertEqual((int(small['Allocations']), int(small['Bytes'])), (10, 640 * KIB))
        self.assertEqual(int(small['Live Bytes']), 0)  # half freed by another thread
        large = rows[('cudaMalloc', 'site_large()')]
        self.assertEqual((int(large['Allocations']), int(large['Bytes'])), (4, 16 * MIB))
        self.assertEqual(int(large['Live Bytes']), 4 * MIB)
        self.assertEqual(int(large['Largest']), 4 * MIB)
        asynchronous = rows[('cudaMallocAsync', 'site_async(CUstream_st*)')]
        self.assertEqual(int(asynchronous['Allocations']), 3)
        self.assertIn('main', large['Call Stack'])

    def test_failed_allocation_is_kept_and_marked(self):
        failed = self.by_site('devmem_sum')[('cudaMalloc', 'site_too_big()')]
        self.assertEqual(int(failed['Failures']), 1)
        self.assertEqual(int(failed['Failed Bytes']), 1 << 50)
        self.assertEqual(int(failed['Allocations']), 0)
        trace = [r for r in self.stats_rows('devmem_trace') if r['Failed'] == '1']
        self.assertEqual(len(trace), 1)
        self.assertEqual(trace[0]['Error'], '2')  # cudaErrorMemoryAllocation
        self.assertEqual(trace[0]['Address'], '')

    def test_timeline(self):
        out = self.path('out.pftrace')
        r = self.run_cmd([EXPORT, '-q', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        failed = [e for e in trace.events_on(lambda t: t.name == 'Failed allocations')
                  if e.type == pftrace.INSTANT]
        self.assertEqual([e.name for e in failed], ['cudaMalloc failed (%d B)' % (1 << 50)])
        names = {t.name for t in trace.tracks.values() if t.counter}
        self.assertIn('Pinned memory (bytes)', names)
        # the device ran no kernels here: its memory counter still has a device
        # to hang under (issue 31.10), with every allocation and free on it
        device = [t for t in trace.tracks.values() if t.counter and
                  t.name.startswith('Device memory, pid ')]
        self.assertEqual(len(device), 1, names)
        self.assertTrue(trace.path(device[0].uuid)[0].startswith('PPU 0'), trace.path(device[0].uuid))
        values = [e for e in trace.events if e.track == device[0].uuid]
        db = self.db()
        changes = db.execute('SELECT COUNT(*) FROM ppu_memory WHERE operation IN (1, 2) '
                             'AND memory_kind = 3').fetchone()[0]
        self.assertEqual(len(values), changes)

    def test_pinned_and_report_info(self):
        rows = self.by_site('pinned_sum')
        pinned = rows[('cudaMallocHost', 'pinned_site()')]
        self.assertEqual((int(pinned['Allocations']), int(pinned['Live Bytes'])),
                         (2, 256 * KIB))
        host_alloc = [r for (api, _), r in rows.items() if api == 'cudaHostAlloc']
        self.assertEqual([int(r['Bytes']) for r in host_alloc], [128 * KIB])
        self.assertIn('main', host_alloc[0]['Call Stack'])
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        # site_teardown's block is freed after main returned: not collected (the manual)
        self.assertEqual(int(info['Device memory still allocated at the end (bytes)']), 6 * MIB)
        self.assertEqual(info['Device and pinned frees after main returned (runtime teardown, '
                              'not collected)'], '1 (%d bytes)' % (2 * MIB))
        teardown = self.by_site('devmem_sum')[('cudaMalloc', 'site_teardown()')]
        self.assertEqual(int(teardown['Live Bytes']), 2 * MIB)
        self.assertEqual(int(info['Pinned memory still allocated at the end (bytes)']),
                         256 * KIB)
        self.assertEqual(info['Allocation calls that failed'], '1')

    def test_call_trees_and_flames(self):
        flat = {r['Function']: r for r in self.stats_rows('stack_flat:device')}
        self.assertEqual(int(flat['site_large()']['Total']), 16 * MIB)
        out = self.path('device.folded')
        r = self.run_cmd([EXPORT, '-q', '-t', 'folded', '--stacks', 'pinned', '-o', out,
                          self.report()])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertTrue(any(';pinned_site();' in l and l.endswith(' %d' % (512 * KIB))
                            for l in lines), lines)


class Options(HggcTestCase):
    def test_true_means_device_and_pinned_with_host_sampling(self):
        self.record('memory', options=['-t', 'hggc', '--hggc-memory-usage', 'true'])
        rows = {r['API']: r for r in self.stats_rows('pinned_sum')}
        self.assertEqual(rows['cudaMallocHost']['Call Site'], '[no stack]')  # pinned: off
        self.record('memory', options=['-t', 'hggc', '--hggc-memory-usage', 'true',
                                       '--host-memory-sampling', 'true'], name='both')
        rows = {r['API']: r for r in self.stats_rows('pinned_sum', 'both')}
        self.assertEqual(rows['cudaMallocHost']['Call Site'], 'pinned_site()')

    def test_bad_value(self):
        r = self.profile(['/bin/true'], ['--hggc-memory-usage', 'gpu'], expect_rc=2)
        self.assertIn('--hggc-memory-usage takes true, false, device, pinned', r.stderr.decode())


if __name__ == '__main__':
    import unittest
    unittest.main(verbosity=2)
