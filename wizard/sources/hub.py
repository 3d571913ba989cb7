"""A Hugging Face Hub repo: config.json (+ hf_quant_config.json), and exact sizes from its safetensors headers.

Only this module imports huggingface_hub (slow to import), and only when a Hub id is resolved. huggingface_hub
itself honours HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE, HF_HOME / HF_HUB_CACHE and HF_HUB_ETAG_TIMEOUT /
HF_HUB_DOWNLOAD_TIMEOUT (10 s each by default); it reads them when it is imported.

One overall deadline covers everything `load_hub` does: WIZARD_HUB_DEADLINE seconds (default 60, read at each
call; at most 86,400). Per-request timeouts alone do not bound a body that trickles a byte a second, nor
huggingface_hub's retries (five, with back-off, on a stalled or cut download). So the work runs in a daemon
thread and the caller waits at most the deadline, then gets one line saying so (with the last problem
huggingface_hub reported). The thread does not outlive it for long: event hooks on huggingface_hub's HTTP client
(`set_client_factory`) cap every request's timeouts at the time left and check the clock on each chunk of a
body, and raise once the deadline has passed, so no request starts after it.
While the thread runs, huggingface_hub's log messages (retry chatter), warnings and progress bars are kept off
stderr: a failure is one line at the end.

How the files are fetched (huggingface_hub 2.x, file_download.py / hf_api.py):
- one HEAD /{repo}/resolve/{revision}/config.json without retries (`get_hf_file_metadata`) tells whether the Hub
  answers and how large the file is. `hf_hub_download` alone would, on a timeout or a refused connection with
  nothing cached, retry with back-off for minutes; the probe fails fast instead and we fall back to the local
  cache;
- `hf_hub_download` then fetches config.json and hf_quant_config.json into the normal cache (a 404 for the
  latter is fine); a JSON file over 16 MiB (by its HEAD) is refused before it is downloaded;
- safetensors headers are read with Range GETs (the first 100 kB, then the rest of a larger header) of
  model.safetensors, or of every shard model.safetensors.index.json names (checked first: plain file names,
  at most 100,000 shards), never the weights; each header is checked like a local one (safetensors_header.py).
Offline (HF_HUB_OFFLINE=1, or the Hub unreachable) a cached config.json still works; exact sizes then come from
safetensors files in the cached snapshot if they are all there, otherwise the spec says they were skipped.
Every failure becomes one InputError line that names the way out.
"""

from __future__ import annotations

import logging
import math
import os
import struct
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from wizard.errors import InputError
from wizard.sources.hf_config import parse_config
from wizard.sources.local import MAX_JSON_BYTES, exact_from_headers, index_shards, read_json
from wizard.sources.safetensors_header import check_header_length, data_size, parse_header, read_header
from wizard.specs import ModelSpec

CONFIG = "config.json"
QUANT_CONFIG = "hf_quant_config.json"
SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
WAY_OUT = "use a bundled catalog id from `llm-deploy-wizard models` or a local folder with config.json"
DEADLINE_ENV = "WIZARD_HUB_DEADLINE"
DEFAULT_DEADLINE = 60.0
MAX_DEADLINE = 86_400.0
FIRST_READ = 100_000  # bytes of a safetensors file read first: most headers fit (huggingface_hub does the same)


def load_hub(repo_id: str, revision: str | None = None) -> ModelSpec:
    """ModelSpec of a Hub repo; reads config files and safetensors headers only, never the weights."""
    limit = hub_deadline()
    started = time.monotonic()
    try:
        import huggingface_hub  # noqa: F401  (slow: imported only when a Hub id is resolved)
    except ImportError:
        raise InputError(
            "model", repo_id,
            "reading the Hugging Face Hub needs the huggingface_hub package (pip install huggingface_hub)",
            hint=WAY_OUT,
        ) from None
    from huggingface_hub import constants

    endpoint = constants.ENDPOINT
    _install_hooks()
    job = _Job(started + limit)  # the import counts too: the limit is for the whole call
    worker = threading.Thread(target=job.run, args=(repo_id, revision), name="wizard-hub-load", daemon=True)
    worker.start()
    try:
        finished = job.done.wait(max(0.0, job.deadline - time.monotonic()))
    finally:
        if not job.done.is_set():
            job.cancel()  # the deadline, or Ctrl-C: the thread's next request or chunk stops it
    if not finished or _from_deadline(job.error):
        raise _deadline_error(repo_id, endpoint, limit, job.last_problem)
    if isinstance(job.error, InputError):
        raise job.error.with_traceback(None)
    if job.error is not None:
        raise _failure(job.error, repo_id, revision, endpoint) from None
    assert job.result is not None
    return job.result


