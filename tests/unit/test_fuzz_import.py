"""Property-based fuzzing of every importer and the canonical handbook reader.

Generated malformed files (hostile values in every column, broken CSV and JSON, byte-level damage, out-of-bound
numbers, deep nesting, huge integers, lone surrogates) give either success or a StudioError whose message is one line;
never any other exception. A failed import leaves the database's row counts unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Handbook, HandbookVersion, Query, Trajectory
from skillorchestra_core.errors import StudioError
from skillorchestra_core.formats.canonical import import_handbook, parse_canonical
from skillorchestra_core.formats.exploration import import_exploration, read_exploration
from skillorchestra_core.formats.llmrouter import import_llmrouter, read_llmrouter
from skillorchestra_core.formats.outcomes import import_outcomes, read_outcomes
from skillorchestra_core.formats.rows import load_json_document

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "formats"
PARSE = settings(max_examples=80, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
STORE = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

COLUMNS = ["query_id", "query", "agent", "score", "success", "mode", "task", "split", "ground_truth",
           "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "response", "dataset"]
TEXTS = ["", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e308", "-1e308", "-0", "1e-320", "9" * 30, "9" * 5000,
         "1.5", "-5", "abc", "true", "yes", "\x00", "\u2028", "\ufeff", "é", "q1", "q2", "a", "b", "0", "1", "0.5",
         str(2**53 + 1), "1,5", '"', "\n", "train", "val", "bogus split", "mode with space", "answer"]
HOSTILE_BYTES = [b"\xff", b"\xc3", b"\x00", b"\r", b"\n", b'"', b",", b"{", b"}", b"[" * 100_000, b'"\\ud800"',
                 b"9" * 5000, b"\xef\xbb\xbf", b"Infinity", b"1e999", b"-"]

json_values = st.one_of(
    st.sampled_from(TEXTS), st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(), st.lists(st.sampled_from(TEXTS), max_size=2), st.dictionaries(st.sampled_from(TEXTS), st.integers(),
                                                                               max_size=2),
)
damage = st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(min_value=0),
                            st.sampled_from(HOSTILE_BYTES)), max_size=3)


def damaged(data: bytes, ops) -> bytes:
    for op, where, payload in ops:
        at = where % (len(data) + 1)
        if op == "insert":
            data = data[:at] + payload + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + len(payload):]
        else:
            data = data[:at] + payload + data[at + len(payload):]
    return data


def dumps(value) -> str:
    return json.dumps(value)  # NaN and Infinity as bare literals, as a careless producer writes them


@st.composite
def outcome_csv(draw) -> bytes:
    header = draw(st.one_of(st.just(COLUMNS[:4] + COLUMNS[9:13]),
                            st.lists(st.sampled_from(COLUMNS + ["extra", ""]), max_size=10)))
    rows = draw(st.lists(st.lists(st.sampled_from(TEXTS) | st.text(max_size=6), min_size=len(header),
                                  max_size=len(header) + 1), max_size=6))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return damaged(out.getvalue().encode("utf-8", "surrogatepass"), draw(damage))


@st.composite
def outcome_jsonl(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        rec = draw(st.dictionaries(st.sampled_from(COLUMNS), json_values, max_size=len(COLUMNS)))
        lines.append(draw(st.one_of(st.just(dumps(rec)), st.sampled_from(TEXTS), st.text(max_size=20))))
    return damaged("\n".join(lines).encode("utf-8", "surrogatepass"), draw(damage))


@st.composite
def exploration_jsonl(draw) -> bytes:
    lines = []
    for i in range(draw(st.integers(min_value=0, max_value=4))):
        models = draw(st.lists(st.sampled_from(["m1", "m2", "", "gpt-4o"]), max_size=3))
        rec = {"sample_id": draw(st.one_of(st.just(f"s{i}"), json_values)),
               "question": draw(st.one_of(st.just("what?"), json_values))}
        if draw(st.booleans()):
            rec["model_results"] = {m: draw(st.dictionaries(
                st.sampled_from(["exact_match", "total_cost", "prompt_tokens", "completion_tokens", "response"]),
                json_values, max_size=5)) for m in models}
        else:
            rec["model_succeeded"] = {m: draw(json_values) for m in models}
            rec["model_exact_match"] = {m: draw(json_values) for m in models}
            rec["model_costs"] = draw(st.one_of(json_values, st.just({m: {"total_cost": draw(json_values),
                                                                          "prompt_tokens": draw(json_values)}
                                                                      for m in models})))
        if draw(st.booleans()):
            rec["task"] = draw(json_values)
        lines.append(dumps(rec))
    return damaged("\n".join(lines).encode("utf-8", "surrogatepass"), draw(damage))


@st.composite
def llmrouter_files(draw) -> dict[str, bytes]:
    def records():
        return [{"question": draw(st.one_of(st.sampled_from(["q1", "q2", "q3"]), json_values)),
                 "scores": draw(st.one_of(st.dictionaries(st.sampled_from(["m1", "m2"]), json_values, max_size=2),
                                          json_values))}
                for _ in range(draw(st.integers(min_value=0, max_value=3)))]

    files = {"dcrouter_train.json": dumps(records()), "dcrouter_test.json": dumps(records())}
    if draw(st.booleans()):
        files["default_llm.json"] = dumps({m: {"input_price": draw(json_values), "output_price": draw(json_values),
                                               "model": m} for m in ("m1", "m2")})
    if draw(st.booleans()):
        files["default_query_train.jsonl"] = "\n".join(
            dumps({"query": draw(st.sampled_from(["q1", "q2"])), "task_name": draw(json_values),
                   "ground_truth": draw(json_values)}) for _ in range(2))
    target = draw(st.sampled_from(sorted(files)))
    out = {name: text.encode("utf-8", "surrogatepass") for name, text in files.items()}
    out[target] = damaged(out[target], draw(damage))
    return out


REFERENCE = json.loads((FIX / "handbook_reference.json").read_text())


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, prefix + (i,))


PATHS = [p for p in _paths(REFERENCE) if p]


@st.composite
def canonical_doc(draw) -> bytes:
    doc = json.loads(json.dumps(REFERENCE))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(PATHS))
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            if draw(st.booleans()) and isinstance(node, dict):
                node.pop(path[-1], None)
            else:
                node[path[-1]] = draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced the parent
    return damaged(dumps(doc).encode("utf-8", "surrogatepass"), draw(damage))


def _parquet(draw) -> bytes:
    n = draw(st.integers(min_value=0, max_value=4))
    floats = st.lists(st.floats(), min_size=n, max_size=n)
    table = pa.table({
        "query_id": pa.array([f"q{i % 2}" for i in range(n)]), "query": pa.array(["text"] * n),
        "agent": pa.array(draw(st.lists(st.sampled_from(["a", "b", ""]), min_size=n, max_size=n))),
        "score": pa.array(draw(floats), pa.float64()),
        "prompt_tokens": pa.array(draw(st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=n,
                                                max_size=n)), pa.uint64()),
        "cost_usd": pa.array(draw(floats), pa.float64()),
    })
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return damaged(sink.getvalue(), draw(damage) if draw(st.booleans()) else [])


parquet_file = st.composite(_parquet)()


# --- the property --------------------------------------------------------------------------------------------------

def expect_ok_or_one_line(fn, *args, **kwargs):
    """The call's result, or None after checking it failed with a one-line StudioError."""
    try:
        return fn(*args, **kwargs)
    except StudioError as exc:
        message = str(exc)
        assert message and "\n" not in message and "\r" not in message, message
        return None


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture
def work(tmp_path):
    return tmp_path


