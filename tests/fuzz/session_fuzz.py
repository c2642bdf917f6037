#!/usr/bin/env python3
"""Damaged session directories through `asys finalize` (issue 32).

Records one session (ASYS_KEEP_SESSION), then finalizes N mutated copies of
it: the arena cut at a random length, random bytes over a slot header, a
segment header or the control block, a file removed or replaced by a FIFO
or a directory.  For every copy finalize must end within the timeout, not
by a signal, leave no temporary file beside the report, and either refuse
in one line or write a report that asys-stats reads; a report that lost
more than 1 % of the pristine session's records must say so on stderr.

usage: tests/fuzz/session_fuzz.py [-n N] [--seed S] [--build DIR]
Prints one line per failure and a summary; exits 1 when anything failed."""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

SLOT_MAGIC = b'ASYSSLT\0'
SEGMENT_MAGIC = b'ASYSSEG\0'


def run(argv, timeout=120, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          **kw)


def record(bin_dir, progs, work):
    env = dict(os.environ, ASYS_KEEP_SESSION='1', TMPDIR=work)
    loop = os.path.join(progs, 'hgtx_loop')
    threads = os.path.join(progs, 'hgtx_threads')
    script = '%s 300000; %s' % (loop, threads)
    r = run([os.path.join(bin_dir, 'asys'), 'profile', '-t', 'nvtx', '-s', 'none', '-o',
             os.path.join(work, 'pristine'), 'sh', '-c', script], env=env)
    if r.returncode != 0:
        sys.exit('session_fuzz: recording failed: ' + r.stderr.decode(errors='replace'))
    sessions = [n for n in os.listdir(work) if n.startswith('asys-')]
    return os.path.join(work, sessions[0])


def offsets(data, magic):
    out, at = [], data.find(magic)
    while at >= 0:
        out.append(at)
        at = data.find(magic, at + 1)
    return out


def mutate(session, rng):
    """Damages the copy at `session`; returns a short description."""
    arena = os.path.join(session, 'segments', 'arena')
    size = os.path.getsize(arena)
    kind = rng.choice(['cut', 'slot', 'segment', 'control', 'remove', 'fifo', 'dir', 'bytes'])
    if kind == 'cut':
        length = rng.randrange(0, size)
        os.truncate(arena, length)
        return 'arena cut to %d of %d bytes' % (length, size)
    if kind in ('slot', 'segment', 'control', 'bytes'):
        with open(arena, 'r+b') as f:
            data = f.read()
            if kind == 'control':
                at = rng.randrange(0, 64)
            elif kind == 'bytes':
                at = rng.randrange(0, size)
            else:
                places = offsets(data, SLOT_MAGIC if kind == 'slot' else SEGMENT_MAGIC)
                at = rng.choice(places) + rng.randrange(0, 64 if kind == 'slot' else 256)
            count = rng.choice([1, 4, 8, 64])
            f.seek(at)
            f.write(bytes(rng.randrange(256) for _ in range(count)))
        return '%d random bytes at %d (%s)' % (count, at, kind)
    victim = rng.choice(['segments/arena', 'segments/launcher.seg', 'session.json'])
    path = os.path.join(session, victim)
    if os.path.exists(path):
        os.unlink(path)
    if kind == 'fifo':
        os.mkfifo(path)
    elif kind == 'dir':
        os.mkdir(path)
    return '%s: %s' % (victim, {'remove': 'removed', 'fifo': 'a FIFO', 'dir': 'a directory'}[kind])


def records_of(stats, report):
    r = run([stats, '-q', '-r', 'report_info', '-f', 'csv', report])
    if r.returncode != 0:
        return None, r
    for line in r.stdout.decode(errors='replace').splitlines():
        if line.startswith('Records,'):
            return int(line.split(',', 1)[1] or 0), r
    return 0, r


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('-n', type=int, default=200)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--build', default=os.path.join(here, '..', '..', 'build'))
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, 'bin')
    asys, stats = os.path.join(bin_dir, 'asys'), os.path.join(bin_dir, 'asys-stats')
    rng = random.Random(a.seed)
    failures = accepted = refused = quiet_losses = lossy = 0
    with tempfile.TemporaryDirectory(prefix='asys-session-fuzz-') as work:
        pristine = record(bin_dir, os.path.join(a.build, 'tests', 'progs'), work)
        r = run([asys, 'finalize', pristine, '-o', os.path.join(work, 'whole')])
        whole, _ = records_of(stats, os.path.join(work, 'whole.asys-rep'))
        for i in range(a.n):
            copy = os.path.join(work, 'copy')
            out = os.path.join(work, 'out%d' % i)
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(pristine, copy)
            what = mutate(copy, rng)
            problem = None
            try:
                r = run([asys, 'finalize', copy, '-o', out], timeout=60)
            except subprocess.TimeoutExpired:
                problem = 'hang'
            if not problem and r.returncode < 0:
                problem = 'killed by signal %d' % -r.returncode
            err = '' if problem else r.stderr.decode(errors='replace')
            if not problem and 'Sanitizer' in err:
                problem = 'sanitizer: ' + err.strip().splitlines()[-1]
            left = [n for n in os.listdir(work) if n.startswith('.out')]
            if not problem and left:
                problem = 'left behind: %s' % left
            if not problem and r.returncode != 0:
                refused += 1
                lines = [l for l in err.strip().splitlines() if 'warning' not in l]
                if len(lines) > 2:  # the error and where the session is kept
                    problem = 'refused in %d lines' % len(lines)
            elif not problem:
                accepted += 1
                got, sr = records_of(stats, out + '.asys-rep')
                if got is None:
                    problem = 'asys-stats cannot read it: ' + sr.stderr.decode(errors='replace')
                elif whole and got < 0.99 * whole:
                    lossy += 1
                    if 'warning' not in err:
                        quiet_losses += 1
                        problem = 'lost %d of %d records without a warning' % (whole - got,
                                                                                whole)
            if problem:
                failures += 1
                print('session_fuzz: case %d (%s): %s' % (i, what, problem))
            for n in os.listdir(work):
                if n.startswith('out%d' % i):
                    os.unlink(os.path.join(work, n))
    print('session_fuzz: %d cases (seed %d): %d accepted (%d lost more than 1 %%, %d of them '
          'silently), %d refused, %d failures' % (a.n, a.seed, accepted, lossy, quiet_losses,
                                                   refused, failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
