"""`python -m rocm_wheel ARGS...`: runs the installed rocm-wheel binary."""

import os
import sys

from rocm_wheel import find_binary


def main():
    binary = find_binary()
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
