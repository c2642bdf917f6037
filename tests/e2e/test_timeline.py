"""PPU timeline analysis on simppu: the stream percentage tree (hidden nodes,
[All Stream], percentages against the right parent, time filter), the device
summary and utilization series, HGTX projection and range kernel summary,
kernel grouping, API name mode."""
import os
import unittest

from asys_e2e import ASYS, BUILD, AsysTestCase, prog

WORKLOAD = prog('hggc_workload')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
MIB = 1 << 20
PRODUCE, CONSUME, SCALE, FILL = 50000, 30000, 10000, 5000
KERNEL_TIMES = 'produce=%d,consume=%d,scale=%d,fill=%d' % (PRODUCE, CONSUME, SCALE, FILL)
PINNED_COPY = 2000 + MIB / 20.0  # 1 MiB at simppu's 20 GB/s, plus its 2 us per copy
MEMSET = 1000 + MIB / 800.0


def close(value, expected, rel=0.01, abs_=200):
    return abs(value - expected) <= expected * rel + abs_


@unittest.skipUnless(os.path.exists(WORKLOAD), 'nvcc was not found when building')
class TimelineCase(AsysTestCase):
    def record(self, mode, env=None, trace='hggc,hgtx'):
        run_env = dict(self.env, SIMPPU_KERNEL_TIMES=KERNEL_TIMES, **(env or {}))
        r = self.run_cmd([SIMPPU_RUN, ASYS, 'profile', '-t', trace, '-s', 'none',
                          '-o', self.path('rep'), '--force-overwrite=true', WORKLOAD, mode], env=run_env)
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))

    def tree(self, *extra):
        """stream_pct as {label: row}; label is the node text without the percentage."""
        rows = self.stats_rows('stream_pct', 'rep', *extra)
        by_id = {r['Id']: r for r in rows}
        for r in rows:
            r['label'] = r['Node'].split('% ', 1)[1] if r['Percent (%)'] else r['Node']
            r['parent'] = by_id[r['Parent Id']]['label'] if r['Parent Id'] else None
        return rows

    def node(self, rows, label, parent=None):
        found = [r for r in rows if r['label'] == label and (parent is None or r['parent'] == parent)]
        self.assertEqual(len(found), 1, '%s under %s in %s' % (label, parent,
                                                           [(r['label'], r['parent']) for r in rows]))
        return found[0]

    def assertPercent(self, row, expected):
        self.assertAlmostEqual(float(row['Percent (%)']), expected, delta=0.3, msg=row['Node'])


