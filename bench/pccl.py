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


def bench_pccl(args, work):
    build = args.build
    asys = os.path.join(build, 'bin', 'asys')
    run = os.path.join(build, 'simppu', 'simppu-run')
    prog = os.path.join(build, 'tests', 'progs', 'pccl_workload')
    null = os.path.join(build, 'bench', 'libnccl-profiler-null.so')
    if not all(os.path.exists(p) for p in (run, prog, null)):
        print('\n## PCCL: the NCCL stand-in was not built (no nccl.h), skipped')
        return None
    calls = getattr(args, 'pccl_collectives', 2000)
    base = dict(os.environ, TMPDIR=work, SIMPPU_DEVICES='2', SIMPPU_NCCL_CHANNELS='2',
                SIMPPU_NCCL_CHUNK_BYTES='512', SIMPPU_NCCL_LATENCY_NS='500',
                SIMPPU_NCCL_GBPS='100000')
    base.pop('NCCL_PROFILER_PLUGIN', None)
    report = os.path.join(work, 'pccl.asys-rep')

    def one(kind, timing):
        env = dict(base)
        argv = [run, prog, 'bench', '2', str(calls)]
        if kind == 'null':
            env['NCCL_PROFILER_PLUGIN'] = null
        elif kind == 'asys':
            argv = [run, asys, 'profile', '-s', 'none', '-t', 'pccl', '-o', report,
                    '--force-overwrite=true', prog, 'bench', '2', str(calls)]
        timing_file = os.path.join(work, 'pccl-timing.txt')
        if timing:
            if os.path.exists(timing_file):
                os.unlink(timing_file)
            env['SIMPPU_NCCL_TIMING'] = timing_file
        r = subprocess.run(argv, capture_output=True, env=env, check=True)
        wall = float(r.stdout.decode().split('ns_per_call')[1].split()[0])
        return wall, (_sum(_parse(timing_file)) if timing and os.path.exists(timing_file)
                      else None)

    rows = {}
    for kind in ('absent', 'null', 'asys'):
        walls = [one(kind, False)[0] for _ in range(args.runs)]
        timed = [one(kind, True)[1] for _ in range(args.runs)] if kind != 'absent' else []
        rows[kind] = (statistics.median(walls), timed)

    def per(timed, bucket, unit):
        vals = [t['%s_ns' % bucket] / t[unit] for t in timed if t and t.get(unit)]
        return statistics.median(vals) if vals else float('nan')

    def per_event(timed, bucket):
        vals = [t['%s_ns' % bucket] / t['%s_events' % bucket] for t in timed
                if t and t.get('%s_events' % bucket)]
        return statistics.median(vals) if vals else float('nan')

    t = rows['asys'][1][0] if rows['asys'][1] else {}
    print('\n## PCCL: NCCL profiler plugin calls on the stand-in (%d all-reduces of 8 KiB on 2 '
          'ranks in groups, %.0f proxy steps per collective; median of %d runs)'
          % (calls, t.get('steps', 0) / max(t.get('collectives', 1), 1), args.runs))
    print('| plugin | wall ns/collective | in plugin: ns/collective (program thread) '
          '| ns/proxy step | ns/event (program) | ns/event (steps) |')
    print('|---|---:|---:|---:|---:|---:|')
    for kind in ('absent', 'null', 'asys'):
        wall, timed = rows[kind]
        if not timed:
            print('| %s | %.0f | 0 | 0 | | |' % (kind, wall))
            continue
        print('| %s | %.0f | %.1f | %.1f | %.1f | %.1f |' % (
            kind, wall, per(timed, 'app', 'collectives'), per(timed, 'step', 'steps'),
            per_event(timed, 'app'), per_event(timed, 'step')))
    null_t, asys_t = rows['null'][1], rows['asys'][1]
    added_app = per_event(asys_t, 'app') - per_event(null_t, 'app')
    added_step = per_event(asys_t, 'step') - per_event(null_t, 'step')
    added_coll = per(asys_t, 'app', 'collectives') - per(null_t, 'app', 'collectives')
    added_steps = per(asys_t, 'step', 'steps') - per(null_t, 'step', 'steps')
    print('\nasys over the null plugin: +%.1f ns per collective (%.1f ns per event), '
          '+%.1f ns per proxy step (%.1f ns per event); target <= 200 ns per event'
          % (added_coll, added_app, added_steps, added_step))
    print('wall time per collective: asys/absent %.2f, null/absent %.2f'
          % (rows['asys'][0] / rows['absent'][0], rows['null'][0] / rows['absent'][0]))
    return rows
