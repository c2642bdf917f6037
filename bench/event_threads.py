"""Event sampling per thread (bench/run_benchmarks.py --only event_threads):
the run time (as the program measures it) of a thread-heavy program (200
short threads, 8 at a time) and of two threads making 3 million small
system calls each, recorded with
`--event-sample process-tree` per thread (the default), per CPU only
(`--event-sample-threads=false`), and without event sampling, all with
`-t none -s none` (the launcher alone); the modes in turn, the median of --runs
runs each, and the ratios to the run without event sampling.  Also the threads the
launcher could not follow (report_info): short threads that end before
their counters open."""
import csv
import io
import os
import statistics
import subprocess
import time

MODES = (('none', ['--event-sample', 'none']),
         ('per CPU', ['--event-sample', 'process-tree', '--event-sample-threads=false']),
         ('per thread', ['--event-sample', 'process-tree']))


def _not_followed(stats, report):
    out = subprocess.run([stats, '-q', '-r', 'report_info', '--format', 'csv', report],
                         capture_output=True, text=True, check=True).stdout
    for row in csv.DictReader(io.StringIO(out)):
        if row['Property'] == 'Event sampling per thread':
            return row['Value'].split(' (')[0]
    return '-'


def _run(argv, cwd):
    """(the program's own run time, wall time of the whole asys profile) in s."""
    start = time.monotonic()
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True).stdout
    wall = time.monotonic() - start
    (elapsed,) = [int(line.split()[1]) for line in out.splitlines()
                  if line.startswith('elapsed_ns ')]
    return elapsed / 1e9, wall


def bench_event_threads(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    program = os.path.join(args.build, 'tests', 'progs', 'event_threads')
    report = os.path.join(work, 'events.asys-rep')
    print('\n## event sampling per thread (median of %d runs, -t none -s none)' % args.runs)
    print('| program | mode | program run (s) | vs none | asys profile wall (s) | threads |')
    print('|---|---|---:|---:|---:|---|')
    for label, argv in (('200 threads', [program, 'many', '200']),
                        ('2 threads x 3 M getppid', [program, 'loop', '3000'])):
        runs = {mode: [] for mode, _ in MODES}
        threads = ''
        for _ in range(args.runs):  # the modes in turn: a burst of load hits them all
            for mode, options in MODES:
                runs[mode].append(_run([asys, 'profile', '-o', report, '--force-overwrite=true',
                                        '-t', 'none', '-s', 'none', *options, *argv], work))
                if mode == 'per thread':
                    threads = _not_followed(stats, report)
        base = statistics.median(r for r, _ in runs['none'])
        for mode, _ in MODES:
            run = statistics.median(r for r, _ in runs[mode])
            wall = statistics.median(w for _, w in runs[mode])
            print('| %s | %s | %.3f | %.3f | %.3f | %s |'
                  % (label, mode, run, run / base, wall, threads if mode == 'per thread' else ''))
