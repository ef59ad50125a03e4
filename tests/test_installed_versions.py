"""meta.json's package versions are importlib.metadata's, read without importing it
(`identity.installed_versions`): the same answer for every installed distribution, and for the
layouts it reads itself or hands back to importlib.metadata, each built in a folder of its own
that is put first on the path."""
from __future__ import annotations

import platform
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import orjson
import pytest

from resolver.run import identity
from resolver.run.identity import installed_versions


def _importlib(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_every_installed_distribution_reads_as_importlib_reads_it():
    names = sorted({d.metadata["Name"] for d in metadata.distributions()})
    assert len(names) > 10
    names.append("no-such-distribution-here")
    assert installed_versions(tuple(names)) == {name: _importlib(name) for name in names}


_RECORDED = """
import sys, orjson
from resolver.run.identity import VERSIONED, package_versions
versions = package_versions()
loaded = sorted(m for m in sys.modules if m.startswith(("importlib.metadata", "email")))
from importlib import metadata
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
print(orjson.dumps([versions, loaded, {n: version(n) for n in VERSIONED}]).decode())
"""


def test_the_recorded_versions_load_no_importlib_metadata(tmp_path):
    """What a run records, in a fresh interpreter: importlib.metadata's answers, without
    importing it (nor the email package it loads)."""
    out = subprocess.run([sys.executable, "-c", _RECORDED], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout
    versions, loaded, by_importlib = orjson.loads(out)
    assert loaded == []
    assert versions == {"python": platform.python_version(), **by_importlib}
    assert versions["factres"] and versions["numpy"]


# name on the path -> (what the folder holds: relative path -> text)
_HEADERS = "Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: s\n\nBody\n"
LAYOUTS = {
    "dist-info": {"demo_pkg-1.0.dist-info/METADATA":
                  _HEADERS.format(name="demo-pkg", version="1.0")},
    "egg-info folder, PKG-INFO": {"demo_pkg.egg-info/PKG-INFO":
                                  _HEADERS.format(name="demo-pkg", version="2.0b1")},
    "egg-info file": {"demo_pkg-3.0-py3.11.egg-info":
                      _HEADERS.format(name="demo-pkg", version="3.0")},
    "name spelled otherwise": {"Demo.Pkg-4.0.dist-info/METADATA":
                               _HEADERS.format(name="Demo.Pkg", version="4.0")},
    "METADATA empty, PKG-INFO read": {"demo_pkg-5.0.dist-info/METADATA": "",
                                      "demo_pkg-5.0.dist-info/PKG-INFO":
                                      _HEADERS.format(name="demo-pkg", version="5.0")},
    "blanks around the version": {"demo_pkg-6.0.dist-info/METADATA":
                                  "Name: demo-pkg\nVersion:\t 6.0  \n\n"},
    "a folded header before it": {"demo_pkg-7.0.dist-info/METADATA":
                                  "Name: demo-pkg\nLicense: a\n  b\nVersion: 7.0\n\n"},
    "the version folded": {"demo_pkg-8.0.dist-info/METADATA":
                           "Name: demo-pkg\nVersion: 8.0\n  and more\n\n"},
    "no version header": {"demo_pkg-9.0.dist-info/METADATA": "Name: demo-pkg\n\nVersion: 9\n"},
    "lower-case header": {"demo_pkg-10.0.dist-info/METADATA": "name: demo-pkg\nversion: 10.0\n"},
    "a form feed in a header": {"demo_pkg-11.0.dist-info/METADATA":
                                "Name: demo\x0cpkg\nVersion: 11.0\n"},
    "no metadata file": {"demo_pkg-12.0.dist-info/RECORD": ""},
}


# The plain layouts, read here; importlib.metadata reads the others.
READ_HERE = {"dist-info", "egg-info folder, PKG-INFO", "egg-info file", "name spelled otherwise",
             "METADATA empty, PKG-INFO read", "blanks around the version", "lower-case header"}


def _not_asked(name):
    raise AssertionError(f"importlib.metadata asked for {name}")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_layout_reads_as_importlib_reads_it(layout, tmp_path, monkeypatch):
    for relative, text in LAYOUTS[layout].items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    names = ("demo-pkg", "demo_pkg", "DEMO.PKG", "absent-pkg")
    expected = {name: _importlib(name) for name in names}
    if layout in READ_HERE:     # read without asking importlib.metadata
        monkeypatch.setattr(identity, "_importlib_version", _not_asked)
    assert installed_versions(names) == expected


def test_the_first_folder_on_the_path_wins(tmp_path, monkeypatch):
    for folder, version in (("a", "1.0"), ("b", "2.0")):
        meta = tmp_path / folder / f"demo_pkg-{version}.dist-info" / "METADATA"
        meta.parent.mkdir(parents=True)
        meta.write_text(_HEADERS.format(name="demo-pkg", version=version), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "b"), str(tmp_path / "a"), *sys.path])
    assert installed_versions(("demo-pkg",)) == {"demo-pkg": "2.0"} \
        == {"demo-pkg": _importlib("demo-pkg")}


def test_a_zip_on_the_path_is_read_by_importlib(tmp_path, monkeypatch):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("demo_pkg-1.5.dist-info/METADATA",
                    _HEADERS.format(name="demo-pkg", version="1.5"))
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert installed_versions(("demo-pkg",)) == {"demo-pkg": "1.5"} \
        == {"demo-pkg": _importlib("demo-pkg")}


def test_the_working_folder_entry_is_read_as_importlib_reads_it(tmp_path, monkeypatch):
    """An empty path entry is the working folder (`python -c`, `python -m pytest`)."""
    meta = tmp_path / "demo_pkg.egg-info" / "PKG-INFO"
    meta.parent.mkdir()
    meta.write_text(_HEADERS.format(name="demo-pkg", version="0.9"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    expected = {"demo-pkg": _importlib("demo-pkg")}
    monkeypatch.setattr(identity, "_importlib_version", _not_asked)
    assert installed_versions(("demo-pkg",)) == {"demo-pkg": "0.9"} == expected
