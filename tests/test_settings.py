"""One source per setting: every HREG_ variable the product names is a field of ``Settings``, read
from the environment there only, and the README's configuration table is those fields' descriptions."""

from __future__ import annotations

import re
from pathlib import Path

from orchestration.settings import Settings, environment_variable, markdown_table

REPO_ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("orchestration", "assets", "resources", "sensors")
TABLE_START = "<!-- settings table: .venv/bin/python -m orchestration.settings --markdown -->\n"
TABLE_END = "<!-- end of settings table -->"
# The readings of the environment beside Settings: the database and alert webhook resources ask
# whether their secret came from the environment, so that the UI shows it as that variable, never its value.
ENVIRONMENT_READERS = {"resources/database.py", "resources/webhooks.py"}


def product_sources() -> dict[str, str]:
    return {
        str(path.relative_to(REPO_ROOT)): path.read_text(encoding="utf-8")
        for package in PRODUCT
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
    }


def test_the_readme_configuration_table_is_the_settings_descriptions():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert TABLE_START in readme and TABLE_END in readme
    table = readme.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    assert table == markdown_table(), (
        "the README's configuration table differs from the descriptions in orchestration/settings.py: "
        "paste the output of `.venv/bin/python -m orchestration.settings --markdown` between its markers"
    )


def test_the_table_names_each_setting_with_its_variable_and_default():
    rows = {row.split(" | ")[0].strip("| `"): row for row in markdown_table().splitlines()[2:]}
    assert len(rows) == len(Settings.model_fields)
    # Read off orchestration/settings.py by eye: an alias, a path, a flag, a float, a JSON object.
    assert rows["HREG_REGISTER"].startswith("| `HREG_REGISTER` | `sample` | ")
    assert rows["HREG_DATA_DIR"].startswith("| `HREG_DATA_DIR` | `.hreg` | ")
    assert rows["HREG_CLUSTER"].startswith("| `HREG_CLUSTER` | `0` | ")
    assert rows["HREG_DOCUMENT_FRESH_HOURS"].startswith("| `HREG_DOCUMENT_FRESH_HOURS` | `24` | ")
    assert rows["HREG_BATCH_SIZES"].startswith("| `HREG_BATCH_SIZES` | `{}` | ")
    assert rows["HREG_USER_ID"].startswith("| `HREG_USER_ID` | empty | The person the CLI acts for")


def test_every_hreg_variable_the_product_names_is_a_setting():
    settings = {environment_variable(name) for name in Settings.model_fields}
    named = {
        (variable, path)
        for path, source in product_sources().items()
        for variable in re.findall(r"\bHREG_[A-Z0-9_]*[A-Z0-9]\b", source)
    }
    assert len(named) > 30
    assert sorted(f"{variable} in {path}" for variable, path in named if variable not in settings) == []


def test_only_settings_read_hreg_variables_from_the_environment():
    reading = re.compile(r"""(?:environ(?:\.get)?\(|environ\[|getenv\(|envvar=)\s*["']HREG_""")
    readers = {path for path, source in product_sources().items() if reading.search(source)}
    assert readers == ENVIRONMENT_READERS
