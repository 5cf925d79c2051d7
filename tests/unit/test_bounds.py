"""Numbers outside the documented limits are refused by every importer, with file and line, and nothing is written."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Handbook, HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import ImportRejected
from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes
from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.canonical import import_handbook
from skillorchestra_core.formats.exploration import import_exploration
from skillorchestra_core.formats.llmrouter import import_llmrouter
from skillorchestra_core.formats.outcomes import import_outcomes
from skillorchestra_core.formats.rows import MalformedFile, max_import_bytes

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
HEADER = "query_id,query,agent,score,prompt_tokens,completion_tokens,cost_usd,latency_s\n"


def counts(url: str) -> tuple[int, ...]:
    with session(url) as s:
        return tuple(s.exec(select(func.count()).select_from(m)).one()
                     for m in (Handbook, HandbookVersion, Query, Trajectory))


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(url: str, fn, *args, **kwargs):
    with session(url) as s:
        out = fn(s, *args, **kwargs)
        s.commit()
    return out


# --- the checkers ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("check, value", [
    (bounds.cost, 1e308), (bounds.cost, -0.01), (bounds.cost, math.inf), (bounds.cost, "nan"),
    (bounds.cost, 10**400), (bounds.price, "Infinity"), (bounds.price, 2e6), (bounds.beta_count, 0),
    (bounds.beta_count, 1e308), (bounds.beta_count, -1), (bounds.tokens, 2**53 + 1), (bounds.tokens, -1),
    (bounds.tokens, 1.5), (bounds.tokens, 1e30), (bounds.tokens, "9" * 5000), (bounds.tokens, 10**4000),
    (bounds.latency, 1e8), (bounds.unit, 1.01), (bounds.cost, True), (bounds.cost, [1]),
])
def test_out_of_bounds_values_are_refused_with_a_short_reason(check, value):
    with pytest.raises(ValueError) as err:
        check(value, "x")
    message = str(err.value)
    assert message.startswith("x ") and "\n" not in message and len(message) < 120


@pytest.mark.parametrize("check, value, expected", [
    (bounds.cost, "0.5", 0.5), (bounds.cost, 0, 0.0), (bounds.cost, bounds.MAX_COST_USD, bounds.MAX_COST_USD),
    (bounds.tokens, 2**53, 2**53), (bounds.tokens, "12", 12), (bounds.tokens, 7.0, 7),
    (bounds.beta_count, 1e-9, 1e-9), (bounds.price, 1000, 1000.0),
])
def test_values_within_bounds_pass(check, value, expected):
    assert check(value, "x") == expected


# --- outcomes ------------------------------------------------------------------------------------------------------

def test_two_rows_with_a_huge_cost_are_refused_and_nothing_is_written(db_url, tmp_path):
    run(db_url, import_outcomes, FIX / "outcomes_good.csv", "hb")
    before = counts(db_url)
    path = write(tmp_path, "huge.csv", HEADER + "n1,new one,alpha,1,10,10,1e308,1\n"
                                                "n1,new one,beta,0,10,10,1e308,1\n"
                                                "n2,new two,alpha,1,10,10,0.01,1\n")
    with pytest.raises(ImportRejected) as err:
        run(db_url, import_outcomes, path, "hb")
    message = str(err.value)
    assert message.startswith("2 bad row(s), nothing imported")
    assert f"{path}:2: cost_usd 1e+308 is above the limit of 1e+06" in message and f"{path}:3:" in message
    assert "\n" not in message
    assert counts(db_url) == before


@pytest.mark.parametrize("column, value, reason", [
    ("cost_usd", "-5", "cost_usd must not be negative"),
    ("cost_usd", "Infinity", "cost_usd must be a finite number"),
    ("cost_usd", "nan", "cost_usd must be a finite number"),
    ("latency_s", "1e300", "latency_s 1e+300 is above the limit"),
    ("prompt_tokens", str(2**53 + 1), "prompt_tokens 9007199254740993 is above the limit"),
    ("completion_tokens", "1e30", "completion_tokens 1e+30 is above the limit"),
    ("prompt_tokens", "9" * 5000, "prompt_tokens 999999999999... is above the limit"),
])
def test_outcome_values_out_of_bounds_name_file_and_line(db_url, tmp_path, column, value, reason):
    row = {"query_id": "q", "query": "text", "agent": "a", "score": "1", "prompt_tokens": "1",
           "completion_tokens": "1", "cost_usd": "0.1", "latency_s": "1", column: value}
    path = write(tmp_path, "bad.jsonl", json.dumps({"query_id": "ok", "query": "fine", "agent": "a", "score": 1})
                 + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ImportRejected, match=f"{re.escape(str(path))}:2: .*{re.escape(reason)}"):
        run(db_url, import_outcomes, path, "hb")
    assert counts(db_url) == (0, 0, 0, 0)


def test_jsonl_huge_integer_token_count_is_refused(db_url, tmp_path):
    path = write(tmp_path, "big.jsonl", '{"query_id": "q", "query": "t", "agent": "a", "score": 1, '
                                        f'"prompt_tokens": {10**300}, "cost_usd": {10**400}}}\n')
    with pytest.raises(ImportRejected) as err:
        run(db_url, import_outcomes, path, "hb")
    assert "prompt_tokens" in str(err.value) and "cost_usd must be a finite number" in str(err.value)
    assert counts(db_url) == (0, 0, 0, 0)


# --- exploration ---------------------------------------------------------------------------------------------------

def test_exploration_cost_out_of_bounds_is_refused(db_url, tmp_path):
    line = {"sample_id": "s1", "question": "q?", "model_results": {
        "m1": {"exact_match": 1, "total_cost": 1e308, "prompt_tokens": 3},
        "m2": {"exact_match": 0, "total_cost": 0.1, "prompt_tokens": 2**60}}}
    path = write(tmp_path, "inference_results.jsonl", json.dumps(line) + "\n")
    with pytest.raises(ImportRejected) as err:
        run(db_url, import_exploration, path, "hb")
    assert f"{path}:1:" in str(err.value) and "total_cost of 'm1' 1e+308 is above the limit" in str(err.value)
    assert "prompt_tokens of 'm2'" in str(err.value)
    assert counts(db_url) == (0, 0, 0, 0)


# --- LLMRouter price cards -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("price", ["1e308", "Infinity", "-1"])
def test_llmrouter_price_card_out_of_bounds_is_refused(db_url, tmp_path, price):
    folder = tmp_path / "llmrouter"
    folder.mkdir()
    (folder / "dcrouter_train.json").write_text(json.dumps([{"question": "q1", "scores": {"m": 1}}]))
    (folder / "dcrouter_test.json").write_text("[]")
    (folder / "default_llm.json").write_text('{"m": {"input_price": %s, "output_price": 1, "model": "m"}}' % price)
    with pytest.raises(MalformedFile, match=r"default_llm.json: input_price of 'm' "):
        run(db_url, import_llmrouter, folder, "hb")
    assert counts(db_url) == (0, 0, 0, 0)


# --- canonical handbook --------------------------------------------------------------------------------------------

def _reference() -> dict:
    return json.loads((FIX / "handbook_reference.json").read_text())


def _agent(doc: dict) -> dict:
    return next(iter(doc["agent_profiles"].values()))


def _mutate_cost(doc):
    _agent(doc)["cost_stats"]["avg_cost_usd"] = -5


def _mutate_alpha(value):
    def mutate(doc):
        comp = _agent(doc)["skill_competence"]
        next(iter(comp.values()))["alpha"] = value
    return mutate


def _mutate_beta(value):
    def mutate(doc):
        comp = _agent(doc)["skill_competence"]
        next(iter(comp.values()))["beta"] = value
    return mutate


def _mutate_price(value):
    def mutate(doc):
        key = next(iter(doc["agent_profiles"]))
        doc["metadata"]["studio"] = {"agents": {key: {"input_price_per_m": value, "output_price_per_m": 1.0}}}
    return mutate


def _mutate_imported(value):
    def mutate(doc):
        key = next(iter(doc["agent_profiles"]))
        skill = next(iter(_agent(doc)["skill_competence"]))
        doc["metadata"]["studio"] = {"imported": {key: {skill: {"alpha": value, "beta": 1}}}}
    return mutate


def _mutate_tokens(doc):
    _agent(doc)["cost_stats"]["avg_prompt_tokens"] = 1e300


def _mutate_total(doc):
    _agent(doc)["total_attempts"] = 1e308


@pytest.mark.parametrize("mutate, needle", [
    (_mutate_cost, "avg_cost_usd must not be negative"),
    (_mutate_alpha(1e308), "alpha"), (_mutate_alpha(math.inf), "alpha"),
    (_mutate_beta(1e308), "beta"), (_mutate_beta(math.inf), "beta"),
    (_mutate_price(1e308), "input_price_per_m 1e+308 is above the limit"),
    (_mutate_price(math.inf), "input_price_per_m must be a finite number"),
    (_mutate_imported(1e308), "alpha 1e+308 is above the limit"),
    (_mutate_imported(math.inf), "alpha must be a finite number"),
    (_mutate_tokens, "avg_prompt_tokens 1e+300 is above the limit"),
    (_mutate_total, "total_attempts"),
])
def test_canonical_handbook_out_of_bounds_is_refused(db_url, tmp_path, mutate, needle):
    doc = copy.deepcopy(_reference())
    mutate(doc)
    path = write(tmp_path, "hb.json", json.dumps(doc))  # Infinity is written as the bare literal json accepts
    with pytest.raises(MalformedFile) as err:
        run(db_url, import_handbook, path, "hb")
    message = str(err.value)
    assert message.startswith(f"{path}: ") and needle in message and "\n" not in message
    assert counts(db_url) == (0, 0, 0, 0)


def test_reference_handbook_still_imports(db_url, tmp_path):
    path = write(tmp_path, "hb.json", json.dumps(_reference()))
    assert run(db_url, import_handbook, path, "hb").created_version


# --- ingest, whatever importer built the rows ----------------------------------------------------------------------

def test_ingest_refuses_rows_and_prices_out_of_bounds(db_url):
    rows = [OutcomeRow(line=4, query_id="q", query="t", agent="a", score=1.0, cost_usd=1e308),
            OutcomeRow(line=5, query_id="q", query="t", agent="b", score=float("nan")),
            OutcomeRow(line=6, query_id="r", query="u", agent="a", score=0.0, prompt_tokens=2**64)]
    hints = {"a": AgentHint(model="a", input_price_per_m=math.inf, output_price_per_m=1.0)}
    with pytest.raises(ImportRejected) as err:
        run(db_url, ingest_outcomes, "hb", rows, source_label="src", agent_hints=hints)
    message = str(err.value)
    assert message.startswith("4 bad row(s)")
    assert "src:4: cost_usd 1e+308" in message and "src:5: score must be a finite number" in message
    assert "src:6: prompt_tokens" in message and "input_price_per_m of agent 'a' must be a finite" in message
    assert counts(db_url) == (0, 0, 0, 0)


# --- input paths: regular files within the size limit ----------------------------------------------------------------

IMPORTERS = {
    "outcomes": (import_outcomes, "x.csv"),
    "outcomes-jsonl": (import_outcomes, "x.jsonl"),
    "outcomes-parquet": (import_outcomes, "x.parquet"),
    "exploration": (import_exploration, "inference_results.jsonl"),
    "handbook": (import_handbook, "hb.json"),
}


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging: a blocked open() is interrupted by the alarm's exception."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_fifo_is_refused_at_once(db_url, tmp_path, kind):
    fn, name = IMPORTERS[kind]
    path = tmp_path / name
    os.mkfifo(path)
    started = time.monotonic()
    with deadline(10), pytest.raises(MalformedFile, match=f"^{re.escape(str(path))}: is a FIFO, expected a regular"):
        run(db_url, fn, path, "hb")
    assert time.monotonic() - started < 5
    assert counts(db_url) == (0, 0, 0, 0)


def test_llmrouter_files_that_are_fifos_are_refused(db_url, tmp_path):
    folder = tmp_path / "llmrouter"
    folder.mkdir()
    os.mkfifo(folder / "dcrouter_train.json")
    (folder / "dcrouter_test.json").write_text("[]")
    with deadline(10), pytest.raises(MalformedFile, match="dcrouter_train.json: is a FIFO"):
        run(db_url, import_llmrouter, folder, "hb")
    fifo_folder = tmp_path / "fifo"
    os.mkfifo(fifo_folder)
    with deadline(10), pytest.raises(MalformedFile, match="not a directory"):
        run(db_url, import_llmrouter, fifo_folder, "hb")


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_directories_devices_and_missing_files_are_refused(db_url, tmp_path, kind):
    fn, name = IMPORTERS[kind]
    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(MalformedFile, match="is a directory, expected a file"):
        run(db_url, fn, folder, "hb")
    with pytest.raises(MalformedFile, match="no such file"):
        run(db_url, fn, tmp_path / "missing" / name, "hb")
    if Path("/dev/zero").exists() and fn is not import_outcomes:  # outcomes wants the extension first
        with deadline(10), pytest.raises(MalformedFile, match="/dev/zero: is a device, expected a regular file"):
            run(db_url, fn, Path("/dev/zero"), "hb")


def test_character_device_with_an_outcome_extension_is_refused(db_url, tmp_path):
    link = tmp_path / "zero.csv"
    link.symlink_to("/dev/zero")
    with deadline(10), pytest.raises(MalformedFile, match="zero.csv: is a device"):
        run(db_url, import_outcomes, link, "hb")


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_size_limit_is_a_setting(db_url, tmp_path, monkeypatch, kind):
    fn, name = IMPORTERS[kind]
    path = tmp_path / name
    path.write_bytes(b"x" * 3000)
    monkeypatch.setenv("SKILLORCHESTRA_MAX_IMPORT_MB", "0.002")  # 2,097 bytes
    with pytest.raises(MalformedFile, match=r": 3,000 bytes is over the import limit of 0.002 MB \(setting"):
        run(db_url, fn, path, "hb")
    monkeypatch.setenv("SKILLORCHESTRA_MAX_IMPORT_MB", "many")
    with pytest.raises(MalformedFile, match="SKILLORCHESTRA_MAX_IMPORT_MB='many': expected a positive number"):
        run(db_url, fn, path, "hb")
    assert counts(db_url) == (0, 0, 0, 0)


def test_default_size_limit_admits_ordinary_files(db_url, monkeypatch):
    monkeypatch.delenv("SKILLORCHESTRA_MAX_IMPORT_MB", raising=False)
    assert max_import_bytes() == 2048 << 20
    assert run(db_url, import_outcomes, FIX / "outcomes_good.csv", "hb").rows > 0


def test_unreadable_file_is_refused_in_one_line(db_url, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = tmp_path / "x.csv"
    path.write_text(HEADER)
    path.chmod(0)
    with pytest.raises(MalformedFile, match="permission denied|Permission denied"):
        run(db_url, import_outcomes, path, "hb")
