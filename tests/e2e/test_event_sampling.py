"""Event sampling (--event-sample with --cpu-core-events, --os-events and
their sets): the help outputs, bad indexes, counts of OS events a program is
known to cause (page faults, context switches) in the process tree and
system-wide, and CPU core events that a virtual machine cannot count."""
import os

from asys_e2e import AsysTestCase, prog

WORKLOAD = prog('event_workload')


class Help(AsysTestCase):
    def test_lists_and_sets(self):
        for option, words in (('--cpu-core-events=help', ['Index', '1', 'cycles']),
                              ('--os-events=help', ['page-faults', 'context-switches']),
                              ('--cpu-core-events-set=help', ['Identifier', 'cache', 'ipc']),
                              ('--os-events-set=help', ['fault', 'sched', '3 page-faults'])):
            r = self.profile([], [option], expect_rc=0)
            out = r.stdout.decode()
            for word in words:
                self.assertIn(word, out, option)
            self.assertFalse(os.path.exists(self.report()))

    def test_bad_values(self):
        for option, what in (('--os-events=42', "'42' is not an event index"),
                             ('--cpu-core-events=1,x', 'is not an event index'),
                             ('--os-events-set=nothing', "no event set 'nothing'"),
                             ('--event-sample-frequency=0', 'event-sample-frequency')):
            r = self.profile(['/bin/true'], ['--event-sample', 'process-tree', option],
                             expect_rc=2)
            err = r.stderr.decode().strip().splitlines()
            self.assertEqual(len(err), 1, err)
            self.assertIn(what, err[0])


class Counts(AsysTestCase):
    def counts(self):
        return {r['Event']: r for r in self.stats_rows('event_sample_sum')}

    def test_process_tree(self):
        r = self.profile([WORKLOAD, 'child'],
                         ['-t', 'none', '-s', 'none', '--event-sample', 'process-tree',
                          '--os-events-set', 'fault', '--os-events', '6', '--cpu-core-events',
                          '1'])
        rows = self.counts()
        # 4096 pages touched, plus the loader's and (under ASan) the shadow memory's: an
        # ASan CI run counted 11130
        self.assertBetween(int(rows['page-faults']['Count']), 4096, 4096 + 12000, 'page faults')
        self.assertEqual(rows['page-faults']['Count'], rows['minor-faults']['Count'])
        self.assertGreaterEqual(int(rows['context-switches']['Count']), 50)
        cycles = rows['cycles']
        if cycles['Status'] == 'counted':  # a machine with a PMU
            self.assertGreater(int(cycles['Count']), 0)
        else:
            self.assertEqual(cycles['Status'], 'not on this machine')
            self.assertIn('CPU core event 1 (cycles) is not counted', r.stderr.decode())
        db = self.db()
        cpus = db.execute("SELECT COUNT(DISTINCT cpu) FROM event_samples").fetchone()[0]
        self.assertEqual(cpus, os.cpu_count())

    def test_default_sets_and_system_wide(self):
        self.profile([WORKLOAD], ['-t', 'none', '--event-sample', 'system-wide'])
        rows = self.counts()
        for name in ('page-faults', 'minor-faults', 'major-faults', 'context-switches',
                     'cpu-migrations', 'sched-wakeups'):
            self.assertIn(name, rows)
        self.assertGreaterEqual(int(rows['page-faults']['Count']), 4096)

    def test_none_records_nothing(self):
        self.profile([WORKLOAD], ['-t', 'none'])
        r = self.stats('-q', '-r', 'event_sample_sum', self.report(), expect_rc=1)
        self.assertIn('no event samples', r.stderr.decode())


if __name__ == '__main__':
    import unittest
    unittest.main(verbosity=2)
