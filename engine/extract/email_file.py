"""E-mail: single messages (.eml, Maildir files), mailboxes (mbox), Outlook's .msg.

    >>> extract_eml(Path("offer.eml"), data).title          # the subject
    >>> [m.name for m in email_members("mbox", Path("Inbox"), data, budget)]
    ['message-1.eml', 'message-2.eml']

A message's text is its headers a person reads (Subject, From, To, Cc, Date), then its
body: the text/plain part, or the HTML part through the HTML extractor when there is
no plain one. Its Date header becomes the document's date (`after:`/`before:`).
Attachments, forwarded messages included, are its members and go through the
extractors like any file. The standard library's `email` parses MIME; extract-msg
reads Outlook's OLE files. An mbox is split at its "From " lines; each message is
a member named message-N.eml (N from 1, in file order).
"""

from __future__ import annotations

import email
import email.policy
import functools
import logging
import re
from collections.abc import Iterator
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path

from engine.errors import CorruptDocumentError, EncryptedDocumentError
from engine.extract.base import ExtractedText, clean_title, normalise_whitespace
from engine.extract.limits import Budget
from engine.extract.members import Member, MemberNames

log = logging.getLogger(__name__)

READ_HEADERS = ("Subject", "From", "To", "Cc", "Date")
# A line that starts a message in an mbox ("From sender date"); mboxrd escapes the rest.
_FROM_LINE = re.compile(rb"^From [^\r\n]*\r?\n", re.MULTILINE)
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]{0,60}:[ \t]")
# Headers that only a message has; a text file starting with three of them is an e-mail.
_MAIL_HEADERS = frozenset(
    b"from to cc subject date message-id received return-path delivered-to mime-version "
    b"reply-to in-reply-to references content-type x-mailer user-agent sender".split())
_ENCRYPTED_TYPES = ("multipart/encrypted", "application/pkcs7-mime", "application/x-pkcs7-mime")


def looks_like_message(head: bytes) -> bool:
    """True when `head` starts with the header block of an e-mail (three known headers).

    Example: looks_like_message(b"From: a@b\\nTo: c@d\\nSubject: hi\\n\\nbody") is True
    """
    known = 0
    for line in head[:4096].splitlines()[:40]:
        if not line.strip():
            break
        if line[:1] in (b" ", b"\t"):
            continue  # a folded header line
        if not _HEADER_LINE.match(line):
            return False
        known += line.split(b":", 1)[0].lower() in _MAIL_HEADERS
    return known >= 3


def looks_like_mbox(head: bytes) -> bool:
    """An mbox starts with a "From " line followed by a message's headers."""
    match = _FROM_LINE.match(head)
    return match is not None and looks_like_message(head[match.end():])


# -- one message (.eml, a Maildir file, a member of an mbox) -------------------------------


@functools.lru_cache(maxsize=2)
def _parsed(data: bytes) -> Message:
    """The message, parsed once for its text and once more for its attachments: cached.

    compat32 leaves headers as written; policy.default parses each into an object on
    access, which took 80 % of an mbox's time (16 ms a message), so the few headers
    shown are decoded here (`_header`).
    """
    return email.message_from_bytes(data, policy=email.policy.compat32)


def _parse(path: Path, data: bytes) -> Message:
    message = _parsed(data)
    if message.defects and not message.keys():
        raise CorruptDocumentError(path, "not a valid e-mail message (no headers)")
    return message


def _decoded(value: object) -> str:
    """A header's text with RFC 2047 encoded words (=?utf-8?b?...?=) decoded, on one line."""
    try:
        text = str(make_header(decode_header(str(value))))
    except (UnicodeError, LookupError, ValueError, HeaderParseError):
        text = str(value)
    return " ".join(text.split())


def _header(message: Message, name: str) -> str:
    value = message.get(name)
    return _decoded(value) if value is not None else ""


def message_date(value: str) -> float | None:
    """Epoch seconds of a Date header, None when it is missing or unreadable."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _heading(fields: dict[str, str]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in fields.items() if value)


def _leaf_parts(message: Message) -> Iterator[Message]:
    """Leaf parts in order; a forwarded message (message/rfc822) is one leaf, not opened."""
    stack = [message]
    while stack:
        part = stack.pop()
        if part.get_content_type() == "message/rfc822":
            yield part
        elif part.is_multipart():
            stack.extend(reversed([p for p in part.get_payload() if isinstance(p, Message)]))
        else:
            yield part


def _is_attachment(part: Message) -> bool:
    if part.get_content_type() == "message/rfc822":
        return True
    return part.get_content_disposition() == "attachment" or bool(part.get_filename())


def _part_text(part: Message) -> str:
    payload = part.get_payload(decode=True) or b""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, errors="replace")
    except LookupError:  # a charset Python does not know
        return payload.decode("utf-8", errors="replace")


def _body_text(message: Message, budget: Budget) -> str:
    """text/plain parts; the HTML parts only when the message has no plain text."""
    from engine.extract.html_file import html_to_text

    plain, html = [], []
    for part in _leaf_parts(message):
        budget.check_time()
        if _is_attachment(part):
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            plain.append(_part_text(part))
        elif kind == "text/html":
            html.append(html_to_text(_part_text(part))[0])
    return "\n\n".join(plain or html)


def extract_eml(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of one RFC 822 message: the headers a person reads, then the body.

    Example: extract_eml(Path("a.eml"), data).date == 1717243200.0
    """
    budget = budget or Budget.start(path)
    message = _parse(path, data)
    if message.get_content_type() in _ENCRYPTED_TYPES:
        raise EncryptedDocumentError(path, "encrypted e-mail (S/MIME or PGP)")
    fields = {name: _header(message, name) for name in READ_HEADERS}
    text = normalise_whitespace(_heading(fields) + "\n\n" + _body_text(message, budget))
    budget.add_text(text)
    return ExtractedText(text=text, format="eml", title=clean_title(fields["Subject"]),
                         date=message_date(fields["Date"]))


