"""Video tracing (-t hgvideo): NVDEC, NVENC and nvJPEG calls and the engines'
work, recorded from tests/e2e/progs/video_demo.c on simppu's stand-ins
(tests/simppu/nvcuvid.c, nvenc.c, nvjpeg.c), linked and opened with dlopen +
dlsym.  The expected calls are the program's; the expected durations the
stand-ins' engine model (tests/simppu/video_engine.h), computed here."""
import json
import os
import struct
import unittest

import craft
import pftrace
from asys_e2e import BIN, BUILD, AsysTestCase, prog

SIMPPU = os.path.join(BUILD, 'simppu')
EXPORT = os.path.join(BIN, 'asys-export')
LINKED = prog('video_demo_linked')
DLOPEN = prog('video_demo_dlopen')

# the engine model (video_engine.h)
DECODE_BASE_NS, DECODE_NS_PER_BYTE = 200000, 20
ENCODE_BASE_NS, ENCODE_PIXELS_PER_NS = 300000, 1
# the program (video_demo.c)
DECODES, ENCODES, JPEGS = 8, 6, 4
WIDTH, HEIGHT = 320, 240
JPEG_BYTES = 29


def decode_bytes(i):
    return 10000 + 2000 * i


def decode_ns(i):
    return DECODE_BASE_NS + decode_bytes(i) * DECODE_NS_PER_BYTE


ENCODE_NS = ENCODE_BASE_NS + WIDTH * HEIGHT // ENCODE_PIXELS_PER_NS
ENCODE_BYTES = WIDTH * HEIGHT // 16

