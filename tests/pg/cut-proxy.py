#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cut-proxy.py LISTEN UPSTREAM CUTFILE - a Unix-socket proxy between a
PostgreSQL client and its server that loses the answer of one COMMIT.

Everything is passed on both ways until CUTFILE exists.  It holds markers,
one a line: on the first connection whose client then sends them all, in
that order, the next simple-query COMMIT is passed on to the server, which commits; its
answer never reaches the client: both sides are closed half a second
later.  CUTFILE is removed as the cut is made (the test's sign that it
was); a new CUTFILE arms the next cut.
Used by test_pg_outage.sh: a modification whose commit was made but whose
answer was lost."""
import os
import socket
import sys
import threading
import time

LISTEN, UPSTREAM, CUTFILE = sys.argv[1:4]
COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"
lock = threading.Lock()


def markers():
    try:
        with open(CUTFILE, "rb") as f:
            return [m for m in f.read().split(b"\n") if m]
    except OSError:
        return None


def serve(client):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(UPSTREAM)
    except OSError:
        client.close()
        return
    state = {"found": 0, "mute": False}

    def down():  # server -> client
        try:
            while True:
                data = server.recv(65536)
                if not data:
                    break
                if not state["mute"]:
                    client.sendall(data)
        except OSError:
            pass
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    threading.Thread(target=down, daemon=True).start()
    seen = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            cut = False
            with lock:  # one cut per CUTFILE: removed as it is made
                ms = markers()
                seen = (seen + data)[-65536:]
                while ms and state["found"] < len(ms) and ms[state["found"]] in seen:
                    m = ms[state["found"]]
                    seen = seen[seen.index(m) + len(m):]
                    state["found"] += 1
                if ms and state["found"] == len(ms) and COMMIT in seen:
                    state["mute"] = cut = True
                    os.unlink(CUTFILE)
            server.sendall(data)
            if cut:
                sys.stderr.write("cut-proxy: the answer of a COMMIT is lost\n")
                time.sleep(0.5)
                break
    except OSError:
        pass
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def main():
    try:
        os.unlink(LISTEN)
    except OSError:
        pass
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(LISTEN)
    os.chmod(LISTEN, 0o777)
    ls.listen(64)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
