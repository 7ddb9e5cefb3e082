# Throwaway oracle probe: run against a real memcached 1.6.18 started as
#   memcached -u nobody -p PORT -U 0 -l 127.0.0.1 -I 1m
# usage: python3 probe_text.py PORT "b'get a\r\n'" ...  (each argument is a Python bytes literal)
import socket, sys, time
PORT=int(sys.argv[1])
def q(data, wait=0.3):
    s=socket.create_connection(('127.0.0.1',PORT)); s.settimeout(wait)
    s.sendall(data); out=b''; closed=False
    try:
        while True:
            d=s.recv(65536)
            if not d: closed=True; break
            out+=d
    except socket.timeout: pass
    s.close(); return out, closed
for arg in sys.argv[2:]:
    data=eval(arg)
    out,closed=q(data)
    print(repr(data[:80]), '->', repr(out[:300]), 'CLOSED' if closed else '')
