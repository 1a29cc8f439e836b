"""A DNS server on 127.0.0.1 for toolgate's tests, on dnslib (PyPI `dnslib`).

Usage: dns_server.py ZONE_JSON, where ZONE_JSON maps names to lists of answer sets:
{"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]} answers the first A query of rebind.test
with 127.0.0.2 and every later one with 127.0.0.1 (the last set repeats), each with TTL 0.
IPv6 addresses in a set answer AAAA queries. Names not in the zone are NXDOMAIN.

Serves UDP and TCP on one port, prints `port N` once listening, then `query NAME TYPE` for
every query (flushed), and stops when its standard input closes.
"""

import json
import sys
import threading

from dnslib import AAAA, QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver, DNSServer


class Zone(BaseResolver):
    def __init__(self, zone):
        self.zone = {name.rstrip(".").lower() + ".": sets for name, sets in zone.items()}
        self.seen = {}
        self.lock = threading.Lock()

    def resolve(self, request, handler):
        reply = request.reply()
        q = request.q
        name = str(q.qname).lower()
        qtype = QTYPE[q.qtype]
        print(f"query {name} {qtype}", flush=True)
        sets = self.zone.get(name)
        if sets is None:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        if qtype not in ("A", "AAAA"):
            return reply
        with self.lock:
            n = self.seen.get((name, qtype), 0)
            self.seen[(name, qtype)] = n + 1
        for ip in sets[min(n, len(sets) - 1)]:
            if ":" in ip and qtype == "AAAA":
                reply.add_answer(RR(q.qname, QTYPE.AAAA, rdata=AAAA(ip), ttl=0))
            elif ":" not in ip and qtype == "A":
                reply.add_answer(RR(q.qname, QTYPE.A, rdata=A(ip), ttl=0))
        return reply


class Quiet:
    """A dnslib logger that logs nothing (the queries are printed by the resolver)."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def main():
    zone = Zone(json.loads(sys.argv[1]))
    # the UDP port is the system's pick; the same number may be taken for TCP by another
    # test's server, so pick again until both are free
    for _ in range(50):
        udp = DNSServer(zone, address="127.0.0.1", port=0, logger=Quiet())
        port = udp.server.server_address[1]
        try:
            tcp = DNSServer(zone, address="127.0.0.1", port=port, tcp=True, logger=Quiet())
            break
        except OSError:
            udp.server.server_close()
    else:
        sys.exit("no port free for both UDP and TCP")
    udp.start_thread()
    tcp.start_thread()
    print(f"port {port}", flush=True)
    sys.stdin.read()
    udp.stop()
    tcp.stop()


if __name__ == "__main__":
    main()
