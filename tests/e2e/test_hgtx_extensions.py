"""NVTX's extension and naming modules under `asys profile -t hgtx`: payloads
(schemas, enums, nested and array fields, events made of payloads, deferred
events in several clocks), counters (single, float, groups, no-value samples,
batches), memory (heaps, regions named, resized and unregistered over time,
permissions, the CUDA runtime part), names of CUDA and OpenCL objects that
reach the PPU rows, resources, user locks, and a program that replaces
NVTX_INJECTION64_PATH.  Every value the programs pass is checked exactly.

The programs are tests/e2e/progs/hgtx_payload.c, hgtx_counters.c,
hgtx_memory.c, hgtx_injection.c and progs/samples/hgtx_naming.cu (simppu)."""
import json
import os
import re
import unittest

from asys_e2e import ASYS, BUILD, AsysTestCase, prog
from test_export import ExportCase

NAMING = os.path.join(BUILD, 'tests', 'progs', 'samples', 'hgtx_naming')
SIMPPU_RUN = os.path.join(BUILD, 'simppu', 'simppu-run')
UINT64_MAX = 2 ** 64 - 1


def counter_series(doc):
    """{counter track name: [values]} of a Chrome JSON export."""
    series = {}
    for e in doc['traceEvents']:
        if e.get('ph') == 'C':
            series.setdefault(e['name'], []).append(e['args']['value'])
    return series


class ExtensionCase(ExportCase):
    program = None
    args = ()

    def setUp(self):
        super().setUp()
        r = self.profile([prog(self.program), *self.args], options=['-t', 'hgtx'])
        self.out = dict(re.findall(r'(\w+)=(-?\d+)', r.stdout.decode()))
        self.stderr = r.stderr.decode()
        self.assertIn(b'done\n', r.stdout)

    def rows(self, sql, *params):
        return self.db().execute(sql, params).fetchall()

    def fields(self, payload_id):
        return self.rows('SELECT field, type, value FROM hgtx_payload_fields '
                         'WHERE payload_id = ? ORDER BY rowid', payload_id)

    def event(self, text):
        rows = self.rows('SELECT e.id, e.kind, e.start_ns, e.end_ns, e.color, e.category, '
                         'e.deferred FROM hgtx_events AS e JOIN strings AS s ON s.id = e.text_id '
                         'WHERE s.value = ?', text)
        self.assertEqual(len(rows), 1, text)
        return rows[0]

    def payloads_of(self, event_id):
        return self.rows('SELECT id, at, payload FROM hgtx_payloads WHERE event_id = ? '
                         'ORDER BY id', event_id)


