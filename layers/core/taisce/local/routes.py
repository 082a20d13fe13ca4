"""Routes read from template.yaml, as `sam local start-api` reads them."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


# libyaml's parser (PyYAML's wheels carry it) reads the template in a tenth of the pure
# Python parser's time, which every server start and many tests pay; the same answer.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TemplateLoader(_SafeLoader):
    """A safe loader that reads CloudFormation's short tags (!Ref, !GetAtt, ...) as
    plain mappings. Registered on this subclass only, never on the loader itself."""


def _cfn_tag(loader: Any, suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    name = suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}"
    return {name: value}


_TemplateLoader.add_multi_constructor("!", _cfn_tag)


# An installed wheel carries the template and the functions' code here (pyproject.toml).
PACKAGED_TEMPLATE = Path(__file__).resolve().parent / "stack" / "template.yaml"


def find_template(given: str | Path | None = None) -> Path:
    """The template to serve: the one given, else the installed package's own, else the
    nearest checkout's above the working folder, else the editable install's checkout."""
    if given:
        return Path(given)
    if PACKAGED_TEMPLATE.is_file():
        return PACKAGED_TEMPLATE
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "template.yaml").is_file() and (folder / "functions").is_dir():
            return folder / "template.yaml"
    # An editable install: layers/core/taisce/local/routes.py -> the repository root.
    return Path(__file__).resolve().parents[4] / "template.yaml"


def load_template(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        # _TemplateLoader is a safe loader's subclass: no arbitrary objects.
        return yaml.load(f, Loader=_TemplateLoader)  # nosec B506


@dataclass(frozen=True)
class Function:
    logical_id: str
    module: str
    attribute: str

    def load(self) -> Handler:
        return getattr(importlib.import_module(self.module), self.attribute)


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: Function
    authorized: bool
    pattern: re.Pattern[str] = field(compare=False)

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if method != self.method:
            return None
        m = self.pattern.fullmatch(path)
        return m.groupdict() if m else None


def _path_pattern(path: str) -> re.Pattern[str]:
    regex = ""
    for part in re.split(r"(\{[^}]+\})", path):
        if part.startswith("{") and part.endswith("+}"):
            regex += f"(?P<{part[1:-2]}>.+)"
        elif part.startswith("{"):
            regex += f"(?P<{part[1:-1]}>[^/]+)"
        else:
            regex += re.escape(part)
    return re.compile(regex)


@dataclass(frozen=True)
class Api:
    routes: list[Route]
    authorizer: Function | None


def _function(logical_id: str, props: dict[str, Any]) -> Function:
    code = str(props["CodeUri"]).strip("/").replace("/", ".")
    module, _, attribute = str(props["Handler"]).rpartition(".")
    return Function(logical_id, f"{code}.{module}", attribute)


def read_api(template_path: Path) -> Api:
    """Every HttpApi route in the template, and the function of its authorizer."""
    template = load_template(template_path)
    resources: dict[str, Any] = template.get("Resources", {})
    authorizer: Function | None = None
    for resource in resources.values():
        if resource.get("Type") != "AWS::Serverless::HttpApi":
            continue
        auth = resource.get("Properties", {}).get("Auth", {})
        default = auth.get("DefaultAuthorizer")
        if default:
            arn = auth["Authorizers"][default]["FunctionArn"]
            logical_id = arn["Fn::GetAtt"]
            logical_id = logical_id.split(".")[0] if isinstance(logical_id, str) else logical_id[0]
            authorizer = _function(logical_id, resources[logical_id]["Properties"])
    routes: list[Route] = []
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties", {})
        for event in props.get("Events", {}).values():
            if event.get("Type") != "HttpApi":
                continue
            ev = event.get("Properties", {})
            auth = ev.get("Auth", {}).get("Authorizer")
            routes.append(
                Route(
                    method=str(ev["Method"]).upper(),
                    path=str(ev["Path"]),
                    function=_function(logical_id, props),
                    authorized=auth != "NONE" and authorizer is not None,
                    pattern=_path_pattern(str(ev["Path"])),
                )
            )
    # The code folders (functions/...) are imported from the template's folder,
    # as SAM mounts each CodeUri.
    root = str(template_path.resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return Api(routes=routes, authorizer=authorizer)
