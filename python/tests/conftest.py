"""Shared fixtures: the repository, and the `tlab` binary the Python
package is held to (the same scenario must give the same bytes)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def tlab():
    """Run `tlab` (TLAB_BIN, else target/debug/tlab, built if missing):
    its standard output, or its standard error when it fails."""
    binary = os.environ.get("TLAB_BIN") or str(ROOT / "target" / "debug" / "tlab")
    if not os.path.exists(binary):
        subprocess.run(["cargo", "build", "-q", "-p", "tlab"], cwd=ROOT, check=True)

    def call(*args: str, ok: bool = True) -> str:
        p = subprocess.run([binary, *args], capture_output=True, text=True, cwd=ROOT)
        assert (p.returncode == 0) == ok, p.stderr
        return p.stdout if ok else p.stderr

    return call


@pytest.fixture
def small(tmp_path):
    """The chatbot preset cut to 60 s, as a file and as a dict."""
    import throughput_lab as tl

    s = tl.scenario("chatbot-h100", duration=60)
    path = tmp_path / "small.json"
    import json

    path.write_text(json.dumps(s))
    return path, s
