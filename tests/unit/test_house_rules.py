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


APP_ROOT = CORE.parent


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_every_registered_page_is_in_pages_and_runs_inside_the_app_shell():
    # Streamlit's legacy lookup for a `pages/` folder runs a page file alone on a new server's first deep link: each
    # page's first statement after its imports hands over to app.py (see pages/components/shell.py).
    paths = [node.args[0].value for node in ast.walk(ast.parse((APP_ROOT / "app.py").read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page"]
    assert len(paths) >= 5 and all(p.startswith("pages/") and (APP_ROOT / p).is_file() for p in paths), paths
    assert sorted(paths) == sorted(str(p.relative_to(APP_ROOT)) for p in (APP_ROOT / "pages").glob("*.py"))
    for path in paths:
        body = [n for n in ast.parse((APP_ROOT / path).read_text()).body
                if not isinstance(n, (ast.Import, ast.ImportFrom))
                and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        first = body[0]
        assert isinstance(first, ast.Expr) and ast.unparse(first) == "ensure_app_shell()", (path, ast.unparse(first))


def test_app_uses_only_public_streamlit_modules():
    offenders = [f"{p.relative_to(APP_ROOT)}: {m}"
                 for p in [APP_ROOT / "app.py", *sorted((APP_ROOT / "pages").rglob("*.py"))]
                 for m in _imported_modules(p)
                 if m.startswith("streamlit.") and m.split(".")[1] in ("runtime", "web", "elements", "delta_generator")
                 or m == "runpy"]
    assert offenders == []


def test_the_browser_benchmarks_time_every_registered_page():
    """The load budget covers every page: each url_path registered in app.py is visited by the draw benchmark."""
    url_paths = [kw.value.value for node in ast.walk(ast.parse((APP_ROOT / "app.py").read_text()))
                 if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page"
                 for kw in node.keywords if kw.arg == "url_path"]
    bench = (APP_ROOT / "tests" / "bench" / "test_bench_page_draw.py").read_text()
    assert len(url_paths) >= 8
    assert [p for p in url_paths if f'"/{p}?' not in bench] == []
    assert '"/?handbook=' in bench  # the default page (no url_path)
