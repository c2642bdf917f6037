"""Python sampling test program: a multiprocessing pool of two forked
workers burns CPU in burn(); prints the workers' pids."""
import multiprocessing
import os


def burn(n):
    s = 0
    for i in range(n):
        s += i * i
    return os.getpid()


if __name__ == '__main__':
    multiprocessing.set_start_method('fork')
    with multiprocessing.Pool(2) as pool:
        print(' '.join(str(p) for p in sorted(set(pool.map(burn, [1500000] * 4)))))
