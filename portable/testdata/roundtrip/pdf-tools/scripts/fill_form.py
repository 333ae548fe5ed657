#!/usr/bin/env python3
"""Fill a PDF form: fill_form.py IN.pdf OUT.pdf field=value..."""
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    fields = dict(a.split("=", 1) for a in argv[3:])
    print(f"would fill {len(fields)} fields of {argv[1]} into {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
