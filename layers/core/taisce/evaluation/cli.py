"""`taisce bench quality [FILE]`: the retrieval-quality benchmark on the command line,
and `taisce bench convert-locomo IN OUT`: LoCoMo's published file in its dataset format.

`taisce.cli` calls `add_bench_parser(subparsers)`; `main(argv)` here runs the same
parser alone (`python -m taisce.evaluation bench quality FILE ...`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .dataset import SPEAKER_MODES


def _budgets(text: str) -> list[int]:
    try:
        budgets = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not budgets or min(budgets) < 1:
        raise argparse.ArgumentTypeError("budgets must be positive integers, e.g. 1000,4000")
    return budgets


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _taisce_default() -> str:
    """The embedding model Taisce uses when TAISCE_EMBEDDINGS is not set."""
    from taisce.settings import Settings

    return str(Settings.model_fields["embeddings"].default)


# What `taisce bench quality` runs with no FILE: the LoCoMo data set where a checkout
# has it beside the project (read at run time, never copied: its licence forbids it),
# then the synthetic set.
REAL_FOLDER = Path("../shared/bench/locomo")
REAL_FILES = ("locomo-dev.json", "locomo-dev-facts.json")
SYNTHETIC = Path("bench/data/dev.json")


def default_files(root: Path | None = None) -> tuple[list[Path], list[str]]:
    """The files of a run with no FILE, and a note for each one skipped."""
    base = root or Path.cwd()
    files: list[Path] = []
    notes: list[str] = []
    real = base / REAL_FOLDER
    if real.is_dir():
        for name in REAL_FILES:
            if (real / name).is_file():
                files.append(real / name)
            else:
                notes.append(f"skipped {real / name}: not found")
    else:
        notes.append(
            "skipped the LoCoMo data set: absent (docs/quality.md says how to download "
            "and convert it, then pass the file); running the synthetic set only"
        )
    files.append(base / SYNTHETIC)
    return files, notes


def cmd_bench_quality(args: argparse.Namespace) -> int:
    from .dataset import DatasetError, load_dataset
    from .figures import markdown
    from .harness import HarnessError
    from .quality import Options, run_quality

    if args.file:
        files = [Path(args.file)]
    else:
        files, notes = default_files()
        for note in notes:
            print(f"note: {note}", file=sys.stderr, flush=True)
    embeddings = args.embeddings or os.environ.get("TAISCE_EMBEDDINGS") or _taisce_default()
    reports: list[dict[str, Any]] = []
    for path in files:
        try:
            dataset = load_dataset(str(path))
        except (DatasetError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        options = Options(
            budgets=args.budgets,
            embeddings=embeddings,
            speaker=args.speaker,
            limit_conversations=args.limit_conversations,
            template=Path(args.template) if args.template else None,
        )
        try:
            report: dict[str, Any] = run_quality(dataset, options)
        except HarnessError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(markdown(report) + "\n", flush=True)
        reports.append(report)
    if args.json:
        out: Any = reports[0] if args.file else reports
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


def add_bench_parser(subparsers: Any) -> None:
    """Register `bench quality FILE [...]` on the `taisce` command's subparsers."""
    bench = subparsers.add_parser("bench", help="benchmarks that print figures")
    kinds = bench.add_subparsers(dest="bench", required=True)
    quality = kinds.add_parser(
        "quality",
        help="evidence recall of Taisce and of baselines on a conversation dataset",
        description=(
            "Store each conversation of FILE (the dataset format of docs/quality.md) in a "
            "fresh project "
            "of an in-process local gateway on a temporary data folder, recall each "
            "question at each budget, and print evidence recall by category, characters "
            "and latency, beside BM25, dense, hybrid and recency baselines over whole "
            "messages and BM25, dense and hybrid over the passages Taisce splits messages "
            "into, at the same budgets."
        ),
    )
    quality.add_argument(
        "file",
        nargs="?",
        help="the dataset, a JSON file in the format of docs/quality.md (default: the LoCoMo "
        "data set where present, skipped with a note where absent, then bench/data/dev.json)",
    )
    quality.add_argument(
        "--budgets",
        type=_budgets,
        default=[1_000, 4_000, 16_000],
        help="max_characters to recall at, comma separated (default 1000,4000,16000)",
    )
    quality.add_argument("--json", metavar="OUT", help="also write the figures to this file")
    quality.add_argument(
        "--embeddings",
        choices=("local", "multilingual", "none"),
        help="TAISCE_EMBEDDINGS for this run, and the embedder of the dense and hybrid "
        "baselines (default: $TAISCE_EMBEDDINGS, else Taisce's default); with none, Taisce "
        "runs step 1 only and those two baselines are skipped",
    )
    quality.add_argument(
        "--limit-conversations",
        type=_positive,
        metavar="N",
        help="only the first N conversations of the file",
    )
    quality.add_argument(
        "--speaker",
        choices=SPEAKER_MODES,
        default="both",
        help="how a message's speaker is stored: a content prefix, in the source, or both "
        "(default both)",
    )
    quality.add_argument("--template", help="SAM template with the routes (default: found)")
    quality.set_defaults(run=cmd_bench_quality)

    convert = kinds.add_parser(
        "convert-locomo",
        help="convert LoCoMo's published locomo10.json into the quality dataset format",
        description=(
            "Read IN, LoCoMo's published file (locomo10.json, a list of samples with "
            "conversation, qa and observation), and write OUT in the dataset format that "
            "`taisce bench quality` reads (docs/quality.md). Evidence ids that name no "
            "turn are dropped; each question's category is LoCoMo's, by name."
        ),
    )
    convert.add_argument("input", metavar="IN", help="locomo10.json as published")
    convert.add_argument("output", metavar="OUT", help="the dataset file to write")
    convert.add_argument(
        "--observations",
        action="store_true",
        help="also store LoCoMo's per-session observations as facts about the speakers "
        "(predicate 'noted', a value object, message_id = the turn they cite)",
    )
    convert.set_defaults(run=cmd_convert_locomo)


def cmd_convert_locomo(args: argparse.Namespace) -> int:
    from .locomo import LocomoError, convert_file

    try:
        counts = convert_file(Path(args.input), Path(args.output), args.observations)
    except (LocomoError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = ", ".join(f"{value:,} {name}" for name, value in counts.items())
    print(f"wrote {args.output}: {summary}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="taisce", description="Taisce benchmarks.")
    add_bench_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
