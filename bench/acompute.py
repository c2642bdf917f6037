"""ACDNN/ACBLAS tracing cost (bench/run_benchmarks.py --only acompute), all in one run:

1. Per wrapped call: acompute_workload loop N (N cublasGetMathMode calls on
   simppu's cuBLAS stand-in: a call that does no device work, so the wrapper's
   own cost shows alone), timed by the program itself: without asys, under
   asys -t hggc (the library not preloaded) and under asys -t acblas (each
   call recorded).  Target: <= 40 ns added per traced call.
2. Programs that call neither library, under the default -t
   (hggc,hgtx,acdnn,acblas: libasys-acompute.so preloaded, dlsym interposed)
   against -t hggc,hgtx: the per-process start cost (a shell script of 500
   fork/execs) and a hot loop (libc_loops malloc).  Target: no difference
   beyond the machine's noise; the spread of the repeats is printed."""
import os
import statistics
import subprocess
import time

PIPELINE = r'''#!/bin/sh
i=0
while [ $i -lt 100 ]; do
  echo "line $i" | tr a-z A-Z | wc -c > /dev/null
  /bin/true
  cat /dev/null
  i=$((i+1))
done
'''


def _ns_per_call(out):
    """The number the program printed last ("ns_per_call 2.15" or "2.150")."""
    value = float('nan')
    for line in out.decode(errors='replace').splitlines():
        words = line.split()
        try:
            value = float(words[-1])
        except (IndexError, ValueError):
            pass
    return value


def _spread(values):
    return (max(values) - min(values)) / statistics.median(values) * 100 if values else 0.0


def bench_acompute(args, work):
    build = args.build
    asys = os.path.join(build, 'bin', 'asys')
    run = os.path.join(build, 'simppu', 'simppu-run')
    prog = os.path.join(build, 'tests', 'progs', 'acompute_workload')
    loops = os.path.join(build, 'bench', 'libc_loops')
    lib = os.path.join(build, 'lib', 'libasys-acompute.so')
    if not all(os.path.exists(p) for p in (run, prog, lib)):
        print('\n## ACDNN/ACBLAS: the stand-ins or libasys-acompute.so were not built, skipped')
        return None
    env = dict(os.environ, TMPDIR=work)
    n = args.acompute_calls
    rep = os.path.join(work, 'acompute')

    def loop(tool):
        argv = [run] + tool + [prog, 'loop', str(n)]
        r = subprocess.run(argv, cwd=work, env=env, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError('%s: %s' % (' '.join(argv), r.stderr.decode(errors='replace')))
        return _ns_per_call(r.stdout)

    tools = {
        'no asys': [],
        'asys -t hggc (not preloaded)': [asys, 'profile', '-s', 'none', '-t', 'hggc', '-o', rep,
                                         '--force-overwrite=true'],
        'asys -t acblas (traced)': [asys, 'profile', '-s', 'none', '-t', 'acblas', '-o', rep,
                                    '--force-overwrite=true'],
    }
    results = {k: [] for k in tools}
    for _ in range(args.runs + 2):  # interleaved: the machine's drift hits all alike
        for name, tool in tools.items():
            results[name].append(loop(tool))
    med = {k: statistics.median(v) for k, v in results.items()}
    print('\n## ACDNN/ACBLAS: cost per wrapped call (cublasGetMathMode x %d on the stand-in, '
          '%d runs, medians)' % (n, args.runs + 2))
    print('| run | ns per call | spread (%) | added (ns) |')
    print('|---|---:|---:|---:|')
    for k in tools:
        print('| %s | %.1f | %.0f | %+.1f |' % (k, med[k], _spread(results[k]),
                                                med[k] - med['no asys']))
    added = med['asys -t acblas (traced)'] - med['no asys']
    # the anchor: writing fresh segment memory, per byte, on this machine
    fill = os.path.join(build, 'bench', 'segment_fill')
    per_byte = float('nan')
    if os.path.exists(fill):
        per_byte = statistics.median(
            float(subprocess.run([fill, work, '32', '64'], capture_output=True, check=True)
                  .stdout.split()[1]) for _ in range(args.runs))
    seg_bytes = 0
    seg_dir = None
    r = subprocess.run([asys, 'dump', rep + '.asys-rep'], capture_output=True)
    calls = r.stdout.count(b'ACBLAS_CALL')
    same = r.stdout.count(b'ACBLAS_CALL_SAME')
    seg_bytes = 32 * same + 48 * (calls - same)
    per_call = seg_bytes / calls if calls else float('nan')
    print('Traced call: +%.1f ns (target <= 40 ns); %.1f bytes written per call (%d of %d calls '
          'in the 32-byte form); writing fresh segment memory costs %.2f ns per byte on this '
          'machine (bench/segment_fill, same run): %.1f ns of the above, the wrapper itself '
          '%.1f ns' % (added, per_call, same, calls, per_byte, per_call * per_byte,
                       added - per_call * per_byte))
    del seg_dir

    script = os.path.join(work, 'pipeline.sh')
    with open(script, 'w') as f:
        f.write(PIPELINE)
    os.chmod(script, 0o755)
    rep2 = os.path.join(work, 'neither')
    variants = {
        '-t hggc,hgtx': ['-t', 'hggc,hgtx'],
        'default -t (hggc,hgtx,acdnn,acblas)': [],
    }
    wall = {k: [] for k in variants}
    hot = {k: [] for k in variants}
    for _ in range(args.runs + 2):
        for name, opts in variants.items():
            argv = [asys, 'profile', '-s', 'none', *opts, '-o', rep2, '--force-overwrite=true']
            t0 = time.monotonic()
            subprocess.run(argv + [script], cwd=work, env=env, capture_output=True, check=True)
            wall[name].append((time.monotonic() - t0) * 1e3)
            if os.path.exists(loops):
                r = subprocess.run(argv + [loops, 'malloc', str(args.acompute_loop)], cwd=work,
                                   env=env, capture_output=True, check=True)
                hot[name].append(_ns_per_call(r.stdout))
    print('\n## ACDNN/ACBLAS on by default: programs that call neither library '
          '(%d runs, medians)' % (args.runs + 2))
    print('| -t | 500 fork/execs (ms) | spread (%) | malloc loop (ns/iteration) | spread (%) |')
    print('|---|---:|---:|---:|---:|')
    for k in variants:
        print('| %s | %.0f | %.0f | %s | %s |' % (
            k, statistics.median(wall[k]), _spread(wall[k]),
            '%.2f' % statistics.median(hot[k]) if hot[k] else '-',
            '%.0f' % _spread(hot[k]) if hot[k] else '-'))
    base, dflt = variants
    ratio = statistics.median(wall[dflt]) / statistics.median(wall[base])
    print('Default -t over -t hggc,hgtx: x%.3f per 500 processes' % ratio)
    return {'added_ns_per_call': added, 'start_ratio': ratio}
