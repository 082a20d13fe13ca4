"""template.yaml as CloudFormation reads it: translated by SAM's own translator.

The translator (aws-sam-translator) is the one the SAM CLI in .venv-sam runs, in
that venv: its pin of pydantic (~=2.13) conflicts with the runtime's (2.14), so it
cannot live in the dev venv. `make test` installs .venv-sam first (`make sam-install`).

    translate(template) -> the CloudFormation template, as `sam deploy` would send it
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"

# Runs in .venv-sam: template path in argv[1], the translated template on stdout.
_SCRIPT = """
import json, sys
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator
from samtranslator.yaml_helper import yaml_parse

with open(sys.argv[1], encoding="utf-8") as f:
    template = yaml_parse(f.read())
# As `sam package` does: local code folders become the S3 objects it would upload.
for resource in template.get("Resources", {}).values():
    props = resource.get("Properties") or {}
    for key in ("CodeUri", "ContentUri"):
        if isinstance(props.get(key), str) and not props[key].startswith("s3://"):
            props[key] = "s3://taisce-deploy/" + props[key].strip("/")
# AWS managed policies the SAM policy templates may name, without asking IAM.
managed = {"AWSLambdaBasicExecutionRole":
           "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
           "AWSXrayWriteOnlyAccess": "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
           "AWSLambdaSQSQueueExecutionRole":
           "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"}
out = Translator(managed, Parser()).translate(template, parameter_values={},
                                              get_managed_policy_map=lambda: managed)
json.dump(out, sys.stdout, default=str)
"""


def available() -> bool:
    return SAM_PYTHON.exists()


def translate(template: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        # The translator asks boto3 for a region (ARN partitions); never a real call.
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    done = subprocess.run(
        [str(SAM_PYTHON), "-c", _SCRIPT, str(template)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"SAM's translator refused {template}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)