class OneStream(TimelineCase):
    """Kernels, a copy and a memset on the legacy stream: context and stream hidden."""

    def setUp(self):
        super().setUp()
        self.record('one-stream')

    def test_hidden_nodes_and_percentages(self):
        rows = self.tree()
        kinds = [r['Kind'] for r in rows]
        self.assertNotIn('context', kinds)
        self.assertNotIn('stream', kinds)
        self.assertNotIn('all streams', kinds)
        device = rows[0]
        self.assertEqual(device['Kind'], 'device')
        self.assertEqual(device['Level'], '0')
        stream = 2 * PRODUCE + CONSUME + PINNED_COPY + MEMSET
        self.assertTrue(close(int(device['Time (ns)']), stream))
        kernels = self.node(rows, 'Kernels', device['label'])
        self.assertEqual(kernels['Level'], '1')
        self.assertPercent(kernels, 100 * (2 * PRODUCE + CONSUME) / stream)
        # a kernel group's % is against its stream, not against the Kernels row
        self.assertPercent(self.node(rows, 'produce', 'Kernels'), 100 * 2 * PRODUCE / stream)
        self.assertPercent(self.node(rows, 'consume', 'Kernels'), 100 * CONSUME / stream)
        self.assertPercent(self.node(rows, 'Memory'), 100 * (PINNED_COPY + MEMSET) / stream)
        self.assertPercent(self.node(rows, 'HtoD', 'Memory'), 100 * PINNED_COPY / stream)
        self.assertPercent(self.node(rows, 'Memset', 'Memory'), 100 * MEMSET / stream)
        # siblings by time, children right after their parent
        self.assertEqual([r['label'] for r in rows],
                         [device['label'], 'Kernels', 'produce', 'consume', 'Memory', 'HtoD',
                          'Memset'])

    def test_column_format_indents_the_tree(self):
        out = self.stats('-r', 'stream_pct', self.report()).stdout.decode()
        self.assertRegex(out, r'\n   \d+\.\d% Kernels ')
        self.assertRegex(out, r'\n     \d+\.\d% produce ')

    def test_time_filter_clips_and_recomputes(self):
        db = self.db()
        start = db.execute("SELECT value FROM session_info WHERE key = 'start_ns'").fetchone()[0]
        (first,) = db.execute('SELECT MIN(start_ns) FROM ppu_activities WHERE kind = 1').fetchone()
        cut = first - start + PRODUCE // 2  # halfway through the first produce
        rows = self.tree('--filter-time', '%d/' % cut)
        stream = PRODUCE / 2 + PRODUCE + CONSUME + PINNED_COPY + MEMSET
        produce = self.node(rows, 'produce', 'Kernels')
        self.assertTrue(close(int(produce['Time (ns)']), 1.5 * PRODUCE), produce)
        self.assertPercent(produce, 100 * 1.5 * PRODUCE / stream)
        self.assertPercent(self.node(rows, 'Memory'), 100 * (PINNED_COPY + MEMSET) / stream)
        # a window holding only the copy: kernels are gone, Memory is everything
        (copy_start, copy_end) = db.execute(
            'SELECT start_ns, end_ns FROM ppu_activities WHERE kind = 2').fetchone()
        rows = self.tree('--filter-time', '%d/%d' % (copy_start - start, copy_end - start))
        self.assertEqual([r['label'] for r in rows][1:], ['Memory', 'HtoD'])
        self.assertPercent(rows[1], 100.0)

    def test_device_summary_and_utilization(self):
        (row,) = self.stats_rows('ppu_device_sum')
        self.assertEqual(row['Device'], '0')
        self.assertEqual(row['Kernels'], '3')
        self.assertTrue(close(int(row['Kernel Busy (ns)']), 2 * PRODUCE + CONSUME))
        self.assertTrue(close(int(row['HtoD (ns)']), PINNED_COPY))
        self.assertEqual(row['HtoD (ns)'], row['Pinned (ns)'])
        self.assertEqual(row['Pageable (ns)'], '0')
        self.assertTrue(close(int(row['Memset (ns)']), MEMSET))
        series = self.stats_rows('ppu_util_trace', 'rep', '--buckets', '10')
        self.assertEqual(len(series), 10)
        busy = 0
        for r in series:
            width = int(r['End (ns)']) - int(r['Start (ns)'])
            self.assertTrue(0 <= float(r['Kernel (%)']) <= 100.0001)
            busy += float(r['Kernel (%)']) * width / 100  # csv percentages are exact
        self.assertLessEqual(abs(busy - int(row['Kernel Busy (ns)'])), 50, busy)
        r = self.stats('-r', 'ppu_util_trace', '--buckets', '0', self.report(), expect_rc=2)
        self.assertIn('--buckets takes 1 to 100000', r.stderr.decode())


class ThreeStreams(TimelineCase):
    def test_all_stream_row_and_stream_percentages(self):
        self.record('streams3')
        rows = self.tree()
        device = rows[0]['label']
        self.assertNotIn('context', [r['Kind'] for r in rows])  # one context
        all_streams = self.node(rows, '[All Stream]', device)
        self.assertPercent(all_streams, 100.0)
        total = 2 * PRODUCE + CONSUME + PINNED_COPY
        streams = [r for r in rows if r['Kind'] == 'stream']
        self.assertEqual(len(streams), 3)
        self.assertEqual([r['parent'] for r in streams], [device] * 3)
        expected = sorted([2 * PRODUCE, CONSUME, PINNED_COPY], reverse=True)
        for r, e in zip(streams, expected):  # sorted by time
            self.assertPercent(r, 100 * e / total)
        # under a visible stream, its rows are against that stream
        kernels = [r for r in rows if r['label'] == 'Kernels']
        for r in kernels:
            self.assertPercent(r, 100.0)
            self.assertEqual(int(r['Level']), 2)


class TwoDevices(TimelineCase):
    def test_devices_show_their_rows_directly(self):
        self.record('devices', env={'SIMPPU_DEVICES': '2'}, trace='hggc')
        rows = self.tree()
        devices = [r for r in rows if r['Kind'] == 'device']
        self.assertEqual(len(devices), 2)
        for d in devices:
            children = [r for r in rows if r['parent'] == d['label']]
            self.assertTrue(children)
            self.assertTrue({r['Kind'] for r in children} <= {'kernels', 'memory'}, children)
        summary = {r['Device']: r for r in self.stats_rows('ppu_device_sum')}
        self.assertEqual(set(summary), {'0', '1'})
        self.assertNotEqual(summary['0']['PtoP (ns)'], '0')  # the peer copy ran on device 0


