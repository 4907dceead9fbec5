"""Benchmark suites: what to run, written once in YAML (or as a Python mapping).

.. code-block:: yaml

    name: quick
    seeds: [0]                  # one release per seed (randomized methods differ)
    repetitions: 1              # timing repeats of each (configuration, seed)
    time_limit: 60              # seconds per run, passed to the method; default 600
    grace: 5                    # extra seconds before a run still going is killed
    setup_limit: 1800           # seconds to load the instance, and again to verify
    memory_limit: 4GB           # address-space limit of each run's process
    jobs: 1                     # runs at a time
    out: results/quick          # output directory, relative to the working directory
    instances:
      - dataset: adult          # fa.load(...); options: {variant: full}
      - csv: data/patients.csv  # as in a job file: id_column, schema, ...
        name: patients
      - synthetic: {n_rows: [1000, 100000], n_qi: 5, seed: 0}   # lists are grids
    requirements:               # requirement sets; list values are grids
      - name: k
        set:
          - k_anonymity: {k: [5, 10, 50]}
      - set: [{k_anonymity: 5}, {l_diversity: 2}]
        columns: {sweep: k+l, sweep_x: 5}   # extra columns of these runs' results rows
    algorithms:
      - method: mondrian        # any name in fairanon.METHODS, or "module:function"
        params: {cut_rule: [median, balanced]}   # grid
        fixed: {}               # options passed as they are
        skip_missing: false     # true: leave out silently when the method does not exist
    metrics:
      mre: false                # median relative error of count queries (slower)
      bound: false              # per-record lower bounds on NCP and LM, and the gaps
      vectors: auto             # per-tuple property vectors: true, false, or auto (≤ 1 M rows)
      utility: auto             # utility.* columns (fa.utility's distributions): true, false, auto
      classifier: null          # with logistic, tree or forest: also its classification utility
      numeric_loss: width
      suppression: as_class     # suppressed records: as_class, as_population or exclude
      fairness:                 # see fairanon.bench.vectors
        measure: elift          # alpha-protection per record; null: none
        diversity: auto         # every diversity constraint of the suite, or a list
    compare:                    # see fairanon.bench.compare.CompareConfig
      properties: [size, risk, ldist, loss, util_paper, alpha_ER, div_share]
      by: instance              # or requirements: compare the releases of one requirement set
      unit: tuple               # or group: diversity constraints compared per group
      multi:
        - {procedure: wtd, properties: [size, util_paper], weights: [0.5, 0.5]}

Every combination instance × requirement set × algorithm × parameters × seed ×
repetition is one **run**, executed by :mod:`fairanon.bench.runner` in a fresh process.
When only some combinations make sense, list ``experiments``, each with its own
``instances``, ``requirements`` and ``algorithms`` (a missing one is taken from the top
level); the other settings are shared:

.. code-block:: yaml

    experiments:
      - name: k sweep
        instances: [{dataset: adult}]
        requirements: [{k_anonymity: {k: [5, 10]}}]
        algorithms: [mondrian]
      - name: t sweep
        instances: [{dataset: german}]
        requirements: [{t_closeness: {t: [0.1, 0.2]}}]
        algorithms: [dmondrian]

Relative paths are read from the suite file's directory.

A requirement set's ``columns`` are copied into its runs' results rows. Runs with a
``sweep`` column are drawn by the report as the sweep's figures: time, stars and
discernibility against ``sweep_x``, one series per algorithm (DIVA's Figures 4-5).
"""

from .sections import parse_memory, resolve_method
from .suite import RunSpec, Suite, load_suite

__all__ = ["RunSpec", "Suite", "load_suite", "parse_memory", "resolve_method"]
