"""Reports made by hand, byte by byte from schema/FORMAT.md, for the tests that
feed the tools what no recorder writes: hostile ids, duplicates, bombs, tar
tricks.  Independent of asys's own writer (Python's tarfile, the zstd CLI)."""
import io
import json
import struct
import subprocess
import tarfile

HEADER_SIZE = 256
THREAD, LAUNCHER = 1, 2
CLOCK_MONOTONIC = 1
FEATURE_CORE, FEATURE_HGTX = 1, 2
REC_STRING_DEF, REC_PROCESS_INFO, REC_THREAD_START = 3, 4, 5
REC_HGTX_PUSH, REC_HGTX_POP, REC_HGTX_MARK = 16, 18, 19


def word(rtype, size_words, arg=0, delta=0):
    return struct.pack('<Q', rtype | size_words << 8 | arg << 16 | delta << 32)


def segment_header(pid, tid, uid, features=FEATURE_CORE | FEATURE_HGTX, collector=THREAD,
                   thread_index=1, parent_uid=0, inherited=0, base=0, version=2):
    h = bytearray(HEADER_SIZE)
    h[0:8] = b'ASYSSEG\0'
    struct.pack_into('<HHI', h, 8, version, HEADER_SIZE, collector)
    struct.pack_into('<Q', h, 16, features)
    struct.pack_into('<IIII', h, 24, pid, tid, 1, thread_index)
    struct.pack_into('<QQ', h, 40, uid, parent_uid)
    struct.pack_into('<II', h, 56, inherited, CLOCK_MONOTONIC)
    struct.pack_into('<QQQQ', h, 64, base, base, base, 1 << 20)
    return bytes(h)


def string_def(sid, text, delta=0):
    data = text.encode() if isinstance(text, str) else text
    padded = data + b'\0' * (-len(data) % 8)
    size = 24 + len(padded)
    if size // 8 > 254:  # the extended size: the u32 after the header word holds it
        return word(REC_STRING_DEF, 255, 0, delta) + struct.pack('<IIII', size, sid, len(data), 0) + padded
    return word(REC_STRING_DEF, size // 8, 0, delta) + struct.pack('<IIII', 0, sid, len(data), 0) + padded


def process_info(pid, exe_sid, cmd_sid, delta=0):
    return word(REC_PROCESS_INFO, 4, 0, delta) + struct.pack('<IIIIII', pid, 1, exe_sid, cmd_sid, 1, 0)


def thread_start(tid, name_sid, delta=0):
    return word(REC_THREAD_START, 2, 0, delta) + struct.pack('<II', tid, name_sid)


def push(sid, delta=0):
    return word(REC_HGTX_PUSH, 1, sid, delta)


def pop(delta=0):
    return word(REC_HGTX_POP, 1, 0, delta)


def thread_segment(pid, tid, uid, body, **kw):
    """A thread's segment: header, the process and thread records, then body."""
    return (segment_header(pid, tid, uid, **kw) + string_def(1, '/bin/crafted') +
            process_info(pid, 1, 1, 10) + string_def(2, 'crafted') + thread_start(tid, 2) + body)


def manifest(**extra):
    m = {'format_version': 2, 'report_id': 'crafted', 'asys_version': 'test',
         'session': {'start_monotonic_ns': '0', 'end_monotonic_ns': '1000000'},
         'clock': {'kind': 'monotonic', 'boottime_minus_monotonic_ns': 0}, 'collectors': {'enabled': ['hgtx']}}
    m.update(extra)
    return json.dumps(m).encode()


def tar_members(members):
    """members: (name, bytes) or (name, tarfile.TarInfo) for special entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            if isinstance(data, tarfile.TarInfo):
                data.name = name
                t.addfile(data)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zstd(data, level=3):
    return subprocess.run(['zstd', '-q', '-c', '-%d' % level], input=data, capture_output=True,
                          check=True).stdout


def report(members, level=3):
    """A report: members of (name, bytes|TarInfo), manifest.json first unless given."""
    if not members or members[0][0] != 'manifest.json':
        members = [('manifest.json', manifest())] + list(members)
    return zstd(tar_members(members), level)
