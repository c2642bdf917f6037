"""One measured run of a benchmark step, shared by the bench modules."""
import os
import time


def measured_run(argv, cwd, env=None):
    """(wall seconds, CPU seconds of the process tree) of one run of argv in
    cwd, its output discarded; a failed step ends the benchmark."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execve(argv[0], argv, os.environ if env is None else env)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit('benchmark step failed: %s' % ' '.join(argv))
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime
