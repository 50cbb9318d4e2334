"""Cross-validated recall figures: a constant chosen on some of the dev data, scored on the rest.

    python benchmarks/crossval.py locomo DATA.json \\
        --set hipo_jupyter.memory.recall.ranking.DAY_WEIGHT=0.05,0.1,0.2 \\
        --set hipo_jupyter.memory.recall.context.LAYER1_SHARE=0,0.0625,0.125
    python benchmarks/crossval.py memaware DIR --questions DIR/questions-dev.json \\
        --set hipo_jupyter.memory.disk.exchanges.REPLY_INDEX_TOKENS=0,40,120,400
    python benchmarks/crossval.py locomo DATA.json --set settings.second_hop=false,true

`settings.NAME` is a field of `RecallSettings`, the typed object of recall's stages and budgets
that the benchmarks pass to `Memory.context` (nothing of the engine is patched for it); any other
name is a module-level constant of the engine, set for the run and put back after.

A figure measured on the data its constants were tuned on overstates what a user gets on
conversations no one tuned on. This script runs `locomo.py` or `memaware.py` (the `hipo` system:
`Memory.context`, keyword, what users get) once for each combination of the values given with
`--set` (each a module-level constant of the engine, set for the run and put back after), at one
budget (`--budget`, 2,000 tokens). Then, fold by fold, it picks the combination with the best
score on the other folds and scores the held-out fold with it:

- LoCoMo: leave one conversation out (5 folds on the dev file); the score is the all-evidence
  rate, weighted by each conversation's questions.
- MemAware: `--folds` folds of the questions (3; question i is in fold i mod 3); the score is the
  share of questions answered.

It prints the dev score of every combination, the default's (the values the engine ships with),
the best dev combination and the cross-validated score with the choice each fold made. Runs are
deterministic, so a combination is run once and its per-question results reused by every fold.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SYSTEM = "hipo"
Setting = tuple[tuple[str, object], ...]  # ((module.NAME, value), ...)
# One fold's result: (score sum, items) and, per category (LoCoMo's, MemAware's difficulty),
# the same pair: (score sum, items, {category: (score sum, items)}).
Fold = tuple[float, int, dict[str, tuple[float, int]]] | tuple[float, int]


@dataclass(frozen=True)
class Grid:
    """The constants to vary: dotted `module.NAME` -> the values to try."""

    names: tuple[str, ...]
    values: tuple[tuple[object, ...], ...]

    def settings(self) -> list[Setting]:
        combos = itertools.product(*self.values)
        return [tuple(zip(self.names, combo, strict=True)) for combo in combos]


def parse_value(text: str) -> object:
    """An int, a float, True/False, or the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.casefold(), text)


def parse_grid(items: Sequence[str]) -> Grid:
    names, values = [], []
    for item in items:
        name, _, listed = item.partition("=")
        if "." not in name or not listed:
            raise SystemExit(f"crossval: --set takes module.NAME=V1,V2,..., not {item!r}")
        names.append(name.strip())
        values.append(tuple(parse_value(v.strip()) for v in listed.split(",")))
    return Grid(tuple(names), tuple(values))


SETTINGS_PREFIX = "settings."  # `--set settings.second_hop=false,true`: a RecallSettings field
BENCHMARKS = ("locomo", "memaware")  # the modules whose RECALL_SETTINGS each run passes


def settings_of(setting: Setting) -> object:
    """The `RecallSettings` a setting's `settings.NAME` values make (the rest default)."""
    from hipo_jupyter.memory import RecallSettings

    fields = {
        dotted.removeprefix(SETTINGS_PREFIX): value
        for dotted, value in setting
        if dotted.startswith(SETTINGS_PREFIX)
    }
    return RecallSettings(**fields)


def resolve(dotted: str) -> tuple[object, str]:
    if dotted.startswith(SETTINGS_PREFIX):  # a field of the settings object, not a constant
        from hipo_jupyter.memory import RecallSettings

        field = dotted.removeprefix(SETTINGS_PREFIX)
        if field not in RecallSettings.__dataclass_fields__:
            raise SystemExit(f"crossval: RecallSettings has no {field}")
        return RecallSettings(), field
    module_name, _, attribute = dotted.rpartition(".")
    module = importlib.import_module(module_name)
    if not hasattr(module, attribute):
        raise SystemExit(f"crossval: {module_name} has no {attribute}")
    return module, attribute


