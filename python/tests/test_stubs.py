"""The native module's type stubs name exactly what the module has."""

import ast
import inspect
import pathlib

import throughput_lab
from throughput_lab import _native


def test_the_stubs_name_every_native_function_and_nothing_else():
    stub = pathlib.Path(throughput_lab.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    native = {
        name
        for name, v in vars(_native).items()
        if callable(v) and not inspect.isclass(v) and not name.startswith("_")
    }
    assert functions == native
    assert set(classes) == {"ThroughputLabError", "Planner"}
    methods = {n.name for n in classes["Planner"].body if isinstance(n, ast.FunctionDef)}
    public = {m for m in dir(_native.Planner) if not m.startswith("_")}
    assert methods - {"__init__"} == public
