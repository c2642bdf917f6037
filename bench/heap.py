"""Heap tracing on a malloc/free-heavy loop (bench/run_benchmarks.py --only
heap): heap_loop with 1 and 2 threads, without a tool, under asys -t none
-s none (CPU sampling, on by default, has its own bench) --heap-memory-usage at the default interval and at interval 1, and under
heaptrack (Debian's), median of --runs runs each (interval 1 also with
ASYS_ARENA_COMPRESS=0: every slot compressed at finalize, as before the
launcher compressed during the run); and the report bytes per
sampled allocation.  Targets: <= 1.3x at the default interval; at interval
1 faster than heaptrack.  Also: the cost of --hggc-memory-usage per
cudaMalloc/cudaFree pair on simppu, and import + heap_leaks on 10 M
allocation events (5 M allocations and their frees at interval 1)."""
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
    bench_heap_tracing(args, work)
    bench_device_memory(args, work)
    bench_heap_import(args, work)


def bench_heap_tracing(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(args.build, 'bench', 'heap_loop')
    report = os.path.join(work, 'heap')
    heaptrack = shutil.which('heaptrack')
    print('\n## Heap tracing: heap_loop, %d allocations per thread, median of %d runs'
          % (args.heap_allocations, args.runs))
    print('| threads | no tool | asys, default interval | asys, interval 1 | interval 1, '
          'compressed at finalize only | heaptrack | ratios (default / 1 / heaptrack) |')
    print('|---:|---:|---:|---:|---:|---:|---|')
    late = dict(os.environ, ASYS_ARENA_COMPRESS='0')  # the same, no compression during the run
    for threads in (1, 2):
        argv = [prog, str(threads), str(args.heap_allocations)]
        traced = [asys, 'profile', '-t', 'none', '-s', 'none', '--heap-memory-usage', 'true',
                  '-o', report,
                  '--force-overwrite=true']
        plain, default, every, every_late, peer = [], [], [], [], []
        every_argv = traced[:6] + ['--heap-sampling-interval-bytes', '1'] + traced[6:] + argv
        for _ in range(args.runs):
            plain.append(_seconds(argv, work))
            default.append(_seconds(traced + argv, work))
            every_late.append(_seconds(every_argv, work, late))
            every.append(_seconds(every_argv, work))
            if heaptrack:
                peer.append(_seconds([heaptrack, '-o', os.path.join(work, 'ht')] + argv, work))
        base = statistics.median(plain)
        med = [statistics.median(x) for x in (default, every, every_late)]
        ht = statistics.median(peer) if peer else None
        print('| %d | %.3f s | %.3f s | %.3f s | %.3f s | %s | %.2f× / %.2f× / %s |'
              % (threads, base, med[0], med[1], med[2], '%.3f s' % ht if ht else 'not installed',
                 med[0] / base, med[1] / base, '%.2f×' % (ht / base) if ht else '-'))
    size = os.path.getsize(report + '.asys-rep')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    subprocess.run([stats, '-q', '-r', 'report_info', report + '.asys-rep'], check=True,
                   capture_output=True)
    import sqlite3
    con = sqlite3.connect(report + '.sqlite')
    sampled = con.execute('SELECT SUM(samples) FROM heap_allocations').fetchone()[0]
    print('| report at interval 1, 2 threads: %d sampled allocations, %.1f bytes each '
          '(compressed, frees and stacks included) | | | | | |' % (sampled, size / sampled))
    bench_heap_aggregates(args, work, argv, size)


def bench_heap_aggregates(args, work, argv, per_event_size):
    """The last run's program at interval 1 with --heap-report-interval 100."""
    asys = os.path.join(args.build, 'bin', 'asys')
    report = os.path.join(work, 'heap_sums')
    seconds = _seconds([asys, 'profile', '-t', 'none', '-s', 'none', '--heap-memory-usage', 'true',
                        '--heap-sampling-interval-bytes', '1', '--heap-report-interval', '100',
                        '-o', report, '--force-overwrite=true'] + argv, work)
    size = os.path.getsize(report + '.asys-rep')
    print('| the same with --heap-report-interval 100: %.3f s, report %d bytes '
          '(per event: %d bytes, %.0f× larger) | | | | | |'
          % (seconds, size, per_event_size, per_event_size / size))


def bench_device_memory(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    run = os.path.join(args.build, 'simppu', 'simppu-run')
    prog = os.path.join(args.build, 'tests', 'progs', 'hggc_workload')
    if not os.path.exists(prog):
        print('\n(hggc_workload not built: no device memory figures)')
        return

    def pair_ns(*options):
        argv = [run] + ([asys, 'profile', '-t', 'hggc', *options, '-o',
                         os.path.join(work, 'dev'), '--force-overwrite=true'] if options else [])
        out = subprocess.run(argv + [prog, 'mallocs', '50000'], capture_output=True, check=True)
        return float(out.stdout.decode().split('malloc_free_ns ')[1].split()[0])

    runs = [(pair_ns(), pair_ns('--hggc-memory-usage', 'false'),
             pair_ns('--hggc-memory-usage', 'device')) for _ in range(args.runs)]
    plain, off, on = (statistics.median(r[i] for r in runs) for i in range(3))
    print('\n## cudaMalloc + cudaFree (64 KiB) on simppu, median of %d runs' % args.runs)
    print('| no tool | -t hggc | -t hggc --hggc-memory-usage device | added by memory usage |')
    print('|---:|---:|---:|---:|')
    print('| %.0f ns | %.0f ns | %.0f ns | %+.0f ns per pair |' % (plain, off, on, on - off))


def bench_heap_import(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    prog = os.path.join(args.build, 'bench', 'heap_loop')
    report = os.path.join(work, 'big')
    subprocess.run([asys, 'profile', '-t', 'none', '-s', 'none', '--heap-memory-usage', 'true',
                    '--heap-sampling-interval-bytes', '1', '-o', report, '--force-overwrite=true',
                    prog, '1', '5000000'], check=True, capture_output=True)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.execv(stats, [stats, '-q', '-r', 'heap_leaks', report + '.asys-rep'])
    _, status, usage = os.wait4(pid, 0)
    first = time.monotonic() - start
    start = time.monotonic()
    subprocess.run([stats, '-q', '-r', 'heap_leaks', report + '.asys-rep'], check=True,
                   capture_output=True)
    again = time.monotonic() - start
    print('\n## 10 M heap events (5 M allocations + frees, interval 1): import + heap_leaks '
          '%.1f s, peak RSS %.0f MiB (target < 15 s, < 256 MiB); heap_leaks alone %.2f s; '
          'report %.1f MiB' % (first, usage.ru_maxrss / 1024, again,
                              os.path.getsize(report + '.asys-rep') / 1048576))
