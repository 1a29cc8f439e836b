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
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

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
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
                **parsed(data),
            }
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(path + ".tmp", path)
            if args.stall:
                await asyncio.sleep(args.stall)
            return "250 2.0.0 Message accepted for delivery"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            args.user is not None
            and getattr(auth_data, "login", None) == args.user.encode()
            and getattr(auth_data, "password", None) == args.password.encode()
        )
        # handled=False: aiosmtpd then answers 535 itself
        return AuthResult(success=ok, handled=False)

    def factory():
        kwargs = dict(enable_SMTPUTF8=True, decode_data=False)
        if args.user is not None:
            kwargs.update(
                authenticator=authenticator, auth_required=True, auth_require_tls=False
            )
        return SMTP(Recorder(), hostname="toolgate-test", **kwargs)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(factory, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
