import pandas as pd
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.demo import build_demo
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile


def competence(url, name):
    with session(url) as s:
        v = load_version(s, name)
        frames = profile.load_frames(s, v)
        return v, frames, profile.competence(frames)


def test_demo_is_deterministic_and_rebuild_needs_force(tmp_path):
    hashes = []
    for i in range(2):
        url = f"sqlite:///{tmp_path / f'd{i}.db'}"
        with session(url) as s:
            build_demo(s)
            s.commit()
            hashes.append({n: load_version(s, n).content_hash for n in ("demo-qa", "demo-agents")})
    assert hashes[0] == hashes[1]
    with session(url) as s:
        again = build_demo(s)
        assert all("already present" in v for v in again.values())
        rebuilt = build_demo(s, force=True)
        s.commit()
        assert all("built v1" in v for v in rebuilt.values())
        assert load_version(s, "demo-qa").content_hash == hashes[0]["demo-qa"]


def test_demo_qa_shape(demo_db_url):
    v, frames, _ = competence(demo_db_url, "demo-qa")
    c = v.content
    assert v.synthetic and list(c.modes) == ["answer"] and len(c.agents) == 6
    categories = [k for k in c.skills.values() if k.parent_key is None]
    assert 6 <= len(categories) <= 8
    assert all(k.parent_key in c.skills for k in c.skills.values() if k.parent_key)
    with session(demo_db_url) as s:
        splits = pd.Series(s.exec(select(Query.split).where(Query.handbook_id == v.handbook_id)).all()).value_counts()
    assert splits.min() >= 200  # a few hundred queries per split


def test_planted_structure_is_in_the_evidence(demo_db_url):
    _, frames, comp = competence(demo_db_url, "demo-qa")
    mean = comp.set_index(["skill", "agent"])["mean"]
    # Merge: capitals and currencies are indistinguishable per agent (same true rates).
    gaps = (mean["answer.entities.capitals"] - mean["answer.entities.currencies"]).abs()
    assert gaps.max() < 0.2
    # Cheap as good: qwen ~ llama-70b on language.
    lang = mean["answer.language"]
    assert abs(lang["qwen2.5-7b-instruct"] - lang["llama3.1-70b-instruct"]) < 0.08
    # Split: word problems hide two groups with opposite rankings (percentages vs geometry).
    o = frames.outcomes.merge(frames.attributions, on=["query_id", "mode"])
    wp = o[o.skill == "answer.math.word_problems"]
    with session(demo_db_url) as s:
        texts = dict(s.exec(select(Query.id, Query.text)).all())
    is_percent = wp.query_id.map(texts).str.contains("percent")
    by_group = wp.groupby([is_percent, "agent"])["score"].mean()
    assert by_group[True]["qwen2.5-7b-instruct"] > by_group[True]["llama3.1-70b-instruct"] + 0.3
    assert by_group[False]["llama3.1-70b-instruct"] > by_group[False]["qwen2.5-7b-instruct"] + 0.3


def test_demo_agents_has_three_modes_with_paths(demo_db_url):
    v, frames, comp = competence(demo_db_url, "demo-agents")
    assert set(v.content.modes) == {"search", "code", "answer"}
    assert set(frames.outcomes.path.unique()) == {"search,answer", "search,code,answer"}
    assert {a.mode for a in v.content.agents.values()} == {"search", "code", "answer"}
    assert all(m.insights for m in v.content.modes.values())
