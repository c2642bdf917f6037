"""A full per-thread buffer drops records and counts every one of them."""
import unittest

from asys_e2e import AsysTestCase, prog


class Drops(AsysTestCase):
    def totals(self, name):
        m = self.manifest(name)
        return m['totals']['records'], m['totals']['dropped_records']

    def test_exact_drop_count(self):
        # how many records a run makes besides the ranges (process, thread, strings)
        self.profile([prog('hgtx_loop'), '10'], options=['-t', 'nvtx', '-s', 'none'], name='small')
        records, dropped = self.totals('small')
        self.assertEqual(dropped, 0)
        launcher = [s for s in self.manifest('small')['segments'] if s['collector'] == 'launcher'][0]
        fixed = records - launcher['records'] - 20

        pairs = 200000  # 3.2 MB of records into one 512 KiB chunk
        self.profile([prog('hgtx_loop'), str(pairs)], name='full',
                     options=['-t', 'nvtx', '-s', 'none', '--chunk-size', '512K',
                              '--max-segment-size', '512K'])
        m = self.manifest('full')
        launcher = [s for s in m['segments'] if s['collector'] == 'launcher'][0]
        records, dropped = m['totals']['records'] - launcher['records'], m['totals']['dropped_records']
        self.assertGreater(dropped, 0)
        self.assertEqual(records + dropped, 2 * pairs + fixed)
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info', 'full')}
        self.assertEqual(int(info['Dropped records']), dropped)
        # by cause: all of them for want of room, none another way
        self.assertEqual(int(info['Dropped records (buffer full)']), dropped)
        self.assertNotIn('Dropped records (re-entry inside the tool)', info)
        self.assertNotIn('Dropped records (cause not recorded)', info)
        causes = [s['dropped_by_cause'] for s in m['segments'] if s['dropped_records']]
        self.assertEqual(sum(c['full'] for c in causes), dropped)

    def test_no_drops_at_default_settings(self):
        pairs = 1000000
        self.profile([prog('hgtx_loop'), str(pairs)], options=['-t', 'nvtx', '-s', 'none'],
                     name='big')
        records, dropped = self.totals('big')
        self.assertEqual(dropped, 0)
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum', 'big')}
        self.assertEqual(int(rows[':r']['Instances']), pairs)


class ThreadsWithoutASegment(AsysTestCase):
    """Out of file descriptors, a thread gets no segment: it and every event
    it makes are counted, in report_info and on stderr (issue 12.10)."""

    def test_every_lost_thread_and_event_is_counted(self):
        r = self.profile([prog('hgtx_nofile'), '4', '20000'], options=['-t', 'nvtx', '-s', 'none'])
        made = int(r.stdout.decode())
        self.assertEqual(made, 160000)
        err = r.stderr.decode()
        self.assertIn('warning: 4 threads could not record (Too many open files): their '
                      '160000 events are lost', err)
        info = {row['Property']: row['Value'] for row in self.stats_rows('report_info')}
        self.assertEqual(info['Threads that could not record'], '4 (160000 events lost)')
        m = self.manifest()
        self.assertEqual(m['totals']['lost_threads'], 4)
        self.assertEqual(m['totals']['lost_thread_records'], 160000)
        # the main thread's range, recorded before the limit, is there
        rows = {row['Range']: row for row in self.stats_rows('hgtx_sum')}
        self.assertEqual(rows[':main']['Instances'], '1')


if __name__ == '__main__':
    unittest.main(verbosity=2)
