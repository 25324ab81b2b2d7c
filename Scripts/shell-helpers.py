#!/usr/bin/env python3
"""Small things the test scripts need that a shell does not have:

    Scripts/shell-helpers.py free-port      a TCP port on 127.0.0.1 that nothing listens on now
    Scripts/shell-helpers.py json-field K   the field K of the JSON object on standard input
"""
import json
import socket
import sys


def main():
    args = sys.argv[1:]
    if args == ["free-port"]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            print(s.getsockname()[1])
    elif len(args) == 2 and args[0] == "json-field":
        print(json.load(sys.stdin)[args[1]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
