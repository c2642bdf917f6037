"""Heap tracing on a malloc/free-heavy loop (bench/run_benchmarks.py --only
heap): heap_loop with 1 and 2 threads, without a tool, under asys -t none
--heap-memory-usage at the default interval and at interval 1, and under
heaptrack (Debian's), median of --runs runs each; and the report bytes per
sampled allocation.  Targets: <= 1.3x at the default interval; at interval
1 faster than heaptrack."""
import os
import shutil
import statistics
import subprocess
import time


def _seconds(argv, cwd, env=None):
    start = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def bench_heap(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(args.build, 'bench', 'heap_loop')
    report = os.path.join(work, 'heap')
    heaptrack = shutil.which('heaptrack')
    print('\n## Heap tracing: heap_loop, %d allocations per thread, median of %d runs'
          % (args.heap_allocations, args.runs))
    print('| threads | no tool | asys, default interval | asys, interval 1 | heaptrack | '
          'ratios (default / 1 / heaptrack) |')
    print('|---:|---:|---:|---:|---:|---|')
    for threads in (1, 2):
        argv = [prog, str(threads), str(args.heap_allocations)]
        traced = [asys, 'profile', '-t', 'none', '--heap-memory-usage', 'true', '-o', report,
                  '--force-overwrite=true']
        plain, default, every, peer = [], [], [], []
        for _ in range(args.runs):
            plain.append(_seconds(argv, work))
            default.append(_seconds(traced + argv, work))
            every.append(_seconds(traced[:6] + ['--heap-sampling-interval-bytes', '1']
                                  + traced[6:] + argv, work))
            if heaptrack:
                peer.append(_seconds([heaptrack, '-o', os.path.join(work, 'ht')] + argv, work))
        base = statistics.median(plain)
        med = [statistics.median(x) for x in (default, every)]
        ht = statistics.median(peer) if peer else None
        print('| %d | %.3f s | %.3f s | %.3f s | %s | %.2f× / %.2f× / %s |'
              % (threads, base, med[0], med[1], '%.3f s' % ht if ht else 'not installed',
                 med[0] / base, med[1] / base, '%.2f×' % (ht / base) if ht else '-'))
    size = os.path.getsize(report + '.asys-rep')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    subprocess.run([stats, '-q', '-r', 'report_info', report + '.asys-rep'], check=True,
                   capture_output=True)
    import sqlite3
    con = sqlite3.connect(report + '.sqlite')
    sampled = con.execute('SELECT COUNT(*) FROM heap_allocations').fetchone()[0]
    print('| report at interval 1, 2 threads: %d sampled allocations, %.1f bytes each '
          '(compressed, frees and stacks included) | | | | | |' % (sampled, size / sampled))