@PARSE
@given(data=outcome_csv())
@example(data=b'"\x00\r\n""\r\n')  # a header whose one column name holds a line break: the error stays one line
def test_outcomes_csv(work, data):
    expect_ok_or_one_line(read_outcomes, write(work, "o.csv", data))


@PARSE
@given(data=outcome_jsonl())
def test_outcomes_jsonl(work, data):
    expect_ok_or_one_line(read_outcomes, write(work, "o.jsonl", data))


@PARSE
@given(data=parquet_file)
def test_outcomes_parquet(work, data):
    expect_ok_or_one_line(read_outcomes, write(work, "o.parquet", data))


@PARSE
@given(data=exploration_jsonl())
def test_exploration(work, data):
    expect_ok_or_one_line(read_exploration, write(work, "inference_results.jsonl", data))


@PARSE
@given(files=llmrouter_files())
def test_llmrouter(work, files):
    folder = work / "llmrouter"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, data in files.items():
        write(folder, name, data)
    expect_ok_or_one_line(read_llmrouter, folder)


@PARSE
@given(data=canonical_doc())
def test_canonical_reader(work, data):
    path = write(work, "hb.json", data)
    expect_ok_or_one_line(lambda: parse_canonical(load_json_document(path), str(path)))


# --- imports into a database: all or nothing -----------------------------------------------------------------------

def counts(url: str) -> tuple[int, ...]:
    with session(url) as s:
        return tuple(s.exec(select(func.count()).select_from(m)).one()
                     for m in (Handbook, HandbookVersion, Query, Trajectory))


def _store(url: str, fn, *args) -> bool:
    with session(url) as s:
        fn(s, *args)
        s.commit()
    return True


@st.composite
def any_import(draw):
    kind = draw(st.sampled_from(["csv", "jsonl", "parquet", "exploration", "llmrouter", "handbook"]))
    data = {"csv": outcome_csv, "jsonl": outcome_jsonl, "exploration": exploration_jsonl,
            "llmrouter": llmrouter_files, "handbook": canonical_doc}.get(kind)
    return kind, draw(parquet_file if kind == "parquet" else data()), draw(st.sampled_from(["h1", "h2"]))


@STORE
@given(case=any_import())
def test_failed_imports_leave_the_database_unchanged(db_url, work, case):
    kind, data, handbook = case
    if kind == "llmrouter":
        target = work / f"llmrouter-{len(list(work.iterdir()))}"
        target.mkdir()
        for name, blob in data.items():
            write(target, name, blob)
        fn = import_llmrouter
    else:
        name = {"csv": "o.csv", "jsonl": "o.jsonl", "parquet": "o.parquet", "exploration": "inference_results.jsonl",
                "handbook": "hb.json"}[kind]
        target = write(work, name, data)
        fn = {"handbook": import_handbook, "exploration": import_exploration}.get(kind, import_outcomes)
    before = counts(db_url)
    ok = expect_ok_or_one_line(_store, db_url, fn, target, handbook)
    after = counts(db_url)
    if ok:
        assert all(a >= b for a, b in zip(after, before))
    else:
        assert after == before
