#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Asks a running NCCL job's RAS service for its status, as NCCL's own `ncclras -f json` client
does, for hosts that have NCCL's library (PyTorch's bundled one) but not its client binary.

    python3 scripts/torch/ras_status.py [--host localhost] [--port 28028] [--format json|text]
        [--verbose] [--timeout SECS] > status.json

The RAS service (NCCL 2.24+, on by default: NCCL_RAS_ENABLE) listens on NCCL_RAS_ADDR, port 28028
by default, on every node of the job. Its client protocol, as NCCL's src/ras/client.cc speaks it
(protocol 2 in NCCL 2.28): the client sends "CLIENT PROTOCOL 2", the service answers
"SERVER PROTOCOL <n>"; "TIMEOUT <s>" and "SET FORMAT json" are each answered "OK"; after
"[VERBOSE ]STATUS" the service writes the report and closes the connection. JSON output needs
NCCL 2.28.7 or later; an older service answers SET FORMAT with an error, printed here.
"""
import argparse
import socket
import sys


def line(sock):
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="localhost")
    ap.add_argument("--port", type=int, default=28028)
    ap.add_argument("--format", default="json", choices=["json", "text"])
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--timeout", type=int, default=5,
                    help="how long the service waits for the job's other processes (s)")
    args = ap.parse_args()
    try:
        sock = socket.create_connection((args.host, args.port), timeout=args.timeout + 30)
    except OSError as e:
        sys.exit(f"ras_status.py: cannot reach NCCL's RAS service at {args.host}:{args.port}: {e}")
    with sock:
        sock.sendall(b"CLIENT PROTOCOL 2\n")
        hello = line(sock)
        if not hello.upper().startswith("SERVER PROTOCOL "):
            sys.exit(f"ras_status.py: unexpected answer to the handshake: {hello!r}")
        print(f"ras_status.py: {hello.strip()}", file=sys.stderr)
        for cmd in (f"TIMEOUT {args.timeout}", f"SET FORMAT {args.format}"):
            sock.sendall(cmd.encode() + b"\n")
            answer = line(sock)
            if answer.strip().upper() != "OK":
                sys.exit(f"ras_status.py: '{cmd}' refused: {answer.strip()!r}")
        sock.sendall(b"VERBOSE STATUS\n" if args.verbose else b"STATUS\n")
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            sys.stdout.buffer.write(chunk)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
