#!/usr/bin/env python3
"""asys benchmarks: every figure is a ratio against an anchor measured in the
same run (no tool, the peer tool, a raw SQLite loop).  Not a test: it prints
figures for bench/RESULTS.md and the issue notes.

usage: bench/run_benchmarks.py [--build DIR] [--pairs N] [--runs K]
                               [--import-ranges N] [--osrt-calls N] [--launches N] [--kernel-ns NS]
                               [--bulk-kernels N] [--bulk-copies N] [--bulk-ranges N]
                               [--deps-kernels N] [--deps-waits N] [--export-events N]
                               [--flame-stacks N] [--heap-allocations N] [--cpu-loop-millions M]
                               [--python-interpreters PATH,...]
                               [--only hgtx|uftrace|osrt|import|hggc|timeline|deps|export|processes|
                                       flame|heap|cpu_sampling|ppu_metrics|
                                       nic|python_sampling|python_trace|event_threads|
                                       libc_preload|pccl|acompute|video|ranks|process_cost]
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from acompute import bench_acompute
from cpu_sampling import bench_cpu_sampling
from event_threads import bench_event_threads
from flame import bench_flame
from heap import bench_heap
from libc_preload import bench_libc_preload
from nic import bench_nic
from pccl import bench_pccl
from ppu_metrics import bench_ppu_metrics
from python_sampling import bench_python_sampling
from processes import bench_process_cost, bench_processes
from python_trace import bench_python_trace
from video import bench_video
from rank_reports import bench_ranks


def run_child(argv):
    """Runs argv; returns its stdout."""
    r = subprocess.run(argv, capture_output=True)
    if r.returncode != 0:
        sys.exit('benchmark step failed: %s\n%s' % (' '.join(argv), r.stderr.decode(errors='replace')))
    return r.stdout.decode()


def peak_rss_kib(argv, cwd=None):
    """Runs argv in a fresh process and returns (stdout, peak RSS KiB)."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.path.join(cwd or '.', '.bench-out'), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    out = open(os.path.join(cwd or '.', '.bench-out')).read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit('benchmark step failed: %s' % ' '.join(argv))
    return out, usage.ru_maxrss


def median(xs):
    return statistics.median(xs)


def manifest(report):
    out = subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'], capture_output=True,
                         check=True).stdout
    return json.loads(out)


def hgtx_costs(out):
    """hgtx_overhead's output: wall ns per pair, then user/sys ns per pair and
    page faults per million pairs of the recording threads themselves."""
    lines = out.decode().split('\n') if isinstance(out, bytes) else str(out).split('\n')
    f = lines[1].split()
    return float(lines[0]), float(f[1]), float(f[3]), float(f[5])


