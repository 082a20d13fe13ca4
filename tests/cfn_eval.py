"""Just enough of CloudFormation to read a translated template as a deploy would:
intrinsic functions resolved for given parameter values, conditions evaluated, and
each function's IAM statements (inline and the template's managed policies) checked
against an action, a resource ARN and request context keys.

Physical names stand in for what CloudFormation would make: the table is
`taisce-table`, the queue `taisce-work.fifo`, roles `<LogicalId>`, in account
123456789012, region eu-west-1, partition aws.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

ACCOUNT = "123456789012"
REGION = "eu-west-1"
PARTITION = "aws"
NO_VALUE = object()


@dataclass
class Stack:
    template: dict[str, Any]
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def resources(self) -> dict[str, Any]:
        return self.template["Resources"]

    def parameter(self, name: str) -> str:
        if name in self.overrides:
            return self.overrides[name]
        return str(self.template["Parameters"][name].get("Default", ""))

    # -- names CloudFormation would give ------------------------------------------

    def physical(self, logical: str) -> str:
        kind = self.resources[logical]["Type"]
        if kind == "AWS::DynamoDB::Table":
            return "taisce-table"
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{self.queue_name(logical)}"
        if kind == "AWS::IAM::ManagedPolicy":
            return f"arn:{PARTITION}:iam::{ACCOUNT}:policy/{logical}"
        if kind == "AWS::OpenSearchServerless::Collection":
            return "collection-id"
        return logical

    def queue_name(self, logical: str) -> str:
        fifo = self.resources[logical]["Properties"].get("FifoQueue")
        return f"taisce-{logical}" + (".fifo" if fifo else "")

    def attribute(self, logical: str, name: str) -> str:
        kind = self.resources[logical]["Type"]
        if kind == "AWS::DynamoDB::Table" and name == "Arn":
            return f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{self.physical(logical)}"
        if kind == "AWS::SQS::Queue":
            if name == "Arn":
                return f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{self.queue_name(logical)}"
            if name == "QueueName":
                return self.queue_name(logical)
        if kind == "AWS::IAM::Role" and name == "Arn":
            return f"arn:{PARTITION}:iam::{ACCOUNT}:role/{logical}"
        if kind == "AWS::Lambda::Function" and name == "Arn":
            return f"arn:{PARTITION}:lambda:{REGION}:{ACCOUNT}:function:{logical}"
        if kind == "AWS::OpenSearchServerless::Collection":
            if name == "Arn":
                return f"arn:{PARTITION}:aoss:{REGION}:{ACCOUNT}:collection/collection-id"
            if name == "CollectionEndpoint":
                return f"https://collection-id.{REGION}.aoss.amazonaws.com"
        return f"{logical}.{name}"

    # -- intrinsics ---------------------------------------------------------------------

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template.get("Conditions", {})[name]))

    def exists(self, logical: str) -> bool:
        condition = self.resources[logical].get("Condition")
        return condition is None or self.condition(condition)

    def ref(self, name: str) -> Any:
        pseudo = {
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": PARTITION,
            "AWS::NoValue": NO_VALUE,
            "AWS::StackName": "taisce-dev",
        }
        if name in pseudo:
            return pseudo[name]
        if name in self.template.get("Parameters", {}):
            return self.parameter(name)
        return self.physical(name)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self.resolve(v) for v in value]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) != 1:
            return {k: r for k, v in value.items() if (r := self.resolve(v)) is not NO_VALUE}
        ((key, arg),) = value.items()
        if key == "Ref":
            return self.ref(arg)
        if key == "Fn::GetAtt":
            logical, name = arg if isinstance(arg, list) else arg.split(".", 1)
            return self.attribute(logical, name)
        if key == "Fn::If":
            name, yes, no = arg
            return self.resolve(yes if self.condition(name) else no)
        if key == "Fn::Equals":
            left, right = (self.resolve(a) for a in arg)
            return str(left) == str(right)
        if key == "Fn::Not":
            return not self.resolve(arg[0])
        if key == "Fn::And":
            return all(self.resolve(a) for a in arg)
        if key == "Fn::Or":
            return any(self.resolve(a) for a in arg)
        if key == "Condition":
            return self.condition(arg)
        if key == "Fn::Join":
            separator, parts = arg
            return separator.join(str(p) for p in self.resolve(parts))
        if key == "Fn::Sub":
            text, variables = (arg, {}) if isinstance(arg, str) else arg
            bound = {k: self.resolve(v) for k, v in variables.items()}

            def substitute(match: re.Match[str]) -> str:
                name = match.group(1)
                if name in bound:
                    return str(bound[name])
                if "." in name:
                    return str(self.attribute(*name.split(".", 1)))
                return str(self.ref(name))

            return re.sub(r"\$\{([^!}][^}]*)\}", substitute, text)
        return {key: self.resolve(arg)}

    # -- IAM ------------------------------------------------------------------------------

    def role_of(self, function: str) -> str:
        role = self.resources[function]["Properties"]["Role"]
        return role["Fn::GetAtt"][0]

    def statements(self, function: str) -> list[dict[str, Any]]:
        """Every statement of the function's role: inline, and the template's managed
        policies attached under the current conditions (AWS's own ones are not read)."""
        props = self.resources[self.role_of(function)]["Properties"]
        found: list[dict[str, Any]] = []
        for policy in props.get("Policies", []):
            found += _listed(self.resolve(policy["PolicyDocument"])["Statement"])
        for arn in self.resolve(props.get("ManagedPolicyArns", [])):
            logical = arn.rsplit("/", 1)[-1]
            if logical in self.resources and self.exists(logical):
                document = self.resources[logical]["Properties"]["PolicyDocument"]
                found += _listed(self.resolve(document)["Statement"])
        return found

    def managed_arns(self, function: str) -> list[str]:
        props = self.resources[self.role_of(function)]["Properties"]
        return [a for a in self.resolve(props.get("ManagedPolicyArns", [])) if isinstance(a, str)]

    def allows(
        self, function: str, action: str, resource: str, context: dict[str, list[str]] | None = None
    ) -> bool:
        return allowed(self.statements(function), action, resource, context or {})


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _matches(patterns: Any, value: str, *, case: bool) -> bool:
    for pattern in _listed(patterns):
        if case and fnmatch.fnmatchcase(value, str(pattern)):
            return True
        if not case and fnmatch.fnmatchcase(value.lower(), str(pattern).lower()):
            return True
    return False


def _condition_holds(condition: dict[str, Any], context: dict[str, list[str]]) -> bool:
    for operator, tests in condition.items():
        for key, expected in tests.items():
            values = context.get(key)
            if values is None:
                return False  # a condition on a key the request does not carry fails
            like = operator.endswith("StringLike")
            if operator.startswith("ForAllValues:"):
                ok = all(
                    _matches(expected, v, case=True) if like else v in _listed(expected)
                    for v in values
                )
            elif operator in ("StringEquals", "StringLike"):
                ok = any(
                    _matches(expected, v, case=True) if like else v in _listed(expected)
                    for v in values
                )
            else:
                raise AssertionError(f"condition operator {operator} is not understood here")
            if not ok:
                return False
    return True


def allowed(
    statements: list[dict[str, Any]], action: str, resource: str, context: dict[str, list[str]]
) -> bool:
    verdict = False
    for statement in statements:
        if not _matches(statement.get("Action", []), action, case=False):
            continue
        if not _matches(statement.get("Resource", []), resource, case=True):
            continue
        if not _condition_holds(statement.get("Condition", {}), context):
            continue
        if statement["Effect"] == "Deny":
            return False
        verdict = True
    return verdict
