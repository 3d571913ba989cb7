"""The starter repo's writer never destroys a user's data (issue #10): what --force may replace, what it refuses,
and how a run killed between its two renames is recovered by the next one."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import assert_one_line_error, run_main
from wizard.artifacts import writer
from wizard.artifacts.writer import MARKER, read_marker, write_repo
from wizard.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
TINY = str(ROOT / "tests" / "scenarios" / "tiny_model.yaml")
FILES = {"README.md": "new readme\n", "serve/launch.sh": "#!/bin/sh\n", "k8s/a.yaml": "a: 1\n"}


def marked_repo(folder: Path) -> Path:
    """A starter repo as this tool writes it (old content, so a replacement is visible)."""
    write_repo({"README.md": "old readme\n", "serve/launch.sh": "#!/bin/sh\nold\n"}, folder)
    return folder


def test_a_new_folder_gets_the_files_and_a_marker_listing_them(tmp_path):
    out = write_repo(FILES, tmp_path / "repo")
    assert read_marker(out) == sorted([*FILES, MARKER])
    assert (out / "serve" / "launch.sh").stat().st_mode & 0o111  # scripts are executable
    assert json.loads((out / MARKER).read_text())["tool"] == "llm-deploy-wizard"


def test_force_replaces_a_marked_repo_and_keeps_the_folders_mode(tmp_path):
    out = marked_repo(tmp_path / "repo")
    out.chmod(0o750)
    write_repo(FILES, out, force=True)
    assert (out / "README.md").read_text() == "new readme\n"
    assert out.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]  # no staging or backup left


def test_force_refuses_a_folder_this_tool_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    r = run_main("plan", "--answers", TINY, "--out", str(out), "--force")
    assert_one_line_error(r, "--out", "no starter repo of this tool", MARKER)
    assert (out / "thesis.tex").read_text() == "years of work"


def test_force_refuses_a_marked_repo_holding_a_users_file(tmp_path):
    out = marked_repo(tmp_path / "repo")
    (out / "serve" / "my-notes.txt").write_text("mine")
    r = run_main("plan", "--answers", TINY, "--out", str(out), "--force")
    assert_one_line_error(r, "--out", "serve/my-notes.txt", "did not write")
    assert (out / "serve" / "my-notes.txt").read_text() == "mine"


def test_force_never_replaces_the_home_folder(tmp_path, monkeypatch):
    home = marked_repo(tmp_path / "home")  # even a marked one: a home folder holds far more than a repo
    monkeypatch.setenv("HOME", str(home))
    r = run_main("plan", "--answers", TINY, "--out", "~", "--force")
    assert_one_line_error(r, "--out", "home folder")
    assert (home / "README.md").read_text() == "old readme\n"


@pytest.mark.parametrize(("where", "words"), [(".", "is the current folder"), ("serve", "holds the current folder")])
def test_force_never_replaces_the_current_folder_or_an_ancestor(tmp_path, monkeypatch, where, words):
    out = marked_repo(tmp_path / "repo")
    monkeypatch.chdir(out / where)
    r = run_main("plan", "--answers", TINY, "--out", str(out), "--force")
    assert_one_line_error(r, "--out", words)
    assert (out / "README.md").read_text() == "old readme\n"


def test_force_never_replaces_a_mount_point(tmp_path, monkeypatch):
    out = marked_repo(tmp_path / "repo")
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out or real(p))
    with pytest.raises(InputError, match="mount point"):
        write_repo(FILES, out, force=True)
    assert (out / "README.md").read_text() == "old readme\n"


def test_a_symlink_is_never_written_through(tmp_path):
    target = marked_repo(tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target)
    r = run_main("plan", "--answers", TINY, "--out", str(link), "--force")
    assert_one_line_error(r, "--out", "symbolic link")
    assert (target / "README.md").read_text() == "old readme\n" and link.is_symlink()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    assert_one_line_error(run_main("plan", "--answers", TINY, "--out", str(dangling)), "--out", "missing target")
    assert not (tmp_path / "nowhere").exists()


def test_an_empty_current_folder_is_filled_in_place(tmp_path, monkeypatch):
    # Renaming over the folder would leave the user's shell in a deleted directory: the files move in instead.
    out = tmp_path / "empty"
    out.mkdir()
    out.chmod(0o700)
    inode = out.stat().st_ino
    monkeypatch.chdir(out)
    r = run_main("plan", "--answers", TINY, "--out", ".")
    assert r.code == 0, r.err
    assert out.stat().st_ino == inode and out.stat().st_mode & 0o777 == 0o700
    assert (out / "RATIONALE.md").is_file() and read_marker(out) is not None
    assert not [p for p in out.iterdir() if "llmdw" in p.name]


def test_regenerating_from_the_repos_own_answers_file_replaces_it(tmp_path):
    out = tmp_path / "repo"
    assert run_main("plan", "--answers", TINY, "--out", str(out)).code == 0
    r = run_main("plan", "--answers", str(out / "answers.yaml"), "--out", str(out), "--force")
    assert r.code == 0, r.err
    assert (out / "answers.yaml").is_file()


@pytest.mark.parametrize(("code", "words"), [(errno.ENOSPC, "no space left"), (errno.EACCES, "permission denied"),
                                             (errno.EBUSY, "busy")])
def test_os_errors_are_one_line_and_leave_the_old_repo(tmp_path, monkeypatch, code, words):
    out = marked_repo(tmp_path / "repo")
    real = Path.write_text
    calls = {"n": 0}

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(code, os.strerror(code))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(InputError, match=words) as e:
        write_repo(FILES, out, force=True)
    monkeypatch.undo()
    assert len(e.value.line().splitlines()) == 1
    assert (out / "README.md").read_text() == "old readme\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]


def test_a_failed_second_rename_puts_the_old_repo_back(tmp_path, monkeypatch):
    out = marked_repo(tmp_path / "repo")
    real = os.rename

    def busy(src, dst):
        if Path(dst) == out:
            raise OSError(errno.EBUSY, "busy")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", busy)
    with pytest.raises(InputError, match="old repo is unchanged"):
        write_repo(FILES, out, force=True)
    assert (out / "README.md").read_text() == "old readme\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]


KILL_BETWEEN_RENAMES = """
import os, sys
from pathlib import Path
from wizard.artifacts import writer
real = os.rename
def killed(src, dst):
    if Path(dst) == Path(sys.argv[1]):
        os._exit(9)  # the old repo is aside, the new one not yet in place: what kill -9 leaves
    return real(src, dst)
