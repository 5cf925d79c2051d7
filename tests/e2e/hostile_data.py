"""A small handbook whose every name and description carries Markdown and HTML that must show as plain text: a
Markdown image and link pointing off-origin, a bare URL, a script tag and an <img onerror> (the hostile-names e2e)."""

from __future__ import annotations

IMG = "![x](http://198.51.100.7/p.png)"
LINK = "[site](http://198.51.100.7/l)"
BARE = "http://198.51.100.7/b www.example.org"
SCRIPT = "<script>window.__pwned=1</script>"
TAG = '<img src="http://198.51.100.7/i.png" onerror="window.__pwned=1">'
EVERYTHING = f"{IMG} {LINK} {SCRIPT} {TAG} {BARE} **bold** :red[red]"

HANDBOOK = f"hb {IMG} {SCRIPT}"
MODE = f"mode {LINK} {TAG}"
AGENT_A = f"agent-a {LINK} {SCRIPT}"
AGENT_B = f"agent-b {IMG}"
TASKS = (f"skill {IMG} {TAG}", f"other {LINK} {BARE}")
QUERY = f"What is 2+2? {EVERYTHING}"
AUTHOR = f"rev {IMG}"
OFF_ORIGIN_HOST = "198.51.100.7"


def build(url: str) -> None:
    """Import the hostile handbook, describe its mode, skills and agents with markup, store a routed decision."""
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes
    from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content
    from skillorchestra_core.routing.engine import RouteOptions
    from skillorchestra_core.routing.service import route_query
    from skillorchestra_core.selection.service import select
    from skillorchestra_core.selection.sweep import SweepOptions

    rows, line = [], 0
    for q in range(12):
        for agent, score in ((AGENT_A, float(q % 3 != 0)), (AGENT_B, float(q % 2 == 0))):
            line += 1
            rows.append(OutcomeRow(line=line, query_id=f"q{q}", query=QUERY if q == 0 else f"{EVERYTHING} #{q}",
                                   agent=agent, score=score, mode=MODE, task=TASKS[q % 2],
                                   split="val" if q >= 8 else "train", cost_usd=0.001 if agent == AGENT_A else 0.0001,
                                   response=EVERYTHING))
    hints = {AGENT_A: AgentHint(model=f"openai/{IMG}", input_price_per_m=1.0, output_price_per_m=2.0,
                                tools=[SCRIPT]),
             AGENT_B: AgentHint(model=f"openai/{LINK}", input_price_per_m=0.1, output_price_per_m=0.2)}
    with session(url) as s:
        ingest_outcomes(s, HANDBOOK, rows, source_label=f"hostile {LINK}", skills_from_task=True, agent_hints=hints,
                        description=EVERYTHING, author=AUTHOR, message=f"import {TAG}", synthetic=True)
        s.commit()
    with session(url) as s:
        hb = get_handbook(s, HANDBOOK)
        parent, content = latest_content(s, hb.id)
        for mode in content.modes.values():
            mode.description = EVERYTHING
        for skill in content.skills.values():
            skill.description, skill.indicators, skill.examples = EVERYTHING, [IMG, SCRIPT], [QUERY]
        commit_version(s, hb, content, author=AUTHOR, message=f"describe {IMG}", parent=parent)
        s.commit()
    with session(url) as s:
        route_query(s, HANDBOOK, None, QUERY, RouteOptions(execute="replay"), actor=AUTHOR, store=True)
        s.commit()
    with session(url) as s:  # validation runs for the Pareto page
        select(s, HANDBOOK, SweepOptions(lambdas=(0.0, 0.5, 1.0)), actor=AUTHOR)
        s.commit()
    dispose_engines()


def skill_keys(url: str) -> list[str]:
    from skillorchestra_core.db import dispose_engines, session
    from skillorchestra_core.handbook.store import load_version

    with session(url) as s:
        keys = sorted(load_version(s, HANDBOOK).content.skills)
    dispose_engines()
    return keys
