"""Small TCP probes for checking an emulated cluster (stdlib only).

Run inside node namespaces (``contend cluster exec NODE -- python3 -m
contend.cluster.probe ...``); used by the tests and by ``bench/emulation_fidelity``.

Modes:

``sink``
    Listen on ``--bind ADDR --port P``, print ``READY`` on stdout, accept
    ``--connections K`` connections concurrently, read each to end-of-file and
    print one JSON object per connection: ``bytes``, ``t_first``, ``t_last``
    (``time.monotonic`` of first and last received byte) and ``samples``, a list
    of ``[t, cumulative_bytes]`` taken at most every ``--sample-ms``.
``send``
    Connect to ``--connect ADDR:PORT`` and send zeros until ``--bytes`` were sent
    or ``--seconds`` have passed (whichever first), then close.
``echo``
    Request/response server for ``pingpong``: reads an 8-byte big-endian size,
    then that many bytes, then answers one byte; repeats until end-of-file.
``pingpong``
    For each size in ``--sizes`` send ``--reps`` messages (8-byte header + size
    bytes) and time each until the one-byte answer arrives; prints one JSON
    object per size with the list of times in seconds.

Every mode is bounded by ``--timeout`` seconds (sockets and overall loop).
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time

_CHUNK = 65536


def _parse_hostport(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected ADDR:PORT, got {text!r}")
    return host, int(port)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    parts = []
    while n > 0:
        data = conn.recv(min(n, _CHUNK))
        if not data:
            raise ConnectionError("peer closed the connection early")
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


def _sink_one(conn: socket.socket, sample_s: float, out: list, lock: threading.Lock) -> None:
    total = 0
    t_first = None
    t_last = None
    samples = []
    next_sample = 0.0
    with conn:
        while True:
            data = conn.recv(_CHUNK)
            now = time.monotonic()
            if not data:
                break
            if t_first is None:
                t_first = now
            total += len(data)
            t_last = now
            if now >= next_sample:
                samples.append([now, total])
                next_sample = now + sample_s
    if t_last is not None:
        samples.append([t_last, total])
    with lock:
        out.append({"bytes": total, "t_first": t_first, "t_last": t_last, "samples": samples})


def sink(args: argparse.Namespace) -> int:
    """Accept ``args.connections`` connections, drain them, print JSON results."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(max(8, args.connections))
    srv.settimeout(args.timeout)
    print("READY", flush=True)
    results: list = []
    lock = threading.Lock()
    threads = []
    deadline = time.monotonic() + args.timeout
    with srv:
        for _ in range(args.connections):
            conn, _peer = srv.accept()
            conn.settimeout(max(0.1, deadline - time.monotonic()))
            t = threading.Thread(
                target=_sink_one, args=(conn, args.sample_ms / 1000.0, results, lock), daemon=True
            )
            t.start()
            threads.append(t)
    for t in threads:
        t.join(max(0.1, deadline - time.monotonic()))
    for r in results:
        print(json.dumps(r), flush=True)
    return 0 if len(results) == args.connections else 1


def send(args: argparse.Namespace) -> int:
    """Send zeros to ``args.connect`` bounded by bytes and seconds."""
    host, port = args.connect
    buf = bytes(_CHUNK)
    sent = 0
    with socket.create_connection((host, port), timeout=args.timeout) as s:
        end = time.monotonic() + args.seconds
        while sent < args.bytes and time.monotonic() < end:
            n = min(_CHUNK, args.bytes - sent)
            s.sendall(buf[:n])
            sent += n
        s.shutdown(socket.SHUT_WR)
        s.recv(1)  # wait for the peer to close: all data was received
    print(json.dumps({"sent": sent}), flush=True)
    return 0


def echo(args: argparse.Namespace) -> int:
    """Serve request/response rounds for ``pingpong`` on one connection."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((args.bind, args.port))
    srv.listen(1)
    srv.settimeout(args.timeout)
    print("READY", flush=True)
    with srv:
        conn, _peer = srv.accept()
    conn.settimeout(args.timeout)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while True:
            hdr = conn.recv(8, socket.MSG_WAITALL)
            if len(hdr) < 8:
                break
            (size,) = struct.unpack("!Q", hdr)
            remaining = size
            while remaining > 0:
                data = conn.recv(min(remaining, _CHUNK))
                if not data:
                    return 1
                remaining -= len(data)
            conn.sendall(b"k")
    return 0


def pingpong(args: argparse.Namespace) -> int:
    """Time one-way bulk messages (answered by one byte) for each size."""
    host, port = args.connect
    deadline = time.monotonic() + args.timeout
    with socket.create_connection((host, port), timeout=args.timeout) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for size in args.sizes:
            payload = bytes(size)
            times = []
            for _ in range(args.warmup + args.reps):
                if time.monotonic() > deadline:
                    raise TimeoutError("pingpong exceeded --timeout")
                t0 = time.perf_counter()
                s.sendall(struct.pack("!Q", size) + payload)
                if _recv_exact(s, 1) != b"k":
                    raise ConnectionError("unexpected answer")
                times.append(time.perf_counter() - t0)
                if args.gap_ms:
                    time.sleep(args.gap_ms / 1000.0)
            print(json.dumps({"size": size, "times": times[args.warmup :]}), flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m contend.cluster.probe",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="mode", required=True)
    for name in ("sink", "echo"):
        q = sub.add_parser(name)
        q.add_argument("--bind", default="0.0.0.0")
        q.add_argument("--port", type=int, required=True)
        q.add_argument("--timeout", type=float, default=60.0)
        if name == "sink":
            q.add_argument("--connections", type=int, default=1)
            q.add_argument("--sample-ms", type=float, default=50.0)
    q = sub.add_parser("send")
    q.add_argument("--connect", type=_parse_hostport, required=True)
    q.add_argument("--bytes", type=int, default=10**8)
    q.add_argument("--seconds", type=float, default=5.0)
    q.add_argument("--timeout", type=float, default=60.0)
    q = sub.add_parser("pingpong")
    q.add_argument("--connect", type=_parse_hostport, required=True)
    q.add_argument("--sizes", type=lambda t: [int(x) for x in t.split(",")], required=True)
    q.add_argument("--reps", type=int, default=5)
    q.add_argument("--warmup", type=int, default=1)
    q.add_argument("--gap-ms", type=float, default=20.0)
    q.add_argument("--timeout", type=float, default=120.0)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    fn = {"sink": sink, "send": send, "echo": echo, "pingpong": pingpong}[args.mode]
    try:
        return fn(args)
    except (OSError, ConnectionError, TimeoutError) as exc:
        print(f"probe {args.mode}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
