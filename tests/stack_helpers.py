"""The Dagster stack of the daemon tests: a fresh database, the webserver and the daemon (and the
sample register when a module asks), started once per module and stopped after it.

A module requests ``dagster_stack`` and defines a module-scoped ``stack_options`` fixture saying
what its stack starts with and what goes into the database before and after the current code is
deployed (its migrations run, its instance config is written).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from database_helpers import fresh_database
from orchestration.settings import Settings
from orchestration.stacks import devstack
from process_helpers import free_port
from webserver_helpers import wait_for_code_location


def _nothing(_: object) -> None:
    pass


@dataclass(frozen=True)
class StackOptions:
    name: str
    sample_register: bool = False
    # The database as an older deploy left it: runs on the settings before the current code's migrations.
    before_deploy: Callable[[Settings], None] = _nothing
    # What the older deploy left in Dagster's instance: runs on the prepared stack before its processes start.
    after_deploy: Callable[[devstack.Stack], None] = _nothing


@pytest.fixture(scope="module")
def dagster_stack(stack_options: StackOptions, server_url, template_url, tmp_path_factory) -> Iterator[devstack.Stack]:
    """The module's stack, its code location loaded; HREG_* point at it for the module's tests
    (the CLI commands they invoke read them)."""
    data_dir = tmp_path_factory.mktemp(stack_options.name)
    log_dir = data_dir / "logs"
    with fresh_database(server_url) as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HREG_DATABASE_URL", url.render_as_string(hide_password=False))
        mp.setenv("HREG_DATA_DIR", str(data_dir))
        mp.setenv("HREG_WEBSERVER_PORT", str(free_port()))
        if stack_options.sample_register:
            mp.setenv("HREG_REGISTER", "sample")
            mp.setenv("HREG_SAMPLE_REGISTER_PORT", str(free_port()))
        settings = Settings()
        stack_options.before_deploy(settings)
        stack = devstack.prepare(settings)
        stack_options.after_deploy(stack)
        try:
            if stack_options.sample_register:
                devstack.start_sample_register(stack, log_dir)
            devstack.start_dagster(stack, log_dir=log_dir)
            wait_for_code_location(stack)
            yield stack
        finally:
            devstack.stop(stack)
            for log_file in sorted(log_dir.glob("*.log")):
                print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-3000:]}")
