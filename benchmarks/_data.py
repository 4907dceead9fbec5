"""Where the benchmarks look for the optional data that is not bundled (UCI Census-Income (KDD)).

The folder is the script's own flag (``--census``, ``--census-dir``) when given, else the
environment variable ``FAIRANON_DATA``, else ``shared/datasets`` beside the repository
(``<repository>/../shared/datasets``, found from this file's location, not the working
directory).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable that overrides the default data folder.
DATA_ENV = "FAIRANON_DATA"

#: Help text of the scripts' data folder flags (argparse fills in the default).
DATA_HELP = (
    f"folder with census_income_{{train,test}}.csv.gz, skipped when absent (default: ${DATA_ENV}, "
    "else shared/datasets beside the repository: %(default)s)"
)


def data_dir() -> str:
    """The default data folder: ``$FAIRANON_DATA`` if set, else ``shared/datasets`` beside
    the repository that holds this file."""
    folder = os.environ.get(DATA_ENV)
    if folder:
        return folder
    return str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
