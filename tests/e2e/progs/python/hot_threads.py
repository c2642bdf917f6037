"""Python sampling test program: two threads spend 75 % of their work in
hot() and 25 % in cold() (the same loop, 3:1 iterations: by work, not by
wall time, which the other thread's turns on the GIL would stretch); the
second thread starts after the first samples were taken.
usage: hot_threads.py SECONDS"""
import sys
import threading
import time


def spin(iterations):
    for _ in range(iterations):
        pass


def hot():
    spin(30000)


def cold():
    spin(10000)


def work(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        hot()
        cold()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    end = time.perf_counter() + 0.2
    while time.perf_counter() < end:  # samples of the main thread alone first
        pass
    late = threading.Thread(target=work, args=(seconds,), name='late-worker')
    late.start()
    work(seconds)
    late.join()
    print(late.native_id)


if __name__ == '__main__':
    main()
