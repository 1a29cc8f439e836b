"""The email assistant end to end (issue 14) with the official Python SDK (`mcp`), against
`toolgate serve` over stdio with `[mail]` configured: contacts, files, draft, validate, and a
send with a PDF attachment approved through elicitation.

Run by crates/toolgate-cli/tests/cli/mail.rs, which checks what the SMTP server received.
Exits 0 when every check holds, printing one `ok: ...` line per check and `passed: mail`.

  mail_client.py --mode legacy|2026-07-28 --stdio JSON_ARGV --pdf-size N
"""

from __future__ import annotations

import argparse

import mcp_types as types
from client_support import add_server_args, check, make_client, run_client, text_of


async def run(args: argparse.Namespace) -> None:
    asked: list[str] = []

    async def on_elicit(context, params) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with make_client(args, 60, elicitation_callback=on_elicit) as c:
        r = await c.call_tool("search_contacts", {"query": "张总"})
        contacts = (r.structured_content or {}).get("contacts", [])
        check(contacts and contacts[0]["name"] == "张伟", "张总 finds 张伟", r)
        contact = contacts[0]["id"]

        r = await c.call_tool("search_files", {"query": "analysis", "modified_within": "7d", "kind": "pdf"})
        files = (r.structured_content or {}).get("files", [])
        check(len(files) == 1 and files[0]["name"] == "analysis-report.pdf", "the report is found", r)
        check(files[0]["handle"].startswith("file_"), "as a handle", files)

        draft_args = {
            "to": [contact],
            "subject": "Last week's progress",
            "key_points": ["The analysis report is attached", "Tests start on Monday"],
            "tone": "formal",
            "language": "en",
        }
        r = await c.call_tool("generate_email_draft", draft_args)
        draft = r.structured_content or {}
        check(draft.get("text", "").startswith("Dear 张伟,"), "the draft greets 张伟", r)

        r = await c.call_tool("validate_email_address", {"address": "zhang.wei@example.cn"})
        check((r.structured_content or {}).get("policy") == "ask", "the address is valid and a send to it asks", r)
        r = await c.call_tool("validate_email_address", {"address": "zhang.wei@example"})
        check((r.structured_content or {}).get("valid") is False, "a bad address says why", r)

        send = {"to": [contact], "cc": ["ann@company.com"], "draft": draft["draft"], "attachments": [files[0]["handle"]]}
        r = await c.call_tool("send_email", send)
        check(not r.is_error, "the email is sent, approved", text_of(r))
        check(len(asked) == 1, "one question was asked", asked)
        q = asked[0]
        for needed in ["zhang.wei@example.cn", "ann@company.com", f"analysis-report.pdf ({args.pdf_size} bytes, application/pdf)"]:
            check(needed in q, f"the question shows {needed}", q)
        print("message-id:", (r.structured_content or {}).get("message_id"), flush=True)

        again = await c.call_tool("send_email", send)
        check(not again.is_error and again.structured_content == r.structured_content, "sent again: the first result", again)
        check(len(asked) == 1, "nobody is asked again", asked)

        # the whole flow run again: new file and draft handles for the same file and text are
        # the same message, so the same call to the ledger (its first result, nothing sent)
        f2 = await c.call_tool("search_files", {"query": "analysis", "kind": "pdf"})
        handle = (f2.structured_content or {}).get("files", [{}])[0].get("handle")
        check(handle and handle != files[0]["handle"], "search_files gives a new handle", f2)
        d2 = await c.call_tool("generate_email_draft", draft_args)
        check((d2.structured_content or {}).get("draft") != draft["draft"], "a new draft handle", d2)
        rerun = {**send, "draft": d2.structured_content["draft"], "attachments": [handle]}
        third = await c.call_tool("send_email", rerun)
        check(not third.is_error and third.structured_content == r.structured_content, "the flow run again: the first result", third)
        check(len(asked) == 1, "nobody is asked a third time", asked)


def main() -> None:
    p = argparse.ArgumentParser()
    add_server_args(p)
    p.add_argument("--pdf-size", type=int, required=True)
    args = p.parse_args()
    run_client(run, args, 120, "mail")


if __name__ == "__main__":
    main()
