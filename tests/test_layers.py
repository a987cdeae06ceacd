"""The import layers of src/chainrule (docs/design.md, "Layers"): every import of chainrule's
own modules at the top of its file, none from a layer above its own, and no import circle.
Read from the sources with `ast`: nothing is imported."""

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# Bottom to top; a module may import from its own layer and those below. A module takes the
# layer of the longest name here that is it or a package holding it.
LAYERS = [
    # arrays and process state: which library, dtypes, array helpers, modes
    ["_backend", "_state", "_mode", "_typing", "_grad_fn_names", "_special_cases", "_batching"],
    # the graph: the one Node, Tensor, and the factories that record nodes (_factories: the
    # recording half of _tensor once it is split)
    ["_node", "_tensor", "_factories"],
    # the one table of derivative rules
    ["_rules"],
    # the public functions (an Array API namespace), NumPy's protocols, in-place writes
    [
        "_dtypes",
        "_namespace",
        "linalg",
        "fft",
        "special",
        "random",
        "serialization",
        "_interop",
        "_numpy_functions",
        "_numpy_composites",
        "_einsum",
        "_einops",
        "_lazy",
        "_inplace",
        "_torch_methods",
        "_torch_sorting",
        "_torch_functions",
        "_numpy_methods",
    ],  # fmt: skip
    # autograd: the engine, backward and grad, forward mode, Function, gradcheck
    ["autograd"],
    # Tensor's methods, bound to the functions of every layer below (backward included)
    ["_methods"],
    # built on the public API: transforms, compile, modules, optimizers
    ["func", "_compile", "nn", "optim", "optimize", "utils", "distributions"],
    # the package's face
    ["chainrule"],
]


def _modules() -> dict[str, tuple[pathlib.Path, bool]]:
    """Dotted name -> (path, whether it is a package's __init__)."""
    out = {}
    for path in sorted((SRC / "chainrule").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        out[".".join(parts)] = (path, package)
    return out


MODULES = _modules()


def _layer(module: str) -> int | None:
    parts = module.split(".")[1:]  # without "chainrule"
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        for i, names in enumerate(LAYERS):
            if name in names:
                return i
    return len(LAYERS) - 1 if module == "chainrule" else None


def _targets(module: str, package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The chainrule modules an import statement names (a module, or the module that holds
    an imported name)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "chainrule"]
    if node.level:
        base = module.split(".") if package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    if origin.split(".")[0] != "chainrule":
        return []
    return [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin for a in node.names]


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`: annotations only, never run."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for stmt in node.body:
                ids.update(id(n) for n in ast.walk(stmt))
    return ids


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """(target module, line, inside a function) for each import of a chainrule module that
    runs (not those under TYPE_CHECKING)."""
    path, package = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_only(tree)
    out = []
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
            for target in _targets(module, package, node):
                if target != module:
                    out.append((target, node.lineno, in_function))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return out


IMPORTS = {module: _imports(module) for module in MODULES}


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if _layer(m) is None]
    assert not missing, f"add these modules to LAYERS (and to docs/design.md): {missing}"


def test_no_import_of_chainrule_inside_a_function():
    hidden = [
        f"{module}:{line} imports {target}"
        for module, imports in IMPORTS.items()
        for target, line, in_function in imports
        if in_function
    ]
    assert not hidden, "imports of chainrule's own modules belong at the top:\n" + "\n".join(
        sorted(hidden)
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_from_a_layer_above(module):
    own = _layer(module)
    if own is None:
        pytest.skip("no layer (test_every_module_has_a_layer fails)")
    above = [
        f"line {line}: {target} (layer {_layer(target)} > {own})"
        for target, line, _ in IMPORTS[module]
        if (_layer(target) or 0) > own
    ]
    assert not above, f"{module} (layer {own}) imports from above:\n" + "\n".join(above)


# The comment that marks the one allowed lookup of a module in sys.modules: Tensor's
# __array_namespace__ returns the package itself (_interop._package).
ALLOWED_LOOKUP = "# layers: the package itself"


def _module_lookups(source: str) -> list[int]:
    """Lines of `source` that look a module up in `sys.modules[...]` (an import the import
    statements do not show), except those marked with ALLOWED_LOOKUP."""
    lines = source.splitlines()
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Subscript)
        and ast.unparse(node.value) == "sys.modules"
        and ALLOWED_LOOKUP not in lines[node.lineno - 1]
    ]


def test_no_module_looked_up_in_sys_modules():
    hidden = [
        f"{module}:{line}"
        for module, (path, _) in MODULES.items()
        for line in _module_lookups(path.read_text())
    ]
    assert not hidden, "import what a module needs at the top, not through sys.modules:\n" + (
        "\n".join(hidden)
    )


def test_the_lookup_check_finds_lookups():
    source = (
        "import sys\n"
        "def f():\n"
        "    return sys.modules[__package__].sum\n"
        "def g():\n"
        f"    return sys.modules['chainrule']  {ALLOWED_LOOKUP}\n"
        "x = sys.modules.get('scipy')\n"
    )
    assert _module_lookups(source) == [3]


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module of `graph` (module -> the
    modules it imports), by Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(graph[node]):
                work.append((node, i + 1))
                nxt = graph[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_circle():
    graph = {m: sorted({t for t, _, _ in IMPORTS[m] if t in MODULES}) for m in MODULES}
    assert _cycles(graph) == []


def test_the_circle_check_finds_circles():
    graph = {"a": ["b"], "b": ["c", "e"], "c": ["a"], "d": ["a"], "e": ["f"], "f": ["e"]}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["e", "f"]]
    assert _cycles({"a": ["b"], "b": [], "c": ["a", "b"]}) == []
