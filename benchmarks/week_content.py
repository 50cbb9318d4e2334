"""What `notebook_week.py` writes: three months of a data scientist's work, made from templates
with a seeded RNG (projects, people, decisions, preferences, dates, bugs, metrics), and the
everyday questions asked of it afterwards, each with the note that answers it.

Nothing here runs hipo: it only makes text (notebook cells, scripted Claude replies, questions).
A `Fact` is a note planted on one day whose `key` text is the proof that it reached a prompt:
the key is checked (by the benchmark, on the raw logs) to be in that note and in no other
checkpoint, so a key found in what `%%ask` sent was carried there by that note.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

PEOPLE = [
    ("Priya Raman", "product manager"), ("Marcus Feld", "engineering manager"),
    ("Lena Okafor", "data engineer"), ("Tomás Brandt", "analytics lead"),
    ("Aiko Sato", "ML engineer"), ("Grace Mbeki", "VP of growth"),
    ("Jonas Lind", "finance partner"), ("Sofia Costa", "designer"),
    ("Ravi Menon", "platform engineer"), ("Hannah Weiss", "customer success lead"),
]  # fmt: skip


@dataclass(frozen=True)
class Project:
    tag: str
    name: str
    metric: str
    low: float
    high: float
    table: str
    pipeline: str


PROJECTS = [
    Project(*row)
    for row in (
        ("churn", "churn model", "AUC", 0.72, 0.88, "analytics.subscriptions", "churn_features"),
        ("pricing", "starter tier pricing", "conversion", 2.0, 6.5, "billing.invoices",
         "price_tests"),
        ("forecast", "demand forecast", "MAPE", 6.0, 18.0, "ops.orders_daily", "forecast_nightly"),
        ("onboarding", "onboarding emails", "activation", 18.0, 41.0, "crm.email_events",
         "lifecycle_sync"),
        ("fraud", "fraud scoring", "precision", 0.61, 0.93, "payments.transactions",
         "fraud_stream"),
        ("warehouse", "warehouse migration", "cost per query", 0.8, 3.9, "meta.query_history",
         "dbt_run"),
        ("attribution", "marketing attribution", "ROAS", 1.4, 4.8, "marketing.touchpoints",
         "utm_ingest"),
        ("recsys", "product recommendations", "CTR", 1.1, 5.2, "events.clicks", "recs_training"),
    )
]  # fmt: skip

BUGS = [
    "null user ids after the {table} backfill", "timezone shift in {table} (UTC vs local)",
    "duplicate rows from a retried {pipeline} task", "label leakage through a post-period column",
    "schema drift: a renamed column in {table}", "float rounding in the {pipeline} aggregation",
    "stale cache in the {pipeline} feature store", "off-by-one week in the {pipeline} windowing",
]  # fmt: skip
METHODS = [
    "gradient boosting (LightGBM)", "logistic regression with splines", "a two-tower model",
    "Prophet with holiday regressors", "a hierarchical Bayesian model", "XGBoost with monotone "
    "constraints", "a CUSUM drift check", "bootstrapped confidence intervals",
]  # fmt: skip
SEGMENTS = ["SMB", "mid-market", "enterprise", "self-serve", "annual plans", "monthly plans",
            "EMEA", "North America", "mobile users", "trial accounts"]  # fmt: skip
ASKS = [
    "Summarize what drives {metric} for the {name} by segment: {seg1} vs {seg2}.",
    "Write a SQL query over {table} that computes weekly {metric} by {seg1}.",
    "Explain why {metric} of the {name} moved from {a} to {b} this week.",
    "Suggest three checks before we trust the {name} numbers for {seg1}.",
    "Draft a two-line update on the {name} for {person}.",
    "Compare {method} with our current approach for the {name}.",
]  # fmt: skip
REPLIES = [
    "For the {name}, {seg1} moves {metric} most: its share fell while {seg2} held steady. "
    "Look at tenure and plan changes first; the gap is largest in the first 30 days.",
    "Here is a query: SELECT date_trunc('week', created_at) AS week, segment, avg(value) FROM "
    "{table} GROUP BY 1, 2 ORDER BY 1. Filter test accounts before you trust it.",
    "The move from {a} to {b} lines up with the {pipeline} change; {seg1} explains most of it. "
    "I would re-run the job for the affected days before drawing conclusions.",
    "1) reconcile row counts of {table} against the source; 2) check {seg1} for late data; "
    "3) compare {metric} with last month's run of {pipeline}.",
    "Update on the {name}: {metric} is at {b} after this week's work; next step is a review "
    "with the team on {seg1}.",
    "{method} is more flexible but harder to explain; for the {name} keep the current model "
    "as the baseline and run it side by side for two weeks.",
]  # fmt: skip


@dataclass(frozen=True)
class Fact:
    """A note the user writes once, and the everyday question it answers."""

    question: str
    title: str  # with its [type] and #tags, as on the %%remember line
    body: str
    key: str  # text of the note that proves it reached a prompt (unique in the memory)
    day: date = date(2000, 1, 1)

    def cell(self) -> str:
        return f"%%remember {self.title}\n{self.body}"


def _facts(rng: random.Random, people: list[tuple[str, str]]) -> list[Fact]:
    """The everyday questions and their notes: the first list's notes share no content word
    with their question (checked by the benchmark with the engine's own stems and stopwords),
    the second's do."""
    p = [name for name, _ in people]
    boss, buddy, oncall, owner, signer, admin = p[:6]
    n = rng.randint
    cut, prec = n(61, 79), n(82, 95)
    return [
        Fact("what should I eat at the team dinner?", "Food [user] #diet",
             "I'm vegetarian: no meat, no fish", "vegetarian: no meat, no fish"),
        Fact("when do we go live?", "Release of the scorer #launch",
             f"- decisions: the release is on April {n(2, 9)}, a Thursday, after the freeze",
             "a Thursday, after the freeze"),
        Fact("who approves my budget requests?", "Spend sign-off #finance",
             f"- rule: {signer} signs off any purchase over $5k", "signs off any purchase over"),
        Fact("how do I get into the production database?", "Warehouse login #access",
             f"- how-to: ask {admin} for a read-only role in #data-platform; VPN first",
             "read-only role in #data-platform"),
        Fact("what time is the standup?", "Morning sync #rituals",
             f"- 9:{n(30, 50)} on Zoom, cameras optional", "on Zoom, cameras optional"),
        Fact("who is my manager?", "Reporting line [user] #org",
             f"I report to {boss}, Head of Analytics, since January", "Head of Analytics"),
        Fact("how many customers did we lose last quarter?", "Q4 attrition #churn",
             f"- outcome: {n(900, 1900):,} accounts cancelled in Q4", "accounts cancelled in Q4"),
        Fact("what's the plan for hiring?", "Headcount #recruiting",
             "- decisions: two data engineers and one analyst open in April",
             "two data engineers and one analyst"),
        Fact("where are the slides for the directors?", "Exec deck #reporting",
             "- references: drive/exec/2026-board-deck-v3.pptx", "2026-board-deck-v3.pptx"),
        Fact("what coding style does my team prefer?", "Python conventions [feedback] #lint",
             "- rule: black, 100-char lines, type hints on public functions",
             "black, 100-char lines"),
        Fact("how should charts look in reports?", "Plot format [feedback] #viz",
             "- rule: no pie graphs; axes labelled with units; colour-blind palette",
             "no pie graphs"),
        Fact("when am I on vacation?", "Leave [user] #pto",
             f"Off from March {n(16, 20)}, back the following Monday", "back the following Monday"),
        Fact("how much do our servers cost?", "AWS invoice #infra",
             f"- outcome: ${n(14, 29)}.{n(1, 9)}k for January, EC2 most of it", "EC2 most of it"),
        Fact("who can fix broken pipelines on weekends?", "Pager rota #oncall",
             f"- {oncall} carries the pager Saturdays and Sundays",
             "carries the pager Saturdays and Sundays"),
        Fact("how do I book a GPU?", "Compute quota #compute",
             "- how-to: file a ticket with platform for an A100 slot; approval within a day",
             "ticket with platform for an A100 slot"),
        Fact("how do I like my weekly summary delivered?", "Readout format [user] #prefs",
             "Send me bullet points by email on Friday afternoons, no attachments",
             "bullet points by email on Friday afternoons"),
        Fact("which customers are off limits for experiments?", "Holdout accounts #abtest",
             "- rule: never test on enterprise tier or EU public sector",
             "never test on enterprise tier or EU public sector"),
        Fact("who owns the data catalog?", "Metadata tooling #platform",
             f"- {owner} maintains DataHub and its lineage graphs", "maintains DataHub"),
        Fact("what did legal say about using customer emails?", "GDPR review #privacy",
             "- outcome: counsel cleared hashed addresses for modelling; raw ones stay out",
             "counsel cleared hashed addresses"),
        Fact("which night do the batch jobs run?", "Scheduler window #etl",
             "- decisions: Airflow DAGs kick off at 02:00 UTC Tuesday to Saturday",
             "kick off at 02:00 UTC"),
        Fact("where do I put secret keys?", "Credentials handling [feedback] #security",
             "- rule: tokens live in Vault under kv/analytics, never in code",
             "Vault under kv/analytics"),
        Fact("who should look over my pull requests?", "Second pair of eyes #workflow",
             f"- {buddy} checks my PRs; merging needs one approval", "checks my PRs"),
        Fact("which language do stakeholders want the dashboards in?", "Locale [user] #bi",
             "German labels for the Munich office, English everywhere else",
             "German labels for the Munich office"),
        Fact("what's the rule for meetings on Wednesdays?", "Focus day [user] #calendar",
             "No calls mid-week: that day is blocked for deep work", "blocked for deep work"),
        # sharing words with their note
        Fact("what threshold did we pick for the fraud model?", "Fraud threshold #fraud",
             f"- decisions: fraud model threshold 0.{cut} keeps precision at {prec}%",
             f"threshold 0.{cut} keeps precision"),
        Fact("which features drive churn the most?", "Churn drivers #churn",
             "- outcome: top churn features: support tickets, seat utilisation, days idle",
             "support tickets, seat utilisation, days idle"),
        Fact("what did we decide about the starter tier discount?", "Starter discount #pricing",
             f"- decisions: test a {n(10, 20)}% starter tier discount for four weeks in EMEA",
             "starter tier discount for four weeks in EMEA"),
        Fact("which bug broke the attribution dashboard?", "Attribution dashboard bug #attribution",
             f"- outcome: UTM parser dropped uppercase campaign names; fixed in PR {n(400, 900)}",
             "dropped uppercase campaign names"),
        Fact("how much did the warehouse migration save?", "Migration savings #warehouse",
             f"- outcome: the warehouse migration cut credits {n(21, 38)}% after clustering",
             "after clustering"),
        Fact("which onboarding email variant won?", "Onboarding email test #onboarding",
             "- outcome: variant C (day-3 checklist email) won, +4.2 points activation",
             "day-3 checklist email"),
        Fact("where is the forecast dashboard?", "Forecast dashboard [reference] #forecast",
             "- references: looker/dashboards/demand-forecast-ops (owner: ops analytics)",
             "looker/dashboards/demand-forecast-ops"),
        Fact("what is the retention of the January cohort?", "January cohort retention #churn",
             f"- outcome: January cohort retention {(kept := n(71, 88))}% at day 60",
             f"retention {kept}% at day 60"),
        Fact("which seed do we use for the recommendations model?", "Recs training seed #recsys",
             f"- rule: recommendations model trains with seed {n(1000, 9999)} and 5 folds",
             "and 5 folds"),
        Fact("what format should the quarterly report tables use?",
             "Report tables [feedback] #reporting",
             "- rule: quarterly report tables in thousands, one decimal, totals row last",
             "in thousands, one decimal, totals row last"),
        Fact("who is the contact for the fraud vendor?", "Fraud vendor contact [reference] #fraud",
             "- references: fraud vendor account manager is Dana at Sift, dana@vendor.example",
             "dana@vendor.example"),
        Fact("what baseline MAPE does the demand forecast have?", "Forecast baseline #forecast",
             f"- outcome: seasonal naive baseline MAPE {n(19, 27)}.{n(0, 9)}% on holdout weeks",
             "seasonal naive baseline"),
        Fact("why did the churn model retrain fail?", "Churn retrain failure #churn #bugs",
             "- outcome: the churn retrain failed on a label join that dropped trial accounts",
             "label join that dropped trial accounts"),
        Fact("which python version does the pipeline use?",
             "Pipeline runtime [reference] #platform",
             "- references: pipeline images pin python 3.11.7 and pandas 2.2",
             "pin python 3.11.7 and pandas 2.2"),
        Fact("what sample size does the pricing test need?", "Pricing test power #pricing",
             f"- analysis: the pricing test needs {n(18, 40)}k visitors per arm for 80% power",
             "visitors per arm for 80% power"),
        Fact("when does the attribution model get refreshed?", "Attribution refresh #attribution",
             "- decisions: the attribution model is refreshed on the first Monday of each month",
             "first Monday of each month"),
        Fact("how should I name the feature tables?", "Feature table names [feedback] #lint",
             "- rule: feature tables are named feat_entity_grain, lowercase",
             "feat_entity_grain"),
        Fact("which recsys CTR did the two-tower test reach?", "Two-tower test #recsys",
             f"- outcome: two-tower recsys CTR {n(3, 5)}.{n(0, 9)}% vs 2.9% control",
             "vs 2.9% control"),
        Fact("what did Priya want for the onboarding review?", "Onboarding review ask #onboarding",
             "- request: Priya wants the onboarding review to show cohorts side by side",
             "cohorts side by side"),
        Fact("which fraud features were dropped?", "Fraud feature pruning #fraud",
             "- decisions: dropped device age and IP velocity from the fraud features",
             "device age and IP velocity"),
    ]  # fmt: skip


@dataclass
class Day:
    """One working day: its notebook's cells, and the scripted reply of each Claude call."""

    day: date
    project: Project
    cells: list[str] = field(default_factory=list)
    notes: int = 0
    calls: int = 0
    tags: set[str] = field(default_factory=set)


@dataclass
class Week:
    """Three months of work and the questions asked afterwards."""

    days: list[Day]
    facts: list[Fact]
    replies: dict[str, str]  # a Claude call's prompt -> its scripted reply
    user_tags: set[str]


def _sdk_cell(prompt: str) -> str:
    return (
        "import anthropic\n"
        "client = anthropic.Anthropic()\n"
        "reply = client.messages.create(model='claude-sonnet-5-5', max_tokens=400,\n"
        f"    messages=[{{'role': 'user', 'content': {prompt!r}}}])\n"
        "print(reply.content[0].text)"
    )


def _filler(rng: random.Random, project: Project, day: date, number: int) -> str:
    """One of the day's ordinary notes: progress, a bug, a meeting, a metric, a rule."""
    person, role = rng.choice(PEOPLE)
    a = round(rng.uniform(project.low, project.high), 2)
    b = round(a * rng.uniform(0.9, 1.12), 2)
    seg = rng.choice(SEGMENTS)
    method = rng.choice(METHODS)
    bug = rng.choice(BUGS).format(table=project.table, pipeline=project.pipeline)
    stamp = f"{day:%b} {day.day}"
    tag = project.tag
    kinds = [
        f"%%remember {project.name.capitalize()}: {seg} run {number} #{tag}\n"
        f"- request: rerun {project.pipeline} for {seg} with {method}\n"
        f"- analysis: {project.metric} {a} -> {b} on {project.table}\n"
        f"- outcome: {'keep' if b >= a else 'revert'} the change for {seg}",
        f"%%remember Bug {stamp}: {bug.split(' (')[0][:40]} #{tag} #bugs\n"
        f"- analysis: {bug}; found while checking {project.metric} for {seg}\n"
        f"- decisions: patch {project.pipeline} and add a row-count test\n"
        f"- outcome: backfilled {rng.randint(2, 30)} days",
        f"%%remember Sync with {person.split()[0]} on {stamp} #{tag} #meetings\n"
        f"- request: {person} ({role}) asked about {project.name} for {seg}\n"
        f"- decisions: share {project.metric} by {rng.choice(SEGMENTS)} next week",
        f"%%remember {project.metric} readout {stamp} #{tag} #metrics\n"
        f"- outcome: {project.metric} {b} this week ({seg}), {project.metric} {a} last week",
        f"%%remember Tried {method.split(' (')[0]} on {project.name} #{tag}\n"
        f"- analysis: {method} on {project.table}, {rng.randint(3, 60)}k rows\n"
        f"- outcome: {project.metric} {b}; {'worth a second look' if b > a else 'not better'}",
    ]
    return rng.choice(kinds)


def make_week(*, seed: int, start: date, days: int, notes_per_day: int, calls_per_day: int,
              questions: int) -> Week:  # fmt: skip
    """`days` working days from `start` (Monday to Thursday: four a week, as a person who works
    on other things too), and `questions` facts spread over them: half (or all there are) sharing
words with their note, the rest none."""
    rng = random.Random(seed)
    people = PEOPLE[:]
    rng.shuffle(people)
    facts = _facts(rng, people)
    no_overlap, overlap = facts[:24], facts[24:]
    sharing = min(questions // 2, len(overlap))
    chosen = no_overlap[: questions - sharing] + overlap[:sharing]
    workdays: list[date] = []
    current = start
    while len(workdays) < days:
        if current.weekday() < 4:
            workdays.append(current)
        current += timedelta(days=1)
    planted = {i: rng.randrange(len(workdays)) for i in range(len(chosen))}
    replies: dict[str, str] = {}
    week_days = []
    for index, day in enumerate(workdays):
        project = rng.choice(PROJECTS)
        entry = Day(day=day, project=project)
        entry.cells += ["%load_ext hipo",
                        f"import random\nrows = {rng.randint(10, 900)} * 1000\n"
                        f"print('{project.table}:', rows, 'rows')"]  # fmt: skip
        for number in range(notes_per_day):
            cell = _filler(rng, project, day, index * 10 + number)
            entry.cells.append(cell)
            entry.tags.update(w[1:] for w in cell.splitlines()[0].split() if w.startswith("#"))
        for i, fact in enumerate(chosen):
            if planted[i] == index:
                chosen[i] = fact = Fact(fact.question, fact.title, fact.body, fact.key, day)
                entry.cells.append(fact.cell())
                entry.tags.update(w[1:] for w in fact.title.split() if w.startswith("#"))
        entry.notes = len(entry.cells) - 2
        for _ in range(calls_per_day):
            prompt, reply = _call(rng, project)
            replies[prompt] = reply
            if rng.random() < 0.25:
                entry.cells.append(f"%%ask\n{prompt}")
            else:
                entry.cells.append(_sdk_cell(prompt))
            entry.calls += 1
        week_days.append(entry)
    user_tags = set().union(*(d.tags for d in week_days))
    return Week(days=week_days, facts=chosen, replies=replies, user_tags=user_tags)


def _call(rng: random.Random, project: Project) -> tuple[str, str]:
    """A Claude call about the day's project, and the reply the stand-in gives it."""
    which = rng.randrange(len(ASKS))
    seg1, seg2 = rng.sample(SEGMENTS, 2)
    a = round(rng.uniform(project.low, project.high), 2)
    b = round(a * rng.uniform(0.85, 1.15), 2)
    slots = {"metric": project.metric, "name": project.name, "seg1": seg1, "seg2": seg2,
             "table": project.table, "pipeline": project.pipeline, "a": a, "b": b,
             "person": rng.choice(PEOPLE)[0], "method": rng.choice(METHODS)}  # fmt: skip
    return ASKS[which].format(**slots), REPLIES[which].format(**slots)