def hub_deadline() -> float:
    """Seconds `load_hub` may take in all, from WIZARD_HUB_DEADLINE (default 60)."""
    raw = os.environ.get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_DEADLINE:  # NaN fails this too
        raise InputError(DEADLINE_ENV, raw, f"expected a number of seconds above 0 and at most {MAX_DEADLINE:,.0f} "
                         f"(default {DEFAULT_DEADLINE:g})")
    return value


def _from_deadline(error: BaseException | None) -> bool:
    """An error the deadline caused (HubDeadline, or an error raised while handling one)."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, HubDeadline):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def _deadline_error(repo_id: str, endpoint: str, limit: float, last: str) -> InputError:
    why = f"; last problem: {last}" if last else ""
    return InputError("model", repo_id, f"reading it from the Hugging Face Hub at {endpoint} did not finish within "
                      f"{limit:g} s ({DEADLINE_ENV} sets this limit{why})", hint=f"retry later, or {WAY_OUT}")


# ---------------------------------------------------------------- the deadline


class HubDeadline(Exception):
    """Raised inside the worker thread once its deadline has passed (not an HTTP error: nothing retries it)."""


class _Job:
    """One `load_hub` call running in a worker thread: its deadline, its outcome, the last problem reported."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.done = threading.Event()
        self.cancelled = False
        self.result: ModelSpec | None = None
        self.error: BaseException | None = None
        self.last_problem = ""

    def cancel(self) -> None:
        self.cancelled = True

    def time_left(self) -> float:
        """Seconds left; HubDeadline once none are."""
        left = self.deadline - time.monotonic()
        if self.cancelled or left <= 0:
            raise HubDeadline("the deadline for reading from the Hub has passed")
        return left

    def run(self, repo_id: str, revision: str | None) -> None:
        ident = threading.get_ident()
        _JOBS[ident] = self
        try:
            with _Quiet():
                self.result = _load(repo_id, revision)
        except BaseException as e:  # noqa: BLE001  (MemoryError, RecursionError too: the caller words them)
            self.error = e
        finally:
            _JOBS.pop(ident, None)
            self.done.set()


_JOBS: dict[int, _Job] = {}  # worker thread id -> its job; the HTTP hooks look the current thread up


def _on_request(request: Any) -> None:
    """httpx request hook: no request after the deadline, and none may wait longer than the time left."""
    job = _JOBS.get(threading.get_ident())
    if job is None:
        return
    left = job.time_left()
    timeout = request.extensions.get("timeout") or {}
    request.extensions["timeout"] = {
        k: left if timeout.get(k) is None else min(timeout[k], left) for k in ("connect", "read", "write", "pool")
    }


def _on_response(response: Any) -> None:
    """httpx response hook: the body's chunks are checked against the deadline (a trickle sends one a second)."""
    job = _JOBS.get(threading.get_ident())
    if job is not None:
        response.stream = _deadline_stream(response.stream, job)


def _deadline_stream(inner: Any, job: _Job) -> Any:
    import httpx2

    class DeadlineStream(httpx2.SyncByteStream):
        def __iter__(self):
            for chunk in inner:
                job.time_left()
                yield chunk

        def close(self) -> None:
            inner.close()

    return DeadlineStream()


def _install_hooks() -> None:
    """Put _on_request / _on_response on huggingface_hub's shared client (again, if something replaced it)."""
    try:
        from huggingface_hub.utils import get_session, set_client_factory
        from huggingface_hub.utils._http import default_client_factory
    except ImportError:  # another huggingface_hub layout: the caller's wait still bounds load_hub
        return
    if _on_request in get_session().event_hooks.get("request", []):
        return

    def factory() -> Any:
        client = default_client_factory()
        hooks = client.event_hooks
        client.event_hooks = {"request": [*hooks.get("request", []), _on_request],
                              "response": [*hooks.get("response", []), _on_response]}
        return client

    set_client_factory(factory)


