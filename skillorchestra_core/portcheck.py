"""`python -m skillorchestra_core.portcheck PORT [ADDRESS]`: exit 0 when the app can listen there, else print one
line saying how to pick another port (`make run PORT=...`) and exit 1. Used by `make run` before Streamlit starts."""

from __future__ import annotations

import socket
import sys


def port_free(port: int, address: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((address, port))
        except OSError:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        port = int(args[0])
    except (IndexError, ValueError):
        print("usage: python -m skillorchestra_core.portcheck PORT [ADDRESS]", file=sys.stderr)
        return 2
    address = args[1] if len(args) > 1 else "127.0.0.1"
    if port_free(port, address):
        return 0
    print(f"error: port {port} on {address} is in use (another app?): run `make run PORT={port + 1}` "
          "or stop the other app", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
