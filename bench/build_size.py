"""Sizes of what `sam build` made, against Lambda's limit, printed as a table.

Lambda allows 262,144,000 bytes (250 MiB) unzipped for a function and all its layers.
Every function here uses the one core layer, so each function's total is its own code
plus the layer. The zipped sizes are what `sam deploy` uploads.

    .venv/bin/python -m bench.build_size [.aws-sam/build]
"""

from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path

LIMIT = 262_144_000
LAYER = "CoreLayer"


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


def main(argv: list[str] | None = None) -> None:
    build = Path((argv or sys.argv[1:] or [".aws-sam/build"])[0])
    if not (build / LAYER).is_dir():
        sys.exit(f"no {LAYER} in {build}: run `make sam` first")
    layer_bytes, layer_files = unzipped(build / LAYER)
    mb = 1024 * 1024
    print(f"build: {build}; limit {LIMIT:,} bytes unzipped (function + layers)")
    print()
    print("| artifact | files | unzipped MB | zipped MB | with the layer, % of limit |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| {LAYER} | {layer_files:,} | {layer_bytes / mb:.1f} | "
        f"{zipped(build / LAYER) / mb:.1f} | {100 * layer_bytes / LIMIT:.1f}% |"
    )
    for folder in sorted(p for p in build.iterdir() if p.is_dir() and p.name != LAYER):
        size, files = unzipped(folder)
        print(
            f"| {folder.name} | {files} | {size / mb:.3f} | {zipped(folder) / mb:.3f} | "
            f"{100 * (size + layer_bytes) / LIMIT:.1f}% |"
        )
    biggest = sorted(
        ((unzipped(p)[0], p.name) for p in (build / LAYER / "python").iterdir() if p.is_dir()),
        reverse=True,
    )[:8]
    print()
    print(
        "largest packages in the layer (MB): " + ", ".join(f"{n} {s / mb:.1f}" for s, n in biggest)
    )


if __name__ == "__main__":
    main()
