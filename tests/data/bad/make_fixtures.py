#!/usr/bin/env python3
"""Writes the bad-report fixtures of this directory (README.md says what is
wrong with each and what the tools must do).  They are committed; run this
again after changing one: python3 tests/data/bad/make_fixtures.py"""
import os
import struct
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'e2e'))
import craft  # noqa: E402

GOOD_SEED = os.path.join(HERE, '..', 'fuzz-seed', 'hgtx_threads.report')


def seg(pid=9, uid=0x99, body=b'', **kw):
    return craft.thread_segment(pid, pid, uid, body, **kw)


def ranges(n, sid=2):
    return b''.join(craft.push(sid, 10) + craft.pop(10) for _ in range(n))


def specials():
    out = []
    for kind, name in ((tarfile.SYMTYPE, 'segments/link.seg'), (tarfile.LNKTYPE, 'segments/hard.seg'),
                       (tarfile.CHRTYPE, 'segments/dev.seg'), (tarfile.DIRTYPE, 'segments/dir.seg')):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = '/etc/passwd'
        out.append((name, info))
    return out


def fixtures():
    good = open(GOOD_SEED, 'rb').read()
    extended_too_big = craft.word(3, 255) + struct.pack('<IIII', 1 << 31, 5, 4, 0)
    string_past_end = craft.word(3, 4) + struct.pack('<IIII', 0, 7, 5000, 0) + b'abcdefgh'
    chain_past_end = craft.word(10, 3) + struct.pack('<II', 4, 900) + b'\0' * 8
    return {
        'huge_string_id': craft.report([('segments/a.seg', seg(
            body=craft.thread_start(9, 0x7fffffff, 5) + craft.push(0xfffe, 5)))]),
        'manifest_overflow': craft.report([('manifest.json', craft.manifest(
            session={'start_monotonic_ns': '5', 'end_monotonic_ns': '18446744073709551615',
                     'start_realtime_ns': 1e300},
            clock={'tick_hz': -1e308, 'pairs': [[1e300, 5]]}, target={'pid': 1e19}))]),
        'manifest_future': craft.report([('manifest.json', craft.manifest(format_version=99))]),
        'manifest_not_json': craft.report([('manifest.json', b'{"format_version": 2,')]),
        'zstd_bomb': craft.report([('segments/a.seg', seg(
            body=craft.word(craft.REC_HGTX_MARK, 1, 2) * (8 << 20)))], level=19),
        'duplicate_segments': craft.report([('segments/%s.seg' % c, seg(body=ranges(10)))
                                            for c in 'abc']),
        'member_escape': craft.report([('../x.seg', seg())]),
        'member_absolute': craft.report([('/tmp/x.seg', seg())]),
        'tar_specials': craft.report([('segments/a.seg', seg(body=ranges(3)))] + specials()),
        'not_zstd': bytes(range(256)) * 16,
        'empty': b'',
        'truncated': good[:len(good) // 2],
        'no_manifest_first': craft.zstd(craft.tar_members(
            [('segments/a.seg', seg()), ('manifest.json', craft.manifest())])),
        'bad_segment_header': craft.report([('segments/a.seg', b'ASYSSEG\0' + b'\xff' * 300),
                                            ('segments/b.seg', seg(body=ranges(2)))]),
        'unknown_record': craft.report([('segments/a.seg', seg(body=ranges(2) + craft.word(99, 1)))]),
        'record_too_big': craft.report([('segments/a.seg', seg(body=ranges(2) + extended_too_big))]),
        'string_past_record': craft.report([('segments/a.seg', seg(body=string_past_end +
                                                                   ranges(1)))]),
        'callchain_past_record': craft.report([('segments/a.seg', seg(
            body=chain_past_end + ranges(1), features=1 | 2 | 8))]),
        'fork_loop': craft.report([
            ('segments/a.seg', seg(9, 0xe, ranges(2), parent_uid=0xf, inherited=0xffffffff)),
            ('segments/b.seg', seg(10, 0xf, ranges(2), parent_uid=0xe, inherited=0xffffffff))]),
        'future_segment': craft.report([('segments/a.seg', seg(version=99))]),
        'unknown_features': craft.report([('segments/a.seg', seg(features=1 << 40))]),
    }


def main():
    for name, data in fixtures().items():
        with open(os.path.join(HERE, name + '.report'), 'wb') as f:
            f.write(data)
    print('wrote %d fixtures' % len(fixtures()))


if __name__ == '__main__':
    main()
