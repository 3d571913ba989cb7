"""Shared test set-up: no user state or network leaks in, and walkthrough SVG snapshots live in snapshots/."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_textual_snapshot import SVGImageExtension

ROOT = Path(__file__).resolve().parent.parent


class WalkthroughSVG(SVGImageExtension):
    """Key screens of each walkthrough, kept under snapshots/walkthroughs/ (tui-notes.md: syrupy has no option
    for the folder, so the extension's dirname says where). Re-check on every plugin upgrade."""

    @classmethod
    def dirname(cls, *, test_location) -> str:  # noqa: ARG003
        return str(ROOT / "snapshots" / "walkthroughs")


@pytest.fixture
def screen_snapshot(snapshot):
    return snapshot.use_extension(WalkthroughSVG)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Validated trees are cached in a folder of this test session, never the developer's ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WIZARD_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(autouse=True)
def _isolated_user_state(tmp_path_factory, monkeypatch):
    """Answers autosave goes to a temporary state folder, never the developer's own; `plan` reads the user's
    defaults.yaml from an empty config folder, never the developer's ~/.config."""
    monkeypatch.setenv("WIZARD_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
