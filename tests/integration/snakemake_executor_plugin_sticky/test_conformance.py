"""Snakemake's own executor conformance tests (its bundled `simple` and `groups` workflows)."""

from typing import Optional

import pytest
from snakemake.common.tests import TestWorkflowsLocalStorageBase
from snakemake_interface_executor_plugins.settings import ExecutorSettingsBase

from snakemake_executor_plugin_sticky import ExecutorSettings

pytestmark = pytest.mark.integration


class TestStickyConformance(TestWorkflowsLocalStorageBase):
    __test__ = True

    def get_executor(self) -> str:
        return "sticky"

    def get_executor_settings(self) -> Optional[ExecutorSettingsBase]:
        return ExecutorSettings()