class Payloads(ExtensionCase):
    program = 'hgtx_payload'

    def test_the_domain_is_enabled_and_levels_are_right(self):
        self.assertEqual(self.out['enabled'], '1')
        self.assertEqual((self.out['push_level'], self.out['pop_level']), ('0', '0'))

    def test_schemas_and_enums_are_kept_as_registered(self):
        schemas = self.rows('SELECT s.kind, n.value, s.schema_type, s.static_size, s.entries '
                            'FROM hgtx_payload_schemas AS s LEFT JOIN strings AS n '
                            'ON n.id = s.name_id ORDER BY s.id')
        names = [r[1] for r in schemas]
        self.assertEqual(names, ['Color', 'Point', 'Pair', 'Attributes', 'Message', 'Samples',
                                 'Deferred', 'DeferredMark', 'MicrosecondMark'])
        self.assertEqual(schemas[0][0], 'enum')
        self.assertEqual(schemas[1][2:], (1, 64, 8))
        self.assertEqual(schemas[4][2], 2)
        enum = self.rows('SELECT n.value, e.value FROM hgtx_payload_entries AS e '
                         'JOIN hgtx_payload_schemas AS s ON s.id = e.schema_row '
                         'JOIN strings AS n ON n.id = e.name_id WHERE s.kind = ? '
                         'ORDER BY e.entry', 'enum')
        self.assertEqual(enum, [('RED', 1), ('GREEN', 2), ('BLUE', 4)])
        point = self.rows('SELECT n.value, e.type_name, e.offset FROM hgtx_payload_entries AS e '
                          'JOIN strings AS n ON n.id = e.name_id WHERE e.schema_row = 2 '
                          'ORDER BY e.entry')
        self.assertEqual([p[0] for p in point],
                         ['x', 'y', 'flags', 'name', 'label', 'color', 'big', 'values'])
        self.assertEqual(point[0][1:], ('int32', 0))
        self.assertEqual(point[6][2], 48)  # offsetof(struct point, big)

    def test_an_ex_call_with_an_attached_payload(self):
        event = self.event('attached mark')
        self.assertEqual(event[1], 3)
        (pid, at, index), = self.payloads_of(event[0])
        self.assertEqual((at, index), ('begin', 0))
        self.assertEqual(self.fields(pid), [
            ('x', 'int32', -7), ('y', 'double', 0.125), ('flags', 'uint8', 3),
            ('name', 'string', 'pt-one'), ('label', 'string', 'label one'),
            ('color', 'enum', 'GREEN'), ('big', 'uint64', str(UINT64_MAX)),
            ('values[0]', 'int16', 1), ('values[1]', 'int16', -2), ('values[2]', 'int16', 3),
            ('values[3]', 'int16', -4)])

    def test_a_mark_made_of_its_payload(self):
        event = self.event('payload mark')
        self.assertEqual(event[1], 3)
        self.assertEqual((event[4], event[5]), (0xff00ff00, 7))
        (pid, _, _), = self.payloads_of(event[0])
        self.assertEqual(self.fields(pid)[3], ('value', 'int64', -123456789012345))

    def test_push_pop_with_payloads_and_nested_schemas(self):
        event = self.event('pushed by payload')
        self.assertEqual(event[1], 1)
        self.assertLess(event[2], event[3])
        payloads = self.payloads_of(event[0])
        self.assertEqual([(p[1], p[2]) for p in payloads], [('begin', 0), ('end', 0)])
        pair = dict((f[0], f[2]) for f in self.fields(payloads[1][0]))
        self.assertEqual(pair['a.x'], 1)
        self.assertEqual(pair['b.y'], 2.5)
        self.assertEqual(pair['a.label'], 'first')
        self.assertEqual(pair['b.label'], 'second')
        self.assertEqual((pair['a.color'], pair['b.color']), ('RED', 'BLUE'))
        self.assertEqual(pair['b.big'], 20)

    def test_start_end_with_a_length_indexed_array_at_the_end(self):
        event = self.event('started by payload')
        self.assertEqual(event[1], 2)
        self.assertEqual((event[4], event[5]), (0xffff0000, 3))
        payloads = self.payloads_of(event[0])
        end = self.fields(payloads[1][0])
        self.assertEqual(end, [('count', 'uint32', 3), ('data[0]', 'float', 0.5),
                               ('data[1]', 'float', 1.5), ('data[2]', 'float', 2.5)])

    def test_deferred_events_at_their_own_times(self):
        event = self.event('deferred range')
        self.assertEqual(event[1], 2)
        self.assertEqual((event[2], event[3]),
                         (int(self.out['deferred_begin']), int(self.out['deferred_end'])))
        self.assertEqual(event[6], 1)
        marks = self.rows('SELECT start_ns FROM hgtx_events WHERE deferred = 1 AND kind = 3 '
                          'ORDER BY start_ns')
        first = int(self.out['batch_first'])
        micro = int(self.out['microsecond_mark']) * 1000
        self.assertEqual([m[0] for m in marks],
                         [first, first + 1000000, first + 2000000, micro])

    def test_scopes_and_time_relations_are_recorded(self):
        scope = self.rows('SELECT s.value, c.parent_id FROM hgtx_scopes AS c '
                          'JOIN strings AS s ON s.id = c.path_id')
        self.assertEqual(scope, [('node/gpu[0]', 1)])
        kinds = self.rows('SELECT kind, COUNT(*) FROM hgtx_time_points GROUP BY kind ORDER BY kind')
        # two timer sources read at registration, the safe one again at exit
        self.assertEqual(kinds, [('conversion', 1), ('sync point', 3), ('timer source', 3)])
        conversion = self.rows("SELECT slope, source_ts, target_ts FROM hgtx_time_points "
                               "WHERE kind = 'conversion'")
        self.assertEqual(conversion, [(1000.0, 5, 5000)])
        self.assertEqual(self.out['scope_dynamic'], '1')

    def test_a_raw_payload_is_kept_and_not_decoded(self):
        raw = self.rows('SELECT id, hex(data) FROM hgtx_payloads WHERE schema_id = 1023')
        self.assertEqual(len(raw), 1)
        self.assertEqual(raw[0][1], '0102030405')
        self.assertEqual(self.fields(raw[0][0]), [])

    def test_the_payload_report_and_exact_json(self):
        r = self.stats('-q', '--report', 'hgtx_payload_trace', '--format', 'json', self.report())
        rows = json.loads(r.stdout)
        big = [x for x in rows if x['Field'] == 'big' and x['Event'] == 'attached mark']
        self.assertEqual(big[0]['Value'], UINT64_MAX)
        y = [x for x in rows if x['Field'] == 'y' and x['Event'] == 'attached mark']
        self.assertEqual(y[0]['Value'], 0.125)
        info = {x['Property']: x['Value'] for x in self.stats_rows('report_info')}
        self.assertNotIn('HGTX payload entries not decoded', info)

    def test_exports_carry_the_fields_as_arguments(self):
        doc = self.chrome_json()
        events = {e['name']: e for e in doc['traceEvents'] if e.get('cat') == 'hgtx'}
        attached = events['attached mark']['args']
        self.assertEqual(attached['payload.big'], UINT64_MAX)
        self.assertEqual(attached['payload.y'], 0.125)
        self.assertEqual(attached['payload.label'], 'label one')
        self.assertEqual(attached['payload.color'], 'GREEN')
        mark = events['payload mark']['args']
        self.assertEqual((mark['color'], mark['category']), ('#FF00FF00', 7))
        pushed = events['pushed by payload']['args']
        self.assertEqual((pushed['payload_end.a.label'], pushed['payload_end.a.y']), ('first', 1.5))
        trace = self.pftrace()
        names = {e.name for e in trace.events}
        self.assertIn('deferred range', names)


