"""PCCL tracing cost (bench/run_benchmarks.py --only pccl): what NCCL's
profiler plugin calls cost per profiled collective and per proxy step, on
simppu's NCCL stand-in (tests/simppu/nccl.c), with the plugin absent, with
a do-nothing plugin that asks for every event (bench/pccl_null_plugin.c),
and with asys -t pccl, all in the same run.

Two measurements: the stand-in's own clock around each plugin call
(SIMPPU_NCCL_TIMING: the time inside the calls, by the thread's bucket: the
program's thread, which issues the collectives, the proxy thread's steps
and the rest of the proxy's work), and the wall time per collective of the
workload (pccl_workload bench: all-reduces of 8 KiB on 2 ranks, in groups).
The added cost per event is asys's time inside the calls minus the null
plugin's (the same calls and clock reads).  Target: <= 200 ns per event."""
import json
import os
import statistics
import subprocess


def _parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            words = line.split()
            rows.append({k: int(v) for k, v in zip(words[::2], words[1::2])})
    return rows


def _sum(rows):
    out = {}
    for r in rows:
        for k, v in r.items():
            out[k] = out.get(k, 0) + v
    return out


def _event_ns(t, bucket):
    """A bucket's cost per event from the medians of its calls: a start, a
    stop and its share of the state changes."""
    starts = t['%s_start_calls' % bucket]
    if not starts:
        return float('nan')
    records = t['%s_record_calls' % bucket] / starts
    return (t['%s_start_median' % bucket] + t['%s_stop_median' % bucket] +
            records * t['%s_record_median' % bucket])


def bench_pccl(args, work):
    build = args.build
    asys = os.path.join(build, 'bin', 'asys')
    run = os.path.join(build, 'simppu', 'simppu-run')
    prog = os.path.join(build, 'tests', 'progs', 'pccl_workload')
    null = os.path.join(build, 'bench', 'libnccl-profiler-null.so')
    if not all(os.path.exists(p) for p in (run, prog, null)):
        print('\n## PCCL: the NCCL stand-in was not built (no nccl.h), skipped')
        return None
    calls = args.pccl_collectives
    base = dict(os.environ, TMPDIR=work, SIMPPU_DEVICES='2', SIMPPU_NCCL_CHANNELS='2',
                SIMPPU_NCCL_CHUNK_BYTES='512', SIMPPU_NCCL_LATENCY_NS='500',
                SIMPPU_NCCL_GBPS='100000')
    base.pop('NCCL_PROFILER_PLUGIN', None)
    report = os.path.join(work, 'pccl.asys-rep')
    timing_file = os.path.join(work, 'pccl-timing.txt')

    def one(kind, timing):
        env = dict(base)
        argv = [run, prog, 'bench', '2', str(calls)]
        if kind == 'null':
            env['NCCL_PROFILER_PLUGIN'] = null
        elif kind == 'asys':
            argv = [run, asys, 'profile', '-s', 'none', '-t', 'pccl', '-o', report,
                    '--force-overwrite=true', prog, 'bench', '2', str(calls)]
        if timing:
            if os.path.exists(timing_file):
                os.unlink(timing_file)
            env['SIMPPU_NCCL_TIMING'] = timing_file
        out = subprocess.run(argv, capture_output=True, env=env, check=True).stdout.decode()
        words = out.split()
        wall = float(words[words.index('ns_per_call') + 1])
        cpu = float(words[words.index('cpu_ns_per_call') + 1])
        timed = _sum(_parse(timing_file)) if timing and os.path.exists(timing_file) else None
        return wall, cpu, timed

    rows = {}
    for kind in ('absent', 'null', 'asys'):
        plain = [one(kind, False) for _ in range(args.runs)]
        timed = [one(kind, True)[2] for _ in range(args.runs)] if kind != 'absent' else []
        rows[kind] = {'wall': statistics.median(p[0] for p in plain),
                      'cpu': statistics.median(p[1] for p in plain),
                      'app': statistics.median(_event_ns(t, 'app') for t in timed) if timed
                      else 0.0,
                      'step': statistics.median(_event_ns(t, 'step') for t in timed) if timed
                      else 0.0,
                      'timed': timed}
    t = rows['asys']['timed'][0]
    app_events = t['app_start_calls'] / max(t['collectives'], 1)
    steps = t['steps'] / max(t['collectives'], 1)
    events = (t['app_start_calls'] + t['proxy_start_calls'] + t['step_start_calls']) / \
        max(t['collectives'], 1)
    print('\n## PCCL: NCCL profiler plugin calls on the stand-in (%d all-reduces of 8 KiB on '
          '2 ranks in groups: per collective %.1f events on the program\'s thread and %.0f proxy '
          'steps; median of %d runs)' % (calls, app_events, steps, args.runs))
    print('| plugin | wall ns/collective | CPU ns/collective (all threads) '
          '| ns per event, program thread | ns per proxy step |')
    print('|---|---:|---:|---:|---:|')
    for kind in ('absent', 'null', 'asys'):
        r = rows[kind]
        print('| %s | %.0f | %.0f | %.1f | %.1f |' % (kind, r['wall'], r['cpu'], r['app'],
                                                     r['step']))
    added_app = rows['asys']['app'] - rows['null']['app']
    added_step = rows['asys']['step'] - rows['null']['step']
    print('\nasys over the null plugin (the medians of each call: start + stop + its share of '
          'state changes): +%.1f ns per event on the program\'s thread (+%.0f ns per '
          'collective), +%.1f ns per proxy step (5 calls); target <= 200 ns per event'
          % (added_app, added_app * app_events, added_step))
    added_cpu = rows['asys']['cpu'] - rows['null']['cpu']
    # the bytes asys wrote per event, and what writing them costs here (the anchor)
    m = json.loads(subprocess.run(['tar', '--zstd', '-xOf', report, 'manifest.json'],
                                  capture_output=True, check=True).stdout)
    seg_bytes = sum(s['bytes'] - 256 for s in m['segments'] if s['collector'] == 'thread')
    recorded = m.get('pccl', {}).get('events', 0)
    fill = os.path.join(build, 'bench', 'segment_fill')
    per_byte = statistics.median(
        float(subprocess.run([fill, work, '64', '64'], capture_output=True, check=True)
              .stdout.split()[1]) for _ in range(args.runs))
    bytes_per_event = seg_bytes / recorded if recorded else float('nan')
    print('CPU per collective, all threads: asys - absent %+.0f ns (%.2fx), null - absent '
          '%+.0f ns; asys - null %+.0f ns over %.0f events: %.1f ns per event, with what the '
          'medians leave out (the segments growing, cache misses)'
          % (rows['asys']['cpu'] - rows['absent']['cpu'],
             rows['asys']['cpu'] / rows['absent']['cpu'],
             rows['null']['cpu'] - rows['absent']['cpu'], added_cpu, events, added_cpu / events))
    print('bytes written per event (segments, strings and thread records included): %.1f; '
          'writing fresh segment memory costs %.2f ns per byte on this machine (bench/'
          'segment_fill, 64-byte records, the same run): %.1f ns per event of the above'
          % (bytes_per_event, per_byte, bytes_per_event * per_byte))
    return rows