os.rename = killed
writer.write_repo({"README.md": "new readme\\n"}, Path(sys.argv[1]), force=True)
"""


def test_a_kill_between_the_renames_is_recovered_by_the_next_run(tmp_path):
    out = marked_repo(tmp_path / "repo")
    p = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, str(out)], capture_output=True, text=True)
    assert p.returncode == 9, p.stderr
    assert not out.exists()
    hidden = [q for q in tmp_path.iterdir() if q.name.startswith(".repo.")]
    assert any("replaced" in q.name for q in hidden)  # the user's repo is aside, not gone
    # The next run, without --force, restores it, says so, and then refuses to write over it.
    r = run_main("plan", "--answers", TINY, "--out", str(out))
    assert r.code == 2 and "restored" in r.err and "not empty" in r.err
    assert (out / "README.md").read_text() == "old readme\n"
    assert sorted(q.name for q in tmp_path.iterdir()) == ["repo"]  # staging folders are cleaned up too


def test_an_unmarked_copy_left_aside_is_reported_not_deleted(tmp_path):
    out = marked_repo(tmp_path / "repo")
    aside = tmp_path / f".repo.{writer.REPLACED_TAG}.x1"
    aside.mkdir()
    (aside / "data.txt").write_text("unknown")
    notices: list[str] = []
    write_repo(FILES, out, force=True, notices=notices)
    assert (aside / "data.txt").read_text() == "unknown"
    assert any(str(aside) in n for n in notices)


@pytest.mark.parametrize("out", ["~nosuchuser-xyz/repo", "x" * 300, "a\0b"])
def test_unusable_out_paths_are_one_line(tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    r = run_main("plan", "--answers", TINY, "--out", out)
    assert_one_line_error(r, "--out")
    assert list(tmp_path.iterdir()) == []


# -- found by a second reader


def test_a_fifo_named_as_the_marker_is_not_read(tmp_path):
    out = tmp_path / "X"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    os.mkfifo(out / MARKER)  # reading it would block forever
    with pytest.raises(InputError, match="no starter repo of this tool"):
        write_repo(FILES, out, force=True)


def test_an_empty_folder_left_aside_is_removed_not_restored(tmp_path):
    # A kill between making the backup folder and moving the old repo into it leaves an empty one behind.
    out = marked_repo(tmp_path / "R")
    (tmp_path / f".R.{writer.REPLACED_TAG}.abc").mkdir(mode=0o700)
    notices: list[str] = []
    write_repo(FILES, out, force=True, notices=notices)
    assert notices == [] and sorted(p.name for p in tmp_path.iterdir()) == ["R"]
    gone = tmp_path / "gone"
    (tmp_path / f".gone.{writer.REPLACED_TAG}.abc").mkdir(mode=0o700)
    write_repo(FILES, gone)
    umask = os.umask(0)
    os.umask(umask)
    assert gone.stat().st_mode & 0o777 == 0o777 & ~umask  # a new folder, not the empty 0700 one "restored"


def test_a_long_name_fits_and_a_failure_removes_the_parents_it_made(tmp_path, monkeypatch):
    name = "a" * 240  # legal (NAME_MAX 255), though ".NAME.llmdw-staging.XXXXXXXX" would not be
    assert write_repo(FILES, tmp_path / name).is_dir()
    real = os.rename

    def busy(src, dst):
        if Path(dst).name == "repo":
            raise OSError(errno.EBUSY, "busy")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", busy)
    with pytest.raises(InputError, match="nothing was written"):
        write_repo(FILES, tmp_path / "new" / "parent" / "repo")
    assert not (tmp_path / "new").exists()


def test_writers_of_one_folder_take_turns(tmp_path):
    """Two processes replacing the same repo at once: each run ends with a marked repo, never a mix."""
    out = marked_repo(tmp_path / "R")
    script = ("import sys; from pathlib import Path; from wizard.artifacts.writer import write_repo\n"
              "for i in range(15):\n"
              "    write_repo({f'f{i}.md': 'x', 'serve/a.sh': 'y'}, Path(sys.argv[1]), force=True)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(out)]) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert read_marker(out) is not None and sorted(p.name for p in tmp_path.iterdir()) == ["R"]