class Ranges(TimelineCase):
    """outer { produce@s0; inner { consume@s0, consume@s1 } }; capture { scale, memset }@s2
    launched twice after every range ended."""

    def setUp(self):
        super().setUp()
        self.record('ranges')

    def projections(self):
        rows = self.stats_rows('hgtx_gpu_proj_trace')
        out = {}
        for r in rows:
            out.setdefault(r['Range'], []).append(r)
        return out

    def test_projection_per_stream_and_through_graph_nodes(self):
        p = self.projections()
        self.assertEqual(sorted(p), [':capture', ':inner', ':outer'])
        outer = sorted(p[':outer'], key=lambda r: -int(r['NumGPUOps']))
        self.assertEqual([int(r['NumGPUOps']) for r in outer], [2, 1])  # s0: produce+consume
        db = self.db()
        start = db.execute("SELECT value FROM session_info WHERE key = 'start_ns'").fetchone()[0]
        for r in outer:  # [first start, last end] of the stream's work
            lo, hi = db.execute('SELECT MIN(start_ns), MAX(end_ns) FROM ppu_activities '
                                'WHERE stream = ? AND graph_id IS NULL', (int(r['Strm']),)
                                ).fetchone()
            self.assertEqual(int(r['Projected Start (ns)']), lo - start)
            self.assertEqual(int(r['Projected Duration (ns)']), hi - lo)
        self.assertTrue(close(int(outer[1]['Projected Duration (ns)']), CONSUME))
        self.assertEqual(outer[0]['Lvl'], '0')
        self.assertEqual(outer[0]['NumChild'], '1')
        inner = p[':inner']
        self.assertEqual(sorted(int(r['NumGPUOps']) for r in inner), [1, 1])  # an op in every range
        self.assertEqual({r['Lvl'] for r in inner}, {'1'})
        self.assertEqual({r['ParentId'] for r in inner}, {outer[0]['RangeId']})
        # the graph captured in :capture ran later, outside it: projected by its nodes
        (capture,) = p[':capture']
        self.assertEqual(int(capture['NumGPUOps']), 4)  # 2 launches x (scale + memset)
        self.assertGreater(int(capture['Projected Start (ns)']),
                           int(capture['Orig Start (ns)']) + int(capture['Orig Duration (ns)']))
        summary = {r['Range']: r for r in self.stats_rows('hgtx_gpu_proj_sum')}
        self.assertEqual(summary[':outer']['Total GPU Ops'], '3')
        self.assertEqual(summary[':inner']['Range Instances'], '1')

    def test_range_kernel_summary(self):
        rows = {(r['Range'], r['Kernel Name']): r for r in self.stats_rows('nvtx_kern_sum')}
        self.assertEqual(rows[(':outer', 'produce(float*, int)')]['Kern Inst'], '1')
        self.assertEqual(rows[(':outer', 'consume(float const*, float*, int)')]['Kern Inst'], '2')
        self.assertEqual(rows[(':inner', 'consume(float const*, float*, int)')]['Kern Inst'], '2')
        self.assertNotIn(':capture', [k[0] for k in rows])  # its kernels were launched later

    def test_group_kernels_by_innermost_range(self):
        groups = {r['Name']: int(r['Instances'])
                  for r in self.stats_rows('hggc_kern_sum', 'rep', '--group-by', 'hgtx')}
        self.assertEqual({r['Name']: int(r['Instances']) for r in
                          self.stats_rows('hggc_kern_sum', 'rep', '--group-kernels', 'hgtx')},
                         groups)  # asys-export's old spelling is the same option
        self.assertEqual(groups, {':outer': 1, ':inner': 2, '[no HGTX range]': 2})
        rows = self.tree('--group-by', 'hgtx')
        self.assertIn(':inner', [r['label'] for r in rows if r['Kind'] == 'kernel group'])

    def test_import_sums_give_the_tree_of_the_activities(self):
        # unfiltered, the tree reads ppu_activity_groups; without them it sums
        # ppu_activities itself: both ways must give the same tree, by either grouping
        modes = (('--group-by', 'base'), ('--group-by', 'hgtx'))
        from_sums = [self.stats_rows('stream_pct', 'rep', *m) for m in modes]
        db = self.db()
        # the importer's hashed sums are the GROUP BY they stand for
        reference = db.execute(
            "SELECT p.kind, p.pid, p.physical, p.context, p.stream, p.graph_id, p.graph_exec_id, "
            "p.copy_kind, p.base_name_id, CASE WHEN p.kind = 1 THEN "
            "COALESCE('h' || e.domain_id || ':' || COALESCE(e.text_id, ''), 'h') END AS g, "
            "MIN(p.hgtx_range_id), MIN(p.start_ns), MAX(p.end_ns), SUM(p.end_ns - p.start_ns), "
            "COUNT(*) FROM ppu_activities AS p LEFT JOIN hgtx_events AS e "
            "ON e.id = p.hgtx_range_id GROUP BY p.kind, p.pid, p.physical, p.context, p.stream, "
            "p.graph_id, p.graph_exec_id, p.copy_kind, p.base_name_id, g").fetchall()
        groups = db.execute('SELECT * FROM ppu_activity_groups').fetchall()
        self.assertEqual(sorted(groups, key=repr), sorted(reference, key=repr))
        self.assertGreater(len(groups), 3)
        self.assertIn(':', ''.join(g[9] or '' for g in groups))  # kernels in named ranges
        db.execute('DELETE FROM ppu_activity_groups')
        db.commit()
        self.assertEqual([self.stats_rows('stream_pct', 'rep', *m) for m in modes], from_sums)

    def test_graph_rows_under_the_stream(self):
        rows = self.tree()
        graph = [r for r in rows if r['Kind'] == 'graph']
        self.assertEqual(len(graph), 1)
        self.assertEqual(graph[0]['parent'], 'Graph Group')
        execs = [r for r in rows if r['Kind'] == 'graph exec']
        self.assertEqual(len(execs), 1)
        self.assertEqual(execs[0]['parent'], graph[0]['label'])
        self.assertEqual(execs[0]['Time (ns)'], graph[0]['Time (ns)'])

    def test_host_device_correlation_and_api_name_mode(self):
        db = self.db()
        (unmatched,) = db.execute('SELECT COUNT(*) FROM ppu_activities WHERE api_id IS NULL'
                                  ).fetchone()
        self.assertEqual(unmatched, 0)
        (pairs,) = db.execute('SELECT COUNT(*) FROM hggc_api_activities').fetchone()
        (activities,) = db.execute('SELECT COUNT(*) FROM ppu_activities').fetchone()
        self.assertEqual(pairs, activities)
        names = [r['Name'] for r in self.stats_rows('hggc_api_trace', 'rep',
                                                    '--api-name-mode', 'kernel')]
        self.assertIn('produce(float*, int)', names)
        self.assertIn('cudaGraphLaunch', names)  # a graph's work: the call keeps its name
        self.assertEqual(names.count('cudaLaunchKernel'), 1)  # the captured one launched nothing
        host = [r['Name'] for r in self.stats_rows('hggc_api_trace')]
        self.assertIn('cudaLaunchKernel', host)


class KernelNames(TimelineCase):
    def test_base_names_merge_overloads_not_templates(self):
        self.record('names', trace='hggc')
        demangled = {r['Name'] for r in self.stats_rows('hggc_kern_sum')}
        self.assertEqual(demangled, {'fill(float*, int)', 'fill(int*, int)',
                                     'void ops::scale<float>(float*, float, int)',
                                     'void ops::scale<int>(int*, int, int)'})
        base = {r['Name']: int(r['Instances']) for r in self.stats_rows('hggc_kern_sum:base')}
        self.assertEqual(base, {'fill': 2, 'ops::scale<float>': 1, 'ops::scale<int>': 1})
        groups = [r['label'] for r in self.tree() if r['Kind'] == 'kernel group']
        self.assertEqual(sorted(groups), ['fill', 'ops::scale<float>', 'ops::scale<int>'])


if __name__ == '__main__':
    if not os.path.exists(WORKLOAD):
        print('SKIPPED: nvcc was not found when building; the timeline tests need the CUDA '
              'workload tests/e2e/progs/hggc_workload.cu')
        raise SystemExit(77)
    unittest.main(verbosity=2)