class Counters(ExtensionCase):
    program = 'hgtx_counters'

    def counter(self, name):
        rows = self.rows('SELECT c.id, c.counter_id, u.value, c.limit_min, c.limit_max FROM '
                         'hgtx_counters AS c JOIN strings AS n ON n.id = c.name_id LEFT JOIN '
                         'strings AS u ON u.id = c.unit_id WHERE n.value = ?', name)
        self.assertEqual(len(rows), 1, name)
        return rows[0]

    def values(self, counter_id):
        return self.rows('SELECT field, value, missing FROM hgtx_counter_values WHERE counter = ? '
                         'ORDER BY ts_ns, rowid', counter_id)

    def test_an_integer_counter_with_unit_and_limits(self):
        cid, _, unit, low, high = self.counter('requests in flight')
        self.assertEqual((unit, low, high), ('requests', 0, 100))
        self.assertEqual([v[1] for v in self.values(cid)], [v * v for v in range(1, 11)])

    def test_a_float_counter_with_a_static_id_and_a_missing_sample(self):
        self.assertEqual(self.out['static_id'], '1')
        cid, counter_id, _, _, _ = self.counter('temperature')
        self.assertEqual(counter_id, (1 << 24) + 7)
        self.assertEqual(self.values(cid), [(None, 0.5, None), (None, 36.625, None),
                                            (None, None, 'unavailable'), (None, -1.25, None)])

    def test_a_counter_group_by_its_schema(self):
        cid = self.counter('worker')[0]
        self.assertEqual(self.values(cid), [('queued', 1, None), ('load', 0.25, None),
                                            ('queued', 2, None), ('load', 0.5, None),
                                            ('queued', 3, None), ('load', 0.75, None)])

    def test_a_batch_keeps_its_timestamps(self):
        cid = self.counter('batched')[0]
        rows = self.rows('SELECT ts_ns, value FROM hgtx_counter_values WHERE counter = ? '
                         'ORDER BY ts_ns', cid)
        first, last = int(self.out['batch_first']), int(self.out['batch_last'])
        self.assertEqual(rows, [(first + i * 1000000, 10 * (i + 1)) for i in range(5)])
        self.assertEqual(rows[-1][0], last)

    def test_the_counter_report(self):
        rows = {(r['Counter'], r['Field']): r for r in self.stats_rows('hgtx_counter_sum')}
        requests = rows[('counters:requests in flight', '')]
        self.assertEqual((requests['Samples'], requests['Min'], requests['Max'], requests['Avg']),
                         ('10', '1', '100', '38.5'))
        temperature = rows[('counters:temperature', '')]
        self.assertEqual((temperature['Samples'], temperature['Missing'], temperature['First'],
                          temperature['Last']), ('3', '1', '0.5', '-1.25'))
        self.assertEqual(rows[('counters:worker', 'load')]['Max'], '0.75')

    def test_counter_tracks_in_the_exports(self):
        series = counter_series(self.chrome_json())
        self.assertEqual(series['HGTX counter counters:requests in flight (requests)'],
                         [v * v for v in range(1, 11)])
        self.assertEqual(series['HGTX counter counters:temperature'], [0.5, 36.625, -1.25])
        self.assertEqual(series['HGTX counter counters:worker.load'], [0.25, 0.5, 0.75])
        self.assertEqual(series['HGTX counter counters:batched'], [10, 20, 30, 40, 50])
        trace = self.pftrace()
        counters = [t for t in trace.tracks.values() if t.name.startswith('HGTX counter')]
        self.assertEqual(len(counters), 5)


