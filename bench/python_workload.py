"""A CPU-bound pure-Python program for bench/python_sampling.py: recursive
calls, loops and dict/list work, about SECONDS of CPU."""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def churn(n):
    d = {}
    for i in range(n):
        d[i % 1000] = d.get(i % 1000, 0) + i
    return sorted(d.values())[-1]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    total = 0
    for _ in range(rounds):
        total += fib(22) + churn(100000)
    print(total)


if __name__ == '__main__':
    main()
