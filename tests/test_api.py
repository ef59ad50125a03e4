"""The public Python API (issue 24): the names `from resolver import ...` gives, each documented
(what it takes, returns and raises), resolved lazily so that `import resolver` stays cheap, and
the same objects as the modules that define them."""
from __future__ import annotations

import inspect
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import resolver
from resolver import api

ROOT = Path(__file__).resolve().parent.parent


def test_the_package_lists_exactly_the_api_names():
    assert resolver.__all__ == api.__all__
    assert set(api.__all__) <= set(dir(resolver))


@pytest.mark.parametrize("name", api.__all__)
def test_each_name_is_the_api_object_even_after_every_stage_is_imported(name):
    # importing the stages sets attributes on the package (resolver.run is a subpackage):
    # no public name may be shadowed by one
    import resolver.memory.memory  # noqa: F401
    import resolver.run.runs  # noqa: F401
    namespace: dict = {}
    exec(f"from resolver import {name} as value", namespace)
    assert namespace["value"] is getattr(api, name)


@pytest.mark.parametrize("name", [n for n in api.__all__ if n != "__version__"])
def test_each_name_has_a_docstring(name):
    obj = getattr(api, name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 40, name
    # not the signature a dataclass writes when it has no docstring of its own
    assert not doc.startswith(f"{getattr(obj, '__name__', name)}("), name
    if inspect.isfunction(obj):
        # a function says what it takes, returns and raises
        assert "Returns" in doc or "Returns" in doc.replace(":", ""), name
        assert "Raises" in doc or "raises nothing" in doc, name
        assert "Args" in doc or not inspect.signature(obj).parameters, name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        resolver.nothing_here  # noqa: B018
    with pytest.raises(ImportError):
        exec("from resolver import nothing_here", {})


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(sorted(m for m in "
                          "sys.modules if m.split('.')[0] in ('resolver', 'oracle', 'numpy', "
                          "'scipy', 'lark', 'pydantic', 'click')))"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return eval(out.splitlines()[-1])  # noqa: S307 (a list of names we printed)


def test_import_resolver_imports_only_the_version():
    assert _loaded("import resolver\nresolver.__version__") == ["resolver", "resolver._version"]


def test_a_public_name_loads_no_heavy_module():
    loaded = _loaded("from resolver import load, Memory, execute, read_run, compare_runs")
    assert not {"numpy", "scipy", "lark", "pydantic", "click"} & {m.split(".")[0] for m in loaded}
    assert "oracle" not in {m.split(".")[0] for m in loaded}


def test_the_version_is_the_distributions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert resolver.__version__ == project["version"]


def test_resolve_defaults_to_the_live_sets_and_takes_plain(tmp_path):
    from resolver import bundled_path, live_plan_sets, load, plan_sets, resolve
    dataset, _gold = load([bundled_path()])
    default = resolve(dataset)
    explicit = resolve(dataset, live_plan_sets(dataset))
    assert [p.answer for p in default] == [p.answer for p in explicit]
    archived = resolve(dataset, plan_sets(dataset, ["rules-6k", "lexicon-6k"]), mode="plain")
    assert len(archived) == len(dataset.questions) == 200


def test_bad_arguments_raise_the_librarys_errors():
    from resolver import FactresError, InputError, bundled_path, load, plan_sets, resolve
    dataset, _gold = load([bundled_path()])
    with pytest.raises(InputError, match="unknown mode 'fast'"):
        resolve(dataset, [], mode="fast")
    with pytest.raises(InputError, match="no plan set given"):
        plan_sets(dataset, [])
    with pytest.raises(FactresError):
        plan_sets(dataset, ["no-such-set"])
    with pytest.raises(InputError):
        load([])


def test_execute_writes_a_run_folder(tmp_path):
    from resolver import RunConfig, execute, read_run
    done = execute(RunConfig(mode="plain"), results_dir=tmp_path, run_id="api")
    assert done.path == tmp_path / "api" and "pooled all" in done.table
    again = read_run("api", tmp_path)
    assert again.metrics["rows"] == done.metrics["rows"]


def test_an_unknown_live_set_is_an_input_error():
    from resolver import InputError, bundled_path, live_plan_sets, load
    dataset, _gold = load([bundled_path()])
    with pytest.raises(InputError, match="unknown live plan set 'regex'"):
        live_plan_sets(dataset, ("regex",))