@contextmanager
def applied(setting: Setting) -> Iterator[None]:
    """The engine's constants set to `setting` for the block, put back after; its
    `settings.NAME` values become the `RecallSettings` object the benchmarks pass to
    `Memory.context` (`RECALL_SETTINGS`), which patches nothing of the engine."""
    saved = []
    for name in BENCHMARKS:
        module = importlib.import_module(name)
        saved.append((module, "RECALL_SETTINGS", module.RECALL_SETTINGS))
        module.RECALL_SETTINGS = settings_of(setting)
    for dotted, value in setting:
        if dotted.startswith(SETTINGS_PREFIX):
            continue
        module, attribute = resolve(dotted)
        saved.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, value)
    try:
        yield
    finally:
        for module, attribute, value in reversed(saved):
            setattr(module, attribute, value)


def defaults(grid: Grid) -> Setting:
    return tuple((name, getattr(*resolve(name))) for name in grid.names)


# --- per-fold results of one setting: fold -> (score sum, items) ------------------------------


def locomo_folds(data: Path, budget: int, setting: Setting) -> dict[str, Fold]:
    """Each conversation's all-evidence rate at `budget`, as (rate x questions, questions)."""
    import locomo

    samples = json.loads(data.read_text(encoding="utf-8"))
    samples = samples if isinstance(samples, list) else [samples]
    folds = {}
    with tempfile.TemporaryDirectory(prefix="hipo-crossval-") as temporary, applied(setting):
        locomo.BUDGETS = (budget,)
        for number, sample in enumerate(samples, start=1):
            path = Path(temporary) / f"conversation-{number}.json"
            path.write_text(json.dumps([sample]), encoding="utf-8")
            cell = locomo.run(path, [SYSTEM])["systems"][SYSTEM]["budgets"][str(budget)]
            key = str(sample.get("sample_id") or number)
            categories = {
                name: (part["all_evidence_rate"] * part["questions"], part["questions"])
                for name, part in cell["by_category"].items()
            }
            rate, questions = cell["all_evidence_rate"], cell["questions"]
            folds[key] = (rate * questions, questions, categories)
    return folds


def memaware_folds(
    data: Path,
    questions: Path,
    budget: int,
    folds: int,
    setting: Setting,
    system: str = SYSTEM,
    keep: Path | None = None,
) -> dict[str, Fold]:
    """Each fold's answered questions at `budget`, as (answered, questions, per difficulty).
    `keep`: the memory folders of an earlier `memaware.py --keep` run of the same import,
    reused (the import adds nothing twice, so nothing is embedded again)."""
    import memaware

    with applied(setting):
        memaware.BUDGETS = (budget,)
        result = memaware.run(data, questions, [system], keep, None, memaware.IMPORTS[0])
    found = result["systems"][system]["found"][str(budget)]
    difficulty = [q.difficulty for q in memaware.load_questions(questions)][: len(found)]
    out: dict[str, Fold] = {}
    for fold in range(folds):
        mine = found[fold::folds]
        categories: dict[str, tuple[float, int]] = {}
        for answered, level in zip(mine, difficulty[fold::folds], strict=True):
            total, count = categories.get(level, (0.0, 0))
            categories[level] = (total + answered, count + 1)
        out[str(fold)] = (float(sum(mine)), len(mine), categories)
    return out


# --- the cross-validation itself ---------------------------------------------------------------


def score(folds: dict[str, Fold], keys: Sequence[str]) -> float:
    total = sum(folds[k][0] for k in keys)
    count = sum(folds[k][1] for k in keys)
    return total / count if count else 0.0


def by_category(folds: Sequence[Fold]) -> dict[str, float]:
    """The score per category over these folds (weighted by their items), when they have it."""
    totals: dict[str, tuple[float, int]] = {}
    for fold in folds:
        for name, (total, count) in (fold[2] if len(fold) > 2 else {}).items():
            before = totals.get(name, (0.0, 0))
            totals[name] = (before[0] + total, before[1] + count)
    return {name: round(t / n, 4) for name, (t, n) in sorted(totals.items()) if n}


