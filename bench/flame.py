"""The flame outputs on 1 M weighted stacks (bench/run_benchmarks.py --only
flame): flame_stacks makes that many OS runtime calls, each with its call
stack (both thresholds 0); the analysis database is built first, then each
of asys-export's flame types and the call-tree reports are timed with their
peak RSS.  Targets: < 3 s and < 256 MiB per output."""
import os
import statistics
import subprocess
import sys
import time


def _timed(argv, cwd):
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.chdir(cwd)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit('benchmark step failed: %s' % ' '.join(argv))
    return time.monotonic() - start, usage.ru_maxrss


def bench_flame(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    export = os.path.join(args.build, 'bin', 'asys-export')
    prog = os.path.join(args.build, 'bench', 'flame_stacks')
    report = os.path.join(work, 'flame.asys-rep')
    subprocess.run([asys, 'profile', '-t', 'osrt', '--osrt-threshold', '0',
                    '--osrt-backtrace-threshold', '0', '-o', report[:-len('.asys-rep')],
                    '--force-overwrite=true', prog, str(args.flame_stacks)],
                   check=True, capture_output=True)
    import_s, import_rss = _timed([stats, '-q', '-r', 'report_info', report], work)
    print('\n## Flame outputs: %d OS runtime calls with stacks (flame_stacks), median of %d runs'
          % (args.flame_stacks, args.runs))
    print('| output | time | peak RSS | size | target |')
    print('|---|---:|---:|---:|---|')
    print('| import (analysis database, for comparison) | %.2f s | %.0f MiB | | |'
          % (import_s, import_rss / 1024))
    for kind in ('folded', 'speedscope', 'pprof', 'svg'):
        out = os.path.join(work, 'flame.' + kind)
        runs = [_timed([export, '-q', '-t', kind, '--stacks', 'osrt', '-o', out,
                        '--force-overwrite', report], work) for _ in range(args.runs)]
        print('| asys-export -t %s | %.2f s | %.0f MiB | %.0f KiB | < 3 s, < 256 MiB |'
              % (kind, statistics.median(r[0] for r in runs),
                 max(r[1] for r in runs) / 1024, os.path.getsize(out) / 1024))
    for name in ('stack_topdown:osrt', 'stack_flat:osrt'):
        runs = [_timed([stats, '-q', '-r', name, '-f', 'csv', report], work)
                for _ in range(args.runs)]
        print('| asys-stats -r %s | %.2f s | %.0f MiB | | |'
              % (name, statistics.median(r[0] for r in runs), max(r[1] for r in runs) / 1024))
