"""Data sets: the bundled UCI tables, the papers' worked examples and a Census-Income reader.

Every loader returns an :class:`~fairanon.instances.Instance` with a documented default
schema, and :func:`load` finds a loader by name in :data:`DATASETS` (as networkx keeps
strategies in a name table). Options change the roles (``qi=``, ``roles=``) without
touching the data.

Bundled data
------------
``fairanon/instances/data/`` holds gzip copies of three unchanged files of the UCI
Machine Learning Repository (licence: CC BY 4.0; cite the repository and the donors):

- ``adult.data.gz``, ``adult.test.gz``: Adult (Census Income), donated by Barry Becker
  and Ronny Kohavi. B. Becker, R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
  https://doi.org/10.24432/C5XW20
- ``german.data.gz``: Statlog (German Credit Data), donated by Hans Hofmann (University
  of Hamburg). H. Hofmann. Statlog (German Credit Data). UCI Machine Learning
  Repository, 1994. https://doi.org/10.24432/C5NC77

Census-Income (KDD) (T. Lane, R. Kohavi. UCI Machine Learning Repository, 2000.
https://doi.org/10.24432/C5N30T) is too large to bundle; :func:`load_census` reads a copy
the user provides.

The generalization hierarchies :data:`ADULT_HIERARCHIES` and :data:`GERMAN_HIERARCHIES`
are fairanon's own, written for these data sets; each is documented where it is defined.
The paper examples are typed in from the papers cited by their loaders.

Modules
-------
- :mod:`.adult`, :mod:`.german`: the bundled UCI tables, their schemas and hierarchies;
- :mod:`.census`: the Census-Income (KDD) reader;
- :mod:`.diva_example`, :mod:`.ruggieri_example`, :mod:`.dewri_example`: the worked
  examples of DIVA (Milani et al., EDBT 2021), Ruggieri (Trans. Data Privacy 2014) and
  Dewri et al. (EDBT 2009);
- :mod:`.ruggieri_setting`: German credit, Adult and Census-Income in the setting of
  Ruggieri's experiments (PND attributes, binary PD attribute);
- :mod:`.registry`: :data:`DATASETS` and :func:`load`;
- :mod:`.common`: what the loaders share (bundled files, record ids, role overrides).

Examples
--------
>>> inst = load("diva_table1")
>>> inst.n_rows, inst.schema.qi
(10, ('GEN', 'ETH', 'AGE', 'PRV', 'CTY'))
>>> sorted(DATASETS)[:3]
['adult', 'adult_full', 'census']
"""

from .adult import (
    ADULT_COLUMNS,
    ADULT_EDUCATION_ORDER,
    ADULT_HIERARCHIES,
    adult_table,
    load_adult,
    load_adult_full,
)
from .census import CENSUS_COLUMNS, census_table, load_census
from .common import RECORD_ID, digit_hierarchy
from .dewri_example import dewri_releases, load_dewri_t1
from .diva_example import DIVA_SIGMA, diva_table2, diva_table3, load_diva_table1
from .german import (
    GERMAN_CODEBOOK,
    GERMAN_COLUMNS,
    GERMAN_HIERARCHIES,
    GERMAN_QI,
    german_table,
    load_german,
)
from .registry import DATASETS, load
from .ruggieri_example import load_ruggieri_loan, ruggieri_fig3_release_table
from .ruggieri_setting import RUGGIERI_PD, RUGGIERI_PND, RUGGIERI_TABLE1, load_ruggieri

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_EDUCATION_ORDER",
    "ADULT_HIERARCHIES",
    "CENSUS_COLUMNS",
    "DATASETS",
    "DIVA_SIGMA",
    "GERMAN_CODEBOOK",
    "GERMAN_COLUMNS",
    "GERMAN_HIERARCHIES",
    "GERMAN_QI",
    "RECORD_ID",
    "RUGGIERI_PD",
    "RUGGIERI_PND",
    "RUGGIERI_TABLE1",
    "adult_table",
    "census_table",
    "dewri_releases",
    "digit_hierarchy",
    "diva_table2",
    "diva_table3",
    "german_table",
    "load",
    "load_adult",
    "load_adult_full",
    "load_census",
    "load_dewri_t1",
    "load_diva_table1",
    "load_german",
    "load_ruggieri",
    "load_ruggieri_loan",
    "ruggieri_fig3_release_table",
]
