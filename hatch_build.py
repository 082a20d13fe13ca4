"""hatchling's build hook for taisce-server (pyproject.toml): the SAM template goes into a
built wheel beside the functions, as taisce/local/stack/template.yaml, where `taisce serve`
finds it (taisce/local/routes.py). An editable install reads the checkout's own instead,
so nothing is copied for one."""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class TemplateHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"]["template.yaml"] = "taisce/local/stack/template.yaml"
