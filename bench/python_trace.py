"""Python function tracing cost (bench/run_benchmarks.py --only python_trace): ns per
call of a loop of calls to one function, measured inside the interpreter
(CPU time of the thread, time.thread_time_ns: the machine may be shared; the best of 5 rounds in each of 5 runs, the configurations taking turns), for
  - an untraced function while a spec is active (the rules name another module),
  - a traced function whose calls stay under --python-functions-threshold,
  - a traced function with --python-functions-threshold 0 (every call a range),
against the same loop with no tool and under cProfile (its C profiler, enabled
around the loop) in the same run.  Two bodies: an empty function (the hook's
whole cost shows) and one doing ~1 us of work.  asys runs with
--python-sampling false so only the tracer is measured.
Targets: untraced calls <= 5 % slower than with no tool; traced calls cheaper
than cProfile's."""
import json
import os
import subprocess
import sys

LOOP = r'''
import json, sys, time
sys.path.insert(0, %(dir)r)
import benchmod, tracedmod
N = %(calls)d
def per_call(f):
    best = None
    for _ in range(5):
        t0 = time.thread_time_ns()
        for _ in range(N):
            f()
        dt = time.thread_time_ns() - t0
        best = dt if best is None or dt < best else best
    return best / N
def loop_ns():
    best = None
    for _ in range(5):
        t0 = time.thread_time_ns()
        for _ in range(N):
            pass
        dt = time.thread_time_ns() - t0
        best = dt if best is None or dt < best else best
    return best / N
time.sleep(0.1)  # the tracer is up
mode = sys.argv[1]
if mode == 'cprofile':
    import cProfile
    p = cProfile.Profile()
    p.enable()
out = {'loop': loop_ns()}
for body in ('empty', 'work'):
    out['untraced_' + body] = per_call(getattr(benchmod, body))
    out['traced_' + body] = per_call(getattr(tracedmod, body))
if mode == 'cprofile':
    p.disable()
print(json.dumps(out))
'''

MOD = '''
def empty():
    pass


def work():
    s = 0
    for i in range(40):
        s += i
    return s
'''


RUNS = 5


def bench_python_trace(args, work):
    asys = os.path.join(args.build, 'bin', 'asys')
    d = os.path.join(work, 'pytrace')
    os.makedirs(d, exist_ok=True)
    for name in ('benchmod', 'tracedmod'):
        with open(os.path.join(d, name + '.py'), 'w') as f:
            f.write(MOD)
    calls = getattr(args, 'python_calls', 200000)
    script = os.path.join(d, 'loop.py')
    with open(script, 'w') as f:
        f.write(LOOP % {'dir': d, 'calls': calls})
    env = dict(os.environ, TMPDIR=work)
    pythons = [sys.executable] + [p for p in (getattr(args, 'python_interpreters', '') or '').split(',')
                                  if p]
    for python in pythons:
        _bench_one(asys, python, script, env, work, calls)


def _bench_one(asys, python, script, env, work, calls):
    def run(mode, tool=()):
        r = subprocess.run([*tool, python, script, mode], capture_output=True, env=env)
        if r.returncode != 0:
            sys.exit('python_trace step failed: %s' % r.stderr.decode(errors='replace'))
        return json.loads(r.stdout.decode().strip().splitlines()[-1])

    def asys_tool(threshold):
        return [asys, 'profile', '-t', 'none', '-o', os.path.join(work, 'pytrace-rep'),
                '--force-overwrite=true', '--python-sampling', 'false',
                '--python-functions-trace', 'module:tracedmod',
                '--python-functions-threshold', str(threshold)]

    # the configurations take turns, RUNS times; each figure is its fastest run
    # (the machine may be shared)
    configs = [('plain', ()), ('cprofile', ()), ('plain', asys_tool(10 ** 9)),
               ('plain', asys_tool(0))]
    runs = [[] for _ in configs]
    for _ in range(RUNS):
        for i, (mode, tool) in enumerate(configs):
            runs[i].append(run(mode, tool))
    none, cprof, under, over = ({k: min(r[k] for r in rs) for k in rs[0]} for rs in runs)
    version = subprocess.run([python, '-c', 'import sys; print(sys.version.split()[0])'],
                             capture_output=True).stdout.decode().strip()
    print('\n## Python %s function tracing: ns per call (%d calls, best of 5 rounds x %d runs; '
          'the bare loop costs %.1f ns per iteration and is not subtracted)'
          % (version, calls, RUNS, none['loop']))
    print('| body | no tool | cProfile | asys: untraced function, spec active | '
          'asys: traced, under the threshold | asys: traced, every call a range | '
          'untraced vs no tool | traced (every call) vs cProfile |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for body in ('empty', 'work'):
        base = none['untraced_' + body]
        cp = cprof['untraced_' + body]
        un = under['untraced_' + body]
        tu = under['traced_' + body]
        to = over['traced_' + body]
        print('| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %+.1f %% | %.2fx |'
              % (body, base, cp, un, tu, to, 100.0 * (un - base) / base, to / cp))
    return none, cprof, under, over