# (API, function): calls, failed calls
EXPECTED_CALLS = {
    ('Decode API', 'cuvidGetDecoderCaps'): (1, 0),
    ('Decode API', 'cuvidCreateDecoder'): (2, 1),  # MPEG-2 refused: CUDA_ERROR_NOT_SUPPORTED
    ('Decode API', 'cuvidDecodePicture'): (DECODES, 0),
    ('Decode API', 'cuvidGetDecodeStatus'): (DECODES // 2, 0),
    ('Decode API', 'cuvidMapVideoFrame64'): (DECODES, 0),
    ('Decode API', 'cuvidUnmapVideoFrame64'): (DECODES, 0),
    ('Decode API', 'cuvidDestroyDecoder'): (1, 0),
    ('Encode API', 'NvEncodeAPIGetMaxSupportedVersion'): (1, 0),
    ('Encode API', 'NvEncodeAPICreateInstance'): (1, 0),
    ('Encode API', 'nvEncOpenEncodeSessionEx'): (1, 0),
    ('Encode API', 'nvEncInitializeEncoder'): (1, 0),
    ('Encode API', 'nvEncCreateInputBuffer'): (1, 0),
    ('Encode API', 'nvEncCreateBitstreamBuffer'): (1, 0),
    ('Encode API', 'nvEncSetIOCudaStreams'): (1, 0),
    ('Encode API', 'nvEncEncodePicture'): (ENCODES, 0),
    ('Encode API', 'nvEncLockBitstream'): (ENCODES, 0),
    ('Encode API', 'nvEncUnlockBitstream'): (ENCODES, 0),
    ('Encode API', 'nvEncDestroyBitstreamBuffer'): (1, 0),
    ('Encode API', 'nvEncDestroyInputBuffer'): (1, 0),
    ('Encode API', 'nvEncDestroyEncoder'): (1, 0),
    ('JPEG API', 'nvjpegCreateSimple'): (1, 0),
    ('JPEG API', 'nvjpegJpegStateCreate'): (1, 0),
    ('JPEG API', 'nvjpegGetImageInfo'): (1, 0),
    ('JPEG API', 'nvjpegDecode'): (JPEGS + 1, 1),  # the damaged image: NVJPEG_STATUS_BAD_JPEG
    ('JPEG API', 'nvjpegJpegStateDestroy'): (1, 0),
    ('JPEG API', 'nvjpegDestroy'): (1, 0),
}
# a wake-up after the engine's end, on a loaded 2-CPU machine
LATE_NS = 200000000


def have_stand_ins():
    return all(os.path.exists(p) for p in (LINKED, DLOPEN, os.path.join(SIMPPU, 'libnvcuvid.so.1')))


class VideoCase(AsysTestCase):
    def record(self, program=LINKED, collectors='hggc,hgvideo', name='rep'):
        self.env['LD_LIBRARY_PATH'] = SIMPPU
        r = self.profile([program], ['-t', collectors, '-s', 'none'], name=name)
        self.assertIn(b'video_demo ok', r.stdout)
        return r

    def rows(self, sql, name='rep'):
        return self.db(name).execute(sql).fetchall()

    def api_calls(self, name='rep'):
        return {(row['API'], row['Name']): int(row['Num Calls'])
                for row in self.stats_rows('video_api_sum', name)}


class ApiCalls(VideoCase):
    """Every call of the three APIs, counted exactly, with its status."""

    def test_linked(self):
        self.record()
        self.assertEqual(self.api_calls(), {k: v[0] for k, v in EXPECTED_CALLS.items()})
        failed = dict(((api, fn), n) for api, fn, n in self.rows(
            'SELECT p.name, s.value, SUM(v.status <> 0) FROM video_api_calls AS v '
            'JOIN video_apis AS p ON p.id = v.api JOIN strings AS s ON s.id = v.name_id '
            'GROUP BY 1, 2'))
        self.assertEqual(failed, {k: v[1] for k, v in EXPECTED_CALLS.items()})
        statuses = self.rows('SELECT s.value, v.status FROM video_api_calls AS v '
                             'JOIN strings AS s ON s.id = v.name_id WHERE v.status <> 0 '
                             'ORDER BY 1')
        self.assertEqual(statuses, [('cuvidCreateDecoder', 801), ('nvjpegDecode', 3)])
        # the handle each acts on: one decoder, one encoder session, one nvJPEG handle
        for fn in ('cuvidDecodePicture', 'nvEncEncodePicture', 'nvjpegDecode'):
            (handles,) = self.rows("SELECT COUNT(DISTINCT v.handle) FROM video_api_calls AS v "
                                   "JOIN strings AS s ON s.id = v.name_id WHERE s.value = '%s' "
                                   "AND v.handle IS NOT NULL" % fn)[0]
            self.assertEqual(handles, 1, fn)
        (created,) = self.rows("SELECT v.handle FROM video_api_calls AS v JOIN strings AS s "
                               "ON s.id = v.name_id WHERE s.value = 'cuvidCreateDecoder' "
                               "AND v.status = 0")[0]
        (decoded,) = self.rows("SELECT DISTINCT v.handle FROM video_api_calls AS v "
                               "JOIN strings AS s ON s.id = v.name_id "
                               "WHERE s.value = 'cuvidDecodePicture'")[0]
        self.assertEqual(created, decoded)
        # the streams the calls took: two, known to HGGC
        streams = self.rows("SELECT DISTINCT v.stream FROM video_api_calls AS v "
                            "JOIN strings AS s ON s.id = v.name_id "
                            "WHERE s.value IN ('cuvidMapVideoFrame64', 'nvjpegDecode') "
                            "ORDER BY 1")
        self.assertEqual(len(streams), 2)
        self.assertNotIn((None,), streams)
        trace = self.stats_rows('video_api_trace')
        self.assertEqual(len(trace), sum(v[0] for v in EXPECTED_CALLS.values()))
        self.assertEqual([int(r['Start (ns)']) for r in trace],
                         sorted(int(r['Start (ns)']) for r in trace))

    def test_dlopen_and_dlsym(self):
        """The libraries opened RTLD_LOCAL and their functions found with dlsym
        (as FFmpeg does): the same calls."""
        self.record(DLOPEN)
        self.assertEqual(self.api_calls(), {k: v[0] for k, v in EXPECTED_CALLS.items()})
        (work,) = self.rows('SELECT COUNT(*) FROM video_activities WHERE kind IN (1, 2)')[0]
        self.assertEqual(work, DECODES + ENCODES)

    def test_dlsym_beside_the_library_collectors(self):
        """libasys-acompute.so interposes dlsym too, earlier in LD_PRELOAD: its
        lookup of the next dlsym must reach this one (a versioned lookup went
        straight to libc: 0 video calls of the dlopen'ed libraries)."""
        self.record(DLOPEN, collectors='hggc,acdnn,acblas,hgvideo')
        self.assertEqual(self.api_calls(), {k: v[0] for k, v in EXPECTED_CALLS.items()})

    def test_with_the_other_interposers(self):
        """OSRT and heap tracing resolve libc with dlsym(RTLD_NEXT) through the
        interposed dlsym: they still find libc's functions, and video is
        recorded alongside."""
        self.env['LD_LIBRARY_PATH'] = SIMPPU
        r = self.profile([DLOPEN], ['-t', 'osrt,hggc,hgvideo', '--heap-memory-usage', 'true',
                                    '--heap-sampling-interval-bytes', '1', '-s', 'none'])
        self.assertIn(b'video_demo ok', r.stdout)
        self.assertEqual(self.api_calls(), {k: v[0] for k, v in EXPECTED_CALLS.items()})
        osrt = {row['Name'] for row in self.stats_rows('osrt_sum')}
        self.assertIn('clock_nanosleep', osrt)  # the stand-ins waiting for their engines
        (heap,) = self.stats_rows('heap_process_sum')
        self.assertGreater(int(heap['Allocations']), 0)

    def test_without_video(self):
        """A program that uses no video library records no video."""
        self.env['LD_LIBRARY_PATH'] = SIMPPU
        self.profile([prog('hgtx_loop')], ['-t', 'hgvideo', '-s', 'none'])
        self.assertEqual(self.rows('SELECT COUNT(*) FROM video_api_calls')[0][0], 0)
        self.assertEqual(self.rows('SELECT COUNT(*) FROM video_activities')[0][0], 0)
        r = self.stats('-q', '--report', 'video_api_sum', self.report(), expect_rc=None)
        self.assertIn(b'record with -t hgvideo', r.stdout + r.stderr)
        m = self.manifest()
        self.assertIn('hgvideo', m['collectors']['enabled'])


class Activity(VideoCase):
    """The engines' work per stream, timed by the stand-ins' model."""

    def test_work(self):
        self.record()
        decode_stream = {}
        for picture, stream, start, end, nbytes, fn in self.rows(
                'SELECT w.picture, w.stream, w.start_ns, w.end_ns, w.bytes, s.value '
                'FROM video_activities AS w JOIN video_api_calls AS v ON v.id = w.api_id '
                'JOIN strings AS s ON s.id = v.name_id WHERE w.kind = 1 ORDER BY w.picture'):
            self.assertEqual(fn, 'cuvidDecodePicture')
            self.assertEqual(nbytes, decode_bytes(picture))
            self.assertBetween(end - start, decode_ns(picture) * 0.98,
                               decode_ns(picture) + LATE_NS, 'decode %d' % picture)
            decode_stream[picture] = stream
        self.assertEqual(sorted(decode_stream), list(range(DECODES)))
        even = {decode_stream[i] for i in range(0, DECODES, 2)}
        odd = {decode_stream[i] for i in range(1, DECODES, 2)}
        self.assertEqual(len(even), 1)
        self.assertEqual(len(odd), 1)
        self.assertNotEqual(even, odd)
        encodes = self.rows('SELECT w.stream, w.start_ns, w.end_ns, w.bytes, s.value '
                            'FROM video_activities AS w JOIN video_api_calls AS v '
                            'ON v.id = w.api_id JOIN strings AS s ON s.id = v.name_id '
                            'WHERE w.kind = 2')
        self.assertEqual(len(encodes), ENCODES)
        for stream, start, end, nbytes, fn in encodes:
            self.assertEqual(fn, 'nvEncEncodePicture')
            self.assertEqual({stream}, odd)  # nvEncSetIOCudaStreams: the second stream
            self.assertEqual(nbytes, ENCODE_BYTES)
            self.assertBetween(end - start, ENCODE_NS * 0.98, ENCODE_NS + LATE_NS, 'encode')
        jpegs = self.rows('SELECT w.stream, w.bytes, s.value, v.status FROM video_activities AS w '
                          'JOIN video_api_calls AS v ON v.id = w.api_id '
                          'JOIN strings AS s ON s.id = v.name_id WHERE w.kind = 3')
        self.assertEqual(len(jpegs), JPEGS)  # not the damaged image's: it launched nothing
        self.assertEqual(sorted(j[0] for j in jpegs), sorted([*even, *odd] * 2))
        self.assertEqual({(j[1], j[2], j[3]) for j in jpegs}, {(JPEG_BYTES, 'nvjpegDecode', 0)})
        # the summary: frames and bytes per engine and stream
        summary = {(r['Engine'], r['Stream']): r for r in self.stats_rows('video_activity_sum')}
        (s_even,), (s_odd,) = even, odd
        self.assertEqual(int(summary[('NVDEC', str(s_even))]['Frames']), DECODES // 2)
        self.assertEqual(int(summary[('NVDEC', str(s_even))]['Bytes']),
                         sum(decode_bytes(i) for i in range(0, DECODES, 2)))
        self.assertEqual(int(summary[('NVDEC', str(s_odd))]['Bytes']),
                         sum(decode_bytes(i) for i in range(1, DECODES, 2)))
        self.assertEqual(int(summary[('NVENC', str(s_odd))]['Frames']), ENCODES)
        self.assertEqual(int(summary[('nvJPEG', str(s_even))]['Frames']), JPEGS // 2)
        self.assertGreaterEqual(float(summary[('NVENC', str(s_odd))]['Min (ns)']),
                                ENCODE_NS * 0.98)

    def test_stream_pct_and_device(self):
        self.record()
        tree = self.stats_rows('stream_pct')
        video = {r['Key']: r for r in tree if r['Kind'] == 'video'}
        self.assertEqual(len(video), 2)
        work = dict(self.rows('SELECT stream, SUM(end_ns - start_ns) FROM video_activities '
                              'WHERE kind IN (1, 2) GROUP BY stream'))
        streams = {r['Key']: r for r in tree if r['Kind'] == 'stream'}
        for key, row in video.items():
            stream = int(key.split('/S')[1].split('/')[0])
            self.assertEqual(int(row['Time (ns)']), work[stream])
            parent = streams[key.rsplit('/R', 1)[0]]
            self.assertAlmostEqual(float(row['Percent (%)']),
                                   100.0 * work[stream] / int(parent['Time (ns)']), places=3)
        self.assertAlmostEqual(sum(float(r['Percent (%)']) for r in streams.values()), 100.0,
                               places=3)
        (device,) = self.stats_rows('ppu_device_sum')
        self.assertEqual(int(device['Video Ops']), DECODES + ENCODES)
        self.assertEqual(int(device['Video Time (ns)']), sum(work.values()))
        # with a time filter: clipped to the window and recomputed
        (start,) = self.rows("SELECT value FROM session_info WHERE key = 'start_ns'")[0]
        (first, first_end, stream) = self.rows(
            'SELECT start_ns, end_ns, stream FROM video_activities WHERE kind = 1 '
            'ORDER BY start_ns LIMIT 1')[0]
        lo, hi = first + (first_end - first) // 2, first_end + 10
        r = self.stats('-q', '--report', 'stream_pct', '--format', 'json', '--filter-time',
                       '%d/%d' % (lo - start, hi - start), self.report())
        rows = json.loads(r.stdout)
        clipped = dict(self.rows(
            'SELECT stream, SUM(MIN(end_ns, %d) - MAX(start_ns, %d)) FROM ppu_activities '
            'WHERE end_ns >= %d AND start_ns <= %d GROUP BY stream' % (hi, lo, lo, hi)))
        video_rows = [x for x in rows if x['Kind'] == 'video' and '/S%d/' % stream in x['Key']]
        self.assertEqual(len(video_rows), 1, rows)
        self.assertEqual(video_rows[0]['Time (ns)'], (first_end - lo))
        self.assertAlmostEqual(video_rows[0]['Percent (%)'],
                               100.0 * (first_end - lo) / clipped[stream], places=3)


class WithoutHggc(VideoCase):
    """-t hgvideo alone: the calls and the work are recorded, the streams
    are values without ids (only CUPTI knows them): no stream node."""

    def test_calls_and_work_without_streams(self):
        self.record(collectors='hgvideo')
        self.assertEqual(self.api_calls(), {k: v[0] for k, v in EXPECTED_CALLS.items()})
        self.assertEqual(self.rows('SELECT kind, COUNT(*), COUNT(stream), COUNT(stream_handle) '
                                   'FROM video_activities GROUP BY kind'),
                         [(1, DECODES, 0, DECODES), (2, ENCODES, 0, ENCODES)])
        self.assertEqual(self.rows('SELECT COUNT(*) FROM ppu_activities')[0][0], 0)
        summary = self.stats_rows('video_activity_sum')
        self.assertEqual(sorted((r['Engine'], int(r['Frames']), r['Stream']) for r in summary),
                         [('NVDEC', DECODES, ''), ('NVENC', ENCODES, '')])
        out = self.path('rep.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        rows = {trace.path(e.track)[-1] for e in trace.events if e.type == pftrace.BEGIN}
        self.assertTrue({'Decode API', 'Encode API', 'JPEG API'} <= rows, rows)


class Timeline(VideoCase):
    """The API rows under the thread, the Video rows, and a flow per piece of work."""

    def test_pftrace_and_json(self):
        self.record()
        out = self.path('rep.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        trace = pftrace.read(out)
        self.assertEqual(trace.problems, [])
        begins = [e for e in trace.events if e.type == pftrace.BEGIN]
        by_row = {}
        for e in begins:
            by_row.setdefault(trace.path(e.track)[-1], []).append(e)
        for api in ('Decode API', 'Encode API', 'JPEG API'):
            calls = sum(n for (a, _), (n, _) in EXPECTED_CALLS.items() if a == api)
            self.assertEqual(len(by_row[api]), calls, api)
        video_rows = [row for row in by_row if row.endswith('Video')]
        names = [e.name for row in video_rows for e in by_row[row]]
        self.assertEqual(names.count('[Video Decode]'), DECODES)
        self.assertEqual(names.count('[Video Encode]'), ENCODES)
        self.assertEqual(names.count('[Video JPEG]'), JPEGS)
        summed = [e.name for e in by_row['Video (all streams)']]
        self.assertEqual(sorted(summed), sorted(['[Video Decode]'] * DECODES +
                                                ['[Video Encode]'] * ENCODES))
        # a flow from each submitting call to its work
        pairs = [(trace.path(a.track)[-1], a.name, trace.path(b.track)[-1], b.name)
                 for a, b in trace.flows]
        self.assertEqual(sum(p[1] == 'cuvidDecodePicture' and p[3] == '[Video Decode]'
                             for p in pairs), DECODES)
        self.assertEqual(sum(p[1] == 'nvEncEncodePicture' and p[3] == '[Video Encode]'
                             for p in pairs), ENCODES)
        self.assertEqual(sum(p[1] == 'nvjpegDecode' and p[3] == '[Video JPEG]'
                             for p in pairs), JPEGS)
        # the JSON export draws the same
        out = self.path('rep.json')
        r = self.run_cmd([EXPORT, '-t', 'json', '-o', out, self.report()])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            events = json.load(f)['traceEvents']
        slices = [e for e in events if e.get('ph') == 'X']
        self.assertEqual(sum(e['name'] == '[Video Decode]' for e in slices), 2 * DECODES + DECODES)
        self.assertEqual(sum(e['name'] == 'nvEncLockBitstream' for e in slices), ENCODES)


class BadInput(VideoCase):
    """Hostile video records: counted, reported skips; never a crash."""

    def test_crafted(self):
        def api(fn, start, delta, sequence=1, status=0):
            return craft.word(128, 4, fn, delta) + struct.pack('<QQiI', start, 0x10, status, sequence)

        def activity(kind, start, end, delta, call_id):
            return (craft.word(129, 9, kind, delta) +
                    struct.pack('<QQQQQQIIiI', start, end, call_id, 0x10, 0, 100, 0, 0, 0, 0))

        def status(code, value):
            return craft.word(130, 2, code, 5) + struct.pack('<II', value, 1)

        body = (api(4, 100, 200) +                      # a good cuvidDecodePicture
                api(500, 100, 10) +                     # an unknown function id
                api(4, 10 ** 9, 10) +                   # starts after it ends
                activity(1, 300, 350, 200, 1 << 40 | 1) +  # the good call's decode
                activity(7, 300, 350, 10, 1) +          # an unknown kind
                activity(2, 400, 350, 10, 1) +          # ends before it starts
                activity(1, 500, 520, 200, 99) +        # its call was not recorded
                status(1, 0x7fff0005) +                 # an NVENC list of an unknown version
                status(42, 0))                          # an unknown status
        seg = craft.thread_segment(7, 7, 0x77, body, features=1 | 256)
        man = craft.manifest(collectors={'enabled': ['hgvideo']})
        path = self.path('bad.asys-rep')
        with open(path, 'wb') as f:
            f.write(craft.report([('manifest.json', man), ('segments/a.seg', seg)]))
        con = self.db('bad')
        self.assertEqual(con.execute('SELECT COUNT(*) FROM video_api_calls').fetchone()[0], 1)
        self.assertEqual(con.execute('SELECT COUNT(*) FROM video_activities').fetchone()[0], 2)
        self.assertEqual(con.execute('SELECT COUNT(*) FROM video_activities '
                                     'WHERE api_id IS NULL').fetchone()[0], 1)
        info = dict(con.execute("SELECT key, value FROM session_info WHERE key LIKE 'video%'"))
        self.assertEqual(info, {'video_skipped_unknown_function': 1,
                                'video_skipped_unknown_kind': 1, 'video_skipped_bad_time': 2,
                                'video_activities_without_call': 1,
                                'video_skipped_unknown_status': 1,
                                'video_untraced_function_lists': 1})
        warnings = [m for (m,) in con.execute('SELECT message FROM import_warnings')]
        self.assertTrue(any('0x7fff0005' in m for m in warnings), warnings)
        r = self.stats('-q', '-r', 'report_info', '-f', 'csv', path)
        info = dict(line.split(',', 1) for line in r.stdout.decode().splitlines()[1:])
        self.assertEqual(info['NVENC function lists not traced (unknown version)'], '1')
        self.assertEqual(info['Video records skipped at import (unknown_function)'], '1')
        self.assertEqual(info['Video work whose call was not recorded'], '1')
        for report in ('video_api_sum', 'video_api_trace', 'video_activity_sum'):
            self.stats('-q', '--report', report, path)
        out = self.path('bad.pftrace')
        r = self.run_cmd([EXPORT, '-o', out, path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(pftrace.read(out).problems, [])


if __name__ == '__main__':
    if not have_stand_ins():  # ctest counts exit code 77 as skipped, not passed
        print('SKIPPED: the video stand-ins were not built')
        raise SystemExit(77)
    unittest.main(verbosity=2)
