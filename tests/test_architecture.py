"""The import direction of docs/architecture.md, read from the source with `ast`: the product never
reaches into the sample world except where `hreg sample-register` runs it, and the core in
orchestration/ is plain Python that never imports Dagster or the Dagster side."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("orchestration", "assets", "resources", "sensors")
DAGSTER_SIDE = ("dagster", "assets", "resources", "sensors")
# Where the sample world comes back in: the command that serves it imports it where it runs.
SAMPLE_WORLD_ENTRANCES = {("orchestration/cli/register.py", "sample_register")}
# The core modules that assemble Dagster: the code location from the Dagster side, the Celery
# app of dagster-celery that a worker host runs, and Dagster's instance (its config, and the
# storages that config names).
DAGSTER_ASSEMBLY = {
    "orchestration/definitions.py",
    "orchestration/assembly/celery_app.py",
    "orchestration/assembly/dagster_instance.py",
    "orchestration/assembly/dagster_storage.py",
}


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
