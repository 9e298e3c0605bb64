"""The example notebook tells its story to the end, executed headless."""

import os

import pytest


def test_the_launch_notebook_runs_end_to_end(root):
    if os.environ.get("TLAB_REQUIRE_ALL"):
        import nbformat  # cargo xtask test installs it: missing, the test fails
    else:
        nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    path = root / "examples/launch-from-a-trace.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    # The story's end: the winner named with its price, and its link.
    assert "/month, p99 TTFT" in text and "http://127.0.0.1:8080/#s=v1." in text
    # The chart was drawn.
    assert any("image/png" in o.get("data", {}) for o in outputs)
