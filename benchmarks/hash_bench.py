"""rankmeter's hand-written NumPy hashing against pyarrow's own C++ hash kernels (issue 10).

Issue 10 asks to "measure pyarrow's own C++ hash kernels (`pc.index_in`, `dictionary_encode`,
Acero's hash join, multi-threaded) against the hand-written NumPy hashing before keeping
either". This script parses one generated run (and its qrels) once with pyarrow's CSV reader,
with the options rankmeter's TREC reader uses, then times four jobs, each done rankmeter's way
and one or more Arrow ways, in one process (median of ``--repeat`` passes, the ways of a job
taking turns within a pass; wall and CPU, ``time.process_time``, which counts every thread):

1. doc ids to keys: ``string_hashes`` (what ``Run.from_columns`` does: a 64-bit key per row,
   no vocabulary) vs ``pc.dictionary_encode`` and ``pc.unique`` + ``pc.index_in`` (dense codes);
2. grouping query ids (a run comes grouped by query): ``ids.intern_grouped`` vs
   ``pc.dictionary_encode`` and ``pc.run_end_encode``;
3. the join of the run's (query, doc) pairs with the judged ones: ``Qrels.pair_lookup`` +
   ``Run.find_pairs`` (on the doc id hashes made at construction) vs ``pc.index_in`` on a
   concatenated key (``pc.binary_join_element_wise``; built for both tables inside the timing)
   and Acero's hash join (``pa.Table.join``, inner and left outer, one thread and all);
4. the duplicate check (a doc twice in one query): ``csr.segments_repeat`` on those hashes (then
   the exact check when it finds a possible repeat) vs ``pa.Table.group_by([qid, docid])`` with a
   count, and ``pc.count_distinct`` of the concatenated key.

Before a time is reported, every Arrow way's answer is checked against rankmeter's: the same
partition of the rows (codes equal up to relabelling), the same matched (query, doc, grade)
triples, the same duplicate verdict (on the run as it is, and on a copy with one duplicate put
in). The concatenated key joins query and doc id with a space, which no TREC field can hold.

The section goes to stdout and between ``<!-- hash:start -->`` and ``<!-- hash:end -->`` in
benchmarks/RESULTS.md (replaced atomically; run.py keeps it when it rewrites the rest).

    python benchmarks/hash_bench.py --shape msmarco --scale 0.1 --repeat 3
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))

import generate  # noqa: E402
from run import (  # noqa: E402
    DEFAULT_OUT,
    HASH_END,
    HASH_START,
    fmt_ratio,
    fmt_seconds,
    git_state,
    log,
    table,
    write_section,
)

#: Joins query and doc id into one key: a TREC field never holds a space.
SEPARATOR = " "


@dataclass
class Way:
    """One way of doing a job: what it is called, the timed work, and how its answer is
    turned into something comparable with rankmeter's (outside the timing)."""

    label: str
    work: Callable[[], Any]
    answer: Callable[[Any], Any] = lambda value: value
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    result: Any = None

    def time(self) -> None:
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        value = self.work()
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)
        self.result = value

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


@dataclass
class Job:
    name: str
    ours: Way
    arrow: list[Way]
    #: Whether an Arrow way's answer is rankmeter's (both given as their ``answer``).
    same: Callable[[Any, Any], bool]
    agree: dict[str, bool] = field(default_factory=dict)
    #: rankmeter's answer (after :meth:`run`)
    expected: Any = None

    def run(self, repeat: int) -> None:
        ways = [self.ours, *self.arrow]
        for i in range(repeat):
            # The ways take turns, starting from a different one each pass (drift and warm
            # caches fall on all of them).
            for way in ways[i % len(ways) :] + ways[: i % len(ways)]:
                way.time()
        self.expected = self.ours.answer(self.ours.result)
        for way in self.arrow:
            self.agree[way.label] = self.same(self.expected, way.answer(way.result))
            way.result = None
        self.ours.result = None
        if not all(self.agree.values()):
            wrong = [label for label, ok in self.agree.items() if not ok]
            raise SystemExit(f"{self.name}: {', '.join(wrong)} disagree with rankmeter's answer")


