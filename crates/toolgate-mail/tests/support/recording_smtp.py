"""A real SMTP server (aiosmtpd) on 127.0.0.1 for toolgate-mail's tests, recording every
message it accepts.

Prints the port it listens on as the first line of stdout, then serves until killed. Each
message is written to OUT/NNN.json ({"mail_from", "rcpt_tos", "data"}) before the final reply
is sent, so a message the server stalls on is already recorded, as a real server holds a
message it has received before it answers.

Options:
  --out DIR              where messages are recorded (required)
  --stall SECONDS        wait this long before the final reply to DATA
  --reject-domain D      answer 550 to RCPT TO for addresses at domain D
  --user U --password P  require AUTH with these credentials (plain text allowed)
  --echo-credentials     a relay that quotes the credentials it was sent, as the tester's
                         did: a refused AUTH is answered with a 535 holding AUTH PLAIN's
                         base64, LOGIN's base64 of the password and the decoded pair, and an
                         accepted message with a 250 holding the same
  --only-login           offer AUTH LOGIN only (not PLAIN)
  --stall-greeting S     wait this long before the greeting (220)
  --stall-auth S         wait this long before answering AUTH
  --no-smtputf8          do not offer SMTPUTF8 (RFC 6531): internationalized addresses are
                         refused, as many servers do
  --tls starttls|tls     offer and require STARTTLS, or speak TLS from the first byte, with
                         a certificate made now by trustme for --cert-host (default
                         127.0.0.1) from a new CA; the CA's certificate is written to
                         OUT/ca.pem, another CA's (that signed nothing here) to OUT/other-ca.pem
"""

import argparse
import asyncio
import base64
import email
import email.policy
import json
import os
import sys

from aiosmtpd.smtp import SMTP, AuthResult


def parsed(data: bytes) -> dict:
    """The message's headers, bodies and attachments, decoded by Python's email package."""
    msg = email.message_from_bytes(data, policy=email.policy.default)
    out = {
        "subject": str(msg["subject"]),
        "message_id": str(msg["message-id"]),
        "from": str(msg["from"]),
        "to": str(msg["to"] or ""),
        "cc": str(msg["cc"] or ""),
        "text": None,
        "html": None,
        "attachments": [],
        "size": len(data),
    }
    for part in msg.walk():
        if part.is_multipart():
            continue
        if part.get_content_disposition() == "attachment":
            out["attachments"].append(
                {
                    "filename": part.get_filename(),
                    "content_type": part.get_content_type(),
                    "data_b64": base64.b64encode(part.get_payload(decode=True)).decode(),
                }
            )
        elif part.get_content_type() == "text/plain" and out["text"] is None:
            out["text"] = part.get_content()
        elif part.get_content_type() == "text/html" and out["html"] is None:
            out["html"] = part.get_content()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--stall", type=float, default=0.0)
    ap.add_argument("--reject-domain", default=None)
    ap.add_argument("--user", default=None)
    ap.add_argument("--password", default=None)
    ap.add_argument("--echo-credentials", action="store_true")
    ap.add_argument("--only-login", action="store_true")
    ap.add_argument("--stall-greeting", type=float, default=0.0)
    ap.add_argument("--stall-auth", type=float, default=0.0)
    ap.add_argument("--no-smtputf8", action="store_true")
    ap.add_argument("--tls", choices=["starttls", "tls"], default=None)
    ap.add_argument("--cert-host", default="127.0.0.1")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    ssl_context = None
    if args.tls:
        import ssl

        import trustme

        ca = trustme.CA()
        ca.cert_pem.write_to_path(os.path.join(args.out, "ca.pem"))
        trustme.CA().cert_pem.write_to_path(os.path.join(args.out, "other-ca.pem"))
        ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert(args.cert_host).configure_cert(ssl_context)

    def quoted(auth_data) -> str:
        """The credentials a client sent, as an echoing relay quotes them."""
        login = getattr(auth_data, "login", None) or b""
        password = getattr(auth_data, "password", None) or b""
        plain = base64.b64encode(b"\0" + login + b"\0" + password).decode()
        login_form = base64.b64encode(password).decode()
        decoded = (b" " + login + b" " + password).decode("utf-8", "replace")
        return "[%s] [%s] decoded [%s]" % (plain, login_form, decoded)

    class Recorder:
        count = 0

        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if args.reject_domain and address.lower().endswith("@" + args.reject_domain):
                return "550 5.1.1 <%s>: recipient rejected" % address
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            Recorder.count += 1
            path = os.path.join(args.out, "%03d.json" % Recorder.count)
            data = envelope.original_content or envelope.content
            if isinstance(data, str):
                data = data.encode("utf-8")
            record = {
                "tls": server.transport.get_extra_info("ssl_object") is not None,
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
                # carriage returns not followed by a line feed, as received
                "lone_cr": data.count(b"\r") - data.count(b"\r\n"),
                **parsed(data),
            }
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(path + ".tmp", path)
            if args.stall:
                await asyncio.sleep(args.stall)
            if args.echo_credentials:
                return "250 2.0.0 queued; auth was %s" % quoted(session.auth_data)
            return "250 2.0.0 Message accepted for delivery"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            args.user is not None
            and getattr(auth_data, "login", None) == args.user.encode()
            and getattr(auth_data, "password", None) == args.password.encode()
        )
        if ok:
            return AuthResult(success=True, auth_data=auth_data)
        if args.echo_credentials:
            message = "535 5.7.8 bad credentials for %s" % quoted(auth_data)
            return AuthResult(success=False, handled=False, message=message)
        # handled=False: aiosmtpd then answers 535 itself
        return AuthResult(success=False, handled=False)

    class Stalling(SMTP):
        async def _handle_client(self):
            if args.stall_greeting:
                await asyncio.sleep(args.stall_greeting)
            await super()._handle_client()

        async def smtp_AUTH(self, arg):
            if args.stall_auth:
                await asyncio.sleep(args.stall_auth)
            await super().smtp_AUTH(arg)

    def factory():
        kwargs = dict(enable_SMTPUTF8=not args.no_smtputf8, decode_data=False)
        if args.user is not None:
            kwargs.update(
                authenticator=authenticator, auth_required=True, auth_require_tls=False
            )
            if args.only_login:
                kwargs.update(auth_exclude_mechanism=["PLAIN"])
        if args.tls == "starttls":
            kwargs.update(tls_context=ssl_context, require_starttls=True)
        return Stalling(Recorder(), hostname="toolgate-test", **kwargs)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        implicit = ssl_context if args.tls == "tls" else None
        server = await loop.create_server(factory, "127.0.0.1", 0, ssl=implicit)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