def cross_validate(results: dict[Setting, dict[str, Fold]]) -> dict:
    """Fold by fold, the setting best on the other folds (the first listed on a tie), scored on
    the held-out fold; the cross-validated score weights each fold by its items, and so does
    each category's."""
    settings = list(results)
    keys = list(next(iter(results.values())))
    held_out, chosen = 0.0, {}
    for key in keys:
        others = [k for k in keys if k != key]
        best = max(settings, key=lambda s: (score(results[s], others), -settings.index(s)))
        chosen[key] = best
        held_out += results[best][key][0]
    items = sum(results[settings[0]][k][1] for k in keys)
    categories = by_category([results[chosen[key]][key] for key in keys])
    return {"cross_validated": held_out / items, "chosen": chosen, "by_category": categories}


def label(setting: Setting) -> str:
    return ", ".join(f"{name.rpartition('.')[2]}={value}" for name, value in setting)


def report(results: dict[Setting, dict], default: Setting, budget: int) -> dict:
    keys = list(next(iter(results.values())))
    dev = {label(s): round(score(folds, keys), 4) for s, folds in results.items()}
    best = max(results, key=lambda s: score(results[s], keys))
    cv = cross_validate(results)
    return {
        "budget": budget,
        "dev": dev,
        "default": label(default),
        "default_dev": dev.get(label(default)),
        "best_dev": {"setting": label(best), "score": dev[label(best)]},
        "cross_validated": round(cv["cross_validated"], 4),
        "chosen_per_fold": {key: label(s) for key, s in cv["chosen"].items()},
        # per category (LoCoMo's, MemAware's difficulty): the default's dev figure and the
        # cross-validated one side by side
        "by_category": {
            "default_dev": by_category([results[default][k] for k in keys])
            if default in results
            else {},
            "cross_validated": cv["by_category"],
        },
        "folds": keys,
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmark", choices=("locomo", "memaware"))
    parser.add_argument("data", type=Path, help="the LoCoMo JSON file or the MemAware folder")
    parser.add_argument("--questions", type=Path, help="MemAware's questions file")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="M.NAME=V,V")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--folds", type=int, default=3, help="MemAware's folds of the questions")
    parser.add_argument(
        "--system",
        default=SYSTEM,
        choices=(SYSTEM, "hipo_semantic"),
        help="MemAware: hipo (keyword) or hipo_semantic (hybrid, the [semantic] extra)",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="MemAware: reuse the memories kept here"
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the report as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.sets:
        print("crossval: give at least one --set module.NAME=V1,V2", file=sys.stderr)
        return 2
    if args.benchmark == "memaware" and not (args.questions and args.questions.is_file()):
        print("crossval: memaware needs --questions FILE", file=sys.stderr)
        return 2
    if not args.data.exists():
        print(f"crossval: no {args.data}", file=sys.stderr)
        return 2
    grid = parse_grid(args.sets)
    default = defaults(grid)
    results = {}
    for setting in grid.settings():
        if args.benchmark == "locomo":
            results[setting] = locomo_folds(args.data, args.budget, setting)
        else:
            results[setting] = memaware_folds(
                args.data, args.questions, args.budget, args.folds, setting, args.system, args.keep
            )
        keys = list(results[setting])
        print(f"{label(setting)}: {score(results[setting], keys):.4f}", flush=True)
    summary = report(results, default, args.budget)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    spread = statistics.pstdev(summary["dev"].values()) if len(summary["dev"]) > 1 else 0.0
    print(
        f"default {summary['default']}: dev {summary['default_dev']}; best on dev "
        f"{summary['best_dev']['setting']}: {summary['best_dev']['score']}; cross-validated "
        f"{summary['cross_validated']} (spread of the grid's dev scores {spread:.4f})"
    )
    per = summary["by_category"]
    for name, held in per["cross_validated"].items():
        print(f"  {name}: default dev {per['default_dev'].get(name)}, cross-validated {held}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