def bench_hgtx(args, work):
    """HGTX push+pop pairs with no tool, under asys, under asys with its
    page helper off (ASYS_NO_PAGE_HELPER: the recording threads fault their
    slots in themselves, as before issue 30.1) and with 1 MiB slots (the
    --chunk-size default before 2026-12-05), interleaved."""
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(args.build, 'bench', 'hgtx_overhead')
    rows = []
    for threads in (1, 2):
        plain, traced, unhelped, small_slots = [], [], [], []
        bytes_per_range, dropped, report_bytes = [], [], []
        for _ in range(args.runs):
            out = run_child([prog, str(threads), str(args.pairs)])
            plain.append(hgtx_costs(out))
            report = os.path.join(work, 'hgtx.asys-rep')
            for costs, extra, options in ((unhelped, {'ASYS_NO_PAGE_HELPER': '1'}, []),
                                          (small_slots, {}, ['--chunk-size', '1M']),
                                          (traced, {}, [])):
                r = subprocess.run([asys, 'profile', '-t', 'nvtx', '-s', 'none', '-o', report,
                                    '--force-overwrite=true', *options, prog, str(threads),
                                    str(args.pairs)],
                                   capture_output=True, check=True,
                                   env=dict(os.environ, TMPDIR=work, **extra))
                costs.append(hgtx_costs(r.stdout))
            m = manifest(report)
            ranges = threads * (args.pairs + 1)
            seg_bytes = sum(s['bytes'] - 256 for s in m['segments'] if s['collector'] == 'thread')
            bytes_per_range.append(seg_bytes / ranges)
            dropped.append(m['totals']['dropped_records'])
            report_bytes.append(os.path.getsize(report) / ranges)
        plain_ns = median(p[0] for p in plain)
        for label, costs in (('asys', traced), ('asys, page helper off', unhelped),
                             ('asys, 1 MiB slots', small_slots)):
            wall = median(t[0] for t in costs)
            rows.append({'threads': threads, 'what': label, 'plain_ns': plain_ns, 'asys_ns': wall,
                         'added_ns': wall - plain_ns,
                         'user_ns': median(t[1] for t in costs),
                         'sys_ns': median(t[2] for t in costs),
                         'faults': median(t[3] for t in costs),
                         'bytes_per_range': median(bytes_per_range),
                         'report_bytes_per_range': median(report_bytes), 'dropped': max(dropped)})
    print('\n## HGTX push+pop pair, %d pairs per thread, median of %d runs' % (args.pairs, args.runs))
    print('| threads | recorder | no tool ns/pair | asys ns/pair | added ns/pair | recording thread: '
          'user / sys ns/pair, faults per M pairs | bytes/range (raw) | bytes/range (report, '
          'zstd) | dropped |')
    print('|---:|---|---:|---:|---:|---:|---:|---:|---:|')
    for r in rows:
        print('| %d | %s | %.1f | %.1f | %.1f | %.1f / %.1f, %.0f | %.1f | %.2f | %d |' % (
            r['threads'], r['what'], r['plain_ns'], r['asys_ns'], r['added_ns'], r['user_ns'],
            r['sys_ns'], r['faults'], r['bytes_per_range'], r['report_bytes_per_range'],
            r['dropped']))
    return [r for r in rows if r['what'] == 'asys']


def bench_uftrace(args, work, hgtx_rows):
    if not shutil.which('uftrace'):
        print('\n## uftrace: not installed, comparison skipped')
        return None
    prog = os.path.join(args.build, 'bench', 'uftrace_loop')
    pairs = min(args.pairs, 2000000)  # uftrace writes 64 bytes a pair
    plain, traced, sizes = [], [], []
    for i in range(args.runs):
        out = run_child([prog, str(pairs)])
        plain.append(float(out))
        data = os.path.join(work, 'uftrace.data')
        shutil.rmtree(data, ignore_errors=True)
        out = run_child(['uftrace', 'record', '-d', data, prog, str(pairs)])
        traced.append(float(out))
        sizes.append(sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs))
        shutil.rmtree(data, ignore_errors=True)
    uftrace_added = median(traced) - median(plain)
    asys_added = hgtx_rows[0]['added_ns'] if hgtx_rows else float('nan')
    print('\n## The same loop as -pg functions under `uftrace record` (%d pairs, 1 thread)' % pairs)
    print('| tool | added ns/pair | bytes/pair |')
    print('|---|---:|---:|')
    print('| uftrace | %.1f | %.1f |' % (uftrace_added, median(sizes) / pairs))
    if hgtx_rows:
        print('| asys (HGTX) | %.1f | %.1f |' % (asys_added, hgtx_rows[0]['bytes_per_range']))
        print('\nasys/uftrace added cost: %.2f' % (asys_added / uftrace_added))
    return uftrace_added


