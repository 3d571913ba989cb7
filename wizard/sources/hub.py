"""A Hugging Face Hub repo: config.json (+ hf_quant_config.json), and exact sizes from its safetensors headers.

Only this module imports huggingface_hub (slow to import), and only when a Hub id is resolved. huggingface_hub
itself honours HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE, HF_HOME / HF_HUB_CACHE and HF_HUB_ETAG_TIMEOUT /
HF_HUB_DOWNLOAD_TIMEOUT (10 s each by default); it reads them when it is imported.

How the files are fetched (huggingface_hub 2.x, file_download.py / hf_api.py):
- one HEAD /{repo}/resolve/{revision}/config.json without retries (`get_hf_file_metadata`) tells whether the Hub
  answers. `hf_hub_download` alone would, on a timeout or a refused connection with nothing cached, retry with
  back-off and a 60 s timeout for minutes; the probe fails fast instead and we fall back to the local cache;
- `hf_hub_download` then fetches config.json and hf_quant_config.json into the normal cache (a 404 for the
  latter is fine);
- `HfApi.get_safetensors_metadata` reads model.safetensors' header (Range GET of its first 100 kB) or
  model.safetensors.index.json and every shard's header, without downloading weights.
Offline (HF_HUB_OFFLINE=1, or the Hub unreachable) a cached config.json still works; exact sizes then come from
safetensors files in the cached snapshot if they are all there, otherwise the spec says they were skipped.
Every failure becomes one InputError line that names the way out.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from wizard.errors import InputError
from wizard.sources.hf_config import parse_config
from wizard.sources.local import exact_from_headers
from wizard.sources.safetensors_header import read_header
from wizard.specs import ModelSpec

CONFIG = "config.json"
QUANT_CONFIG = "hf_quant_config.json"
SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
WAY_OUT = "use a bundled catalog id from `llm-deploy-wizard models` or a local folder with config.json"


def load_hub(repo_id: str, revision: str | None = None) -> ModelSpec:
    """ModelSpec of a Hub repo; reads config files and safetensors headers only, never the weights."""
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
    with _quiet_progress():
        try:
            return _load(repo_id, revision)
        except InputError:
            raise
        except Exception as e:  # every failure is one line, never a traceback
            raise _failure(e, repo_id, revision, endpoint) from None


def _load(repo_id: str, revision: str | None) -> ModelSpec:
    from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
    from huggingface_hub.errors import RemoteEntryNotFoundError, RevisionNotFoundError

    api = HfApi()  # built now, so it uses the endpoint and token in effect at this call
    endpoint = api.endpoint
    try:  # fast probe: no retries, HF_HUB_ETAG_TIMEOUT
        get_hf_file_metadata(
            hf_hub_url(repo_id, CONFIG, revision=revision, endpoint=endpoint),
            timeout=constants.HF_HUB_ETAG_TIMEOUT,
            endpoint=endpoint,
        )
        offline_reason: Exception | None = None
    except (RemoteEntryNotFoundError, RevisionNotFoundError):
        raise  # the Hub answered: the repo has no config.json or no such revision; a cache would not help
    except Exception as e:  # offline, unreachable, timeout, gated, not found, 5xx: try the local cache first
        offline_reason = e

    if offline_reason is None:
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
        headers = _cached_headers(snapshot)
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


def _quant_config_path(api: Any, repo_id: str, revision: str | None, *, online: bool) -> Path | None:
    """hf_quant_config.json (NVIDIA ModelOpt checkpoints) if the repo has one."""
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.errors import EntryNotFoundError

    if not online:
        cached = try_to_load_from_cache(repo_id, QUANT_CONFIG, revision=revision)
        return Path(cached) if isinstance(cached, str) else None
    try:
        path = api.hf_hub_download(repo_id, QUANT_CONFIG, revision=revision, etag_timeout=constants.HF_HUB_ETAG_TIMEOUT)
        return Path(path)
    except EntryNotFoundError:  # a 404 for it is the usual case
        return None


def _hub_headers(api: Any, repo_id: str, revision: str | None) -> list[dict]:
    """Per-file safetensors headers {tensor: {dtype, shape, data_offsets}} read from the Hub; [] if none."""
    from huggingface_hub import constants
    from huggingface_hub.errors import NotASafetensorsRepoError

    try:
        meta = api.get_safetensors_metadata(repo_id, revision=revision, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT)
    except NotASafetensorsRepoError:
        return []
    return [
        {
            name: {"dtype": info.dtype, "shape": list(info.shape), "data_offsets": list(info.data_offsets)}
            for name, info in file.tensors.items()
        }
        for _, file in sorted(meta.files_metadata.items())
    ]


def _cached_headers(snapshot: Path) -> list[dict]:
    """Headers of the safetensors files in a cached snapshot, if the whole checkpoint is there; else []."""
    index_path = snapshot / INDEX
    if index_path.is_file():
        try:
            weight_map = json.loads(index_path.read_text(encoding="utf-8")).get("weight_map") or {}
        except (OSError, ValueError, AttributeError):
            return []
        files = [snapshot / name for name in sorted(set(weight_map.values()))]
    else:
        files = [snapshot / SINGLE]
    if not files or not all(f.is_file() for f in files):
        return []
    return [read_header(f) for f in files]


def _read_json(path: Path, what: str, repo_id: str) -> dict:
    """A downloaded JSON file; a broken one is named with its repo, not its cache path."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError("model", repo_id, f"its {what} in the Hugging Face cache could not be read ({e.strerror})",
                         hint=WAY_OUT) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError("model", repo_id, f"its {what} on the Hub is not valid JSON ({e})",
                         hint=WAY_OUT) from None
    if not isinstance(data, dict):
        raise InputError("model", repo_id, f"its {what} on the Hub is not a JSON object", hint=WAY_OUT)
    return data


def _failure(error: Exception, repo_id: str, revision: str | None, endpoint: str) -> InputError:
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
    if _is_timeout(e):
        return fail(f"the Hugging Face Hub at {endpoint} did not answer in time (timeout after "
                    f"{constants.HF_HUB_ETAG_TIMEOUT:g} s; HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT set the "
                    "limits) and the model is not in the local cache", f"retry later, or {WAY_OUT}")
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


def _is_timeout(e: BaseException) -> bool:
    """A timeout of the HTTP client (httpx2 / httpx `TimeoutException`) or of a socket."""
    return isinstance(e, TimeoutError) or any(c.__name__ == "TimeoutException" for c in type(e).__mro__)


def _is_transport(e: BaseException) -> bool:
    """A connection-level failure of the HTTP client (`TransportError`: refused, DNS, reset, proxy...)."""
    return any(c.__name__ == "TransportError" for c in type(e).__mro__)


def _first_line(e: BaseException) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else type(e).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _is_commit(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)


@contextmanager
def _quiet_progress() -> Iterator[None]:
    """No tqdm bars for a few small files (HF_HUB_DISABLE_PROGRESS_BARS=0 still wins)."""
    from huggingface_hub import constants
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    if constants.HF_HUB_DISABLE_PROGRESS_BARS is not None or are_progress_bars_disabled():
        yield
        return
    disable_progress_bars()
    try:
        yield
    finally:
        enable_progress_bars()
