"""The library: the one object front ends talk to.

    >>> library = Library.open()                       # BABELFIND_HOME, active model
    >>> for event in library.index_paths([Path("~/Documents")]): ...
    >>> library.search("how do bees make honey", k=5)[0].path

Safe to search from one thread while another runs an indexing generator: every call
opens its own database session, and the vector index locks itself.

Across processes (the window, the CLI, a second CLI) one library writes at a time: every
change to passages and vectors holds the home's write lock (engine.locking), and starts
by reloading the vector index if another process changed the database meanwhile.
Indexing generators wait for their turn yielding IndexProgress(waiting=...), so they can
be cancelled while waiting; `lock_timeout` bounds the wait (LibraryBusyError).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
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
from engine.explain import explain as explain_scores
from engine.indexer import Indexer, IndexerConfig
from engine.index.keyword_index import KeywordIndex
from engine.index.document_context import DocumentContextConfig
from engine.index.fusion import load_baseline_sample
from engine.index.hubness import HubnessConfig
from engine.index.live_index import LiveIndex
from engine.index.restrict import options_as_written
from engine.langid import detect_language, keep_model_copy_in, load_language_model
from engine.passage_context import encode_with_contexts
from engine.priority import lower_thread_priority
from engine.integrity import CheckReport, check_library, refuse_lost_database
from engine.locking import WRITE_LOCK_FILE, LockHolder, WriteLock, waiting_message
from engine.query import ParsedQuery, parse_query, with_filters
from engine.scan import key_path, path_key, user_path
from engine.search import Mode, SearchIndexes, is_sentence, run_search
from engine.search_config import ANSWER_FLOORS, ANSWER_MARGINS, NAME_ABSENT_FLOORS, SearchConfig
from engine.store import Store
from engine.store.catalog import passage_catalog
from engine.store.urls import mask_url, sqlite_file

log = logging.getLogger(__name__)

REENCODE_BATCH = 256  # passages per encoder call when switching models
INDEX_PRIORITIES = {"low": IndexerConfig.nice, "normal": 0}  # settings "index_priority"


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
                 db_url: str, config: IndexerConfig | None = None, *,
                 lock: WriteLock | None = None, lock_timeout: float | None = None,
                 on_busy: Callable[[LockHolder], None] | None = None):
        self.paths = paths
        self.store = store
        self.live = live
        self.encoder = encoder
        self.db_url = db_url
        self.config = config or IndexerConfig()
        self.lock = lock or WriteLock(paths.home / WRITE_LOCK_FILE)
        self.lock_timeout = lock_timeout  # None: wait as long as another writer works
        self.on_busy = on_busy  # told once when a non-generator write has to wait

    @classmethod
    def open(cls, paths: DataPaths | None = None, *, db_url: str | None = None,
             encoder: Encoder | None = None, config: IndexerConfig | None = None,
             lock_timeout: float | None = None,
             on_busy: Callable[[LockHolder], None] | None = None,
             defer_encoder: bool = False) -> Library:
        """Opens (creating if needed) the library in `paths.home`.

        Without `encoder`, queries use the model that built the index (so search never
        breaks after the user picks another model; `reindex` then re-encodes), or the
        registry's active model for a new library. `defer_encoder`: that model loads on
        first use or by `encoder.load()` in another thread (the window's warm-up).

        Raises:
            LibraryDamagedError: the database is missing or empty while vector indexes of
                earlier documents remain (it would otherwise be recreated empty).
            StoreError: the database cannot be opened or migrated.
        """
        paths = paths or data_paths()
        db_url = db_url or paths.db_url
        config = config or indexer_config(paths)
        refuse_lost_database(db_url, paths.indexes)
        keep_model_copy_in(paths.home / "cache")  # the language model starts 0.5 s faster from it
        store = Store.open(db_url)
        lock = WriteLock(paths.home / WRITE_LOCK_FILE)
        generation = store.generation("active")
        if generation is None:
            encoder = encoder or _load_encoder(None, paths, defer_encoder)
            # two processes opening a new library at once must agree on one generation
            with lock.hold("creating the library", timeout=lock_timeout, on_wait=on_busy):
                generation = store.generation("active") or store.create_generation(
                    encoder.name, encoder.dim, "active")
        if encoder is None:
            encoder = _load_encoder(generation.model_name, paths, defer_encoder)
        _convert_earlier_vectors(store, paths, lock, timeout=lock_timeout, on_wait=on_busy)
        keywords = KeywordIndex.open(store, generation, paths.indexes)
        config = config or IndexerConfig()
        live = LiveIndex.open(store, generation, paths.indexes, keywords=keywords,
                              language_neutral=config.language_neutral)
        return cls(paths, store, live, encoder, db_url, config, lock=lock,
                   lock_timeout=lock_timeout, on_busy=on_busy)

    def close(self) -> None:
        if self.live.keywords is not None:
            self.live.keywords.close()
        self.store.close()

    # -- writing: one process at a time ---------------------------------------------

    def _writing(self, activity: str, body: Callable[[], Iterator[IndexEvent]]) -> Iterator[IndexEvent]:
        """Runs the generator `body()` holding the write lock, after waiting for it, in the
        iterating thread lowered by config.nice (engine.priority)."""
        lower_thread_priority(self.config.nice)
        for holder in self.lock.wait_steps(activity, self.lock_timeout):
            yield IndexProgress(0, 0, 0, 0.0, None, waiting=waiting_message(holder))
        try:
            self._sync()
            yield from body()
        finally:
            self.lock.release()

    @contextmanager
    def _holding(self, activity: str) -> Iterator[None]:
        """The write lock for a short, non-generator change."""
        with self.lock.hold(activity, timeout=self.lock_timeout, on_wait=self.on_busy):
            self._sync()
            yield

    def _sync(self) -> None:
        """Catches up with other processes' commits; the caller holds the write lock.

        Another process may have switched model (a new active generation) or changed
        this one's passages; either way the in-memory index is reloaded from disk.
        """
        active = self.store.generation("active")
        if active is not None and active.id != self.live.generation.id:
            log.info("another process activated index generation %d (%s)", active.id, active.model_name)
            self.live = LiveIndex.open(self.store, active, self.paths.indexes, keywords=self.live.keywords,
                                       language_neutral=self.config.language_neutral)
            if self.encoder.name != active.model_name:
                self.encoder = _load_encoder(active.model_name, self.paths)
        else:
            self.live.refresh()

    # -- indexing ------------------------------------------------------------------

    def index_paths(self, paths: Sequence[Path], *, keep_exclusions: bool = False) -> Iterator[IndexEvent]:
        """Indexes files and folders; yields IndexProgress, then one IndexFinished.

        Naming a path the user forgot earlier brings it back (its exclusion is lifted);
        `keep_exclusions=True` is for callers that pass paths nobody chose, such as a
        folder watcher reporting changed files.
        """
        if not paths:
            raise InputError("no files or folders were given")
        self._check_model()
        yield from self._writing("indexing", lambda: self._index(paths, lift_exclusions=not keep_exclusions))

    def _index(self, paths: Sequence[Path], *, lift_exclusions: bool = False) -> Iterator[IndexEvent]:
        if lift_exclusions:
            for path in paths:
                self.store.remove_exclusions(path_key(user_path(path).absolute()))
        self.live.ensure_corrections(self.encoder)  # kept in step by the indexer from here on
        yield from Indexer(self.store, self.live, self.encoder, self.config).run(list(paths))

    def reindex(self, root: Path | None = None) -> Iterator[IndexEvent]:
        """Brings every root (or one) up to date, first re-encoding if the model changed."""
        yield from self._writing("re-indexing", lambda: self._reindex(root))

    def _reindex(self, root: Path | None) -> Iterator[IndexEvent]:
        pending = self._pending_model()
        if pending:
            yield from self._reencode(pending)
        roots = [key_path(r.path) for r in self.roots()] if root is None else [Path(root)]
        gone = [r for r in roots if not r.exists()]
        for folder in gone:  # a root that vanished: its documents leave the index
            self._forget(folder)
        present = [r for r in roots if r.exists()]
        if present:
            self._check_model()
            yield from self._index(present)
        else:
            yield IndexFinished(IndexSummary(removed=len(gone)))

    def switch_model(self, name: str, encoder: Encoder | None = None) -> Iterator[IndexEvent]:
        """Re-encodes every passage with another model into a new index generation.

        The current generation keeps answering searches until the new one is complete;
        then it becomes active in one step. Stopping early keeps the vectors encoded so
        far, and the next switch to the same model resumes from there.
        """
        def body() -> Iterator[IndexEvent]:
            yield from self._reencode(name, encoder)
            yield IndexFinished(IndexSummary(passages=len(self.live)))

        yield from self._writing(f"re-encoding with {name}", body)

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
        started = time.monotonic()
        while batch := self.store.passages_without_vectors(building.id, REENCODE_BATCH):
            ids, texts, contexts = zip(*batch)
            vectors = encode_with_contexts(encoder, texts, contexts, self.config.context_weight)
            self.store.add_vectors(building.id, ids, vectors)
            done += len(ids)
            rate = done / max(time.monotonic() - started, 1e-6)
            eta = max(total - done, 0) / rate
            yield IndexProgress(min(done, total), total, done, rate, eta, f"re-encoding with {name}", unit="passages",
                                encoded=done)
        new_live = LiveIndex.open(self.store, self.store.generation_by_id(building.id), self.paths.indexes,
                                  keywords=self.live.keywords, language_neutral=self.config.language_neutral)
        new_live.ensure_corrections(encoder)
        self.store.activate_generation(building.id)
        old_live, self.live, self.encoder = self.live, new_live, encoder
        old_live.delete_file()
        _set_registry_active(name, self.paths)

    def forget(self, path: Path) -> int:
        """Removes a root (or any file or folder in one) from the index; returns documents removed.

        Example: library.forget(Path("~/corpus/mining")) == 4, and `reindex` of
        ~/corpus leaves those four out from now on.

        A path inside a root that still exists is remembered as an exclusion, so the next
        scan of the root does not bring it back; indexing that path explicitly lifts it.
        """
        with self._holding("removing documents"):
            return self._forget(path)

    def forgetting(self, paths: Sequence[Path], *, missing_ok: bool = False) -> Iterator[IndexEvent]:
        """forget() as a job: yields IndexProgress(waiting=...) while another process holds
        the write lock (so a window can show it and cancel), then one IndexFinished whose
        summary counts the documents removed.

        Example: list(library.forgetting([Path("~/corpus/mining")]))[-1].summary.removed == 4

        `missing_ok` passes over paths the library does not hold (a folder watcher's
        deleted files that were never indexed); otherwise they raise NotIndexedError.
        """
        if not paths:
            raise InputError("no files or folders were given")

        def body() -> Iterator[IndexEvent]:
            removed = 0
            for path in paths:
                try:
                    removed += self._forget(Path(path))
                except NotIndexedError:
                    if not missing_ok:
                        raise
            yield IndexFinished(IndexSummary(removed=removed))

        yield from self._writing("removing documents", body)

    def _forget(self, path: Path) -> int:
        key = path_key(user_path(path).absolute())
        documents = self.store.documents_under(key)
        roots = [r.path for r in self.roots()]
        is_root = key in roots
        if not documents and not is_root:
            raise NotIndexedError(path)
        removed = self.store.remove_documents(list(documents))
        self.live.apply(removed, [], None)
        self.live.save()
        for root in roots:
            if root == key or root.startswith(key.rstrip("/") + "/"):
                self.store.delete_root(root)
                self.store.remove_exclusions(root)  # nothing left to exclude from
        # a deleted file needs no exclusion (the scan cannot find it), and a watcher
        # forgetting deleted files must not keep them out if they come back
        is_member = documents.get(key) is not None and documents[key].parent is not None
        if not is_root and self.store.root_for(key) is not None and (Path(key).exists() or is_member):
            self.store.add_exclusion(key)  # a member stays out while its archive is unchanged, and after
        return len(documents)

    def excluded(self) -> list[str]:
        """Paths inside indexed folders that were forgotten and stay out of re-indexing."""
        return self.store.exclusions()

    def check(self) -> CheckReport:
        """Checks the database and compares it with the vector index files.

        Holds the write lock, so a writer in another process cannot change things
        half-way through; its unsaved changes are then on disk.
        """
        with self.lock.hold("checking", timeout=self.lock_timeout, on_wait=self.on_busy):
            return check_library(self.store, self.paths.indexes)

    # -- queries -------------------------------------------------------------------------

    def warm_up(self, encoder: Encoder) -> None:
        """Pays now, in a worker thread, what the first search would pay.

            library.warm_up(library.encoder)   # the window's warm-up, after the model loaded

        That is the language means and hubness penalties of a library indexed before them
        (measured once per generation; a rebuild of the vector index from the stored
        vectors when it held another space, seconds at 100k passages), the passage
        catalog search groups and filters by (~250 ms to read at 100k passages), the
        language model that reads the query's language (~0.6 s) and the sample of passages
        each query's z baseline is measured over (~0.1 s).
        """
        self.live.ensure_corrections(encoder)
        passage_catalog(self.store)
        load_language_model()
        load_baseline_sample(self.live)

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

    def search_results(self, query: str | ParsedQuery, k: int = 10, *,
                       languages: Collection[str] | None = None, path_prefix: str | None = None,
                       file_types: Collection[str] | None = None, encoder: Encoder | None = None,
                       mode: Mode = "fused", config: SearchConfig | None = None,
                       facet: str | None = None, explain: bool = False) -> SearchResults:
        """Like `search`, with how many documents match in all and per language.

        `query` is the search box text, or that text parsed (engine.query.parse_query) by a
        caller that searches it more than once; the results carry the parsed query.
        `facet`: one of the unfiltered results' `languages`: the documents it counted
        (engine.search.run_search).
        `explain`: each shown passage carries the parts of its score (engine.explain).
        """
        parsed = parse_query(query) if isinstance(query, str) else query
        parsed = with_filters(parsed, languages, path_prefix, file_types)
        if parsed.is_empty:
            return SearchResults((), 0, {}, query=parsed)
        self._catch_up()  # documents another process indexed meanwhile
        parsed = options_as_written(self.store, self.live.keywords, parsed)
        encoded = vector = None
        if mode != "keyword":
            encoded, vector, language = self.query_vector(parsed, encoder)
        else:
            language = detect_language(parsed.meaning_text)  # for the keyword stems
        indexes = SearchIndexes(self.store, self.live, self.live.keywords)
        config = config or default_search_config(self.live)
        results = run_search(indexes, parsed, vector, k, mode, config, language=language, facet=facet)
        if explain:
            results = explain_scores(results, self.store, self.live, encoded, language, config,
                                     is_sentence(parsed, language))
        return results

    def query_vector(self, query: str | ParsedQuery, encoder: Encoder | None = None):
        """(the query as encoded [dim], the same in the space FAISS holds [dim], its language
        or None) for the text a search compares by meaning."""
        parsed = parse_query(query) if isinstance(query, str) else query
        encoder = encoder or self.encoder
        if encoder.name != self.live.generation.model_name:
            raise ModelMismatchError(self.live.generation.model_name, encoder.name)
        encoded = encoder.encode([parsed.meaning_text], kind="query")[0]
        # The language's mean is taken out of the query (engine/index/language_means.py), and
        # the hubness penalty is measured per query language (engine/index/hubness.py).
        language = detect_language(parsed.meaning_text)
        # cheap once done: means and penalties are measured once per generation
        self.live.ensure_corrections(encoder, query_language=language, query=True)
        return encoded, self.live.query_vector(encoded, language), language

    def _catch_up(self) -> None:
        """Sees documents another process indexed, once it has finished writing.

        While another process writes, its vectors are not on disk yet and reloading
        would mean rebuilding from the database on every query; the search then
        answers from what this process has, and catches up on a later query.
        """
        if self.lock.held_here or not self._behind():
            return
        if self.lock.try_acquire("reloading the vector index"):
            try:
                self._sync()
            finally:
                self.lock.release()

    def _behind(self) -> bool:
        """True when another process changed this generation or activated another one."""
        if self.live.stale() is not None:
            return True
        active = self.store.generation("active")
        return active is not None and active.id != self.live.generation.id

    def roots(self) -> list[RootInfo]:
        return [RootInfo(r.path, docs, passages, failed, r.watch)
                for r, docs, passages, failed in self.store.roots()]

    def set_watch(self, root: Path, watch: bool) -> None:
        self.store.set_watch(path_key(Path(root)), watch)

    def skipped(self, root: Path | None = None) -> list[SkippedFile]:
        under = path_key(Path(root)) if root is not None else None
        return [SkippedFile(p, reason) for p, reason in self.store.failed_documents(under)]

    def document_text(self, path: Path | str):
        """The extracted text of a document, as indexed (offsets of hits refer to it).

        A str is a stored key (`DocumentHit.path`), turned back into the exact file name.
        Archive members, attachments and OCR'd scans come from the text stored when they
        were indexed, so a preview never unpacks an archive or runs OCR again.
        """
        from engine.extract import extract, extract_data

        if not isinstance(path, str):
            return extract(Path(path))
        stored = self.store.stored_text(path)
        if stored is not None:
            from engine.store.texts import decode_text

            return decode_text(stored)
        file, inner = self._member_chain(path)
        if not inner:
            return extract(key_path(path))
        return extract_data(key_path(path), self._member_bytes(file, inner), limits=self.config.limits)

    def open_document(self, path: str, folder: Path | None = None) -> Path:
        """A file the desktop can open for the document at key `path`.

        Example: library.open_document("/mail/inbox.mbox/message-3.eml/offer.pdf")
            -> Path("/tmp/babelfind-open-k2j1/offer.pdf")

        A file on disk is itself; an archive member or attachment is unpacked into
        `folder`, or else into a temporary folder of its own (removed when the process
        ends), and that copy is given.

        Raises:
            NotIndexedError: the library holds no such document, or its file no longer holds it.
            ExtractionError: its file can no longer be read.
        """
        file, inner = self._member_chain(path)
        if not inner:
            return key_path(path)
        data = self._member_bytes(file, inner)
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="babelfind-open-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / Path(inner[-1]).name
        target.write_bytes(data)
        return target

    def _member_chain(self, key: str) -> tuple[str, tuple[str, ...]]:
        """(key of the file on disk, member names down to `key`); () for a file itself."""
        names: list[str] = []
        for _ in range(64):
            info = self.store.document_info(key)
            if info is None:
                raise NotIndexedError(key_path(key))
            if info.parent is None:
                return key, tuple(str(key_path(name)) for name in reversed(names))
            names.append(key[len(info.parent) + 1:])
            key = info.parent
        raise NotIndexedError(key_path(key))

    def _member_bytes(self, file: str, inner: tuple[str, ...]) -> bytes:
        from engine.extract import open_member
        from engine.safe_open import read_regular

        path = key_path(file)
        return open_member(path, read_regular(path, self.config.limits.max_file_bytes), inner,
                           limits=self.config.limits)

    def stored_state(self) -> tuple[int, int] | None:
        """The active index generation's (id, version) as the database holds it now. Any
        process that stores or removes documents changes it, so a window polls it to see
        what the command line did (one small query); None before anything is indexed."""
        active = self.store.generation("active")
        return None if active is None else (active.id, active.version)

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
            db_url=mask_url(self.db_url),
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


def default_search_config(live: LiveIndex) -> SearchConfig:
    """SearchConfig with the answer floor and margin and the name floor measured for this
    generation's model, where they were measured in the space its scores are made in
    (engine.search_config.ANSWER_FLOORS, ANSWER_MARGINS, NAME_ABSENT_FLOORS)."""
    if live.means is None or live.hubness_config != HubnessConfig() or live.context_config != DocumentContextConfig():
        return SearchConfig()
    model = live.generation.model_name
    return SearchConfig(answer_floor=ANSWER_FLOORS.get(model), answer_margin=ANSWER_MARGINS.get(model),
                        name_absent_floor=NAME_ABSENT_FLOORS.get(model))


def indexer_config(paths: DataPaths, priority: str | None = None) -> IndexerConfig:
    """The indexer's settings with what the user chose: OCR on or off and its engine; jobs
    run at low CPU priority unless `priority` (or the settings' "index_priority") is
    "normal"."""
    from engine.config import ExtractLimits, load_settings

    if priority is not None and priority not in INDEX_PRIORITIES:
        raise InputError(f"index priority must be one of {', '.join(INDEX_PRIORITIES)}, not {priority!r}")
    settings = load_settings(paths)
    setting = settings.get("index_priority", "low")
    if priority is None and setting not in INDEX_PRIORITIES:  # a hand-edited settings file
        log.warning("settings: index_priority %r is not one of %s; indexing at low priority",
                    setting, ", ".join(INDEX_PRIORITIES))
    defaults = ExtractLimits()
    limits = ExtractLimits(ocr=bool(settings.get("ocr", defaults.ocr)),
                           ocr_engine=str(settings.get("ocr_engine", defaults.ocr_engine)))
    return IndexerConfig(nice=INDEX_PRIORITIES.get(priority or setting, IndexerConfig.nice), limits=limits)


def _convert_earlier_vectors(store: Store, paths: DataPaths, lock: WriteLock, **wait) -> None:
    """Libraries of earlier versions stored float32 vectors beside a float32 FAISS index;
    each generation's are rewritten as float16 in one transaction (a crash leaves them
    all as they were, or all converted), then its FAISS file is dropped, so the index is
    rebuilt from them as 8-bit codes on open (an earlier-format file would be anyway).
    Once per library; a check of one row when there is nothing to do."""
    generations = [g for g in (store.generation("active"), store.generation("building"))
                   if g is not None and store.has_earlier_vectors(g.id, g.dim)]
    if not generations:
        return
    with lock.hold("converting the stored vectors to float16", **wait):
        for generation in generations:
            converted = store.convert_vectors(generation.id, generation.dim)
            if converted:  # 0: another process converted them while this one waited
                log.info("generation %d: %d stored vectors converted to float16", generation.id, converted)
                LiveIndex.file_for(paths.indexes, generation.id).unlink(missing_ok=True)


def _load_encoder(name: str | None, paths: DataPaths, defer: bool = False) -> Encoder:
    from engine.config import load_settings
    from engine.models import load_encoder

    # The device chosen in the settings ("auto" picks the GPU when ONNX Runtime sees one).
    device = load_settings(paths).get("device", "auto")
    if defer:
        from engine.encoders.deferred import DeferredEncoder

        return DeferredEncoder.for_model(name, device=device, paths=paths)
    return load_encoder(name, device=device, paths=paths)


def _registry_active(paths: DataPaths) -> str | None:
    from engine.models import active_model_name

    return active_model_name(paths)


def _set_registry_active(name: str, paths: DataPaths) -> None:
    from engine.models import set_active

    set_active(name, paths)


# -- reading a library without its model (status, forget) ------------------------------


class _ModelNotLoaded:
    """Stands in for the index's model in a library opened by `open_without_model`."""

    def __init__(self, name: str, dim: int):
        self.name = name
        self.dim = dim

    def encode(self, texts, kind="passage"):
        from engine.errors import ModelError

        raise ModelError(f"model '{self.name}' was not loaded: this library was opened "
                         "for reading only (Library.open loads it)")


def open_without_model(paths: DataPaths | None = None, *, db_url: str | None = None,
                       **lock_options) -> Library | None:
    """The existing library, opened without loading any model; None when nothing is indexed yet.

        >>> library = open_without_model(data_paths())     # instant, even for a large model

    For calls that never encode: status(), roots(), skipped(), forget(). A default SQLite
    library that does not exist yet is not created (a status check leaves no trace).

    Raises:
        StoreError: the database cannot be opened.
    """
    paths = paths or data_paths()
    db_url = db_url or paths.db_url
    refuse_lost_database(db_url, paths.indexes)  # vectors without their database: say so
    if db_url.startswith("sqlite:///") and not sqlite_file(db_url).exists():
        return None
    store = Store.open(db_url)
    generation = store.generation("active")
    if generation is None:  # a database made by a start that never got a model
        store.close()
        return None
    keywords = KeywordIndex.open(store, generation, paths.indexes)  # forget() removes from it too
    live = LiveIndex.open(store, generation, paths.indexes, keywords=keywords)
    return Library(paths, store, live, _ModelNotLoaded(generation.model_name, generation.dim), db_url,
                   **lock_options)
