#!/usr/bin/env python3
"""Writes a .mls input too large or too deeply nested to keep in a file.

usage: hostile_input.py KIND COUNT > FILE
  big COUNT     a comment line of COUNT bytes of `x`
  parens COUNT  `let x = ((...1...))` with COUNT parentheses
  blocks COUNT  an accelerator with COUNT nested `peak { ... }` blocks
  chain COUNT   `let total_gpus = 8 + 8 + ...` with COUNT additions
  signs COUNT   `let tp = ---...8` with COUNT signs
"""
import sys


def main(kind, count):
    if kind == "big":
        return "# " + "x" * count
    if kind == "parens":
        return "let x = " + "(" * count + "1" + ")" * count
    if kind == "blocks":
        return "accelerator A " + "{ peak " * count + "{ }" + " }" * count
    if kind == "chain":
        return "let total_gpus = " + " + ".join(["8"] * (count + 1))
    if kind == "signs":
        return "let tp = " + "-" * count + "8"
    sys.exit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.stdout.write(main(sys.argv[1], int(sys.argv[2])) + "\n")
