"""An MCP server over streamable HTTPS for the gateway's tests, on the official Python SDK
(MCPServer) and uvicorn, with certificates made at start:

  https_server.py --dir DIR

Writes DIR/ca.pem (a CA made now, which signed the server's certificate for 127.0.0.1 and
localhost; its key is never written) and DIR/other-ca.pem (a CA that signed nothing), then
serves https://127.0.0.1:PORT/mcp on a free port and writes PORT to DIR/port once it listens.
Its one tool, `greet(name)`, answers "hello NAME over TLS".
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import ipaddress
import os
import socket

import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mcp.server.mcpserver import MCPServer


def name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(cn: str):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name(cn))
        .issuer_name(name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_leaf(ca_key, ca_cert):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name("toolgate test upstream"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    args = p.parse_args()
    d = args.dir
    ca_key, ca_cert = make_ca("toolgate test CA")
    _, other = make_ca("toolgate unrelated CA")
    leaf_key, leaf = make_leaf(ca_key, ca_cert)
    with open(os.path.join(d, "ca.pem"), "wb") as f:
        f.write(pem(ca_cert))
    with open(os.path.join(d, "other-ca.pem"), "wb") as f:
        f.write(pem(other))
    # the server's own key and chain, readable by this process only
    key_path = os.path.join(d, "server-key.pem")
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            leaf_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    chain_path = os.path.join(d, "server-chain.pem")
    with open(chain_path, "wb") as f:
        f.write(pem(leaf) + pem(ca_cert))

    server = MCPServer("https-upstream")

    @server.tool()
    def greet(name: str) -> str:
        """Greets someone."""
        return f"hello {name} over TLS"

    app = server.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        ssl_certfile=chain_path,
        ssl_keyfile=key_path,
    )
    uv = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(uv.serve(sockets=[sock]))
        while not uv.started:
            await asyncio.sleep(0.05)
        tmp = os.path.join(d, "port.tmp")
        with open(tmp, "w") as f:
            f.write(str(port))
        os.rename(tmp, os.path.join(d, "port"))
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