class Memory(ExtensionCase):
    program = 'hgtx_memory'

    def test_heap_and_regions_over_time(self):
        heap = self.rows('SELECT s.value, usage, type, size, category, resets, '
                         'unregistered_ns IS NOT NULL FROM hgtx_mem_heaps AS h '
                         'JOIN strings AS s ON s.id = h.name_id')
        self.assertEqual(heap, [('pool', 1, 1, 1 << 20, 5, 1, 1)])
        base = self.rows('SELECT address FROM hgtx_mem_heaps')[0][0]
        regions = self.rows('SELECT r.address - ?, r.size, s.value, r.category, r.ended_by '
                            'FROM hgtx_mem_regions AS r LEFT JOIN strings AS s '
                            'ON s.id = r.name_id ORDER BY r.start_ns, r.id', base)
        self.assertEqual(regions, [
            (0, 4096, 'weights', 1, 'name'),
            (65536, 100, 'scratch', None, 'resize'),
            (4096, 8192, 'activations', 2, 'unregister'),
            (0, 4096, 'weights v2', 1, 'heap reset'),
            (65536, 200, 'scratch', None, 'heap reset'),
            (1024, 512, None, None, 'heap unregister')])

    def test_every_call_is_recorded(self):
        calls = [r[0] for r in self.rows('SELECT call FROM hgtx_mem_calls ORDER BY rowid')]
        self.assertEqual(calls, [
            'heap register', 'regions register', 'regions register', 'regions register',
            'regions name', 'regions name', 'regions name', 'regions name', 'regions resize',
            'regions unregister', 'permissions create', 'permissions assign',
            'permissions bind', 'permissions unbind', 'permissions reset', 'permissions destroy',
            'cuda get process-wide permissions', 'cuda get device-wide permissions',
            'cuda set peer access', 'cuda mark initialized', 'heap reset', 'regions register',
            'heap unregister'])
        self.assertEqual(self.out['distinct'], '1')
        peer = self.rows("SELECT size, flags FROM hgtx_mem_calls WHERE call = 'cuda set peer "
                         "access'")
        self.assertEqual(peer, [(-1, 1)])

    def test_the_regions_report(self):
        rows = self.stats_rows('hgtx_mem_regions')
        self.assertEqual([r['Region'] for r in rows],
                         ['weights', 'scratch', 'activations', 'weights v2', 'scratch', ''])
        self.assertEqual({r['Heap'] for r in rows}, {'pool'})

    def test_the_heap_counter_in_the_exports(self):
        series = counter_series(self.chrome_json())
        # one value per instant: three regions at once, renamed, grown, one gone,
        # reset, one more, heap gone
        self.assertEqual(series['HGTX heap pool (bytes in regions)'],
                         [12388, 12388, 12488, 4296, 0, 512, 0])
        self.pftrace()


