#!/usr/bin/env python3
"""Prints the test classes of an e2e test file (one per line) for CMake to
register one ctest entry each.  A class counts when it has test methods of
its own or inherited from classes of the same file.  Fails when the file's
`if __name__ == '__main__':` block is not its last statement: a class
defined after it would never run.

usage: list_cases.py TEST_FILE.py
"""
import ast
import sys


def main():
    path = sys.argv[1]
    tree = ast.parse(open(path, encoding='utf-8').read(), path)
    body = tree.body
    def is_main(node):
        return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and
                isinstance(node.test.left, ast.Name) and node.test.left.id == '__name__')

    mains = [i for i, node in enumerate(body) if is_main(node)]
    if not mains or mains[-1] != len(body) - 1:
        sys.exit("%s: the `if __name__ == '__main__':` block must come last" % path)
    classes = {node.name: node for node in body if isinstance(node, ast.ClassDef)}

    def tests(name, seen=()):
        node = classes.get(name)
        if node is None or name in seen:
            return False
        if any(isinstance(f, ast.FunctionDef) and f.name.startswith('test') for f in node.body):
            return True
        return any(isinstance(b, ast.Name) and tests(b.id, seen + (name,)) for b in node.bases)

    for name in classes:
        if tests(name):
            print(name)


if __name__ == '__main__':
    main()
