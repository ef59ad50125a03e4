"""`factres oracle ...`: help, output folders, errors."""
from click.testing import CliRunner
from test_oracle_paths import write_tiny

from oracle.cli import main, oracle
from oracle.report import output_dir


def test_every_oracle_command_has_help_with_an_example():
    runner = CliRunner()
    for name in sorted(oracle.commands):
        result = runner.invoke(main, ["oracle", name, "-h"], catch_exceptions=False)
        assert result.exit_code == 0
        assert "Example: factres oracle " + name in result.output
    assert sorted(oracle.commands) == ["ceiling", "misses", "nbest", "paths", "signals",
                                       "versions"]


def test_ceiling_writes_json_and_markdown_and_never_overwrites(tmp_path):
    data, out = write_tiny(tmp_path), tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(main, ["oracle", "ceiling", "--data", str(data), "--out", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 0
    assert result.output == f"wrote {out}/ceiling.json and {out}/ceiling.md\n"
    assert "| factconsolidation_mh_6k | 6k | 5 | 4 | 2 | 2 | 2 |" in (out / "ceiling.md").read_text()
    again = runner.invoke(main, ["oracle", "ceiling", "--data", str(data), "--out", str(out)],
                          catch_exceptions=False)
    assert again.exit_code == 1
    assert again.output == (f"Error: {out} already exists: oracle results are never "
                            "overwritten; choose another --out\n")


def test_default_folders_take_the_next_suffix(tmp_path):
    first = output_dir("paths", "6k", root=tmp_path)
    assert first == tmp_path / "oracle-paths-6k"
    first.mkdir()
    assert output_dir("paths", "6k", root=tmp_path) == tmp_path / "oracle-paths-6k-2"


def test_missing_run_is_a_clean_error(tmp_path):
    result = CliRunner().invoke(main, ["oracle", "misses", str(tmp_path / "nope")],
                                catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: no run folder '{tmp_path / 'nope'}'")


def test_ceiling_cut_short_by_its_time_limit_says_so(tmp_path):
    data, out = write_tiny(tmp_path), tmp_path / "out"
    result = CliRunner().invoke(main, ["oracle", "ceiling", "--data", str(data), "--out",
                                       str(out), "--time-limit", "1e-9"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == f"wrote {out}/ceiling.json and {out}/ceiling.md\n"
    assert result.stderr.startswith("note: Status: NOT proven optimal: the time limit of 1e-09 s "
                                    "stopped the solver first (6k haystack ")
    assert "best found 5, bound 8" in result.stderr
    assert '"status": "FEASIBLE"' in (out / "ceiling.json").read_text()