class Injection(AsysTestCase):
    def test_replaced_before_the_first_call(self):
        r = self.profile([prog('hgtx_injection'), 'before'], options=['-t', 'hgtx'])
        err = r.stderr.decode()
        self.assertEqual(err.count('changed NVTX_INJECTION64_PATH'), 1, err)
        con = self.db()
        self.assertEqual(con.execute('SELECT COUNT(*) FROM hgtx_events').fetchone()[0], 0)
        info = {x['Property']: x['Value'] for x in self.stats_rows('report_info')}
        self.assertIn("to '/nonexistent/libother-tool.so'", info['HGTX injection replaced'])
        self.assertIn('not recorded', info['HGTX injection replaced'])

    def test_removed_after_the_first_call(self):
        self.profile([prog('hgtx_injection'), 'after'], options=['-t', 'hgtx'])
        con = self.db()
        marks = con.execute('SELECT COUNT(*) FROM hgtx_events').fetchone()[0]
        self.assertEqual(marks, 2)  # the module attached before: both marks are in
        info = {x['Property']: x['Value'] for x in self.stats_rows('report_info')}
        self.assertIn('removed NVTX_INJECTION64_PATH', info['HGTX injection replaced'])
        self.assertIn('1 NVTX modules', info['HGTX injection replaced'])

    def test_an_unchanged_path_says_nothing(self):
        r = self.profile([prog('hgtx_threads')], options=['-t', 'hgtx'])
        self.assertNotIn('NVTX_INJECTION64_PATH', r.stderr.decode())


@unittest.skipUnless(os.path.exists(NAMING),
                     'SKIPPED: nvcc was not found when building, so hgtx_naming was not built')
