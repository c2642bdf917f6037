"""python3 -m asys_dask --scheduler ADDR --asys-stats EXE --out DIR
                       --forward N OPTION... REPORT...

Exit status 0 when every report's partial is in DIR, 1 after one line on
stderr per failure (an unreachable scheduler, a report asys-stats refused,
a worker that died)."""
import logging
import os
import signal
import subprocess
import sys
import tempfile
import uuid

from . import PROG


def partial_task(exe, forward, report):
    """On a worker: asys-stats --partial for one report.  Returns (exit
    status, its stderr, the partial's bytes)."""
    if os.environ.get('ASYS_TEST_DASK_KILL_WORKER') == os.path.basename(report):
        os.kill(os.getpid(), signal.SIGKILL)  # test knob: a worker dying mid-run
    fd, path = tempfile.mkstemp(prefix='asys-', suffix='.partial')
    os.close(fd)
    try:
        r = subprocess.run([exe, '--partial', path, '-q', *forward, report],
                           capture_output=True, check=False)
        data = b''
        if r.returncode == 0:
            with open(path, 'rb') as f:
                data = f.read()
        return r.returncode, r.stderr.decode(errors='replace'), data
    finally:
        os.unlink(path)


def parse(argv):
    """The arguments asys-stats gives; None when they are not these."""
    named = {}
    i = 0
    while i < len(argv) and argv[i] in ('--scheduler', '--asys-stats', '--out', '--forward'):
        if i + 1 >= len(argv):
            return None
        named[argv[i][2:]] = argv[i + 1]
        i += 2
        if argv[i - 2] == '--forward':
            n = int(named['forward'])
            named['forward'] = argv[i:i + n]
            i += n
    if set(named) != {'scheduler', 'asys-stats', 'out', 'forward'}:
        return None
    named['reports'] = argv[i:]
    return named


def say(text):
    sys.stderr.write('%s: %s\n' % (PROG, text))


def connect(address):
    """A client of the scheduler, or None after saying why not."""
    try:
        from distributed import Client
    except ImportError as e:
        say('--scheduler needs Dask (python3-distributed): %s' % e)
        return None
    # distributed's own warnings (a task rescheduled) are not asys-stats'
    # lines: its loggers, as its configuration set them up on import, quiet
    for name in [n for n in logging.root.manager.loggerDict if n.startswith('distributed')]:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    logging.getLogger('distributed').setLevel(logging.CRITICAL)
    # nor asyncio's: a worker killed mid-run leaves a future whose TimeoutError
    # no one retrieves, and its event loop logs it at exit (three lines)
    logging.getLogger('asyncio').setLevel(logging.CRITICAL)
    try:
        return Client(address, timeout=10)
    except Exception as e:  # OSError, TimeoutError, ValueError for a bad address
        say("cannot reach the Dask scheduler '%s': %s" % (address, str(e).splitlines()[0]
                                                          if str(e) else type(e).__name__))
        return None


def gather(client, a):
    """Submits a task per report, writes their partials; the failures."""
    from distributed import KilledWorker
    run = uuid.uuid4().hex
    futures = [client.submit(partial_task, a['asys-stats'], a['forward'], report,
                             key='asys-partial-%s-%d' % (run, i), pure=False)
               for i, report in enumerate(a['reports'])]
    failures = 0
    for i, (report, future) in enumerate(zip(a['reports'], futures)):
        try:
            rc, err, data = future.result()
        except KilledWorker:
            # the tasks the dead worker held die with it: one line, the rest stopped
            say("cannot read '%s': its Dask worker died" % report)
            client.cancel(futures)
            return failures + 1
        except Exception as e:  # the task raised, or the cluster went away
            say("cannot read '%s' on the Dask cluster: %s" % (report, e))
            failures += 1
            continue
        if rc != 0:
            sys.stderr.write(err if err.endswith('\n') else err + '\n')
            failures += 1
            continue
        with open(os.path.join(a['out'], '%d.partial' % i), 'wb') as f:
            f.write(data)
    return failures


def main(argv):
    a = parse(argv)
    if a is None:
        say('asys_dask: bad arguments (it is run by asys-stats --scheduler)')
        return 2
    client = connect(a['scheduler'])
    if client is None:
        return 1
    try:
        return 1 if gather(client, a) else 0
    finally:
        try:
            client.close()
        except Exception:  # a cluster that went away: what was said stands
            pass


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
