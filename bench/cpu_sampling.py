"""CPU sampling (bench/run_benchmarks.py --only cpu_sampling): a CPU-bound
loop (tests/progs/cpu_burn_* loop) without a tool, under `asys profile -s
process-tree` with -b fp and -b dwarf, and under `perf record -g` and `perf
record --call-graph dwarf` at the same event and period.  Prints the
slowdown of the loop (its own clock), the bytes per sample of the report
against perf.data, and the offline rate: asys's unwinding and symbolization
after the run (the launcher's time after the program ended, less that of a
run without sampling) against `perf script` on the perf.data."""
import json
import os
import shutil
import statistics
import subprocess
import time


def run(argv, env=None, cwd=None):
    r = subprocess.run(argv, capture_output=True, env=env, cwd=cwd)
    if r.returncode != 0:
        raise SystemExit('benchmark step failed: %s\n%s' % (' '.join(argv),
                                                           r.stderr.decode(errors='replace')))
    return r


def manifest(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


def bench_cpu_sampling(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    progs = os.path.join(args.build, 'tests', 'progs')
    perf = shutil.which('perf')
    env = dict(os.environ, TMPDIR=work)
    millions = str(getattr(args, 'cpu_loop_millions', 2000))
    loop = {'fp': [os.path.join(progs, 'cpu_burn_fp'), 'loop', millions],
            'nofp': [os.path.join(progs, 'cpu_burn_nofp'), 'loop', millions]}
    report = os.path.join(work, 'cpu.asys-rep')

    def plain(build):
        return float(run(loop[build]).stdout)

    def with_asys(build, options):
        t0 = time.monotonic()
        r = run([asys, 'profile', '-t', 'none', '-o', report, '--force-overwrite=true', *options,
                 *loop[build]], env=env, cwd=work)
        wall = time.monotonic() - t0
        loop_s = float(r.stdout)
        m = manifest(report)
        return loop_s, wall, m.get('cpu-sampling', {}), os.path.getsize(report)

    rows = []
    base = {b: statistics.median(plain(b) for _ in range(args.runs)) for b in loop}
    # the launcher's own cost before and after the program, without sampling
    none_wall = statistics.median(with_asys('nofp', ['-s', 'none'])[1] - base['nofp']
                                  for _ in range(args.runs))
    event = period = None
    for label, build, options in (('asys -s process-tree -b fp', 'fp', ['-b', 'fp']),
                                  ('asys -s process-tree -b dwarf', 'nofp', ['-b', 'dwarf'])):
        loops, posts, sizes, samples = [], [], [], []
        for _ in range(args.runs):
            loop_s, wall, info, size = with_asys(build, ['-s', 'process-tree', *options])
            loops.append(loop_s)
            posts.append(wall - loop_s - none_wall)
            sizes.append(size)
            samples.append(int(info['samples']))
            event, period = info['event'], int(info['period'])
        n = statistics.median(samples)
        rows.append((label, statistics.median(loops) / base[build], statistics.median(sizes) / n,
                     n / max(statistics.median(posts), 1e-6), n))
    if perf:
        perf_event = ['-e', event, '-c', str(period)]
        data = os.path.join(work, 'perf.data')
        for label, build, options in (('perf record -g', 'fp', ['-g']),
                                      ('perf record --call-graph dwarf', 'nofp',
                                       ['--call-graph', 'dwarf'])):
            loops, sizes, rates, samples = [], [], [], []
            for _ in range(args.runs):
                r = run([perf, 'record', '-q', '-o', data, *perf_event, *options, *loop[build]],
                        cwd=work)
                loops.append(float(r.stdout.split()[-1]))
                t0 = time.monotonic()
                out = run([perf, 'script', '-i', data, '-F', 'comm,tid,time,ip,sym'], cwd=work)
                script_s = time.monotonic() - t0
                # one header line per sample, its frames indented below
                n = sum(1 for line in out.stdout.decode(errors='replace').splitlines()
                        if line and not line[0].isspace())
                samples.append(n)
                sizes.append(os.path.getsize(data) / max(n, 1))
                rates.append(n / max(script_s, 1e-6))
            rows.append((label, statistics.median(loops) / base[build], statistics.median(sizes),
                         statistics.median(rates), statistics.median(samples)))
    print('\n## CPU sampling (%s M iterations, %s every %s, median of %d runs)' %
          (millions, event, period, args.runs))
    print('| tool | loop slowdown | bytes per sample | offline unwind + symbolize (samples/s) '
          '| samples |')
    print('|---|---:|---:|---:|---:|')
    for label, slowdown, bytes_per_sample, rate, n in rows:
        print('| %s | %.3fx | %.0f | %.0f | %d |' % (label, slowdown, bytes_per_sample, rate, n))
    if not perf:
        print('(perf not installed: no peer figures)')
    print('offline rate: asys = samples / (launcher time after the program, less a -s none run); '
          'perf = samples / `perf script` time')
