"""Database URLs shown to people, with every secret masked.

    >>> mask_url("postgresql://me:s3cret@db/lib?sslpassword=x")
    'postgresql://me:***@db/lib?sslpassword=***'

SQLAlchemy hides the password in `user:password@host` but not one given in the query
string (`?password=...` works with libpq), so both are masked here, whatever the key's
case or percent-encoding (`?PASS%57ORD=`), and `scrub` removes the secrets from driver
messages that quote the URL or its parts.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

MASK = "***"
# query keys that carry a secret for the drivers SQLAlchemy supports
SECRET_KEYS = frozenset({"password", "passwd", "pwd", "pass", "sslpassword", "secret",
                         "token", "access_token", "api_key", "apikey", "auth_token"})
_USERINFO = re.compile(r"(://[^:/@?#]*:)([^@/]*)(@)")
# one query parameter: its separator, its key, and its value (to the next & ; or #)
_PARAMETER = re.compile(r"([?&;])([^=&;#]*)(=?)([^&;#]*)")


def _is_secret_key(key: str) -> bool:
    return unquote(key).strip().lower() in SECRET_KEYS


def _split(url: str) -> tuple[str, str]:
    """(the URL up to its query string, the query string with its '?'); a '?' inside the
    user:password part does not start the query."""
    url = str(url)
    userinfo = _USERINFO.search(url)
    mark = url.find("?", userinfo.end() if userinfo else 0)
    return (url, "") if mark < 0 else (url[:mark], url[mark:])


def mask_url(url: str) -> str:
    """The URL with its password and secret query values replaced by ***."""
    head, query = _split(url)
    head = _USERINFO.sub(lambda m: m.group(1) + MASK + m.group(3), head)
    query = _PARAMETER.sub(lambda m: m.group(1) + m.group(2) + m.group(3) + MASK
                           if _is_secret_key(m.group(2)) and m.group(3) else m.group(0), query)
    return head + query


def secrets_of(url: str) -> list[str]:
    """The secret strings in a URL (as written and percent-decoded), longest first."""
    head, query = _split(url)
    found = [m.group(2) for m in _USERINFO.finditer(head)]
    found += [m.group(4) for m in _PARAMETER.finditer(query) if _is_secret_key(m.group(2))]
    values = {v for s in found if s for v in (s, unquote(s))}
    return sorted(values, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """`text` (a driver's error message) with the URL's secrets masked."""
    if not url:
        return str(text)
    text = text.replace(str(url), mask_url(url))
    for secret in secrets_of(url):
        text = text.replace(secret, MASK)
    return text


def one_line(error) -> str:
    """A driver message (or an exception) as one line, without the SQL statement and
    SQLAlchemy's "Background on this error" link."""
    orig = getattr(error, "orig", None)  # DBAPIError: the driver's own error says it all
    if isinstance(orig, BaseException):
        error = f"{str(orig) or type(orig).__name__}"
    lines = [line.strip() for line in str(error).splitlines()]
    kept = [line for line in lines if line and not line.startswith("(Background on this error")]
    return " ".join(kept)


def sqlite_file(url: str) -> Path:
    """The database file of a `sqlite:///PATH[?query]` URL."""
    return Path(url.removeprefix("sqlite:///").split("?", 1)[0])


def sqlite_database_file(url) -> str | None:
    """The file of a SQLite database (`url` a SQLAlchemy URL), or None: another backend,
    or a database held in memory (`:memory:`, `mode=memory`)."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database
    if not database or database == ":memory:" or url.query.get("mode") == "memory":
        return None
    return database


def sqlite_plain_file(url) -> str | None:
    """sqlite_database_file where it is a plain file name, to open as such or to keep files
    beside; None also for a `uri=true` name, which is a URI (`file:lib.db?mode=ro`)."""
    return None if url.query.get("uri") else sqlite_database_file(url)


def check_sqlite_folder(url: str) -> None:
    """A mistyped --db path must fail, not create folders wherever it points.

    Raises:
        StoreError: the folder of a `sqlite:///` file does not exist.
    """
    from engine.errors import StoreError

    if not url.startswith("sqlite:///") or url in ("sqlite:///", "sqlite:///:memory:"):
        return
    folder = sqlite_file(url).parent
    if not folder.is_dir():
        raise StoreError(f"cannot open the database {mask_url(url)}: the folder {folder} does not exist")