def bench_osrt(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    prog = os.path.join(args.build, 'bench', 'osrt_overhead')
    env = dict(os.environ, TMPDIR=work)
    report = os.path.join(work, 'osrt.asys-rep')
    calls = args.osrt_calls

    def traced(*options, prog_args, extra_env=None):
        r = subprocess.run([asys, 'profile', '-t', 'osrt', '-o', report, '--force-overwrite=true',
                            *options, prog, *prog_args], capture_output=True, check=True,
                           env=dict(env, **(extra_env or {})))
        return float(r.stdout)

    def under_uftrace(prog_args):
        data = os.path.join(work, 'uftrace.data')
        shutil.rmtree(data, ignore_errors=True)
        out = subprocess.run(['uftrace', 'record', '--force', '-d', data, prog, *prog_args],
                             capture_output=True, check=True).stdout
        shutil.rmtree(data, ignore_errors=True)
        return float(out)

    have_uftrace = shutil.which('uftrace') is not None
    print('\n## OSRT: calls shorter than the threshold (%d calls, median of %d)' % (calls, args.runs))
    print('| call | no tool ns | asys ns (added) | uftrace --force ns (added) |')
    print('|---|---:|---:|---:|')
    for mode, label in (('mutex', 'uncontended pthread_mutex_lock+unlock'),
                        ('read', '1-byte read from /dev/zero')):
        plain = median(float(run_child([prog, mode, str(calls)])) for _ in range(args.runs))
        ours = median(traced(prog_args=[mode, str(calls)]) for _ in range(args.runs))
        peer = median(under_uftrace([mode, str(calls // 10)]) for _ in range(args.runs)) \
            if have_uftrace else float('nan')
        print('| %s | %.1f | %.1f (+%.1f) | %.1f (+%.1f) |' % (label, plain, ours, ours - plain, peer,
                                                             peer - plain))
    print('\n## OSRT: one captured call stack of depth 24 (every read recorded, median of %d)'
          % args.runs)
    print('| unwinder | ns per call, no stack | ns per call, with stack | stack ns |')
    print('|---|---:|---:|---:|')
    for unwind in ('dwarf', 'fp'):
        nostack = median(traced('--osrt-threshold', '0', '--osrt-backtrace-threshold', '1000000000',
                                prog_args=['read', str(calls // 10), '24'],
                                extra_env={'ASYS_UNWIND': unwind}) for _ in range(args.runs))
        stack = median(traced('--osrt-threshold', '0', '--osrt-backtrace-threshold', '0',
                              prog_args=['read', str(calls // 10), '24'],
                              extra_env={'ASYS_UNWIND': unwind}) for _ in range(args.runs))
        print('| %s | %.1f | %.1f | %.1f |' % (unwind, nostack, stack, stack - nostack))


def bench_import(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    loop = os.path.join(args.build, 'tests', 'progs', 'hgtx_loop')
    tool = os.path.join(args.build, 'bench', 'import_bench')
    report = os.path.join(work, 'import.asys-rep')
    subprocess.run([asys, 'profile', '-t', 'nvtx', '-o', report, '--force-overwrite=true', loop,
                    str(args.import_ranges)], capture_output=True, check=True,
                   env=dict(os.environ, TMPDIR=work))
    db = os.path.join(work, 'bench.sqlite')
    imp, raw = [], []
    for _ in range(args.runs):
        out, rss_import = peak_rss_kib([tool, 'import', report, db], cwd=work)
        rows, seconds = int(out.split()[0]), float(out.split()[3])
        imp.append((rows / seconds, rss_import))
        out, rss_raw = peak_rss_kib([tool, 'raw', str(rows), db], cwd=work)
        raw.append((int(out.split()[0]) / float(out.split()[3]), rss_raw))
    imp_rate, raw_rate = median(r for r, _ in imp), median(r for r, _ in raw)
    print('\n## Import of a %d-range report (schema, load, indexes; median of %d)'
          % (args.import_ranges, args.runs))
    print('| | events/s | peak RSS MiB |')
    print('|---|---:|---:|')
    print('| asys importer | %.0f | %.0f |' % (imp_rate, max(m for _, m in imp) / 1024))
    print('| raw prepared INSERT loop, same table | %.0f | %.0f |' % (raw_rate, max(m for _, m in raw) / 1024))
    print('\nimporter/raw rate: %.2f' % (imp_rate / raw_rate))


def bench_hggc(args, work):
    """Kernel launches of a real CUDA program (nvcc) on simppu: the launch call's
    host time without a tool, with -t hggc, and with device activity only; how
    fast the collector drains CUPTI's buffers (CUPTI's OVERHEAD records time the
    collector's buffer callback); what a kernel costs in the report."""
    asys = os.path.join(args.build, 'bin', 'asys')
    workload = os.path.join(args.build, 'tests', 'progs', 'hggc_workload')
    simppu = os.path.join(args.build, 'simppu', 'simppu-run')
    if not os.path.exists(workload):
        print('\n## HGGC: skipped (nvcc was not found at build time)')
        return
    env = dict(os.environ, TMPDIR=work, SIMPPU_KERNEL_NS=str(args.kernel_ns))
    n = args.launches

    def launch_ns(out, key='launch_ns'):
        return float(out.split(key)[1].split()[0])

    def call_ns(argv, run_env):
        """(wall, calling thread's CPU) ns per call."""
        out = subprocess.run(argv, capture_output=True, check=True, env=run_env).stdout.decode()
        return launch_ns(out, 'call_ns'), launch_ns(out, 'call_cpu_ns')

    def traced(trace_set):
        report = os.path.join(work, 'hggc.asys-rep')
        r = subprocess.run([simppu, asys, 'profile', '-t', 'hggc', '--hggc-trace-set', trace_set,
                            '-o', report, '--force-overwrite=true', workload, 'launches', str(n)],
                           capture_output=True, check=True, env=env)
        m = manifest(report)
        raw = sum(s['bytes'] - 256 for s in m['segments'] if s['collector'] == 'thread')
        return (launch_ns(r.stdout.decode()), m['hggc'], os.path.getsize(report), raw,
                m['totals']['records'])

    def untraced(tool=None, callbacks_only=False):
        run_env = dict(env, CUDA_INJECTION64_PATH=tool) if tool else env
        if callbacks_only:
            run_env['NULL_TOOL_CALLBACKS_ONLY'] = '1'
        return launch_ns(subprocess.run([simppu, workload, 'launches', str(n)],
                                        capture_output=True, check=True,
                                        env=run_env).stdout.decode())

    null_tool = os.path.join(args.build, 'bench', 'libcupti_null_tool.so')
    plain, null, null_api, full, activity, api = [], [], [], [], [], []
    for _ in range(args.runs):
        plain.append(untraced())
        null.append(untraced(null_tool))
        null_api.append(untraced(null_tool, callbacks_only=True))
        full.append(traced('all'))
        activity.append(traced('kernel-activity'))
        api.append(traced('kernel-api'))
    base, anchor, api_anchor = median(plain), median(null), median(null_api)
    print('\n## HGGC kernel launches on simppu, %d launches, median of %d runs' % (n, args.runs))
    print('| | ns per launch call | added over no tool | added over a do-nothing CUPTI tool |')
    print('|---|---:|---:|---:|')
    print('| no tool | %.1f | | |' % base)
    print('| do-nothing CUPTI tool, same callbacks and activity kinds | %.1f | %.1f | |'
          % (anchor, anchor - base))
    for label, rows in (('asys -t hggc (API + activity)', full),
                        ('asys -t hggc --hggc-trace-set kernel-activity', activity)):
        ns = median(r[0] for r in rows)
        print('| %s | %.1f | %.1f | %.1f |' % (label, ns, ns - base, ns - anchor))
    print('| do-nothing CUPTI tool, API callbacks only | %.1f | %.1f | |'
          % (api_anchor, api_anchor - base))
    ns = median(r[0] for r in api)
    print('| asys -t hggc --hggc-trace-set kernel-api (API calls only) | %.1f | %.1f | %.1f |'
          % (ns, ns - base, ns - api_anchor))
    # an API call without device work: the callback path alone
    calls = str(args.launches * 20)
    report = os.path.join(work, 'calls.asys-rep')
    timings = {'plain': [], 'null': [], 'asys': []}
    for _ in range(args.runs):
        timings['plain'].append(call_ns([simppu, workload, 'calls', calls], env))
        timings['null'].append(call_ns([simppu, workload, 'calls', calls],
                                       dict(env, CUDA_INJECTION64_PATH=null_tool,
                                            NULL_TOOL_CALLBACKS_ONLY='1')))
        timings['asys'].append(call_ns([simppu, asys, 'profile', '-t', 'hggc', '-o', report,
                                        '--force-overwrite=true', workload, 'calls', calls], env))
    print('\n## One HGGC API call without device work (cudaGetDevice), %s calls, median of %d runs'
          % (calls, args.runs))
    print('| | ns per call: wall / calling thread CPU | added over no tool | added over a '
          'do-nothing CUPTI tool |')
    print('|---|---:|---:|---:|')
    plain_call, null_call = (tuple(median(t[i] for t in timings[k]) for i in (0, 1))
                             for k in ('plain', 'null'))
    for label, key in (('no tool', 'plain'),
                       ('do-nothing CUPTI tool (enter/exit callbacks)', 'null'),
                       ('asys -t hggc (API record)', 'asys')):
        wall, cpu = (median(t[i] for t in timings[key]) for i in (0, 1))
        added = '%.1f / %.1f' % (wall - plain_call[0], cpu - plain_call[1])
        over_null = '%.1f / %.1f' % (wall - null_call[0], cpu - null_call[1])
        print('| %s | %.1f / %.1f | %s | %s |' % (label, wall, cpu, '' if key == 'plain' else added,
                                                  over_null if key == 'asys' else ''))
    spread = sorted(a[1] - n[1] for a, n in zip(timings['asys'], timings['null']))
    print('asys over the do-nothing tool, CPU ns per call, run by run: %s'
          % ', '.join('%.1f' % x for x in spread))

    drain = [r[4] / (r[1]['cupti_overhead_ns'] / 1e9) for r in full if r[1]['cupti_overhead_ns']]
    dropped = max(r[1]['cupti_dropped_records'] for r in full)
    print('\nactivity records drained: %.0f records/s of buffer-callback time (records include '
          'API calls: %d per run)' % (median(drain), full[0][4]))
    print('report bytes per kernel (launch API + kernel): %.1f raw, %.1f in the report (zstd); '
          'CUPTI dropped %d' % (median(r[3] / n for r in full), median(r[2] / n for r in full),
                                 dropped))


def record_on_simppu(args, work, name, kernel_ns, trace, *workload_args):
    """Records hggc_workload WORKLOAD_ARGS on simppu into WORK/NAME.asys-rep; None
    when the workload was not built (no nvcc)."""
    workload = os.path.join(args.build, 'tests', 'progs', 'hggc_workload')
    if not os.path.exists(workload):
        return None
    report = os.path.join(work, name + '.asys-rep')
    subprocess.run([os.path.join(args.build, 'simppu', 'simppu-run'),
                    os.path.join(args.build, 'bin', 'asys'), 'profile', '-t', trace, '-o', report,
                    '--force-overwrite=true', workload, *map(str, workload_args)],
                   capture_output=True, check=True,
                   env=dict(os.environ, TMPDIR=work, SIMPPU_KERNEL_NS=kernel_ns))
    return report


def bench_timeline(args, work):
    """The timeline analysis on a large recorded report (a CUDA program on simppu):
    building the derived tables at import, then the reports on top of them."""
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    report = record_on_simppu(args, work, 'bulk', '300', 'hggc,hgtx', 'bulk', args.bulk_kernels,
                              args.bulk_copies, args.bulk_ranges)
    if not report:
        print('\n## Timeline analysis: skipped (nvcc was not found at build time)')
        return
    imports = []
    for _ in range(args.runs):
        db = report[:-len('.asys-rep')] + '.sqlite'
        if os.path.exists(db):
            os.unlink(db)
        start = time.monotonic()
        _, rss = peak_rss_kib([stats, '-q', '-r', 'report_info', report], cwd=work)
        total = time.monotonic() - start
        con = sqlite3.connect(db)
        derived = con.execute("SELECT value FROM session_info WHERE key = 'import_derived_ns'"
                              ).fetchone()[0] / 1e9
        con.close()
        imports.append((total, derived, rss))
    print('\n## Timeline analysis: %d kernels, %d copies, %d HGTX ranges (recorded on simppu), '
          'median of %d runs' % (args.bulk_kernels, args.bulk_copies, args.bulk_ranges, args.runs))
    print('| step | seconds | peak RSS MiB |')
    print('|---|---:|---:|')
    print('| import, total | %.2f | %.0f |' % (median(i[0] for i in imports),
                                              max(i[2] for i in imports) / 1024))
    print('| of which derived tables (activities, range links, projection) | %.2f | |'
          % median(i[1] for i in imports))
    for name in ('stream_pct', 'ppu_device_sum', 'ppu_util_trace', 'hgtx_gpu_proj_sum',
                 'hgtx_kern_sum', 'hggc_kern_sum'):
        times, peaks = [], []
        for _ in range(args.runs):
            start = time.monotonic()
            _, rss = peak_rss_kib([stats, '-q', '-r', name, '-f', 'csv', report], cwd=work)
            times.append(time.monotonic() - start)
            peaks.append(rss)
        print('| report %s | %.2f | %.0f |' % (name, median(times), max(peaks) / 1024))


def bench_deps(args, work):
    """Dependencies of a large recorded report (a CUDA program on simppu, device-bound
    so that the critical path is long): building ppu_deps at import, then the
    critical path and the summary with asys-deps."""
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    deps = os.path.join(args.build, 'bin', 'asys-deps')
    report = record_on_simppu(args, work, 'deps', '20000', 'hggc', 'bulkdeps', args.deps_kernels,
                              args.deps_waits)
    if not report:
        print('\n## Dependencies: skipped (nvcc was not found at build time)')
        return
    builds, paths, summaries = [], [], []
    for _ in range(args.runs):
        db = report[:-len('.asys-rep')] + '.sqlite'
        if os.path.exists(db):
            os.unlink(db)
        _, import_rss = peak_rss_kib([stats, '-q', '-r', 'report_info', report], cwd=work)
        con = sqlite3.connect(db)
        built = con.execute("SELECT value FROM session_info WHERE key = 'import_deps_ns'"
                            ).fetchone()[0] / 1e9
        edges = con.execute('SELECT COUNT(*) FROM ppu_deps').fetchone()[0]
        con.close()
        builds.append((built, import_rss, edges))
        start = time.monotonic()
        out, rss = peak_rss_kib([deps, '-q', '--critical-path', '-f', 'csv', report], cwd=work)
        paths.append((time.monotonic() - start, rss, out.count('\n') - 1))
        start = time.monotonic()
        _, rss = peak_rss_kib([deps, '-q', '-f', 'csv', report], cwd=work)
        summaries.append((time.monotonic() - start, rss))
    build = median(b[0] for b in builds)
    path = median(p[0] for p in paths)
    print('\n## Dependencies: %d kernels on 4 streams, %d cross-stream waits (recorded on simppu), '
          'median of %d runs' % (args.deps_kernels, args.deps_waits, args.runs))
    print('| step | seconds | peak RSS MiB |')
    print('|---|---:|---:|')
    print('| ppu_deps at import (%d edges) | %.2f | %.0f (whole import) |'
          % (builds[0][2], build, max(b[1] for b in builds) / 1024))
    print('| asys-deps --critical-path (%d steps) | %.2f | %.0f |'
          % (paths[0][2], path, max(p[1] for p in paths) / 1024))
    print('| edges + critical path | %.2f | |' % (build + path))
    print('| asys-deps summary | %.2f | %.0f |'
          % (median(s[0] for s in summaries), max(s[1] for s in summaries) / 1024))


def timed(argv, cwd):
    """Runs argv; returns (seconds, peak RSS KiB, stderr text)."""
    err_path = os.path.join(cwd, '.bench-err')
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - start
    err = open(err_path).read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit('benchmark step failed: %s\n%s' % (' '.join(argv), err))
    return seconds, usage.ru_maxrss, err


def export_rows(args, work, report, label):
    """asys-export of `report` to pftrace and JSON (the analysis database built
    first, so only the export is timed): one table row per format."""
    stats = os.path.join(args.build, 'bin', 'asys-stats')
    export = os.path.join(args.build, 'bin', 'asys-export')
    run_child([stats, '-q', '-r', 'report_info', report])
    records = manifest(report)['totals']['records']
    rows = {}
    for kind in ('pftrace', 'json'):
        out = os.path.join(work, 'export.' + kind)
        runs = []
        for _ in range(args.runs):
            seconds, rss, err = timed([export, '-v', '-t', kind, '-o', out, '--force-overwrite',
                                       report], work)
            runs.append((seconds, rss))
        # "wrote 'x': N slices, N instants, N counter values, N flows, N tracks"
        counts = [int(w) for w in err.split(':', 2)[2].replace(',', ' ').split() if w.isdigit()]
        drawn = counts[0] + counts[1] + counts[2]
        seconds = median(r[0] for r in runs)
        rows[kind] = {'seconds': seconds, 'rss': max(r[1] for r in runs), 'bytes': os.path.getsize(out),
                      'records': records, 'drawn': drawn}
        os.unlink(out)
        print('| %s | %s | %d | %d | %.2f | %.2f M | %.2f M | %.1f | %.0f |' % (
            label, kind, records, drawn, seconds, records / seconds / 1e6, drawn / seconds / 1e6,
            rows[kind]['bytes'] / records, rows[kind]['rss'] / 1024))
    return rows


def uftrace_chrome_rate(args, work):
    """`uftrace dump --chrome` of a recorded loop: its events (entries and
    exits) written per second, the JSON anchor."""
    if not shutil.which('uftrace'):
        return None
    prog = os.path.join(args.build, 'bench', 'uftrace_loop')
    pairs = min(args.export_events // 2, 2000000)
    data = os.path.join(work, 'uftrace.data')
    shutil.rmtree(data, ignore_errors=True)
    run_child(['uftrace', 'record', '-d', data, prog, str(pairs)])
    times = []
    for _ in range(args.runs):
        start = time.monotonic()
        with open(os.path.join(work, 'uftrace.json'), 'w') as out:
            subprocess.run(['uftrace', 'dump', '--chrome', '-d', data], stdout=out, check=True,
                           stderr=subprocess.DEVNULL)
        times.append(time.monotonic() - start)
    size = os.path.getsize(os.path.join(work, 'uftrace.json'))
    shutil.rmtree(data, ignore_errors=True)
    events = 2 * pairs
    print('| uftrace loop (%d calls) | uftrace dump --chrome | %d | %d | %.2f | %.2f M | %.2f M '
          '| %.1f | |' % (pairs, events, events, median(times), events / median(times) / 1e6,
                         events / median(times) / 1e6, size / events))
    return events / median(times)


def bench_export(args, work):
    """asys-export of a 10 M-event report (HGTX push/pop ranges: two records
    each) and of a recorded CUDA program on simppu; uftrace's Chrome dump of as
    many entry/exit events is the anchor for JSON."""
    asys = os.path.join(args.build, 'bin', 'asys')
    loop = os.path.join(args.build, 'tests', 'progs', 'hgtx_loop')
    report = os.path.join(work, 'export-hgtx.asys-rep')
    subprocess.run([asys, 'profile', '-t', 'nvtx', '-o', report, '--force-overwrite=true', loop,
                    str(args.export_events // 2)], capture_output=True, check=True,
                   env=dict(os.environ, TMPDIR=work))
    print('\n## Export: report events (records) and drawn events (slices, instants, counter '
          'values) per second, median of %d runs' % args.runs)
    print('| report | format | report events | drawn events | seconds | report events/s '
          '| drawn events/s | bytes/report event | peak RSS MiB |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
    hgtx = export_rows(args, work, report, 'HGTX ranges')
    os.unlink(report)
    os.unlink(report[:-len('.asys-rep')] + '.sqlite')
    gpu = record_on_simppu(args, work, 'export-gpu', '300', 'hggc,hgtx', 'bulk',
                           args.bulk_kernels, args.bulk_copies, args.bulk_ranges)
    if gpu:
        export_rows(args, work, gpu, 'simppu bulk (%d kernels)' % args.bulk_kernels)
    uftrace = uftrace_chrome_rate(args, work)
    rate = {k: hgtx[k]['records'] / hgtx[k]['seconds'] for k in hgtx}
    print('\npftrace/JSON size: %.2f' % (hgtx['pftrace']['bytes'] / hgtx['json']['bytes']))
    if uftrace:
        print('asys JSON/uftrace --chrome events per second: %.2f' % (rate['json'] / uftrace))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.path.join(os.path.dirname(__file__), '..', 'build'))
    ap.add_argument('--pairs', type=int, default=10000000)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--import-ranges', type=int, default=10000000)
    ap.add_argument('--osrt-calls', type=int, default=2000000)
    ap.add_argument('--launches', type=int, default=50000)
    ap.add_argument('--bulk-kernels', type=int, default=1000000)
    ap.add_argument('--bulk-copies', type=int, default=200000)
    ap.add_argument('--bulk-ranges', type=int, default=100000)
    ap.add_argument('--deps-kernels', type=int, default=1000000)
    ap.add_argument('--deps-waits', type=int, default=100000)
    ap.add_argument('--export-events', type=int, default=10000000)
    ap.add_argument('--flame-stacks', type=int, default=1000000)
    ap.add_argument('--heap-allocations', type=int, default=20000000)
    ap.add_argument('--kernel-ns', type=int, default=5000,
                    help='simulated kernel time: long enough that the device thread sleeps')
    ap.add_argument('--only',
                    choices=['hgtx', 'uftrace', 'osrt', 'import', 'hggc', 'timeline', 'deps',
                             'export', 'processes', 'flame', 'heap', 'cpu_sampling',
                             'ppu_metrics', 'nic', 'python_sampling', 'python_trace',
                             'event_threads', 'libc_preload', 'pccl', 'acompute', 'video',
                             'ranks', 'process_cost'])
    ap.add_argument('--acompute-calls', type=int, default=200000,
                    help='wrapped calls per run of the ACDNN/ACBLAS benchmark')
    ap.add_argument('--acompute-loop', type=int, default=5000000,
                    help='malloc/free pairs of the ACDNN/ACBLAS default -t hot loop')
    ap.add_argument('--rank-count', type=int, default=8, help='ranks: ranks the launcher starts')
    ap.add_argument('--rank-pairs', type=int, default=200000,
                    help='ranks: HGTX push/pop pairs per rank')
    ap.add_argument('--video-calls', type=int, default=300000,
                    help='video: NVDEC calls (and dlsym calls) per run')
    ap.add_argument('--pccl-collectives', type=int, default=2000,
                    help='all-reduces of the PCCL benchmark (NCCL stand-in, 2 ranks)')
    ap.add_argument('--python-rounds', type=int, default=10,
                    help='rounds of the Python sampling workload (~0.25 s each)')
    ap.add_argument('--python-interpreters', default='',
                    help='python_trace: more interpreters to measure (paths, comma-separated)')
    ap.add_argument('--ppu-seconds', type=float, default=5.0,
                    help='how long the PPU metrics benchmark samples')
    ap.add_argument('--cpu-loop-millions', type=int, default=2000,
                    help='iterations of the CPU sampling loop, in millions (~1.5 ns each)')
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    work = tempfile.mkdtemp(prefix='asys-bench-')
    try:
        print('# asys benchmarks (%s)' % ' '.join(os.uname()[2:5]))
        hgtx_rows = None
        if args.only in (None, 'hgtx', 'uftrace'):
            hgtx_rows = bench_hgtx(args, work)
        if args.only in (None, 'uftrace'):
            bench_uftrace(args, work, hgtx_rows)
        if args.only in (None, 'osrt'):
            bench_osrt(args, work)
        if args.only in (None, 'import'):
            bench_import(args, work)
        if args.only in (None, 'hggc'):
            bench_hggc(args, work)
        if args.only in (None, 'timeline'):
            bench_timeline(args, work)
        if args.only in (None, 'deps'):
            bench_deps(args, work)
        if args.only in (None, 'export'):
            bench_export(args, work)
        if args.only in (None, 'processes'):
            bench_processes(args, work)
        if args.only in (None, 'process_cost'):
            bench_process_cost(args, work)
        if args.only in (None, 'flame'):
            bench_flame(args, work)
        if args.only in (None, 'heap'):
            bench_heap(args, work)
        if args.only in (None, 'cpu_sampling'):
            bench_cpu_sampling(args, work)
        if args.only in (None, 'ppu_metrics'):
            bench_ppu_metrics(args, work)
        if args.only in (None, 'nic'):
            bench_nic(args, work)
        if args.only in (None, 'pccl'):
            bench_pccl(args, work)
        if args.only in (None, 'acompute'):
            bench_acompute(args, work)
        if args.only in (None, 'video'):
            bench_video(args, work)
        if args.only in (None, 'ranks'):
            bench_ranks(args, work)
        if args.only in (None, 'event_threads'):
            bench_event_threads(args, work)
        if args.only in (None, 'libc_preload'):
            bench_libc_preload(args, work)
        if args.only in (None, 'python_sampling'):
            bench_python_sampling(args, work)
        if args.only in (None, 'python_trace'):
            bench_python_trace(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
