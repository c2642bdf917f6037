"""Video tracing cost (bench/run_benchmarks.py --only video): the wall time
of a cheap NVDEC call (cuvidGetDecodeStatus on simppu's libnvcuvid.so.1,
bench/video_overhead.c) without asys, with asys -t hgtx (libasys-video.so
not loaded: the untraced call), and with asys -t hgvideo (the call traced:
two clock reads and a 32-byte record, whose fresh segment memory is most
of the cost on a VM: measured in the same run with bench/segment_fill); and, for programs without video, the
cost of dlsym, the one libc function libasys-video.so interposes, with and
without -t hgvideo.  Target: <= 60 ns per traced call over the untraced
one; no measurable cost without video."""
import os
import statistics
import subprocess


def bench_video(args, work):
    build = args.build
    asys = os.path.join(build, 'bin', 'asys')
    prog = os.path.join(build, 'bench', 'video_overhead')
    simppu = os.path.join(build, 'simppu')
    if not os.path.exists(prog):
        print('\n## Video: the video stand-ins were not built, skipped')
        return None
    env = dict(os.environ, TMPDIR=work, LD_LIBRARY_PATH=simppu)
    report = os.path.join(work, 'video.asys-rep')
    calls = args.video_calls

    def one(mode, collectors):
        argv = [prog, mode, str(calls)]
        if collectors:
            argv = [asys, 'profile', '-s', 'none', '-t', collectors, '-o', report,
                    '--force-overwrite=true'] + argv
        out = subprocess.run(argv, capture_output=True, env=env, check=True).stdout.split()
        return float(out[out.index(b'ns_per_call') + 1])

    rows = {}
    for mode in ('calls', 'dlsym'):
        for collectors in (None, 'hgtx', 'hgvideo'):
            rows[(mode, collectors)] = statistics.median(one(mode, collectors)
                                                         for _ in range(args.runs))
    print('\n## Video: ns per call, %d calls, median of %d runs' % (calls, args.runs))
    print('| loop | no asys | asys -t hgtx (untraced) | asys -t hgvideo |')
    print('|---|---:|---:|---:|')
    for mode, what in (('calls', 'cuvidGetDecodeStatus (stand-in)'), ('dlsym', 'dlsym(libc, "getpid")')):
        print('| %s | %.1f | %.1f | %.1f |' % (what, rows[(mode, None)], rows[(mode, 'hgtx')],
                                              rows[(mode, 'hgvideo')]))
    # the anchor: writing fresh segment memory, 32-byte records (a call's), the same run
    fill = os.path.join(build, 'bench', 'segment_fill')
    per_byte = statistics.median(
        float(subprocess.run([fill, work, '32', '64'], capture_output=True, check=True)
              .stdout.split()[1]) for _ in range(args.runs))
    added = rows[('calls', 'hgvideo')] - rows[('calls', 'hgtx')]
    dlsym_added = rows[('dlsym', 'hgvideo')] - rows[('dlsym', 'hgtx')]
    print('\ntraced video call over the untraced one: %+.1f ns (target <= 60 ns); dlsym under '
          '-t hgvideo: %+.1f ns per call (%.1f%%); programs that call neither pay nothing (the '
          'library is preloaded only with -t hgvideo)'
          % (added, dlsym_added, 100.0 * dlsym_added / rows[('dlsym', 'hgtx')]))
    print('of the added cost, writing the call\'s 32 bytes of fresh segment memory: %.1f ns '
          '(bench/segment_fill: %.2f ns per byte on this machine, the same run); the rest, '
          'two clock reads and the record\'s fields: %.1f ns'
          % (32 * per_byte, per_byte, added - 32 * per_byte))
    return rows