class _Quiet:
    """huggingface_hub's logging, warnings and progress bars off stderr while any worker runs (nested: counted).

    Log records are kept instead: the last warning of a job becomes the 'last problem' of its deadline message.
    """

    _lock = threading.Lock()
    _depth = 0
    _saved: tuple[Any, ...] = ()

    def __enter__(self) -> None:
        with _Quiet._lock:
            if _Quiet._depth == 0:
                _Quiet._saved = _silence()
            _Quiet._depth += 1

    def __exit__(self, *exc: object) -> None:
        with _Quiet._lock:
            _Quiet._depth -= 1
            if _Quiet._depth == 0:
                _restore(*_Quiet._saved)


class _KeepLastProblem(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        job = _JOBS.get(record.thread or 0)
        if job is not None and record.levelno >= logging.WARNING:
            try:
                job.last_problem = _first_line_text(record.getMessage())
            except Exception:  # noqa: BLE001  (a malformed log call must not break the load)
                pass


def _silence() -> tuple[Any, ...]:
    from huggingface_hub import constants
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars

    logger = logging.getLogger("huggingface_hub")
    saved_logger = (logger.handlers[:], logger.level, logger.propagate)
    logger.handlers[:] = [_KeepLastProblem()]
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("ignore")
    bars = constants.HF_HUB_DISABLE_PROGRESS_BARS is None and not are_progress_bars_disabled()
    if bars:  # HF_HUB_DISABLE_PROGRESS_BARS=0 still wins
        disable_progress_bars()
    return saved_logger, caught, bars


def _restore(saved_logger: Any, caught: Any, bars: bool) -> None:
    from huggingface_hub.utils import enable_progress_bars

    logger = logging.getLogger("huggingface_hub")
    logger.handlers[:], level, logger.propagate = saved_logger
    logger.setLevel(level)
    caught.__exit__(None, None, None)
    if bars:
        enable_progress_bars()


# ---------------------------------------------------------------- the work (in the worker thread)


def _load(repo_id: str, revision: str | None) -> ModelSpec:
    from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import RemoteEntryNotFoundError, RevisionNotFoundError

    api = HfApi()  # built now, so it uses the endpoint and token in effect at this call
    endpoint = api.endpoint
    try:  # fast probe: no retries, HF_HUB_ETAG_TIMEOUT
        meta = get_hf_file_metadata(
            hf_hub_url(repo_id, CONFIG, revision=revision, endpoint=endpoint),
            timeout=constants.HF_HUB_ETAG_TIMEOUT,
            endpoint=endpoint,
        )
        offline_reason: Exception | None = None
    except (RemoteEntryNotFoundError, RevisionNotFoundError):
        raise  # the Hub answered: the repo has no config.json or no such revision; a cache would not help
    except HubDeadline:
        raise
    except Exception as e:  # offline, unreachable, timeout, gated, not found, 5xx: try the local cache first
        offline_reason = e

    if offline_reason is None:
        _check_size(meta.size, CONFIG, repo_id)
        config_path = api.hf_hub_download(
            repo_id, CONFIG, revision=revision, etag_timeout=constants.HF_HUB_ETAG_TIMEOUT
        )
    else:
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            config_path = hf_hub_download(repo_id, CONFIG, revision=revision, local_files_only=True)
        except LocalEntryNotFoundError:
            raise offline_reason from None
    snapshot = Path(config_path).parent
    config = _read_json(Path(config_path), CONFIG, repo_id)
    quant_path = _quant_config_path(api, repo_id, revision, online=offline_reason is None)
    quant = _read_json(quant_path, QUANT_CONFIG, repo_id) if quant_path is not None else None

    commit = snapshot.name
    detail = f"{endpoint}/{repo_id}" + (f" @ {revision}" if revision else "") + f" (commit {commit[:12]})"
    if offline_reason is not None:
        detail += ", from the local Hugging Face cache"
    spec = parse_config(
        config,
        model_id=repo_id,
        source="hub",
        source_detail=detail,
        quant_config=quant,
        where=f"{repo_id}/{CONFIG}",
    )

    if offline_reason is None:
        headers = _hub_headers(api, repo_id, commit if _is_commit(commit) else revision)
        where = f"{len(headers)} file(s) of {repo_id} on the Hub"
    else:
        headers = _cached_headers(snapshot, repo_id)
        where = f"{len(headers)} cached file(s) of {repo_id}"
        if not headers:
            note = (
                "exact sizes skipped: the Hub was not available and the safetensors weights are not in the local "
                "cache, so figures are estimated from config.json"
            )
            return spec._replace(notes=(*spec.notes, note))
    if not headers:
        return spec  # not a safetensors repo: estimates from config.json only
    return spec._replace(exact=exact_from_headers(headers, config, where))


def _check_size(size: int | None, what: str, repo_id: str) -> None:
    if size is not None and size > MAX_JSON_BYTES:
        raise InputError("model", repo_id, f"its {what} on the Hub is {size:,} bytes; expected a JSON file of at "
                         "most 16 MiB", hint=WAY_OUT)


def _download_small(api: Any, repo_id: str, filename: str, revision: str | None) -> Path:
    """A small JSON file of the repo into the cache, refused by its HEAD if it is over 16 MiB."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url

    meta = get_hf_file_metadata(hf_hub_url(repo_id, filename, revision=revision, endpoint=api.endpoint),
                                timeout=constants.HF_HUB_ETAG_TIMEOUT, endpoint=api.endpoint)
    _check_size(meta.size, filename, repo_id)
    return Path(api.hf_hub_download(repo_id, filename, revision=revision, etag_timeout=constants.HF_HUB_ETAG_TIMEOUT))


def _quant_config_path(api: Any, repo_id: str, revision: str | None, *, online: bool) -> Path | None:
    """hf_quant_config.json (NVIDIA ModelOpt checkpoints) if the repo has one."""
    from huggingface_hub import try_to_load_from_cache

    if not online:
        cached = try_to_load_from_cache(repo_id, QUANT_CONFIG, revision=revision)
        return Path(cached) if isinstance(cached, str) else None
    try:
        return _download_small(api, repo_id, QUANT_CONFIG, revision)
    except Exception as e:
        if _is_404(e):  # a 404 for it is the usual case
            return None
        raise


def _hub_headers(api: Any, repo_id: str, revision: str | None) -> list[dict]:
    """Per-file safetensors headers {tensor: {dtype, shape, data_offsets}} read from the Hub; [] if none."""
    try:
        return [_remote_header(api, repo_id, SINGLE, revision)]
    except Exception as e:
        if not _is_404(e):
            raise
    try:
        index_path = _download_small(api, repo_id, INDEX, revision)
    except Exception as e:
        if not _is_404(e):
            raise
        return []  # not a safetensors repo
    shards = index_shards(_read_json(index_path, INDEX, repo_id), f"{repo_id}/{INDEX}")
    return [_remote_header(api, repo_id, name, revision) for name in shards]


def _is_404(e: Exception) -> bool:
    """The file is not in the repo: EntryNotFound, or a plain 404 from a server that sends no X-Error-Code."""
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError

    if isinstance(e, EntryNotFoundError):
        return True
    status = getattr(getattr(e, "response", None), "status_code", None)
    return isinstance(e, HfHubHTTPError) and not isinstance(e, RepositoryNotFoundError) and status == 404


def _remote_header(api: Any, repo_id: str, filename: str, revision: str | None) -> dict:
    """One safetensors header by Range GETs, checked against the file size the Hub states."""
    from huggingface_hub import hf_hub_url

    url = hf_hub_url(repo_id, filename, revision=revision, endpoint=api.endpoint)
    where = f"{repo_id}/{filename}"
    body, size = _get_range(url, 0, FIRST_READ - 1)
    if len(body) < 8:
        raise InputError(where, "truncated", "expected a safetensors file (8-byte header length)")
    (n,) = struct.unpack("<Q", body[:8])
    check_header_length(n, where, size)
    if 8 + n <= len(body):
        raw = body[8 : 8 + n]
    else:
        raw, _ = _get_range(url, 8, 8 + n - 1)
        if len(raw) != n:
            raise InputError(where, "truncated", f"expected a header of {n:,} bytes, the Hub sent {len(raw):,}")
    header = parse_header(raw, where)
    data = data_size(header, where)
    if size is not None and 8 + n + data != size:
        raise InputError(where, f"{size:,} bytes on the Hub",
                         f"expected {8 + n + data:,} bytes (8 + a {n:,}-byte header + {data:,} bytes of tensors)")
    return header


def _get_range(url: str, start: int, end: int) -> tuple[bytes, int | None]:
    """Bytes start..end of a file on the Hub (at most that many are read) and its whole size if stated."""
    from huggingface_hub import constants
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    headers = {**build_hf_headers(), "Range": f"bytes={start}-{end}"}
    with get_session().stream("GET", url, headers=headers, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT) as response:
        hf_raise_for_status(response)
        whole = response.status_code != 206  # a server that ignores Range sends the file from byte 0
        total = _total_size(response)
        want = (end + 1) if whole else (end - start + 1)
        chunks: list[bytes] = []
        got = 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            got += len(chunk)
            if got >= want:
                break
    body = b"".join(chunks)[:want]
    return (body[start:] if whole else body), total


def _total_size(response: Any) -> int | None:
    """The file's whole size: Content-Range's '/total' of a 206, Content-Length of a 200."""
    if response.status_code == 206:
        total = response.headers.get("Content-Range", "").rpartition("/")[2]
    else:
        total = response.headers.get("Content-Length", "")
    return int(total) if total.isdigit() and len(total) < 20 else None


def _cached_headers(snapshot: Path, repo_id: str) -> list[dict]:
    """Headers of the safetensors files in a cached snapshot, if the whole checkpoint is there; else []."""
    index_path = snapshot / INDEX
    if index_path.is_file():
        names = index_shards(_read_json(index_path, INDEX, repo_id), f"{repo_id}/{INDEX}")
        files = [snapshot / name for name in names]
    else:
        files = [snapshot / SINGLE]
    if not files or not all(f.is_file() for f in files):
        return []
    return [read_header(f) for f in files]


def _read_json(path: Path, what: str, repo_id: str) -> dict:
    """A downloaded JSON file (capped, like a local one); a broken one is named with its repo, not its cache path."""
    try:
        return read_json(path, what)
    except InputError as e:
        raise InputError("model", repo_id, f"its {what} on the Hub {e.accepted}", hint=WAY_OUT) from None


# ---------------------------------------------------------------- failures in words


def _failure(error: BaseException, repo_id: str, revision: str | None, endpoint: str) -> InputError:
    """One InputError line for anything huggingface_hub (or its HTTP client) raised."""
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        DisabledRepoError,
        FileMetadataError,
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
        SafetensorsParsingError,
    )

    e = error
    while isinstance(e, LocalEntryNotFoundError) and isinstance(e.__cause__, Exception):
        e = e.__cause__  # hf_hub_download wraps the network error it fell back from
    page = f"{endpoint}/{repo_id}"
    status = getattr(getattr(e, "response", None), "status_code", None)

    def fail(accepted: str, hint: str = WAY_OUT) -> InputError:
        return InputError("model", repo_id, accepted, hint=hint)

    if isinstance(e, MemoryError):
        return fail("reading it from the Hugging Face Hub ran out of memory (a file there is far larger than a "
                    "config or a safetensors header should be)")
    if isinstance(e, RecursionError):
        return fail("a JSON file of this Hub repo is nested too deeply to read (thousands of [ or {)")
    if not isinstance(e, Exception):  # SystemExit and the like: not ours to word
        return fail(f"could not be read from the Hugging Face Hub ({type(e).__name__})")
    if isinstance(e, HFValidationError):
        return fail(f"not a valid Hub repo id ({_first_line(e)})")
    if isinstance(e, GatedRepoError):
        if status == 403:
            return fail(f"gated on the Hub and the account of HF_TOKEN has no access yet: accept the licence on the "
                        f"model page ({page}) with that account", f"or {WAY_OUT}")
        return fail(f"gated on the Hub: accept the licence on the model page ({page}) and set HF_TOKEN to a token "
                    "of that account", f"or {WAY_OUT}")
    if isinstance(e, RevisionNotFoundError):
        return fail(f"revision {revision or 'main'!r} was not found in this Hub repo")
    if isinstance(e, RemoteEntryNotFoundError):
        return fail("this Hub repo has no config.json (not a transformers model repo?)")
    if isinstance(e, DisabledRepoError):
        return fail("this Hub repo is disabled")
    if isinstance(e, RepositoryNotFoundError):
        return fail("repo not found on the Hugging Face Hub (check the spelling; a private repo needs HF_TOKEN "
                    "with access)")
    if isinstance(e, OfflineModeIsEnabled) or (isinstance(e, LocalEntryNotFoundError) and constants.is_offline_mode()):
        return fail("not in the local Hugging Face cache and HF_HUB_OFFLINE is set (offline mode)",
                    f"unset HF_HUB_OFFLINE to download it, or {WAY_OUT}")
    if _is_a(e, "TooManyRedirects"):
        return fail(f"the Hugging Face Hub at {endpoint} redirected in a loop ({_first_line(e)})",
                    f"check HF_ENDPOINT, or {WAY_OUT}")
    if _is_timeout(e):
        return fail(f"the Hugging Face Hub at {endpoint} did not answer in time (timeout after "
                    f"{constants.HF_HUB_ETAG_TIMEOUT:g} s; HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT set the "
                    "limits) and the model is not in the local cache", f"retry later, or {WAY_OUT}")
    if _is_a(e, "RemoteProtocolError", "ReadError") or "Consistency check failed" in str(e):
        return fail(f"the connection to the Hugging Face Hub at {endpoint} broke before a file had fully arrived "
                    f"({_first_line(e)})", f"retry later, or {WAY_OUT}")
    if _is_transport(e) or isinstance(e, (ConnectionError, LocalEntryNotFoundError)):
        return fail(f"the Hugging Face Hub at {endpoint} is unreachable (offline? {_first_line(e)}) and the model is "
                    "not in the local cache", f"check the network or HF_ENDPOINT, or {WAY_OUT}")
    if isinstance(e, FileMetadataError):
        return fail(f"{endpoint} does not answer like a Hugging Face Hub (check HF_ENDPOINT)")
    if isinstance(e, SafetensorsParsingError):
        return fail(f"a safetensors header on the Hub could not be parsed ({_first_line(e)})")
    if isinstance(e, HfHubHTTPError):
        if status == 401:
            return fail("the Hub refused the request (HTTP 401): set HF_TOKEN to a valid token", f"or {WAY_OUT}")
        if status == 403:
            return fail(f"access denied by the Hub (HTTP 403): the token in HF_TOKEN needs access to this repo; "
                        f"accept the licence on the model page ({page})", f"or {WAY_OUT}")
        if status == 429:
            return fail("the Hub is rate-limiting requests (HTTP 429); retry later or set HF_TOKEN", f"or {WAY_OUT}")
        return fail(f"the Hugging Face Hub answered HTTP {status} and the model is not in the local cache",
                    f"retry later, or {WAY_OUT}")
    return fail(f"could not be read from the Hugging Face Hub ({type(e).__name__}: {_first_line(e)})")


def _is_a(e: BaseException, *names: str) -> bool:
    """An instance of an HTTP client class named `names` (httpx2 / httpx), matched by name: no import needed."""
    return any(c.__name__ in names for c in type(e).__mro__)


def _is_timeout(e: BaseException) -> bool:
    """A timeout of the HTTP client (httpx2 / httpx `TimeoutException`) or of a socket."""
    return isinstance(e, TimeoutError) or _is_a(e, "TimeoutException")


def _is_transport(e: BaseException) -> bool:
    """A connection-level failure of the HTTP client (`TransportError`: refused, DNS, reset, proxy...)."""
    return _is_a(e, "TransportError")


def _first_line(e: BaseException) -> str:
    return _first_line_text(str(e)) or type(e).__name__


def _first_line_text(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return text if len(text) <= 160 else text[:157] + "..."


def _is_commit(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)
