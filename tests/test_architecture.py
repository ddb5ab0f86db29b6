"""The house rules of docs/architecture.md, read from the source with `ast`: the product never
reaches into the sample world except where `hreg sample-register` runs it, the core in
orchestration/ is plain Python that never imports Dagster or the Dagster side, Dagster's internals
are reached through one module only, and the Dagster side is made of short functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("orchestration", "assets", "resources", "sensors")
DAGSTER_SIDE = ("dagster", "assets", "resources", "sensors")
# Where the sample world comes back in: the command that serves it imports it where it runs.
SAMPLE_WORLD_ENTRANCES = {("orchestration/cli/register.py", "sample_register")}
# The core modules that assemble Dagster: the code location from the Dagster side, the Celery
# app of dagster-celery that a worker host runs, Dagster's instance (its config), what we take
# from Dagster's internals (the storages that config names among them), the retention of its runs,
# and the metrics endpoint's reading of Dagster's run storage.
DAGSTER_ASSEMBLY = {
    "orchestration/definitions.py",
    "orchestration/assembly/celery_app.py",
    "orchestration/assembly/dagster_instance.py",
    "orchestration/assembly/dagster_internals.py",
    "orchestration/assembly/run_metrics.py",
    "orchestration/assembly/dagster_retention.py",
}
# The one module that may reach into Dagster's internals, and the two tests that name what it
# takes (the pins of those internals, and this test, which looks for them).
DAGSTER_INTERNALS = "orchestration/assembly/dagster_internals.py"
NAMING_DAGSTER_INTERNALS = {"tests/test_dagster_internals.py", "tests/test_architecture.py"}
# The Dagster side, whose functions stay short enough to read at once.
MAX_FUNCTION_LINES = 60


def imports(path: Path) -> list[tuple[str, str | None]]:
    """Every module ``path`` imports, anywhere in it, with the top-level function it does so in
    (None at module level)."""
    found = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inside = function
            if function is None and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inside = child.name
            if isinstance(child, ast.Import):
                found.extend((alias.name, inside) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                assert child.level == 0, f"{path}: relative import"
                found.append((child.module, inside))
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), None)
    return found


def modules(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (REPO_ROOT / package).rglob("*.py"))


def top_level(module: str) -> str:
    """The package a module belongs to; Dagster's integrations (dagster_celery, …) are Dagster."""
    package = module.split(".")[0]
    return "dagster" if package.startswith("dagster_") else package


# What starts a long-running process in a test module: the shared Dagster stack fixture, the
# cluster's helpers or layout, Dagster's daemon and webserver started by hand, `scripts/dev.sh`
# or `hreg dev`.
STACK_HELPERS = {"stack_helpers", "cluster_helpers", "orchestration.stacks.cluster"}
STACK_STARTERS = {"start_dagster"}
STACK_COMMANDS = {"./scripts/dev.sh", "scripts/dev.sh"}


