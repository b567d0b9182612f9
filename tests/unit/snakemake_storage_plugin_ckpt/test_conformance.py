"""Snakemake's own storage plugin checks (``TestStorageBase``), for files and directories."""

from pathlib import Path
from typing import Optional

import pytest
from snakemake_interface_storage_plugins.settings import StorageProviderSettingsBase
from snakemake_interface_storage_plugins.tests import TestStorageBase

from snakemake_storage_plugin_ckpt import StorageProvider, StorageProviderSettings


class TestCkptStorage(TestStorageBase):
    __test__ = True
    retrieve_only = False
    store_only = False
    delete = True
    touch = True
    files_only = False  # directory() outputs are stored as tree records

    def get_query(self, tmp_path: Path) -> str:
        return "ckpt://conformance/data.txt"

    def get_query_not_existing(self, tmp_path: Path) -> str:
        return "ckpt://conformance/never-stored.txt"

    def get_storage_provider_cls(self) -> type[StorageProvider]:
        return StorageProvider

    @pytest.fixture(autouse=True)
    def _store_beside_the_local_prefix(self, tmp_path: Path) -> None:
        """A fresh store per test, apart from the local copies, so a retrieve really copies."""
        self.store_root = tmp_path / "store"

    def get_storage_provider_settings(self) -> Optional[StorageProviderSettingsBase]:
        return StorageProviderSettings(root=self.store_root)
