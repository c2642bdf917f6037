"""Python function tracing (--python-functions-trace, --python-functions-threshold):
one spec per JSON form of the manual (8.2) against a package written for the test,
exact call counts per function and domain, the threshold, __main__ refused, bad
specs refused before the program runs."""
import json
import os
import sys
import textwrap
import unittest

from asys_e2e import AsysTestCase

PKG_INIT = '''
import time


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def hot(i):
    spin(10000000 if i % 10 == 0 else 0)


class Worker:
    def step(self):
        spin(10000000)
'''

PKG_SUB = '''
import time

from pkg import spin


def leaf():
    spin(10000000)


def other():
    spin(10000000)
    time.sleep(0.0005)  # OS runtime records inside a traced call
'''

MAIN = '''
import sys
import threading
import time

sys.path.insert(0, %r)
time.sleep(0.2)  # tracing starts within a few ms of the interpreter's start
import pkg
import pkg.sub

for i in range(100):
    pkg.hot(i)
w = pkg.Worker()
for _ in range(3):
    w.step()
for _ in range(5):
    pkg.sub.leaf()
for _ in range(4):
    pkg.sub.other()
t = threading.Thread(target=lambda: [pkg.sub.leaf() for _ in range(6)])
t.start()
t.join()
print('done')
'''

PH = 'Python Hgtx'


class TraceCase(AsysTestCase):
    """The long calls spin 10 ms, the short ones return at once: with a 4 ms
    threshold and no sampling (whose samples run inside the calls), a short
    call is not recorded unless the machine stops it for 4 ms (a loaded CI
    machine under ASan did stop one for 1 ms)."""
    SPEC = None  # a JSON document (written to spec.json) or 'module:NAME'
    OPTIONS = ('--python-functions-threshold', '4000000', '--python-sampling', 'false')

    def setUp(self):
        super().setUp()
        os.makedirs(self.path('pkg'))
        with open(self.path('pkg/__init__.py'), 'w') as f:
            f.write(PKG_INIT)
        with open(self.path('pkg/sub.py'), 'w') as f:
            f.write(PKG_SUB)
        with open(self.path('main.py'), 'w') as f:
            f.write(MAIN % self.dir)

    def spec_arg(self, spec):
        if isinstance(spec, str):
            return spec
        with open(self.path('spec.json'), 'w') as f:
            json.dump(spec, f, indent=2)
        return self.path('spec.json')

    def record(self, spec=None, options=()):
        r = self.profile([sys.executable, self.path('main.py')],
                         options=['--python-functions-trace', self.spec_arg(spec or self.SPEC),
                                  *self.OPTIONS, *options])
        self.assertIn(b'done', r.stdout)
        return r

    def calls(self, report='python_func_sum'):
        """{(function, domain): calls} of python_func_sum."""
        return {(r['Function'], r['Domain']): int(r['Calls']) for r in self.stats_rows(report)}

    def pkg_calls(self):
        return {k: v for k, v in self.calls().items() if k[0].startswith('pkg')}