def starts_a_stack(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in STACK_HELPERS:
            return True
        if isinstance(node, ast.Import) and any(alias.name in STACK_HELPERS for alias in node.names):
            return True
        if isinstance(node, ast.Attribute | ast.Name) and (
            getattr(node, "attr", None) or getattr(node, "id", None)
        ) in (STACK_STARTERS):
            return True
        if isinstance(node, ast.Constant) and node.value in STACK_COMMANDS:
            return True
        # ["…/hreg", "dev", …]: a command line that runs `hreg dev`.
        if isinstance(node, ast.List | ast.Tuple) and any(
            isinstance(element, ast.Constant) and element.value == "dev" for element in node.elts[1:2]
        ):
            return True
    return False


def marked_slow(tree: ast.Module) -> bool:
    """Whether the module sets ``pytestmark`` to ``pytest.mark.slow`` (alone or in a list)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return any(
                isinstance(mark, ast.Attribute)
                and mark.attr == "slow"
                and isinstance(mark.value, ast.Attribute)
                and mark.value.attr == "mark"
                for mark in ast.walk(node.value)
            )
    return False


def test_every_test_module_that_starts_a_stack_is_marked_slow():
    """`./scripts/test.sh -m "not slow"` is the quick tier: no daemon, webserver, cluster or dev stack."""
    trees = {
        path.stem: ast.parse(path.read_text(encoding="utf-8"))
        for path in (REPO_ROOT / "tests").glob("test_*.py")
        if path.stem != Path(__file__).stem  # this module names the signs it looks for
    }
    starting = {name for name, tree in trees.items() if starts_a_stack(tree)}
    assert sorted(name for name in starting if not marked_slow(trees[name])) == []
    # Each sign is seen where it is: the shared stack fixture, the cluster's helpers, Dagster's
    # processes started by hand, `scripts/dev.sh` and `hreg dev`.
    assert starting >= {
        "test_e2e_daemon",
        "test_cluster",
        "test_webserver_without_database",
        "test_readme_commands",
        "test_interrupt_signals",
    }


def test_the_product_imports_the_sample_world_only_in_the_command_that_serves_it():
    entrances, strays = set(), []
    for path in modules(*PRODUCT):
        name = str(path.relative_to(REPO_ROOT))
        for module, function in imports(path):
            if top_level(module) != "sample_register":
                continue
            if (name, function) in SAMPLE_WORLD_ENTRANCES:
                entrances.add((name, function))
            else:
                strays.append(f"{name} ({function or 'module level'}) imports {module}")
    assert strays == []
    # The scan sees imports inside functions: the entrance is found where it is.
    assert entrances == SAMPLE_WORLD_ENTRANCES


def test_the_core_never_imports_dagster_or_the_dagster_side():
    strays = [
        f"{path.relative_to(REPO_ROOT)} imports {module}"
        for path in modules("orchestration")
        if str(path.relative_to(REPO_ROOT)) not in DAGSTER_ASSEMBLY
        for module, _function in imports(path)
        if top_level(module) in DAGSTER_SIDE
    ]
    assert strays == []
    definitions = {top_level(module) for module, _ in imports(REPO_ROOT / "orchestration/definitions.py")}
    assert definitions >= set(DAGSTER_SIDE)


def test_neither_the_product_nor_the_sample_world_imports_tests_or_benchmarks():
    # The tests import their helper modules by name (queue_helpers, …).
    test_modules = {"tests", "bench"} | {path.stem for path in (REPO_ROOT / "tests").glob("*.py")}
    strays = [
        f"{path.relative_to(REPO_ROOT)} imports {module}"
        for path in modules(*PRODUCT, "sample_register")
        for module, _function in imports(path)
        if top_level(module) in test_modules
    ]
    assert strays == []


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def dagster_names(tree: ast.Module) -> set[str]:
    """The names a module binds to Dagster's modules and what it imports from them."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(
                (alias.asname or alias.name).split(".")[0] for alias in node.names if top_level(alias.name) == "dagster"
            )
        elif isinstance(node, ast.ImportFrom) and top_level(node.module) == "dagster":
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def dagster_internals_used(path: Path) -> list[str]:
    """What ``path`` takes from Dagster's internals: imports of Dagster's private modules, private
    attributes of Dagster's objects, private methods of a class derived from Dagster's, and
    strings that name a private module (an instance config's class path)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    dagster = dagster_names(tree)
    found = []
    for node in ast.walk(tree):
        line = f"{path.relative_to(REPO_ROOT)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
            found.extend(
                f"{line} imports {module}"
                for module in modules
                if top_level(module) == "dagster" and any(is_private(part) for part in module.split("."))
            )
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and root_name(node.value) in dagster:
            found.append(f"{line} uses {ast.unparse(node)}")
        elif isinstance(node, ast.ClassDef) and any(root_name(base) in dagster for base in node.bases):
            found.extend(
                f"{line} overrides {node.name}.{member}"
                for statement in node.body
                for member in defined_names(statement)
                if is_private(member)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.extend(f"{line} names {name}" for name in re.findall(r"dagster\._[\w.]*", node.value))
    return found


def defined_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement.name]
    if isinstance(statement, ast.Assign):
        return [target.id for target in statement.targets if isinstance(target, ast.Name)]
    return []


def test_dagster_internals_are_used_in_one_module_only():
    everywhere = modules(*PRODUCT, "sample_register", "bench", "tests")
    used = {str(path.relative_to(REPO_ROOT)): dagster_internals_used(path) for path in everywhere}
    allowed = {DAGSTER_INTERNALS, *NAMING_DAGSTER_INTERNALS}
    assert [use for name, uses in used.items() if name not in allowed for use in uses] == []
    # The scan sees what that module takes (private modules, private overrides): it would see it elsewhere.
    kinds = {use.split(" ")[1] for use in used[DAGSTER_INTERNALS]}
    assert kinds >= {"imports", "uses", "overrides"}, used[DAGSTER_INTERNALS]


def function_lengths(path: Path) -> list[tuple[str, int]]:
    """Every function in ``path`` (nested ones too), by its qualified name, with its lines from
    its first decorator to its last line."""
    lengths = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}."
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(decorator.lineno for decorator in child.decorator_list)])
                lengths.append((f"{prefix}{child.name}", child.end_lineno - first + 1))
            visit(child, name)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "")
    return lengths


def test_the_dagster_side_has_no_function_over_60_lines():
    measured = {
        f"{path.relative_to(REPO_ROOT)}: {function} ({length} lines)": length
        for path in modules("assets", "sensors", "resources")
        for function, length in function_lengths(path)
    }
    assert [function for function, length in measured.items() if length > MAX_FUNCTION_LINES] == []
    # The measure counts what it should: the Dagster side has functions of some length.
    assert max(measured.values()) > MAX_FUNCTION_LINES // 2


# The one module that names the job types; everywhere else a job type is its spec.
JOB_TYPE_SPECS = "orchestration/jobs/specs.py"


def named_job_types(path: Path, names: set[str]) -> list[str]:
    """The job types ``path`` names: a string that is a type's name, or SQL in Python that quotes one."""
    return [
        f"{path.relative_to(REPO_ROOT)}:{node.lineno} names {node.value!r}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value in names or any(f"'{name}'" in node.value for name in names))
    ]


def test_only_the_specs_name_a_job_type():
    from orchestration.jobs.specs import JOB_TYPES

    names = {spec.name for spec in JOB_TYPES}
    named = {str(path.relative_to(REPO_ROOT)): named_job_types(path, names) for path in modules(*PRODUCT)}
    assert [stray for path, found in named.items() if path != JOB_TYPE_SPECS for stray in found] == []
    # The scan finds the names where they are.
    assert len(named[JOB_TYPE_SPECS]) == len(names)
