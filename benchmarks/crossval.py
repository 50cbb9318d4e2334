"""Cross-validated recall figures: a setting chosen on some of the dev data, scored on the rest.

    python benchmarks/crossval.py locomo DATA.json \\
        --set settings.day_weight=0.05,0.1,0.2 --set settings.layer1_share=0,0.0625,0.125
    python benchmarks/crossval.py memaware DIR --questions DIR/questions-dev.json \\
        --set settings.exchange_long_piece=30,100 --set settings.exchange_passage_tokens=20,40
    python benchmarks/crossval.py locomo DATA.json --set settings.second_hop=false,true

`settings.NAME` is a field of `RecallSettings` (hipo_jupyter/memory/requests.py: recall's
stages, weights and limits, their defaults and where each comes from). Each combination is one
`RecallSettings(**fields)`, passed to `locomo.run(settings=...)` or `memaware.run(settings=...)`
and so to every `Memory.context`: nothing of the engine or of the benchmarks is patched. An old
dotted module name (`hipo_jupyter.memory.recall.ranking.DAY_WEIGHT`) is refused in one line that
names the field to use.

A figure measured on the data its constants were tuned on overstates what a user gets on
conversations no one tuned on. This script runs `locomo.py` or `memaware.py` (the `hipo` system:
`Memory.context`, keyword, what users get) once for each combination of the values given with
`--set` (each a `RecallSettings` field), at one
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
import itertools
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SYSTEM = "hipo"
Setting = tuple[tuple[str, object], ...]  # (("settings.NAME", value), ...)
# One fold's result: (score sum, items) and, per category (LoCoMo's, MemAware's difficulty),
# the same pair: (score sum, items, {category: (score sum, items)}).
Fold = tuple[float, int, dict[str, tuple[float, int]]] | tuple[float, int]


@dataclass(frozen=True)
class Grid:
    """The settings to vary: `settings.NAME` -> the values to try."""

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


SETTINGS_PREFIX = "settings."  # `--set settings.second_hop=false,true`: a RecallSettings field


def setting_fields() -> tuple[str, ...]:
    from hipo_jupyter.memory import RecallSettings

    return tuple(field.name for field in fields(RecallSettings))


def check_name(name: str, prefixes: Sequence[str] = (SETTINGS_PREFIX,)) -> str:
    """`name` when it is `settings.FIELD` of a `RecallSettings` field (or has another prefix a
    caller takes, `config.` for everyday.py); else exit with one line naming what to use."""
    if any(name.startswith(p) for p in prefixes if p != SETTINGS_PREFIX):
        return name
    known = setting_fields()
    field = name.removeprefix(SETTINGS_PREFIX)
    if name.startswith(SETTINGS_PREFIX) and field in known:
        return name
    attribute = name.rpartition(".")[2]
    if attribute.lower() in known:
        raise SystemExit(
            f"crossval: {name} is no longer patched: use --set settings.{attribute.lower()}=..."
        )
    raise SystemExit(
        f"crossval: RecallSettings has no {attribute}; --set takes settings.NAME=V1,V2 with NAME "
        f"one of {', '.join(known)}"
    )


def parse_grid(items: Sequence[str], prefixes: Sequence[str] = (SETTINGS_PREFIX,)) -> Grid:
    names, values = [], []
    for item in items:
        name, _, listed = item.partition("=")
        if "." not in name or not listed:
            raise SystemExit(f"crossval: --set takes settings.NAME=V1,V2,..., not {item!r}")
        names.append(check_name(name.strip(), prefixes))
        values.append(tuple(parse_value(v.strip()) for v in listed.split(",")))
    return Grid(tuple(names), tuple(values))


def settings_of(setting: Setting) -> object:
    """The `RecallSettings` a setting's `settings.NAME` values make (the rest default); a value
    the field refuses is one line."""
    from hipo_jupyter.memory import RecallSettings, RequestError

    chosen = {
        dotted.removeprefix(SETTINGS_PREFIX): value
        for dotted, value in setting
        if dotted.startswith(SETTINGS_PREFIX)
    }
    try:
        return RecallSettings(**chosen)
    except RequestError as error:
        raise SystemExit(f"crossval: {error}") from None


def defaults(grid: Grid) -> Setting:
    """The values the engine ships with (`DEFAULT_SETTINGS`), for these names."""
    from hipo_jupyter.memory import DEFAULT_SETTINGS

    return tuple(
        (name, getattr(DEFAULT_SETTINGS, name.removeprefix(SETTINGS_PREFIX))) for name in grid.names
    )


# --- per-fold results of one setting: fold -> (score sum, items) ------------------------------


def locomo_folds(data: Path, budget: int, setting: Setting) -> dict[str, Fold]:
    """Each conversation's all-evidence rate at `budget`, as (rate x questions, questions)."""
    import locomo

    samples = json.loads(data.read_text(encoding="utf-8"))
    samples = samples if isinstance(samples, list) else [samples]
    folds = {}
    settings = settings_of(setting)
    with tempfile.TemporaryDirectory(prefix="hipo-crossval-") as temporary:
        for number, sample in enumerate(samples, start=1):
            path = Path(temporary) / f"conversation-{number}.json"
            path.write_text(json.dumps([sample]), encoding="utf-8")
            done = locomo.run(path, [SYSTEM], settings=settings, budgets=(budget,))
            cell = done["systems"][SYSTEM]["budgets"][str(budget)]
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

    result = memaware.run(data, questions, [system], keep, None, memaware.IMPORTS[0],
                          settings=settings_of(setting), budgets=(budget,))  # fmt: skip
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
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="settings.NAME=V,V"
    )
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
        print("crossval: give at least one --set settings.NAME=V1,V2", file=sys.stderr)
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
