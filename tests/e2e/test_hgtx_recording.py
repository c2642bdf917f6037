"""HGTX (NVTX) recording: nesting, threads, start/end across threads, domains,
registered strings, marks, colors, categories, payloads."""
import unittest

from asys_e2e import AsysTestCase, prog

MS = 1000000


class NestedRangesOnThreads(AsysTestCase):
    THREADS, ITERATIONS, SLEEP_US = 4, 25, 2000

    def setUp(self):
        super().setUp()
        self.result = self.profile([prog('hgtx_threads'), str(self.THREADS), str(self.ITERATIONS),
                                    str(self.SLEEP_US)], options=['-t', 'nvtx'])

    def test_levels_returned_to_the_program(self):
        # the program exits 3 if a push or pop returned a wrong level
        self.assertIn(b'done 4 threads', self.result.stdout)

    def test_hgtx_sum_counts_exactly(self):
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(set(rows), {':outer', ':inner', ':main'})
        n = self.THREADS * self.ITERATIONS
        self.assertEqual(int(rows[':outer']['Instances']), n)
        self.assertEqual(int(rows[':inner']['Instances']), n)
        self.assertEqual(int(rows[':main']['Instances']), 1)
        for r in rows.values():
            self.assertEqual(r['Style'], 'PushPop')
        self.assertAlmostEqual(sum(float(r['Time (%)']) for r in rows.values()), 100.0, places=9)

    def test_durations_within_bounds(self):
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        sleep_ns = self.SLEEP_US * 1000
        inner, outer = rows[':inner'], rows[':outer']
        self.assertGreaterEqual(int(inner['Min (ns)']), sleep_ns)
        self.assertBetween(float(inner['Avg (ns)']), sleep_ns, sleep_ns + 20 * MS, 'inner avg')
        self.assertGreaterEqual(float(outer['Avg (ns)']), float(inner['Avg (ns)']))
        self.assertGreaterEqual(int(rows[':main']['Total Time (ns)']), self.ITERATIONS * sleep_ns)

    def test_nesting_levels_and_parents(self):
        con = self.db()
        levels = dict(con.execute(
            "SELECT s.value, MIN(e.nesting_level) || '-' || MAX(e.nesting_level) FROM hgtx_events e "
            "JOIN strings s ON s.id = e.text_id GROUP BY s.value"))
        self.assertEqual(levels, {'main': '0-0', 'outer': '0-0', 'inner': '1-1'})
        orphans = con.execute(
            "SELECT COUNT(*) FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "JOIN hgtx_events p ON p.id = e.parent_id JOIN strings ps ON ps.id = p.text_id "
            "WHERE s.value = 'inner' AND (ps.value != 'outer' OR p.tid != e.tid "
            "OR e.start_ns < p.start_ns OR e.end_ns > p.end_ns)").fetchone()[0]
        self.assertEqual(orphans, 0)
        self.assertEqual(con.execute("SELECT COUNT(*) FROM hgtx_events WHERE end_ns IS NULL").fetchone()[0], 0)
        # the extra pop of the program is not an event
        self.assertEqual(con.execute(
            "SELECT value FROM session_info WHERE key = 'hgtx_unmatched_pops'").fetchone()[0], 0)

    def test_thread_names(self):
        con = self.db()
        names = sorted(r[0] for r in con.execute(
            "SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id"))
        self.assertEqual(names, ['hgtx-named-0', 'hgtx_threads', 'worker-1', 'worker-2', 'worker-3'])
        per_thread = con.execute(
            "SELECT COUNT(DISTINCT tid) FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "WHERE s.value = 'inner'").fetchone()[0]
        self.assertEqual(per_thread, self.THREADS)

    def test_pushpop_trace(self):
        rows = self.stats_rows('hgtx_pushpop_trace')
        self.assertEqual(len(rows), 2 * self.THREADS * self.ITERATIONS + 1)
        starts = [int(r['Start (ns)']) for r in rows]
        self.assertEqual(starts, sorted(starts))
        main = [r for r in rows if r['Name'] == 'main'][0]
        self.assertEqual(int(main['NumChild']), 0)  # children are on other threads
        outer = [r for r in rows if r['Name'] == 'outer'][0]
        self.assertEqual(int(outer['NumChild']), 1)
        self.assertEqual(int(outer['DurChild (ns)']) + int(outer['DurNonChild (ns)']),
                         int(outer['Duration (ns)']))

    def test_report_info(self):
        info = {r['Property']: r['Value'] for r in self.stats_rows('report_info')}
        self.assertEqual(info['Program ended'], 'exit code 0')
        self.assertEqual(info['Threads'], str(self.THREADS + 1))
        # python and cpu-sampling: on by default (the manual's --python-sampling and -s)
        self.assertEqual(info['Collectors enabled'], 'hgtx,cpu-sampling,python')
        self.assertEqual(info['Dropped records'], '0')
        self.assertIn('hgtx_threads', info['Command'])


class StartEndAcrossThreads(AsysTestCase):
    def test_ranges_end_on_other_threads(self):
        self.profile([prog('hgtx_startend')], options=['-t', 'hgtx'])
        rows = self.stats_rows('hgtx_startend_trace')
        self.assertEqual(len(rows), 6)
        handoff = [r for r in rows if r['Name'] == 'handoff'][0]
        self.assertNotEqual(handoff['TID'], handoff['End TID'])
        self.assertGreaterEqual(int(handoff['Duration (ns)']), 20 * MS)
        reverse = [r for r in rows if r['Name'] == 'reverse']
        self.assertEqual(len(reverse), 5)
        for r in reverse:
            self.assertNotEqual(r['TID'], r['End TID'])
            self.assertEqual(r['End TID'], handoff['TID'])
            self.assertGreaterEqual(int(r['Duration (ns)']), 5 * MS)
        summary = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(summary[':reverse']['Style'], 'StartEnd')
        self.assertEqual(int(summary[':reverse']['Instances']), 5)


class Attributes(AsysTestCase):
    def setUp(self):
        super().setUp()
        self.profile([prog('hgtx_features')], options=['-t', 'hgtx'])

    def test_domains_and_registered_strings(self):
        rows = {r['Range']: r for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(int(rows['net:send']['Instances']), 3)
        self.assertEqual(int(rows[':colored']['Instances']), 1)
        self.assertEqual(rows['io:io-op']['Style'], 'StartEnd')
        self.assertIn(':wide-\u00e9t\u00e9', rows)
        self.assertIn(':quote" comma, tab\t newline\n backslash\\', rows)

    def test_colors_categories_payloads_marks(self):
        rows = self.stats_rows('hgtx_trace')
        by_name = {r['Name']: r for r in rows}
        colored = by_name['colored']
        self.assertEqual(colored['Color'], '#FF112233')
        self.assertEqual(colored['Category'], 'seven')
        self.assertEqual(colored['Payload'], '-42')
        sends = [r for r in rows if r['Name'] == 'send']
        self.assertEqual([r['Payload'] for r in sends], ['0.0', '2.5', '5.0'])
        self.assertEqual({r['Category'] for r in sends}, {'net-nine'})
        self.assertEqual({r['Domain'] for r in sends}, {'net'})
        self.assertEqual(by_name['io-op']['Payload'], '1.5')
        self.assertEqual(by_name['plain-mark']['Style'], 'Mark')
        self.assertEqual(by_name['plain-mark']['Duration (ns)'], '0')
        red = by_name['red-mark']
        self.assertEqual((red['Style'], red['Color'], red['Payload'], red['Domain']),
                         ('Mark', '#FFFF0000', '77', 'net'))

    def test_payloads_exactly_as_recorded(self):
        # a uint64 above INT64_MAX stays exact (not 18446744073709551616.0), a
        # double keeps its digits (not 0.1), in csv and json alike
        by_name = {r['Name']: r for r in self.stats_rows('hgtx_trace')}
        self.assertEqual(by_name['u64-max']['Payload'], '18446744073709551615')
        self.assertEqual(by_name['eighth']['Payload'], '0.125')
        import json
        r = self.stats('-q', '--report', 'hgtx_trace', '--format', 'json', self.report())
        rows = {d['Name']: d for d in json.loads(r.stdout)}
        self.assertEqual(rows['u64-max']['Payload'], 18446744073709551615)
        self.assertIsInstance(rows['u64-max']['Payload'], int)
        self.assertEqual(rows['eighth']['Payload'], 0.125)
        self.assertEqual(rows['colored']['Payload'], -42)
        self.assertEqual(rows['red-mark']['Payload'], 77)
        # the column format shows it too
        out = self.stats('-q', '--report', 'hgtx_trace', self.report()).stdout.decode()
        self.assertIn('18446744073709551615', out)

    def test_json_output_keeps_hostile_text(self):
        import json
        r = self.stats('-q', '--report', 'hgtx_sum', '--format', 'json', self.report())
        data = json.loads(r.stdout)
        self.assertIn(':quote" comma, tab\t newline\n backslash\\', [d['Range'] for d in data])

    def test_domain_destroy_recorded(self):
        con = self.db()
        destroyed = con.execute(
            "SELECT s.value FROM hgtx_domains d JOIN strings s ON s.id = d.name_id "
            "WHERE d.destroyed_ns IS NOT NULL").fetchall()
        self.assertEqual(destroyed, [('io',)])
        self.assertEqual(con.execute("SELECT COUNT(*) FROM hgtx_domains").fetchone()[0], 3)


if __name__ == '__main__':
    unittest.main(verbosity=2)
