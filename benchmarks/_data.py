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


#: ARX's Adult setting (``arx-adult/`` of the data folder): the eight quasi-identifiers,
#: each with ARX's own hierarchy file, occupation released as it is.
ARX_QIS = (
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "salary-class",
)

#: ARX's measured results in that setting (``arx-adult/`` README of the data folder,
#: ARX commit aacd487fb, 2-core machine, output tables re-checked by fairanon's
#: verifier): LM_avg and CPU seconds.
ARX_LOCAL_RECODING = {2: 0.0192, 5: 0.0357, 10: 0.0522}
ARX_LOCAL_RECODING_CPU = (1.0, 1.4)
ARX_FULLDOMAIN_5PCT = {2: 0.1264, 5: 0.1913, 10: 0.2455}
ARX_T_CLOSENESS = {"LM_avg": 0.6468, "suppressed": 8156, "cpu_s": 2.5}


def arx_adult(folder: str | None = None, occupation: str = "insensitive"):
    """ARX's Adult setting as an Instance, or None when ``arx-adult/`` is absent."""
    import pandas as pd

    import fairanon as fa

    root = Path(folder or data_dir()) / "arx-adult"
    if not (root / "adult.csv").exists():
        return None
    table = pd.read_csv(root / "adult.csv", sep=";", dtype=str)
    table.index.name = "id"
    attrs = [
        fa.Attribute(
            q, role="qi", hierarchy=fa.Hierarchy.from_arx_csv(str(root / f"adult_hierarchy_{q}.csv"))
        )
        for q in ARX_QIS
    ]
    attrs.append(fa.Attribute("occupation", role=occupation))
    return fa.Instance(table, fa.Schema(attrs), name="arx-adult")