class ModuleOption(TraceCase):
    SPEC = 'module:pkg'

    def test_every_function_of_the_package_and_its_submodules(self):
        self.record()
        self.assertEqual(self.calls(), {
            ('pkg.hot', PH): 10,  # 100 calls, 10 over the threshold
            ('pkg.spin', PH): 28,
            ('pkg.Worker.step', PH): 3,
            ('pkg.sub.leaf', PH): 11,  # 6 of them in a thread started later
            ('pkg.sub.other', PH): 4,
        })
        # hgtx_sum shows them under their domain
        hgtx = {r['Range']: int(r['Instances']) for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(hgtx['Python Hgtx:pkg.Worker.step'], 3)
        self.assertEqual(hgtx['Python Hgtx:pkg.sub.leaf'], 11)
        rows = {r['Function']: r for r in self.stats_rows('python_func_sum')}
        self.assertGreaterEqual(int(rows['pkg.sub.leaf']['Min (ns)']), 10000000)
        con = self.db()
        tids = con.execute(
            "SELECT COUNT(DISTINCT e.tid) FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "WHERE s.value = 'pkg.sub.leaf'").fetchone()[0]
        self.assertEqual(tids, 2)
        # spin nests in its caller, on the same thread
        bad = con.execute(
            "SELECT COUNT(*) FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "LEFT JOIN hgtx_events p ON p.id = e.parent_id WHERE s.value = 'pkg.spin' AND "
            "(p.id IS NULL OR p.tid != e.tid OR e.start_ns < p.start_ns "
            "OR e.end_ns > p.end_ns)").fetchone()[0]
        self.assertEqual(bad, 0)
        statuses = [p['status'] for p in self.manifest()['python']['processes']]
        self.assertIn('tracing', statuses)

    def test_threshold(self):
        self.record(options=['--python-functions-threshold', '0'])
        calls = self.calls()
        self.assertEqual(calls[('pkg.hot', PH)], 100)
        self.assertEqual(calls[('pkg.spin', PH)], 118)
        self.record(options=['--python-functions-threshold', '1000000000'])
        self.assertEqual(self.stats_rows('python_func_sum'), [])


class WithSampling(TraceCase):
    """The default threshold (80 us) with Python sampling and OS runtime
    tracing on: their records, written into the thread's segment during the
    traced calls, do not shift the calls' times."""
    SPEC = 'module:pkg'
    OPTIONS = ('-t', 'osrt', '--python-sampling-frequency', '1000')

    def test_sampled_and_traced(self):
        self.record()
        rows = {r['Function']: r for r in self.stats_rows('python_func_sum')}
        for f, low in (('pkg.Worker.step', 10000000), ('pkg.sub.leaf', 10000000),
                       ('pkg.sub.other', 10500000)):
            self.assertGreaterEqual(int(rows[f]['Min (ns)']), low, f)
        self.assertTrue(self.stats_rows('osrt_sum'))
        calls = self.calls()
        for key, n in ((('pkg.Worker.step', PH), 3), (('pkg.sub.leaf', PH), 11),
                       (('pkg.sub.other', PH), 4)):
            self.assertEqual(calls[key], n)
        # a short call may hold a sample (or be preempted) past 80 us
        self.assertBetween(calls[('pkg.hot', PH)], 10, 20, 'pkg.hot calls')
        self.assertGreater(int(self.stats_rows('python_flat')[0]['Self']), 0)


class ModuleOnly(TraceCase):
    SPEC = [{'module': 'pkg.sub'}, {'module': 'threading'}]
    OPTIONS = ('--python-functions-threshold', '0')

    def test_modules_and_submodules(self):
        self.record()
        self.assertEqual(self.pkg_calls(), {('pkg.sub.leaf', PH): 11, ('pkg.sub.other', PH): 4})
        calls = self.calls()
        self.assertEqual(calls[('threading.Thread.join', PH)], 1)
        self.assertEqual(calls[('threading.Thread.start', PH)], 1)
        # functions only: no class bodies, comprehensions or lambdas
        self.assertNotIn(('threading.Thread', PH), calls)
        self.assertFalse([f for f, _ in calls if '<' in f], calls)


class FunctionsAndDomain(TraceCase):
    SPEC = [{'module': 'pkg', 'domain': 'Pkg Domain', 'functions': ['hot', 'Worker.step']}]

    def test_named_functions_in_their_domain(self):
        self.record()
        self.assertEqual(self.calls(), {('pkg.hot', 'Pkg Domain'): 10,
                                        ('pkg.Worker.step', 'Pkg Domain'): 3})
        hgtx = {r['Range']: int(r['Instances']) for r in self.stats_rows('hgtx_sum')}
        self.assertEqual(hgtx, {'Pkg Domain:pkg.hot': 10, 'Pkg Domain:pkg.Worker.step': 3})


class FunctionObjects(TraceCase):
    SPEC = [{'module': 'pkg', 'domain': 'Parent Domain',
             'functions': ['hot', {'function': 'leaf', 'module': 'pkg.sub',
                                   'domain': 'Child Domain'},
                           {'function': 'other', 'module': 'pkg.sub'}]}]

    def test_override_module_and_add_a_domain(self):
        self.record()
        self.assertEqual(self.calls(), {
            ('pkg.hot', 'Parent Domain'): 10,
            ('pkg.sub.leaf', 'Parent Domain'): 11,
            ('pkg.sub.leaf', 'Child Domain'): 11,
            ('pkg.sub.other', 'Parent Domain'): 4,
        })


class MixedLastRuleWins(TraceCase):
    SPEC = [{'module': 'pkg'},
            {'module': 'pkg.sub', 'domain': 'Sub'},
            {'module': 'pkg', 'functions': ['spin'], 'domain': 'Spin'}]

    def test_last_rule_naming_a_function_decides(self):
        self.record()
        self.assertEqual(self.calls(), {
            ('pkg.hot', PH): 10,
            ('pkg.Worker.step', PH): 3,
            ('pkg.sub.leaf', 'Sub'): 11,
            ('pkg.sub.other', 'Sub'): 4,
            ('pkg.spin', 'Spin'): 28,
        })


class Refused(TraceCase):
    def refused(self, spec, *expected):
        r = self.profile([sys.executable, self.path('main.py')], name='refused', expect_rc=2,
                         options=['--python-functions-trace', self.spec_arg(spec)])
        err = r.stderr.decode()
        lines = [l for l in err.splitlines() if 'warning' not in l]
        self.assertEqual(len(lines), 1, err)
        for text in expected:
            self.assertIn(text, lines[0])
        self.assertNotIn(b'done', r.stdout)
        self.assertFalse(os.path.exists(self.report('refused')))
        return lines[0]

    def test_main_module(self):
        self.refused([{'module': '__main__', 'functions': ['f']}], 'spec.json:', '__main__')
        self.refused('module:__main__', '__main__')
        self.refused([{'module': 'pkg', 'functions': [{'function': 'f', 'module': '__main__'}]}],
                     '__main__')

    def test_missing_file(self):
        self.refused(self.path('nope.json'), 'nope.json', 'No such file')

    def test_malformed_json(self):
        with open(self.path('bad.json'), 'w') as f:
            f.write('[\n  {"module": "pkg",\n   "functions": ["hot"\n  }\n]\n')
        self.refused(self.path('bad.json'), 'bad.json:4:', 'not valid JSON')

    def test_unknown_key(self):
        with open(self.path('bad.json'), 'w') as f:
            f.write('[\n  {"module": "pkg",\n   "domian": "X"}\n]\n')
        self.refused(self.path('bad.json'), 'bad.json:3:', 'unknown key "domian"')
        with open(self.path('bad.json'), 'w') as f:
            f.write('[{"module": "pkg",\n "functions": [\n {"function": "hot",\n  "dom": "X"}]}]\n')
        self.refused(self.path('bad.json'), 'bad.json:4:', 'unknown key "dom"')

    def test_bad_values(self):
        self.refused([{'domain': 'X'}], 'no "module" key')
        self.refused([{'module': 'pkg', 'functions': 'hot'}], 'functions')
        self.refused([{'module': 'pkg', 'functions': [{'module': 'pkg'}]}], '"function"')
        # a name too long is said to be too long, not empty (issue 32.11)
        self.refused([{'module': 'pkg', 'functions': ['f' * 3000000]}], 'longer than 200 bytes')
        self.refused([{'module': 'm' * 300}], 'longer than 200 bytes', '"module"')
        self.refused([{'module': ''}], 'needs a non-empty name', '"module"')


PKGW_INIT = """
import time


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def slow():
    spin(10000000)


def takes(a, b=2, *, c):
    return a + b + c


def fails():
    spin(10000000)
    raise ValueError('expected')


def gen():
    for i in range(3):
        spin(10000000)
        yield i


def square(x):
    spin(10000000)
    return x * x


class Shape:
    @staticmethod
    def make():
        spin(10000000)

    @classmethod
    def build(cls):
        spin(10000000)
        return cls()

    @property
    def area(self):
        spin(10000000)
        return 1
"""

PKGW_MAIN = """
import inspect, multiprocessing, pickle, sys, time, types

sys.path.insert(0, %r)
time.sleep(0.2)  # tracing starts within a few ms of the interpreter's start
from pkgw import Shape, slow
import pkgw

# the traced functions look and behave as the functions themselves
assert slow is pkgw.slow
assert isinstance(slow, types.FunctionType), type(slow)
assert (slow.__name__, slow.__qualname__, slow.__module__) == ('slow', 'slow', 'pkgw')
assert str(inspect.signature(pkgw.takes)) == '(a, b=2, *, c)', inspect.signature(pkgw.takes)
assert pkgw.takes(1, c=3) == 6
assert pickle.loads(pickle.dumps(pkgw.slow)) is pkgw.slow
pkgw.slow.note = 'kept'
assert pkgw.slow.note == 'kept'
slow()
try:
    pkgw.fails()
except ValueError as e:
    assert str(e) == 'expected'
else:
    raise SystemExit('no exception')
assert list(pkgw.gen()) == [0, 1, 2]
Shape.make()
assert isinstance(Shape.build(), Shape)
assert Shape().area == 1
# the pool pickles the function it sends to its forked worker
with multiprocessing.get_context('fork').Pool(1) as pool:
    assert pool.map(pkgw.square, [3]) == [9]
print('done')
"""


class TracedFunctionObjects(AsysTestCase):
    """What the program sees of a traced function (before 3.12 a wrapper
    takes its place): its name, signature, attributes, pickling, methods of
    every kind, exceptions through it, generators, a forked pool worker."""

    def test_traced_functions_behave_as_before(self):
        os.makedirs(self.path('pkgw'))
        with open(self.path('pkgw/__init__.py'), 'w') as f:
            f.write(PKGW_INIT)
        with open(self.path('main.py'), 'w') as f:
            f.write(PKGW_MAIN % self.dir)
        r = self.profile([sys.executable, self.path('main.py')],
                         options=['--python-functions-trace', 'module:pkgw',
                                  '--python-functions-threshold', '4000000',
                                  '--python-sampling', 'false'])
        self.assertIn(b'done', r.stdout, r.stderr)
        calls = {r['Function']: int(r['Calls']) for r in self.stats_rows('python_func_sum')}
        expected = {'pkgw.slow': 1, 'pkgw.fails': 1, 'pkgw.Shape.make': 1, 'pkgw.Shape.build': 1,
                    'pkgw.Shape.area': 1, 'pkgw.square': 1, 'pkgw.spin': 9}
        if sys.version_info >= (3, 12):
            expected['pkgw.gen'] = 3  # sys.monitoring: each resume that spins
        self.assertEqual(calls, expected)
        con = self.db()
        pids = con.execute(
            "SELECT COUNT(DISTINCT e.pid) FROM hgtx_events e JOIN strings s ON s.id = e.text_id "
            "WHERE s.value IN ('pkgw.slow', 'pkgw.square')").fetchone()[0]
        self.assertEqual(pids, 2)  # square ran in the pool's worker
        info = [r['Value'] for r in self.stats_rows('report_info')
                if r['Property'].startswith('Python function tracing')]
        how = 'sys.monitoring' if sys.version_info >= (3, 12) else 'function wrappers'
        self.assertTrue(info and all(how in v and '4000000 ns' in v for v in info), info)


if __name__ == '__main__':
    unittest.main(verbosity=2)
