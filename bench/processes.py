"""Programs that start many processes, with and without `asys profile -t
osrt,hgtx`, each with `-s none` and `-s process-tree` (CPU sampling: the
unwinder and symbolizer at finalize) (bench/run_benchmarks.py --only
processes): a shell script of 500
fork/execs, `make -j2` of a generated 200-file C project, and git on a local
repository; `strace -f -c` on the same programs as the raw cost of
watching process creation, and `perf record -F 1000 --call-graph dwarf` as
the peer of process-tree sampling, and the kernel following the same tree
with asys's perf events (bench/process_tree_events.c), without samples and
with asys's default samples freed unread, as the limits of process-tree
sampling.  Prints the ratios, the time each process adds at
start (in the program's run) and at finalize (after it), and the first
import of the report."""
import json
import os
import shutil
import statistics
import subprocess
import time

PIPELINE = r'''#!/bin/sh
# 500 fork/execs: 100 rounds of a three-command pipeline and two commands
i=0
while [ $i -lt 100 ]; do
  echo "line $i" | tr a-z A-Z | wc -c > /dev/null
  /bin/true
  cat /dev/null
  i=$((i+1))
done
'''

GIT = r'''#!/bin/sh
set -e
rm -rf repo && git init -q repo && cd repo
git config user.email bench@example.com && git config user.name bench
for i in $(seq 1 60); do echo "file $i" > f$i.txt; git add f$i.txt; done
git commit -q -m one
for i in $(seq 1 20); do echo "change $i" >> f$i.txt; git commit -q -am "change $i"; done
git log --oneline > /dev/null
git gc -q
git fsck --no-progress > /dev/null
'''


def make_project(root, files=200):
    os.makedirs(root, exist_ok=True)
    objs = []
    for i in range(files):
        with open(os.path.join(root, 'f%d.c' % i), 'w') as f:
            f.write('#include <stdio.h>\nint f%d(int x) { int s = 0; for (int i = 0; i < x; i++) '
                    's += i * %d; return s; }\n' % (i, i + 1))
        objs.append('f%d.o' % i)
    with open(os.path.join(root, 'main.c'), 'w') as f:
        f.write('int main(void) { return 0; }\n')
    with open(os.path.join(root, 'Makefile'), 'w') as f:
        f.write('OBJS = %s main.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
                '%%.o: %%.c\n\t$(CC) -O1 -c $< -o $@\nclean:\n\trm -f *.o prog\n' % ' '.join(objs))


