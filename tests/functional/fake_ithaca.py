#!/usr/bin/python3
"""A stand-in for the ithaca binary, to check the harness's ithaca code path
(-p 0, the "listening on tcp 127.0.0.1:<PORT>" log line, SIGTERM) before
ithaca exists: ITHACA_BIN=tests/functional/fake_ithaca.py. It picks a free
port, execs memcached on it, and a child prints the log line ithaca prints
once the port accepts."""
import os
import socket
import sys

args = sys.argv[1:]
if "--config" in args:
    i = args.index("--config")
    del args[i:i + 2]
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
i = args.index("-p")
args[i + 1] = str(port)
if os.fork() == 0:
    # like ithaca, log the line only once the port accepts
    import time
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            print(f"fake_ithaca: listening on tcp 127.0.0.1:{port}", file=sys.stderr, flush=True)
            break
        except OSError:
            time.sleep(0.01)
    os._exit(0)
root = ["-u", "root"] if os.geteuid() == 0 else []
os.execvp("memcached", ["memcached", *root, *args])
