"""The layout the README draws is the code's, and no two modules import each other."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "trainer", "app")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in (REPO / package).rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of ours that `path` imports anywhere in the file (a function-level or
    TYPE_CHECKING import ties two modules as much as one at the top)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return (found & known) - {name}


def test_no_two_modules_import_each_other():
    modules = _modules()
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    circles = sorted({tuple(sorted((a, b))) for a, deps in graph.items() for b in deps if a in graph[b]})
    assert circles == []


def test_trainer_and_gui_keep_their_modules_in_folders():
    for folder in ("trainer", "app/gui"):
        top = [p.name for p in (REPO / folder).glob("*.py") if p.name != "__init__.py"]
        assert len(top) <= 8, (folder, top)


def test_the_readme_tree_names_every_package_folder():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tree = readme.split("## Layout\n", 1)[1].split("```", 2)[1]
    drawn, parents = set(), []
    for line in tree.splitlines():
        match = re.match(r"^([│ ]*(?:[├└]── )?)([a-z_]+)/", line)
        if not match:
            continue
        depth = len(match.group(1)) // 4
        parents[depth:] = [match.group(2)]
        drawn.add("/".join(parents))
    folders = {p.parent.relative_to(REPO).as_posix() for package in PACKAGES
               for p in (REPO / package).rglob("*.py") if "versions" not in p.parts}
    assert folders <= drawn, sorted(folders - drawn)
    assert {f for f in drawn if f.split("/")[0] in PACKAGES} <= folders, "the README draws a folder that is gone"
