"""Sockets as the tests see them: which addresses a port listens on, and a database connection that can be cut
and restored."""

from __future__ import annotations

import ipaddress
import socket
import threading
from pathlib import Path


class Cuttable:
    """A TCP forwarder between the driver and the real server that can be cut (connections dropped, the port
    refusing) and restored: a database that goes away and comes back, without touching the shared server."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the thread in accept(); close alone does not
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            for s in self._open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self._open = []

    def restore(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self.cut()


def listening(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The local addresses a socket on `port` listens on, from the kernel's tables (IPv4-mapped IPv6 addresses
    as the IPv4 address they map: Java listens on those)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            hex_address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(hex_address)  # the kernel writes each 32-bit word in host (little-endian) order
            address = ipaddress.ip_address(b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)))
            mapped = getattr(address, "ipv4_mapped", None)
            found.append(mapped or address)
    return found