def with_numpy_loops(job: Job, answer: Callable[[Any], Any] | None = None) -> Job:
    """The job with rankmeter's way timed twice, where the C extension is built: with the
    compiled loops (rankmeter's way, as installed) and with the NumPy ones they replace (as
    one more way, its answer, or ``answer(result)``, checked like Arrow's)."""
    from rankmeter.data import _compiled

    native = _compiled.NATIVE
    if native is None:
        job.ours.label += ", NumPy loops (the C extension is not built)"
        return job
    work = job.ours.work

    def numpy_loops() -> Any:
        _compiled.NATIVE = None
        try:
            return work()
        finally:
            _compiled.NATIVE = native

    label = f"{job.ours.label}{NUMPY_LOOPS}"
    job.arrow.insert(0, Way(label, numpy_loops, answer or job.ours.answer))
    job.ours.label += ", compiled"
    return job


# -- answers, compared ----------------------------------------------------------------------------
def numpy_of(array: Any) -> Any:
    """A NumPy copy of an Arrow array or chunked array (no nulls)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        parts = [c.to_numpy(zero_copy_only=False) for c in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0)
    return array.to_numpy(zero_copy_only=False)


def dictionary_codes(encoded: Any) -> Any:
    """The indices of a dictionary-encoded array or chunked array (``pc.dictionary_encode``
    gives a chunked array's chunks one dictionary; the partition check would catch it if not)."""
    import pyarrow as pa

    if isinstance(encoded, pa.ChunkedArray):
        return numpy_of(pa.chunked_array([c.indices for c in encoded.chunks]))
    return numpy_of(encoded.indices)


def same_partition(labels: Any, codes: Any) -> bool:
    """Whether two labellings of the same rows group them alike: ``codes`` are integer codes
    (dense or not), ``labels`` anything NumPy compares (codes, 64-bit hashes). Equal codes must
    carry equal labels, and distinct codes distinct labels."""
    import numpy as np

    labels, codes = np.asarray(labels), np.asarray(codes).astype(np.int64)
    if labels.shape != codes.shape:
        return False
    if len(codes) == 0:
        return True
    if codes.min() < 0:
        return False
    size = int(codes.max()) + 1
    label_of = np.empty(size, dtype=labels.dtype)
    label_of[codes] = labels
    used = np.zeros(size, dtype=bool)
    used[codes] = True
    one_label_per_code = bool(np.all(label_of[codes] == labels))
    distinct = len(np.unique(label_of[used])) == int(used.sum())
    return one_label_per_code and distinct


def same_triples(a: list[tuple[str, str, float]], b: list[tuple[str, str, float]]) -> bool:
    return sorted(a) == sorted(b)


def triples(table: Any) -> list[tuple[str, str, float]]:
    """(query, doc, grade) of each row of a joined table whose grade is there."""
    import pyarrow.compute as pc

    matched = table.filter(pc.is_valid(table.column("grade")))
    return list(
        zip(
            matched.column("qid").to_pylist(),
            matched.column("docid").to_pylist(),
            matched.column("grade").to_pylist(),
            strict=True,
        )
    )


# -- the jobs -------------------------------------------------------------------------------------
@dataclass
class Inputs:
    """The parsed columns (as rankmeter's reader gives them: chunked, one chunk per block) and
    the objects rankmeter builds from them."""

    run: Any  # pyarrow Table: qid, docid, score
    qrels: Any  # pyarrow Table: qid, docid, grade
    run_object: Any
    qrels_object: Any
    threads: int


def parse(w: generate.Workload) -> tuple[Any, Any]:
    import pyarrow.csv as csv

    from rankmeter.io import trec

    run = csv.read_csv(w.run, **trec.arrow_csv_options(trec.RUN_LAYOUT))
    qrels = csv.read_csv(w.qrels, **trec.arrow_csv_options(trec.QRELS_LAYOUT))
    return run, qrels


def intern_jobs(x: Inputs) -> list[Job]:
    """Jobs 1 and 2: a key per doc id, a code per query id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data import hashing, ids
    from rankmeter.data.origin import Origin

    docs, qids = x.run.column("docid"), x.run.column("qid")
    origin = Origin("<hash_bench>")

    def unique_index_in() -> Any:
        return pc.index_in(docs, value_set=pc.unique(docs))

    def run_ends() -> Any:
        encoded = pc.run_end_encode(qids.combine_chunks())
        values = encoded.values
        if pc.count_distinct(values).as_py() != len(values):
            return pc.dictionary_encode(qids)  # a query comes back: hash every row
        import numpy as np

        ends = encoded.run_ends.to_numpy()
        lengths = np.diff(ends, prepend=0)
        return np.repeat(np.arange(len(values), dtype=np.int64), lengths)

    def codes_of(value: Any) -> Any:
        if isinstance(value, tuple):  # intern_grouped: (codes, vocabulary)
            return value[0]
        if pa.types.is_dictionary(getattr(value, "type", None) or pa.null()):
            return dictionary_codes(value)
        return value

    return [
        Job(
            "1. doc ids to keys",
            Way("`string_hashes` (64-bit key per row)", lambda: hashing.string_hashes(docs)),
            [
                Way("`pc.dictionary_encode`", lambda: pc.dictionary_encode(docs), codes_of),
                Way("`pc.unique` + `pc.index_in`", unique_index_in, numpy_of),
            ],
            same_partition,
        ),
        Job(
            "2. group query ids",
            Way(
                "`ids.intern_grouped`",
                lambda: ids.intern_grouped(qids, origin, "query id"),
                codes_of,
            ),
            [
                Way("`pc.dictionary_encode`", lambda: pc.dictionary_encode(qids), codes_of),
                Way("`pc.run_end_encode` (+ `np.repeat`)", run_ends, codes_of),
            ],
            same_partition,
        ),
    ]


def join_job(x: Inputs) -> Job:
    """Job 3: which (query, doc) pairs of the run are judged, and their grades."""
    import numpy as np
    import pyarrow.compute as pc

    run, qrels = x.run_object, x.qrels_object

    def ours() -> Any:
        # What metrics._ranked.join does in a compact join, the lookup built anew every time
        # (it is built once per Qrels and then reused by every run joined with it).
        qrels._doc_lookup = None
        qrels._pair_lookup = None
        index = qrels.query_rows()
        run_to_qrels = np.fromiter(
            (index.get(q, -1) for q in run.segment_ids), dtype=np.int64, count=run.n_queries
        )
        pairs = qrels.pair_lookup()
        if not pairs.exact:
            raise SystemExit("two judgments share a pair key: the pair lookup cannot answer")
        return run.find_pairs(pairs, run_to_qrels)

    def our_triples(value: Any) -> list[tuple[str, str, float]]:
        found, rows = value
        segment = np.searchsorted(run.offsets, found, side="right") - 1
        return list(
            zip(
                [str(q) for q in run.segment_ids[segment]],
                run.doc_ids(found).to_pylist(),
                qrels.grades[rows].tolist(),
                strict=True,
            )
        )

    left = x.run.select(["qid", "docid"])
    right = x.qrels

    def index_in() -> Any:
        run_key = pc.binary_join_element_wise(left["qid"], left["docid"], SEPARATOR)
        judged_key = pc.binary_join_element_wise(right["qid"], right["docid"], SEPARATOR)
        return pc.index_in(run_key, value_set=judged_key)

    def index_in_triples(at: Any) -> list[tuple[str, str, float]]:
        import pyarrow as pa

        grades = pc.take(right["grade"], at)
        return triples(pa.table({"qid": left["qid"], "docid": left["docid"], "grade": grades}))

    def acero(kind: str, threads: bool) -> Way:
        label = f"Acero hash join, {kind}, {x.threads if threads else 1} thread{'s' * threads}"
        return Way(
            label,
            lambda: left.join(right, ["qid", "docid"], join_type=kind, use_threads=threads),
            triples,
        )

    return Job(
        "3. join run pairs to judged pairs",
        Way("`Qrels.pair_lookup` + `Run.find_pairs`", ours, our_triples),
        [
            Way("`pc.index_in` on a joined key (keys built)", index_in, index_in_triples),
            acero("inner", False),
            acero("inner", True),
            acero("left outer", False),
            acero("left outer", True),
        ],
        same_triples,
    )


def duplicate_job(x: Inputs, qids: Any, docs: Any, name: str) -> Job:
    """Job 4: whether a doc comes twice in one query, on these columns."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data import csr, hashing, ids
    from rankmeter.data import run as run_module
    from rankmeter.data.origin import Origin
    from rankmeter.errors import FormatError

    origin = Origin("<hash_bench>")
    # As Run.from_columns has them when it checks: query codes and doc id hashes (jobs 1, 2).
    q_codes, q_vocab = ids.intern_grouped(qids, origin, "query id")
    if np.any(q_codes[1:] < q_codes[:-1]):
        raise SystemExit("the run's queries are not grouped: the duplicate check expects them so")
    hashes = hashing.string_hashes(docs)
    one_docs = docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs
    rows = np.arange(len(q_codes), dtype=np.int64)

    def ours() -> bool:
        offsets = csr.offsets_from_sorted(q_codes, len(q_vocab))
        if not csr.segments_repeat(offsets, hashes):
            return False
        try:  # a possible repeat: the exact check (on strings) says whether it is one
            run_module._check_unique_pairs(q_codes, hashes, one_docs, rows, q_vocab, origin)
        except FormatError:
            return True
        return False

    pairs = pa.table({"qid": qids, "docid": docs})

    def group_by(threads: bool) -> Way:
        def work() -> bool:
            counts = pairs.group_by(["qid", "docid"], use_threads=threads).aggregate(
                [([], "count_all")]
            )
            return bool(pc.max(counts.column("count_all")).as_py() > 1)

        label = f"`Table.group_by([qid, docid])` count, {x.threads if threads else 1} thread"
        return Way(label + ("s" if threads else ""), work)

    def count_distinct() -> bool:
        key = pc.binary_join_element_wise(qids, docs, SEPARATOR)
        return bool(pc.count_distinct(key).as_py() < len(key))

    return Job(
        name,
        Way("`csr.segments_repeat` on the hashes", ours),
        [
            group_by(False),
            group_by(True),
            Way("`pc.count_distinct` of a joined key (key built)", count_distinct),
        ],
        lambda a, b: a == b,
    )


def with_a_duplicate(docs: Any) -> Any:
    """The doc ids with the second row's replaced by the first's (both in the first query)."""
    import numpy as np
    import pyarrow as pa

    take = np.arange(len(docs), dtype=np.int64)
    take[1] = 0
    return docs.take(pa.array(take))


# -- report ---------------------------------------------------------------------------------------
def cell(way: Way) -> str:
    return f"{fmt_seconds(way.median_wall)} / {fmt_seconds(way.median_cpu)}"


NUMPY_LOOPS = ", NumPy loops"


def arrow_ways(job: Job) -> list[Way]:
    """The job's Arrow ways (not rankmeter's own way timed with its NumPy loops)."""
    return [w for w in job.arrow if not w.label.endswith(NUMPY_LOOPS)]


def conclusion(job: Job) -> str:
    """Which way is faster for this job: rankmeter's or the fastest Arrow way; and what the
    compiled loops gain over the NumPy ones, where both were timed."""
    best = min(arrow_ways(job), key=lambda w: w.median_wall)
    ours = job.ours.median_wall
    name = job.name.split(". ", 1)[-1]
    numpy_way = [w for w in job.arrow if w.label.endswith(NUMPY_LOOPS)]
    if numpy_way:
        gain = (
            f" The compiled loops take {fmt_ratio(ours / numpy_way[0].median_wall)} the wall "
            f"time of the NumPy ones ({fmt_seconds(ours)} s vs "
            f"{fmt_seconds(numpy_way[0].median_wall)} s)."
        )
        return _faster(name, best, job, ours) + gain
    return _faster(name, best, job, ours)


def _faster(name: str, best: Way, job: Job, ours: float) -> str:
    times = f"{fmt_seconds(best.median_wall)} s vs {fmt_seconds(ours)} s"
    if best.median_wall < ours:
        return (
            f"{name}: Arrow is faster: {best.label} is {fmt_ratio(ours / best.median_wall)} "
            f"faster than {job.ours.label} ({times} wall)."
        )
    return (
        f"{name}: rankmeter's way is faster: the fastest Arrow way, {best.label}, "
        f"takes {fmt_ratio(best.median_wall / ours)} the wall time of {job.ours.label} "
        f"({times})."
    )


#: What each way must import in a fresh process, beyond NumPy and pyarrow's CSV reader (which
#: every way needs): timed as whole processes, since a CLI run pays it every time.
IMPORTS = {
    "pyarrow.compute": "import numpy, pyarrow, pyarrow.csv, pyarrow.compute",
    "pyarrow.acero (Table.join, group_by)": (
        "import numpy, pyarrow, pyarrow.csv, pyarrow.acero\n"
        "t = pyarrow.table({'k': ['a']}); t.join(t, 'k')"
    ),
}
BASE_IMPORT = "import numpy, pyarrow, pyarrow.csv"


def import_costs(repeat: int) -> dict[str, float]:
    """Seconds each import adds to a fresh process (median of ``repeat``, alternating)."""
    import subprocess
    import time

    walls: dict[str, list[float]] = {name: [] for name in ("base", *IMPORTS)}
    for _ in range(max(repeat, 3)):
        for name, code in (("base", BASE_IMPORT), *IMPORTS.items()):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            walls[name].append(time.perf_counter() - start)
    base = statistics.median(walls.pop("base"))
    return {name: statistics.median(values) - base for name, values in walls.items()}


def render(
    args: argparse.Namespace,
    command: str,
    w: generate.Workload,
    x: Inputs,
    jobs: list[Job],
    checked: Job,
) -> str:
    shape = generate.SHAPES[w.shape]
    queries = generate.n_queries(shape, w.scale)
    rows = []
    for job in jobs:
        for way in job.arrow:
            rows.append(
                [
                    job.name,
                    job.ours.label,
                    cell(job.ours),
                    way.label,
                    cell(way),
                    fmt_ratio(way.median_wall / job.ours.median_wall),
                    "yes" if job.agree[way.label] else "no",
                ]
            )
    header = [
        "job",
        "rankmeter's way",
        "rankmeter wall / CPU (s)",
        "Arrow way",
        "Arrow wall / CPU (s)",
        "Arrow ÷ rankmeter (wall)",
        "agree",
    ]
    by_name = {job.name.split(".", 1)[0]: job for job in jobs}
    ours_total = sum(by_name[n].ours.median_wall for n in ("1", "3", "4"))
    best = {n: min(w.median_wall for w in arrow_ways(by_name[n])) for n in ("3", "4")}
    arrow_total = best["3"] + best["4"]
    # rankmeter's hashes and duplicate check, with whichever join is faster.
    mixed = by_name["1"].ours.median_wall + by_name["4"].ours.median_wall
    mixed += min(best["3"], by_name["3"].ours.median_wall)
    verdict = "yes" if all(checked.agree.values()) else "no"
    out = [
        HASH_START,
        "## NumPy hashing vs Arrow's hash kernels (hash_bench.py)",
        "",
        f"Produced by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"rankmeter {args.source_state}; pyarrow {args.pyarrow}, NumPy {args.numpy}, "
        f"{x.threads} Arrow threads (`pa.cpu_count()`).",
        "",
        f"Workload: {w.shape}, {queries:,} queries × {shape.depth:,} results "
        f"({x.run.num_rows:,} run lines, {x.qrels.num_rows:,} judgments), `{w.directory.name}/`, "
        "parsed once with rankmeter's Arrow CSV options. Each job done rankmeter's way and "
        f"Arrow's, in one process, median of {args.repeat} passes (the ways take turns); CPU is "
        "`time.process_time()` (all threads). Every Arrow way's answer was checked against "
        "rankmeter's before its time is shown: the same grouping of the rows (codes equal up "
        "to relabelling), the same (query, doc, grade) matches, the same duplicate verdict "
        f"(also on a copy with one duplicate put in: agree = {verdict}).",
        "",
        *table(header, rows, "lllllrl"),
        "",
        "Notes: rankmeter does not intern the run's doc ids: a 64-bit hash per row is its key "
        "(confirmed on the strings wherever two match), and the same hashes serve the join and "
        "the duplicate check; job 3's rankmeter time uses them as construction left them and "
        "rebuilds the qrels' pair lookup each pass (a Qrels builds it once). The joined key is "
        "`qid + ' ' + docid` (`pc.binary_join_element_wise`), built inside the timing.",
        "",
        "Conclusion:",
        "",
        *(f"- {conclusion(job)}" for job in jobs),
        f"- Together, rankmeter's hashing, join and duplicate check (jobs 1, 3, 4) take "
        f"{fmt_seconds(ours_total)} s; the fastest Arrow join plus the fastest Arrow duplicate "
        f"check, which need no hashes of their own, {fmt_seconds(arrow_total)} s "
        f"({fmt_ratio(arrow_total / ours_total)} of rankmeter's); rankmeter's hashes and "
        f"duplicate check with the faster of the two joins, {fmt_seconds(mixed)} s "
        f"({fmt_ratio(mixed / ours_total)}; the Arrow join's matches would still have to be "
        "put in rank order, which is not timed here).",
        *(
            f"- Importing {name} adds {fmt_seconds(cost)} s to a fresh process "
            f"(median of {max(args.repeat, 3)}, against one that imports NumPy and pyarrow.csv); "
            "a CLI run pays it every time."
            for name, cost in args.import_costs.items()
        ),
        "",
        HASH_END,
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        description="rankmeter's NumPy hashing against pyarrow's hash kernels, job by job."
    )
    parser.add_argument("--shape", default="msmarco", choices=list(generate.SHAPES))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--ties", type=float, default=generate.DEFAULT_TIES)
    parser.add_argument("--repeat", type=int, default=3, help="passes over each job's ways")
    parser.add_argument("--threads", type=int, default=None, help="Arrow's threads (default: all)")
    parser.add_argument("--no-generate", action="store_true")
    parser.add_argument("--data-dir", type=Path, default=generate.DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    args.source_state = git_state()
    w = generate.workload(args.shape, scale=args.scale, ties=args.ties, data_dir=args.data_dir)
    if args.no_generate:
        if not w.is_current():
            raise SystemExit(f"--no-generate: {w.directory} is missing; run without it once")
    else:
        generate.generate(w, quiet=False)

    import numpy as np
    import pyarrow as pa

    from rankmeter.data import Qrels, Run

    if args.threads is not None:
        pa.set_cpu_count(args.threads)
    args.pyarrow, args.numpy = pa.__version__, np.__version__
    log("parsing")
    run_table, qrels_table = parse(w)
    log("building the Run and the Qrels")
    x = Inputs(
        run_table,
        qrels_table,
        Run.from_columns(run_table["qid"], run_table["docid"], run_table["score"]),
        Qrels.from_columns(qrels_table["qid"], qrels_table["docid"], qrels_table["grade"]),
        pa.cpu_count(),
    )
    jobs = [
        *intern_jobs(x),
        with_numpy_loops(join_job(x)),
        with_numpy_loops(
            duplicate_job(x, run_table["qid"], run_table["docid"], "4. duplicate check")
        ),
    ]
    import numpy as np

    # (hashes as dense codes, the form the partition check reads)
    jobs[0] = with_numpy_loops(jobs[0], lambda hashes: np.unique(hashes, return_inverse=True)[1])
    for job in jobs:
        log(f"{job.name}: {args.repeat} passes")
        job.run(args.repeat)
    log("the duplicate check on a copy with one duplicate")
    checked = duplicate_job(
        x, run_table["qid"], with_a_duplicate(run_table["docid"]), "duplicate put in"
    )
    checked.run(1)
    if checked.expected is not True or jobs[-1].expected is not False:
        raise SystemExit(
            f"the duplicate check said {jobs[-1].expected} on the run and {checked.expected} "
            "with a duplicate put in: expected False, then True"
        )
    log("import costs")
    args.import_costs = import_costs(args.repeat)
    command = shlex.join(["python", "benchmarks/hash_bench.py", *argv])
    section = render(args, command, w, x, jobs, checked)
    sys.stdout.write(section)
    write_section(args.out, section, HASH_START, HASH_END)
    log(f"wrote the hash section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
