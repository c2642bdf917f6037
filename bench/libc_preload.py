"""What collectors that are off cost a program's libc calls (bench/run_benchmarks.py
--only libc_preload): libc_loops' malloc/free pairs and one-byte reads, in ns per
call measured inside the program, without asys, under the default -t
(hggc,hgtx,acdnn,acblas: nothing interposes libc), and with the OS runtime and
heap libraries preloaded but their collectors off (what every run paid before
they were split out of libasys-inject.so).  Configurations interleaved, median
of --runs; target: the default within 1.02x of no asys."""
import os
import statistics
import subprocess


def _ns_per_call(argv, env=None):
    r = subprocess.run(argv, capture_output=True, env=env, check=True)
    return float(r.stdout.decode().strip().splitlines()[-1])


def bench_libc_preload(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    loops = os.path.join(args.build, 'bench', 'libc_loops')
    lib = os.path.join(args.build, 'lib')
    report = os.path.join(work, 'libc')
    # the old cost: the wrappers loaded, their collectors off (the user's LD_PRELOAD
    # comes after asys's own)
    wrapped = dict(os.environ, LD_PRELOAD='%s/libasys-osrt.so:%s/libasys-heap.so' % (lib, lib))
    runs = max(args.runs, 11)
    print('\n## Collectors that are off: libc calls, ns per call, median of %d interleaved runs'
          % runs)
    print('| loop | no asys | default -t | ratio | spread (min-max ratio) | OSRT+heap wrappers '
          'loaded, off | ratio |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for loop, calls in (('malloc', 20000000), ('read', 2000000)):
        argv = [loops, loop, str(calls)]
        traced = [asys, 'profile', '-s', 'none', '-o', report, '--force-overwrite=true'] + argv
        plain, default, old = [], [], []
        for _ in range(runs):
            plain.append(_ns_per_call(argv))
            default.append(_ns_per_call(traced))
            old.append(_ns_per_call(traced, wrapped))
        base = statistics.median(plain)
        ratios = sorted(d / p for d, p in zip(default, plain))
        print('| %s | %.2f | %.2f | %.3f× | %.3f-%.3f× | %.2f | %.3f× |'
              % (loop, base, statistics.median(default), statistics.median(default) / base,
                 ratios[0], ratios[-1], statistics.median(old), statistics.median(old) / base))