def timed(argv, cwd, env=None):
    t = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def manifest(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


SAMPLING = ('none', 'process-tree')


def profile_once(asys, stats, argv, cwd, env, work, sampling):
    """One recording with `-s SAMPLING`: wall time, the program's run, what came
    after it (finalize), its first import and the report's counts."""
    report = os.path.join(work, 'procs.asys-rep')
    total = timed([asys, 'profile', '-t', 'osrt,hgtx', '-s', sampling, '-o', report,
                   '--force-overwrite=true', *argv], cwd, env)
    m = manifest(report)
    session = m['session']
    run = (int(session['end_monotonic_ns']) - int(session['start_monotonic_ns'])) / 1e9
    sqlite = os.path.join(work, 'procs.sqlite')
    if os.path.exists(sqlite):
        os.unlink(sqlite)
    imported = timed([stats, '-q', '--report', 'report_info', report], work)
    out = subprocess.run([stats, '-q', '--report', 'report_info', '-f', 'csv', report],
                         capture_output=True, text=True, check=True).stdout
    processes = 0
    for line in out.splitlines():
        if line.startswith('Processes,'):
            processes = int(line.split(',')[1])
    return {'total': total, 'run': run, 'finalize': total - run, 'import': imported,
            'processes': processes, 'bytes': os.path.getsize(report),
            'segments': sum(1 for s in m['segments'] if s['collector'] == 'thread')}


def perf_record_argv(work):
    """The peer of `-s process-tree`: perf sampling the same process tree at
    asys's default rate (about 1 kHz) with DWARF stacks, as asys's default
    -b dwarf does; None when perf is missing or may not sample here."""
    perf = shutil.which('perf')
    if not perf:
        return None
    argv = [perf, 'record', '-q', '--no-buildid-cache', '-F', '1000', '--call-graph', 'dwarf',
            '-o', os.path.join(work, 'perf.data')]
    ok = subprocess.run(argv + ['true'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return argv if ok.returncode == 0 else None


# asys's default --sample-period, in CPU cycles
DEFAULT_SAMPLE_CYCLES = 2000000


def nominal_mhz():
    """The nominal frequency as asys reads it (cpu_sampler.c): cpufreq's
    base_frequency, else /proc/cpuinfo's first "cpu MHz", else 2000."""
    try:
        with open('/sys/devices/system/cpu/cpu0/cpufreq/base_frequency') as f:
            return int(f.read()) // 1000
    except (OSError, ValueError):
        pass
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('cpu MHz'):
                    return round(float(line.split(':')[1]))
    except (OSError, ValueError, IndexError):
        pass
    return 2000


def tree_events_argv(args, samples=False):
    """The limits of `-s process-tree`: the kernel following the same process
    tree with asys's perf events (per task, inherited, side-band records),
    with no sample, or with samples at asys's default rate (as cpu-clock ns
    at the nominal frequency, as asys samples where there is no cycles
    counter) and asys's -b dwarf contents, freed unread
    (bench/process_tree_events.c); None where it is not built or perf events
    are refused."""
    tool = os.path.join(args.build, 'bench', 'process_tree_events')
    if not os.access(tool, os.X_OK):
        return None
    argv = [tool]
    if samples:
        argv += ['--samples', str(DEFAULT_SAMPLE_CYCLES * 1000 // nominal_mhz())]
    ok = subprocess.run(argv + ['true'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return argv if ok.returncode == 0 else None


def bench_processes(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    env = dict(os.environ, TMPDIR=work)
    with open(os.path.join(work, 'pipeline.sh'), 'w') as f:
        f.write(PIPELINE)
    with open(os.path.join(work, 'git.sh'), 'w') as f:
        f.write(GIT)
    project = os.path.join(work, 'project')
    make_project(project)
    workloads = [('shell pipelines, 500 fork/execs', ['sh', os.path.join(work, 'pipeline.sh')],
                  work, None),
                 ('make -j2, 200 C files', ['make', '-s', '-j2'], project,
                  ['make', '-s', 'clean'])]
    if shutil.which('git'):
        workloads.append(('git init/add/commit/log/gc/fsck', ['sh', os.path.join(work, 'git.sh')],
                          work, None))
    perf = perf_record_argv(work)
    limit = tree_events_argv(args)
    sampled_limit = tree_events_argv(args, samples=True)
    rows = []
    for name, argv, cwd, reset in workloads:
        plain, straced, peer, events, sampled = [], [], [], [], []
        traced = {mode: [] for mode in SAMPLING}
        for _ in range(args.runs):  # interleaved: a loaded machine slows them alike
            if reset:
                timed(reset, cwd)
            plain.append(timed(argv, cwd))
            if shutil.which('strace'):
                if reset:
                    timed(reset, cwd)
                straced.append(timed(['strace', '-f', '-c', '-o', os.devnull, *argv], cwd))
            if perf:
                if reset:
                    timed(reset, cwd)
                peer.append(timed(perf + argv, cwd))
            if limit:
                if reset:
                    timed(reset, cwd)
                events.append(timed(limit + argv, cwd))
            if sampled_limit:
                if reset:
                    timed(reset, cwd)
                sampled.append(timed(sampled_limit + argv, cwd))
            for mode in SAMPLING:
                if reset:
                    timed(reset, cwd)
                traced[mode].append(profile_once(asys, stats, argv, cwd, env, work, mode))
        row = {'name': name, 'plain': statistics.median(plain),
               'strace': statistics.median(straced) if straced else None,
               'perf': statistics.median(peer) if peer else None,
               'events': statistics.median(events) if events else None,
               'sampled': statistics.median(sampled) if sampled else None}
        for mode in SAMPLING:
            runs = traced[mode]
            row[mode] = {key: statistics.median(r[key] for r in runs)
                         for key in ('total', 'run', 'finalize', 'import')}
            row[mode].update({key: runs[-1][key] for key in ('processes', 'segments', 'bytes')})
        rows.append(row)
    print('\n## Many processes: `asys profile -t osrt,hgtx`, median of %d runs' % args.runs)
    print('| program | processes | without | strace -f -c | perf record, dwarf stacks (ratio) '
          '| the tree\'s perf events alone (ratio) | with asys\'s samples, unread (ratio) '
          '| -s none | ratio | -s process-tree | ratio | start ms/process | finalize ms/process '
          '(none, process-tree) | report (none, process-tree) | first import |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        off, on = r['none'], r['process-tree']
        n = max(off['processes'], 1)
        print('| %s | %d | %.2f s | %s | %s | %s | %s | %.2f s | %.2f× | %.2f s | %.2f× | %.2f '
              '| %.2f, %.2f | %.0f, %.0f KiB | %.2f s |' % (
                  r['name'], off['processes'], r['plain'],
                  '%.2f s' % r['strace'] if r['strace'] else 'n/a',
                  '%.2f s (%.2f×)' % (r['perf'], r['perf'] / r['plain']) if r['perf'] else 'n/a',
                  '%.2f s (%.2f×)' % (r['events'], r['events'] / r['plain'])
                  if r['events'] else 'n/a',
                  '%.2f s (%.2f×)' % (r['sampled'], r['sampled'] / r['plain'])
                  if r['sampled'] else 'n/a',
                  off['total'], off['total'] / r['plain'], on['total'], on['total'] / r['plain'],
                  1000 * (off['run'] - r['plain']) / n, 1000 * off['finalize'] / n,
                  1000 * on['finalize'] / n, off['bytes'] / 1024, on['bytes'] / 1024,
                  off['import']))
    return rows


# What one process's start costs it under each part of a recording, cheapest
# first: each row adds one thing to the row above it (the sampling period of
# "events, no samples" is so long that a short process is never sampled).
PROCESS_COST_ROWS = (
    ('no tool', None, None),
    ('an empty library preloaded', 'empty', None),
    ('libasys-inject.so preloaded, no session', 'inject', None),
    ('asys profile -t none -s none', None, ['-t', 'none', '-s', 'none']),
    ('asys profile -t osrt -s none', None, ['-t', 'osrt', '-s', 'none']),
    ('asys profile -s none (default -t: libasys-inject+acompute.so)', None, ['-s', 'none']),
    ('asys profile -t none, process-tree events, no samples', None,
     ['-t', 'none', '-s', 'process-tree', '--sample-period', '1000000000000']),
    ('asys profile -t none -s process-tree -b none', None,
     ['-t', 'none', '-s', 'process-tree', '-b', 'none']),
    ('asys profile -t none -s process-tree (default -b dwarf)', None,
     ['-t', 'none', '-s', 'process-tree']),
    ('asys profile -t osrt,hgtx -s process-tree (the many-process bench)', None,
     ['-t', 'osrt,hgtx', '-s', 'process-tree']),
)


def bench_process_cost(args, work, count=500):
    """Starts /bin/true COUNT times in a row (bench/spawn_cost) under each row
    of PROCESS_COST_ROWS, rows interleaved, and prints what one start costs
    the process itself (its CPU time and page faults, from RUSAGE_CHILDREN)
    and the wall time per start (which also holds the launcher's work)."""
    asys = os.path.join(args.build, 'bin', 'asys')
    spawn = os.path.join(args.build, 'bench', 'spawn_cost')
    preload = {'empty': os.path.join(args.build, 'bench', 'libempty_preload.so'),
               'inject': os.path.join(args.build, 'lib', 'libasys-inject.so')}
    report = os.path.join(work, 'spawn.asys-rep')
    measured = {label: [] for label, _, _ in PROCESS_COST_ROWS}
    for _ in range(args.runs):
        for label, library, options in PROCESS_COST_ROWS:
            env = dict(os.environ, TMPDIR=work)
            argv = [spawn, str(count)]
            if library:
                env['LD_PRELOAD'] = preload[library]
            if options is not None:
                argv = [asys, 'profile', '-o', report, '--force-overwrite=true', *options, *argv]
            out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
            measured[label].append([float(v) for v in out.split()[-3:]])
    print('\n## What starting a process costs it: %d starts of /bin/true in a row '
          '(bench/spawn_cost), median of %d runs' % (count, args.runs))
    print('| configuration | CPU µs/process (spread) | added CPU µs | page faults/process '
          '| wall µs/process |')
    print('|---|---:|---:|---:|---:|')
    base = None
    for label, _, _ in PROCESS_COST_ROWS:
        runs = measured[label]
        cpu = statistics.median(r[0] for r in runs)
        base = cpu if base is None else base
        print('| %s | %.0f (%.0f-%.0f) | %+.0f | %.1f | %.0f |' % (
            label, cpu, min(r[0] for r in runs), max(r[0] for r in runs), cpu - base,
            statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)))
    return measured
