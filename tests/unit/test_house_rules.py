import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "skillorchestra_core"


def test_core_never_imports_streamlit_in_source():
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
                offenders.append(str(path.relative_to(CORE)))
    assert offenders == []


def test_importing_every_core_module_loads_neither_streamlit_nor_litellm():
    modules = sorted(
        ".".join(p.relative_to(CORE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE.rglob("*.py")
    )
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print(sorted(k for k in ('streamlit', 'litellm') if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
