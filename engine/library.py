"""The library: the one object front ends talk to.

    >>> library = Library.open()                       # BABELFIND_HOME, active model
    >>> for event in library.index_paths([Path("~/Documents")]): ...
    >>> library.search("how do bees make honey", k=5)[0].path

Safe to search from one thread while another runs an indexing generator: every call
opens its own database session, and the vector index locks itself.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.config import DataPaths, data_paths
from engine.encoders.base import Encoder
from engine.errors import InputError, ModelMismatchError, NotIndexedError
from engine.events import (
    DocumentHit,
    IndexEvent,
    IndexFinished,
    IndexProgress,
    IndexSummary,
    SearchResults,
    SkippedFile,
)
from engine.indexer import Indexer, IndexerConfig
from engine.index.keyword_index import KeywordIndex
from engine.index.live_index import LiveIndex
from engine.query import ParsedQuery, parse_query
from engine.scan import path_key
from engine.search import Mode, SearchConfig, SearchIndexes, run_search
from engine.store import Store

log = logging.getLogger(__name__)

REENCODE_BATCH = 256  # passages per encoder call when switching models


@dataclass(frozen=True)
class RootInfo:
    path: str
    documents: int
    passages: int
    failed: int
    watch: bool


@dataclass(frozen=True)
class LibraryStatus:
    model: str
    dim: int
    documents: int
    passages: int
    failed: int
    languages: dict[str, int]
    index_kind: str  # "flat", "hnsw", ...
    db_url: str
    home: str
    pending_model: str | None  # the registry's active model when the index uses another


class Library:
    """Indexed folders, their passages and vectors, and search over them."""

    def __init__(self, paths: DataPaths, store: Store, live: LiveIndex, encoder: Encoder,
                 db_url: str, config: IndexerConfig | None = None):
        self.paths = paths
        self.store = store
        self.live = live
        self.encoder = encoder
        self.db_url = db_url
        self.config = config or IndexerConfig()

    @classmethod
    def open(cls, paths: DataPaths | None = None, *, db_url: str | None = None,
             encoder: Encoder | None = None, config: IndexerConfig | None = None) -> Library:
        """Opens (creating if needed) the library in `paths.home`.

        Without `encoder`, queries use the model that built the index (so search never
        breaks after the user picks another model; `reindex` then re-encodes), or the
        registry's active model for a new library.
        """
        paths = paths or data_paths()
        db_url = db_url or paths.db_url
        store = Store.open(db_url)
        generation = store.generation("active")
        if generation is None:
            encoder = encoder or _load_encoder(None, paths)
            generation = store.create_generation(encoder.name, encoder.dim, "active")
        elif encoder is None:
            encoder = _load_encoder(generation.model_name, paths)
        keywords = KeywordIndex.open(store, generation, paths.indexes)
        live = LiveIndex.open(store, generation, paths.indexes, keywords=keywords)
        return cls(paths, store, live, encoder, db_url, config)

    def close(self) -> None:
        if self.live.keywords is not None:
            self.live.keywords.close()
        self.store.close()

    # -- indexing ------------------------------------------------------------------

    def index_paths(self, paths: Sequence[Path]) -> Iterator[IndexEvent]:
        """Indexes files and folders; yields IndexProgress, then one IndexFinished."""
        if not paths:
            raise InputError("no files or folders were given")
        self._check_model()
        yield from Indexer(self.store, self.live, self.encoder, self.config).run(list(paths))

    def reindex(self, root: Path | None = None) -> Iterator[IndexEvent]:
        """Brings every root (or one) up to date, first re-encoding if the model changed."""
        pending = self._pending_model()
        if pending:
            yield from self._reencode(pending)
        roots = [Path(r.path) for r in self.roots()] if root is None else [Path(root)]
        gone = [r for r in roots if not r.exists()]
        for folder in gone:  # a root that vanished: its documents leave the index
            self.forget(folder)
        present = [r for r in roots if r.exists()]
        if present:
            yield from self.index_paths(present)
        else:
            yield IndexFinished(IndexSummary(removed=len(gone)))

    def switch_model(self, name: str, encoder: Encoder | None = None) -> Iterator[IndexEvent]:
        """Re-encodes every passage with another model into a new index generation.

        The current generation keeps answering searches until the new one is complete;
        then it becomes active in one step. Stopping early keeps the vectors encoded so
        far, and the next switch to the same model resumes from there.
        """
        yield from self._reencode(name, encoder)
        yield IndexFinished(IndexSummary(passages=len(self.live)))

    def _reencode(self, name: str, encoder: Encoder | None = None) -> Iterator[IndexProgress]:
        encoder = encoder or _load_encoder(name, self.paths)
        if encoder.name == self.encoder.name:
            _set_registry_active(name, self.paths)
            return
        building = self.store.generation("building")
        if building is None or building.model_name != encoder.name:
            building = self.store.create_generation(encoder.name, encoder.dim, "building")
        total = self.store.counts()[1]
        done = 0
        while batch := self.store.passages_without_vectors(building.id, REENCODE_BATCH):
            ids, texts = zip(*batch)
            self.store.add_vectors(building.id, ids, encoder.encode(list(texts), kind="passage"))
            done += len(ids)
            yield IndexProgress(min(done, total), total, done, 0.0, None, f"re-encoding with {name}")
        new_live = LiveIndex.open(self.store, self.store.generation_by_id(building.id), self.paths.indexes,
                                  keywords=self.live.keywords)
        self.store.activate_generation(building.id)
        old_live, self.live, self.encoder = self.live, new_live, encoder
        old_live.delete_file()
        _set_registry_active(name, self.paths)

    def forget(self, path: Path) -> int:
        """Removes a root (or any file or folder in one) from the index; returns documents removed."""
        key = path_key(Path(path).expanduser().absolute())
        documents = self.store.documents_under(key)
        is_root = any(r.path == key for r in self.roots())
        if not documents and not is_root:
            raise NotIndexedError(path)
        removed = self.store.remove_documents(list(documents))
        self.live.apply(removed, [], None)
        self.live.save()
        for root in self.roots():
            if root.path == key or root.path.startswith(key.rstrip("/") + "/"):
                self.store.delete_root(root.path)
        return len(documents)

    # -- queries -------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, *, languages: Collection[str] | None = None,
               path_prefix: str | None = None, file_types: Collection[str] | None = None,
               encoder: Encoder | None = None, mode: Mode = "fused") -> list[DocumentHit]:
        """The k best documents for `query`, best first, each with its best passages.

            library.search('invoice "FA-2024-5521" lang:de', k=5, mode="fused")

        `query` uses the search box syntax (engine.query.QUERY_HELP); the keyword
        arguments add to its filters. `mode` "dense" or "keyword" uses one retrieval only.
        Raises a QuerySyntaxError subclass for malformed syntax.
        """
        return list(self.search_results(query, k, languages=languages, path_prefix=path_prefix,
                                        file_types=file_types, encoder=encoder, mode=mode).hits)

    def search_results(self, query: str, k: int = 10, *, languages: Collection[str] | None = None,
                       path_prefix: str | None = None, file_types: Collection[str] | None = None,
                       encoder: Encoder | None = None, mode: Mode = "fused",
                       config: SearchConfig | None = None) -> SearchResults:
        """Like `search`, with how many documents match in all and per language."""
        parsed = _with_filters(parse_query(query), languages, path_prefix, file_types)
        if parsed.is_empty:
            return SearchResults((), 0, {})
        vector = None
        if mode != "keyword":
            encoder = encoder or self.encoder
            if encoder.name != self.live.generation.model_name:
                raise ModelMismatchError(self.live.generation.model_name, encoder.name)
            vector = encoder.encode([parsed.meaning_text], kind="query")[0]
        indexes = SearchIndexes(self.store, self.live, self.live.keywords)
        return run_search(indexes, parsed, vector, k, mode, config or SearchConfig())

    def roots(self) -> list[RootInfo]:
        return [RootInfo(r.path, docs, passages, failed, r.watch)
                for r, docs, passages, failed in self.store.roots()]

    def set_watch(self, root: Path, watch: bool) -> None:
        self.store.set_watch(path_key(Path(root)), watch)

    def skipped(self, root: Path | None = None) -> list[SkippedFile]:
        under = path_key(Path(root)) if root is not None else None
        return [SkippedFile(p, reason) for p, reason in self.store.failed_documents(under)]

    def document_text(self, path: Path):
        """The extracted text of a document, as indexed (offsets of hits refer to it)."""
        from engine.extract import extract

        return extract(Path(path))

    def status(self) -> LibraryStatus:
        documents, passages, failed, languages = self.store.counts()
        return LibraryStatus(
            model=self.live.generation.model_name,
            dim=self.live.generation.dim,
            documents=documents,
            passages=passages,
            failed=failed,
            languages=languages,
            index_kind=self.live.index.kind,
            db_url=_safe_url(self.db_url),
            home=str(self.paths.home),
            pending_model=self._pending_model(),
        )

    def _pending_model(self) -> str | None:
        active = _registry_active(self.paths)
        if active and active != self.live.generation.model_name:
            return active
        return None

    def _check_model(self) -> None:
        if self.encoder.name != self.live.generation.model_name:
            raise ModelMismatchError(self.live.generation.model_name, self.encoder.name)


def _with_filters(parsed: ParsedQuery, languages: Collection[str] | None, path_prefix: str | None,
                  file_types: Collection[str] | None) -> ParsedQuery:
    """The parsed query with the caller's filters added (both must hold)."""
    from dataclasses import replace

    changes: dict = {}
    if languages:
        wanted = frozenset(languages)
        changes["languages"] = parsed.languages & wanted if parsed.languages else wanted
    if file_types:
        wanted = frozenset(t.lower().lstrip(".") for t in file_types)
        changes["file_types"] = parsed.file_types & wanted if parsed.file_types else wanted
        if not changes["file_types"]:
            changes["file_types"] = frozenset({"\0none"})  # disjoint filters: nothing matches
    if path_prefix:
        changes["path_prefix"] = path_prefix if not parsed.path_prefix else max(parsed.path_prefix, path_prefix, key=len)
    if languages and not changes["languages"]:
        changes["languages"] = frozenset({"\0none"})
    return replace(parsed, **changes) if changes else parsed


def _load_encoder(name: str | None, paths: DataPaths) -> Encoder:
    from engine.config import load_settings
    from engine.models import load_encoder

    # The device chosen in the settings ("auto" picks the GPU when ONNX Runtime sees one).
    device = load_settings(paths).get("device", "auto")
    return load_encoder(name, device=device, paths=paths)


def _registry_active(paths: DataPaths) -> str | None:
    from engine.models import active_model_name

    return active_model_name(paths)


def _set_registry_active(name: str, paths: DataPaths) -> None:
    from engine.models import set_active

    set_active(name, paths)


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
