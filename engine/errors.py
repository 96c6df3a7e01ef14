"""Typed errors the engine raises; front ends turn them into one clear line.

Every error carries what a person needs to act on it (the path, the model name),
so the CLI and the GUI never have to parse messages.
"""

from __future__ import annotations

from pathlib import Path


class BabelfindError(Exception):
    """Base class for every error the engine raises on purpose."""


class ExtractionError(BabelfindError):
    """A document's text could not be read; `reason` is shown to the user."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")

    def __reduce__(self):
        # Crosses a process boundary (engine.extract.isolated) as (path, reason), not as the message.
        return type(self), (self.path, self.reason)


class UnsupportedFormatError(ExtractionError):
    """No extractor handles this file."""


class MissingToolError(UnsupportedFormatError):
    """The format is read by a program that is not installed; `tool` names it.

    Example: MissingToolError(path, "antiword", "legacy Word .doc needs antiword or catdoc ...")
    """

    def __init__(self, path: Path | str, tool: str, reason: str):
        self.tool = tool
        super().__init__(path, reason)

    def __reduce__(self):
        return type(self), (self.path, self.tool, self.reason)


class EncryptedDocumentError(ExtractionError):
    """The document is password protected."""


class CorruptDocumentError(ExtractionError):
    """The file claims a format but its content is damaged or truncated."""


class DocumentTooLargeError(ExtractionError):
    """The file, or what it unpacks to (a zip bomb, a huge page tree), is over a limit."""


class ExtractionTimeoutError(ExtractionError):
    """Reading the document took longer than the per-document time limit."""


class NotRegularFileError(ExtractionError):
    """The path names a folder, FIFO, device or socket, not a regular file."""


class ModelError(BabelfindError):
    """A model is missing, damaged or of the wrong kind; `path` names the file."""

    def __init__(self, message: str, path: Path | str | None = None):
        self.path = Path(path) if path is not None else None
        super().__init__(message)


class ModelMismatchError(BabelfindError):
    """The index was built by another model than the one asked to query it."""

    def __init__(self, index_model: str, query_model: str):
        self.index_model = index_model
        self.query_model = query_model
        super().__init__(
            f"the index was built with model '{index_model}' but the active model is "
            f"'{query_model}'; run 'babelfind reindex' to re-encode with the active model"
        )


class StoreError(BabelfindError):
    """The database cannot be opened or migrated."""


class NotIndexedError(BabelfindError):
    """A path was named that the library does not hold."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        super().__init__(f"{path} is not indexed")


class InputError(BabelfindError):
    """The caller's input cannot be used (empty, wrong kind, one language on both sides...)."""


class LibraryBusyError(BabelfindError):
    """Another process kept writing to the library for longer than the caller would wait."""

    def __init__(self, home: Path | str, holder: str, waited_s: float | None):
        self.home = Path(home)
        self.holder = holder
        waited = f" after waiting {waited_s:g} s" if waited_s else ""
        super().__init__(
            f"another Babelfind process ({holder}) is writing to the library in {home}; "
            f"try again when it has finished{waited}"
        )


class LibraryDamagedError(StoreError):
    """The database is missing, empty or inconsistent with the saved vector indexes."""


class QuerySyntaxError(InputError):
    """The search box holds something the query syntax cannot use; `fragment` is the culprit."""

    def __init__(self, message: str, fragment: str):
        self.fragment = fragment
        super().__init__(message)


class UnknownFilterError(QuerySyntaxError):
    """`key:value` with a key that is not a filter (lang, type, path, after, before)."""


class BadDateError(QuerySyntaxError):
    """`after:` or `before:` with something that is not a date (YYYY, YYYY-MM or YYYY-MM-DD)."""


class UnknownLanguageError(QuerySyntaxError):
    """`lang:` with a code the language detector never assigns."""


class UnknownFileTypeError(QuerySyntaxError):
    """`type:` with an extension Babelfind does not index."""


class QueryTooLongError(QuerySyntaxError):
    """More text, phrases or exclusions than one search reads (engine.query's bounds)."""


class UnbalancedQuoteError(QuerySyntaxError):
    """A phrase opened with `"` and never closed."""


class ResourceNotFoundError(BabelfindError):
    """A file Babelfind ships (the sample corpus, icons) is in none of the places it can be.

    `looked` lists those places in the order tried, for the message and for a bug report.
    """

    def __init__(self, what: str, looked: list[Path]):
        self.what = what
        self.looked = looked
        places = ", ".join(str(p) for p in looked) or "nowhere"
        super().__init__(f"the {what} that comes with Babelfind was not found (looked in {places}); "
                         "reinstall Babelfind or set BABELFIND_RESOURCES to its resources folder")