class Naming(ExportCase):
    def setUp(self):
        super().setUp()
        r = self.run_cmd([SIMPPU_RUN, ASYS, 'profile', '-t', 'hggc,hgtx', '-s', 'none',
                          '-o', self.path('rep'), '--force-overwrite=true', NAMING])
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors='replace'))
        self.assertIn(b'done\n', r.stdout)

    def rows(self, sql, *params):
        return self.db().execute(sql, params).fetchall()

    def test_every_naming_call_is_recorded(self):
        names = self.rows('SELECT r.type_name, s.value FROM hgtx_resources AS r '
                          'JOIN strings AS s ON s.id = r.name_id WHERE r.handle IS NULL '
                          'ORDER BY r.id')
        self.assertEqual(names, [
            ('cudart device', 'main device'), ('cudart stream', 'copy stream'),
            ('cudart stream', 'compute stream'), ('cudart event', 'done event'),
            ('cuda stream', 'copy stream (driver name)'),
            ('cuda device', 'main device (driver name)'),
            ('cuda event', 'done event (driver name)'), ('cuda context', 'no context'),
            ('opencl device', 'cl device'), ('opencl context', 'cl context'),
            ('opencl command queue', 'cl queue'), ('opencl memory object', 'cl buffer'),
            ('opencl sampler', 'cl sampler'), ('opencl program', 'cl program'),
            ('opencl event', 'cl event')])
        ids = self.rows("SELECT identifier FROM hgtx_resources WHERE type_name LIKE 'opencl%' "
                        "ORDER BY id")
        self.assertEqual([i[0] for i in ids], [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70])

    def test_stream_names_reach_the_ppu_rows(self):
        named = dict(self.rows('SELECT n.stream, s.value FROM ppu_stream_names AS n '
                               'JOIN strings AS s ON s.id = n.name_id'))
        kernels = dict(self.rows('SELECT stream, COUNT(*) FROM ppu_kernels GROUP BY stream'))
        by_name = {named[stream]: count for stream, count in kernels.items() if stream in named}
        self.assertEqual(by_name, {'copy stream (driver name)': 3, 'compute stream': 1})
        device = self.rows('SELECT s.value FROM ppu_device_names AS n JOIN strings AS s '
                           'ON s.id = n.name_id')
        self.assertEqual(device, [('main device (driver name)',)])

    def test_resources_in_a_domain(self):
        resources = self.rows('SELECT r.type_name, s.value, r.handle IS NOT NULL, '
                              'r.destroyed_ns IS NOT NULL, d.value FROM hgtx_resources AS r '
                              'JOIN strings AS s ON s.id = r.name_id JOIN hgtx_domains AS h '
                              'ON h.id = r.domain_id JOIN strings AS d ON d.id = h.name_id')
        self.assertEqual(resources, [('pthread mutex', 'queue lock', 1, 0, 'resources'),
                                     ('generic pointer', 'device buffer', 1, 1, 'resources')])

    def test_a_user_lock(self):
        ranges = self.rows('SELECT kind, outcome, end_ns - start_ns FROM hgtx_sync_ranges '
                           'ORDER BY start_ns')
        self.assertEqual([(r[0], r[1]) for r in ranges],
                         [('acquire', 'success'), ('held', None), ('acquire', 'failed')])
        self.assertGreaterEqual(ranges[0][2], 2000000)
        self.assertGreaterEqual(ranges[1][2], 3000000)
        self.assertGreaterEqual(ranges[2][2], 1000000)
        lock = self.stats_rows('hgtx_sync_sum')
        self.assertEqual([(r['Lock'], r['Acquired'], r['Failed']) for r in lock],
                         [('resources:work lock', '1', '1')])

    def test_names_and_locks_in_the_exports(self):
        doc = self.chrome_json()
        tracks = {e['args']['name'] for e in doc['traceEvents']
                  if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
        streams = sorted(t.split(' / ')[0] for t in tracks if 'Stream' in t and '/' in t)
        self.assertEqual(streams, ['25.0% Stream 4: compute stream',
                                   '75.0% Stream 3: copy stream (driver name)'])
        locks = [(e['name'], e.get('args', {}).get('outcome')) for e in doc['traceEvents']
                 if e.get('ph') == 'X' and e.get('cat') == 'hgtx']
        self.assertEqual(locks, [('acquire resources:work lock', 'success'),
                                 ('hold resources:work lock', None),
                                 ('acquire resources:work lock', 'failed')])
        trace = self.pftrace()
        self.assertIn('PPU 0: main device (driver name)', {t.name for t in trace.tracks.values()})
        stats = self.stats_rows('stream_pct')
        self.assertIn('75.0% Stream 3: copy stream (driver name)', {r['Node'] for r in stats})


if __name__ == '__main__':
    unittest.main()