def _attachments(path: Path, message: Message, budget: Budget, mtime: float | None) -> Iterator[Member]:
    names = MemberNames()
    for number, part in enumerate(_leaf_parts(message), start=1):
        budget.check_time()
        if not _is_attachment(part):
            continue
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            inner = inner[0] if isinstance(inner, list) and inner else inner
            content = inner.as_bytes() if hasattr(inner, "as_bytes") else b""
            subject = _header(inner, "Subject") if isinstance(inner, Message) else ""
            name = names.add(_ensure_suffix(_filename(part) or subject, ".eml"), f"forwarded-{number}.eml")
        else:
            content = part.get_payload(decode=True) or b""
            name = names.add(_filename(part), f"attachment-{number}{_suffix_for(part)}")
        budget.add_member(name, len(content))
        yield Member(name, content, mtime)


def _filename(part: Message) -> str:
    name = part.get_filename()
    return _decoded(name) if name else ""


def _ensure_suffix(name: str, suffix: str) -> str:
    name = name.replace("/", " ")
    return name if not name or name.lower().endswith(suffix) else name + suffix


def _suffix_for(part: Message) -> str:
    import mimetypes

    return mimetypes.guess_extension(part.get_content_type()) or ".bin"


# -- mailboxes ---------------------------------------------------------------------------


def mbox_messages(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based number, message bytes without its "From " line) for each message of an mbox."""
    starts = [m for m in _FROM_LINE.finditer(data) if m.start() == 0 or data[m.start() - 1 : m.start()] == b"\n"]
    for number, match in enumerate(starts, start=1):
        end = starts[number].start() if number < len(starts) else len(data)
        yield number, data[match.end() : end]


def _mbox_members(path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    if not looks_like_mbox(data[:8192]):
        raise CorruptDocumentError(path, "not a valid mbox file (no \"From \" line before the first message)")
    for number, content in mbox_messages(data):
        budget.check_time()
        name = f"message-{number}.eml"
        budget.add_member(name, len(content))
        yield Member(name, content, None)


def email_members(fmt: str, path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    """Messages of an mbox, attachments of an .eml or .msg."""
    if fmt == "mbox":
        return _mbox_members(path, data, budget)
    if fmt == "msg":
        return _msg_attachments(path, data, budget)
    message = _parse(path, data)
    return _attachments(path, message, budget, message_date(_header(message, "Date")))


# -- Outlook .msg ----------------------------------------------------------------------------


def _open_msg(path: Path, data: bytes):
    import extract_msg
    from extract_msg.exceptions import ExMsgBaseException

    logging.getLogger("extract_msg").setLevel(logging.ERROR)  # it warns about every odd property
    try:
        return extract_msg.openMsg(data, delayAttachments=False)
    except (ExMsgBaseException, OSError, ValueError, KeyError) as e:
        raise CorruptDocumentError(path, f"not a valid Outlook .msg file ({type(e).__name__}: {e})") from e


def extract_msg_file(path: Path, data: bytes, budget: Budget | None = None) -> ExtractedText:
    """Text of an Outlook .msg message, like `extract_eml`.

    Example: extract_msg_file(Path("a.msg"), data).title == "Quarterly figures"
    """
    budget = budget or Budget.start(path)
    from engine.extract.html_file import html_to_text

    with _open_msg(path, data) as message:
        date = message.date.timestamp() if getattr(message, "date", None) else None
        fields = {"Subject": message.subject or "", "From": message.sender or "", "To": message.to or "",
                  "Cc": message.cc or "", "Date": message.date.isoformat(sep=" ") if date else ""}
        body = message.body or ""
        if not body.strip() and message.htmlBody:
            html = message.htmlBody
            body = html_to_text(html.decode("utf-8", "replace") if isinstance(html, bytes) else html)[0]
    fields = {name: " ".join(str(value).split()) for name, value in fields.items()}
    text = normalise_whitespace(_heading(fields) + "\n\n" + body)
    budget.add_text(text)
    return ExtractedText(text=text, format="msg", title=clean_title(fields["Subject"]), date=date)


def _msg_attachments(path: Path, data: bytes, budget: Budget) -> Iterator[Member]:
    names = MemberNames()
    with _open_msg(path, data) as message:
        date = message.date.timestamp() if getattr(message, "date", None) else None
        for number, attachment in enumerate(message.attachments, start=1):
            budget.check_time()
            content = getattr(attachment, "data", None)
            if not isinstance(content, bytes):
                log.info("%s: attachment %d is an embedded item, not a file; skipped", path, number)
                continue
            raw = attachment.longFilename or attachment.shortFilename or ""
            name = names.add(raw, f"attachment-{number}")
            budget.add_member(name, len(content))
            yield Member(name, content, date)
