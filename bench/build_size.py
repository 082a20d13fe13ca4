"""Sizes of what `sam build` made, against Lambda's limit, printed as tables.

Lambda allows 262,144,000 bytes (250 MiB) unzipped for a function and all its layers.
Every function uses the core layer; with Embeddings=local they also get the local
model's layer (template.yaml, LocalModelLayer). So each function's total is its own
code plus the core layer (the default deploy), or plus both layers. The zipped sizes
are what `sam deploy` uploads. Then what each distribution costs in each layer, from
the files its `.dist-info/RECORD` lists (the taisce package itself is not a
distribution there: it is counted as "taisce (the package)").

    .venv/bin/python -m bench.build_size [.aws-sam/build]
"""

from __future__ import annotations

import csv
import io
import os
import sys
import zipfile
from pathlib import Path

LIMIT = 262_144_000
CORE = "CoreLayer"
LOCAL = "LocalModelLayer"
LAYERS = (CORE, LOCAL)
MB = 1024 * 1024


def unzipped(folder: Path) -> tuple[int, int]:
    total = files = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            total += os.path.getsize(os.path.join(directory, name))
            files += 1
    return total, files


def zipped(folder: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for directory, _, names in os.walk(folder):
            for name in names:
                path = Path(directory, name)
                archive.write(path, path.relative_to(folder))
    return buffer.tell()


def by_distribution(layer: Path) -> list[tuple[int, str]]:
    """(bytes, distribution) for every distribution in the layer's python/ folder,
    and what no RECORD claims (the taisce package)."""
    root = layer / "python"
    claimed: set[Path] = set()
    sizes: list[tuple[int, str]] = []
    for info in sorted(root.glob("*.dist-info")):
        name = info.name.split("-")[0].replace("_", "-").lower()
        total = 0
        record = info / "RECORD"
        rows = csv.reader(record.read_text().splitlines()) if record.exists() else []
        for row in rows:
            path = (root / row[0]).resolve()
            # A module's bytecode, compiled after install (layers/core/Makefile), is
            # its distribution's too.
            compiled = path.parent.glob(f"__pycache__/{path.stem}.*.pyc")
            for owned in [path, *(compiled if path.suffix == ".py" else [])]:
                if owned.is_file() and owned not in claimed:
                    claimed.add(owned)
                    total += owned.stat().st_size
        sizes.append((total, name))
    rest: dict[str, int] = {}
    for directory, _, names in os.walk(root):
        for file in names:
            path = Path(directory, file).resolve()
            if path not in claimed:
                top = Path(directory, file).relative_to(root).parts[0]
                label = "taisce (the package)" if top == "taisce" else f"{top} (no RECORD)"
                rest[label] = rest.get(label, 0) + path.stat().st_size
    sizes += [(size, label) for label, size in rest.items()]
    return sorted(sizes, reverse=True)


def main(argv: list[str] | None = None) -> None:
    build = Path((argv or sys.argv[1:] or [".aws-sam/build"])[0])
    if not (build / CORE).is_dir():
        sys.exit(f"no {CORE} in {build}: run `make sam` first")
    layers = {name: unzipped(build / name) for name in LAYERS if (build / name).is_dir()}
    core = layers[CORE][0]
    local = layers.get(LOCAL, (0, 0))[0]
    print(f"build: {build}; limit {LIMIT:,} bytes unzipped (function + layers)")
    print()
    print(
        "| artifact | files | unzipped MB | zipped MB "
        "| % of limit, default deploy | % of limit, Embeddings=local |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, (size, files) in layers.items():
        share = f"{100 * size / LIMIT:.1f}%" if name == CORE else "-"
        both = 100 * (core + local) / LIMIT
        print(
            f"| {name} | {files:,} | {size / MB:.1f} | {zipped(build / name) / MB:.1f} | "
            f"{share} | {both:.1f}% |"
        )
    for folder in sorted(p for p in build.iterdir() if p.is_dir() and p.name not in LAYERS):
        size, files = unzipped(folder)
        print(
            f"| {folder.name} | {files} | {size / MB:.3f} | {zipped(folder) / MB:.3f} | "
            f"{100 * (size + core) / LIMIT:.1f}% | {100 * (size + core + local) / LIMIT:.1f}% |"
        )
    for name in layers:
        print()
        print(f"{name}, by distribution (MB unzipped):")
        print()
        print("| distribution | MB |")
        print("|---|---:|")
        for size, dist in by_distribution(build / name):
            if size >= 0.05 * MB:
                print(f"| {dist} | {size / MB:.1f} |")
        small = sum(s for s, _ in by_distribution(build / name) if s < 0.05 * MB)
        print(f"| (the rest, each under 0.05) | {small / MB:.1f} |")


if __name__ == "__main__":
    main()
