"""The judge's steps that are not the command line: the pin at the
base, the changes base → candidate and what they signal before anything runs, the
workspace's drift from the pin, and the properties' runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from git_evidence.core import paths
from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import Drift, Entry, LockRef
from git_evidence.core.oids import Oid
from git_evidence.judge import scorecard, workspace
from git_evidence.judge.classes import Signals
from git_evidence.judge.scorecard import Sealed
from git_evidence.judge.signals import FixtureRun, PropertyRuns, seed_flakes
from git_evidence.ledger import entries
from git_evidence.lock import manifest, store
from git_evidence.lock.disk import worktree_manifest
from git_evidence.lock.record import LockInvalid
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.context import labels_bytes
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.policy.properties import JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import runner

# Variables that would point a command at the repository (or another one) instead of
# the workspace it runs in.
REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
    "GIT_PREFIX",
    "OLDPWD",
)


@dataclass(frozen=True)
class Pin:
    """What a candidate's lock roots are compared with: the lock in force at the base;
    the base's own manifest when no lock is in force, or when the one in force pins an
    older commit whose files the base no longer has (a stale lock: the base's own
    files passed the gate, the old pin would call every candidate a breach)."""

    digest: str | None  # None: the base's own manifest
    commit: Oid | None  # the lock in force (stale or not), to see it move during runs
    note: Oid | None
    roots: tuple[str, ...]
    files: dict[str, Entry]
    stale: bool = False

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "digest": self.digest,
            "commit": self.commit,
            "note": self.note,
            "unpinned": self.digest is None,
            "roots": list(self.roots),
        }
        if self.stale:
            out["stale_lock"] = True
        return out


def read_pin(git: Git, policy: Policy, base: Oid) -> Pin:
    found = store.find_lock(git, policy.notes_ref, base)
    if found is None:
        _, files = manifest.build_manifest(git, base, policy.lock_roots, policy.lock_exclude)
        return Pin(None, None, None, tuple(policy.lock_roots), files)
    try:
        pinned = store.read_lock(git, found)
    except LockInvalid as exc:
        raise EvidenceError(f"the lock in force at {base[:12]}: {exc.message}", exc.fix) from None
    if found.commit != base:
        _, own = manifest.build_manifest(
            git, base, pinned.roots, policy.lock_exclude, previous=pinned
        )
        if manifest.compare(pinned.files, own):
            return Pin(None, found.commit, found.blob, tuple(pinned.roots), own, stale=True)
    return Pin(pinned.digest, found.commit, found.blob, tuple(pinned.roots), dict(pinned.files))


def changed_paths(git: Git, base: str, treeish: str) -> tuple[paths.Change, ...]:
    """base → candidate as classifiable changes (symlink targets read and followed
    through the candidate's own tree)."""
    tokens = [treeish.encode(), *git.diff_trees(base, treeish)]
    with CatFile(git) as blobs:
        diffs = list(parse_raw(iter(tokens), LinkResolver(git, blobs)))
    return diffs[0].changes if diffs else ()


def evidence_signals(
    policy: Policy, changes: Sequence[paths.Change], before: Sequence[Drift]
) -> tuple[dict[str, Any], Signals]:
    """What the changes and the exported workspace say before anything runs: paths by
    class, and the evidence rewrites, held paths, fixture changes and drift from the pin
    among them."""
    classifier = policy.classifier()
    by_class: dict[paths.PathClass, list[str]] = {}
    rewrite: list[str] = []
    breach: list[str] = []
    held: list[str] = []
    for change in changes:
        klass = classifier.classify_change(change).klass
        by_class.setdefault(klass, []).append(change.path)
        if klass in (paths.ORACLE, paths.POLICY, paths.LEDGER):
            rewrite.append(f"{klass}: {change.path}")
        elif klass == paths.TEST and change.status != "A":
            what = "deleted" if change.status == "D" else "edited"
            rewrite.append(f"test ({what}): {change.path}")
        elif klass == paths.TEST and policy.added_test != "allow":
            held.append(f"added test: {change.path}")
        elif klass == paths.FIXTURE:
            breach.append(change.path)
        elif klass == paths.OTHER and policy.other_path != "allow":
            held.append(f"other: {change.path}")
    evidence = {"paths": {k: sorted(v) for k, v in sorted(by_class.items())}}
    return evidence, Signals(
        oracle_rewrite=tuple(rewrite),
        fixture_breach=breach_before(breach, before),
        held=tuple(held),
    )


def breach_before(changed: Sequence[str], before: Sequence[Drift]) -> tuple[str, ...]:
    """One line a file: the fixtures the candidate changes and the workspace's drift
    from the pin (a changed fixture drifts too: one line says both)."""
    drifted = {d.path: d for d in before}
    lines = []
    for path in sorted({*changed, *drifted}):
        item = drifted.get(path)
        if path in changed:
            lines.append(f"fixture changed by the candidate: {item.describe() if item else path}")
        elif item is not None:
            lines.append(f"drift: {item.describe()}")
    return tuple(lines)


def run_properties(
    props: Sequence[JudgeProperty],
    spaces: Sequence[str],
    area: workspace.Area,
    env: dict[str, str],
    progress: Callable[[str], None] | None = None,
    held: runner.Held = runner.UNHELD,
) -> list[PropertyRuns]:
    chains: list[runner.Chain] = []
    owners: list[tuple[PropertyRuns, FixtureRun | None]] = []
    results = [PropertyRuns(p) for p in props]
    for result in results:
        prop = result.prop
        for seed in prop.seeds:
            chains.append(
                runner.Chain(
                    prop.command, seed, prop.repeat, prop.timeout_s, prop.junit, label=prop.id
                )
            )
            owners.append((result, None))
        for kind in ("must_fail", "must_pass"):
            for path in getattr(prop, kind):
                for seed in prop.seeds:
                    fixture = FixtureRun(kind, path, seed, None)
                    result.fixtures.append(fixture)
                    if not os.path.lexists(os.path.join(spaces[0], path)):
                        continue
                    expect = "fail" if kind == "must_fail" else "pass"
                    chains.append(
                        runner.Chain(
                            (*prop.command, path),
                            seed,
                            1,
                            prop.timeout_s,
                            prop.junit,
                            {"EVIDENCE_FIXTURE": path, "EVIDENCE_EXPECT": expect},
                            label=f"{prop.id} {kind.replace('_', '-')} {path}",
                        )
                    )
                    owners.append((result, fixture))
    outcomes = runner.run_chains(
        chains, spaces, env=env, scratch=area.scratch, progress=progress, held=held
    )
    for (result, owner), runs in zip(owners, outcomes, strict=True):
        if owner is None:
            result.seeds[runs[0].seed] = runs
        else:
            owner.run = runs[0]
    return results


def flakes_on_base(
    signals: Signals,
    props: dict[str, JudgeProperty],
    base_space: str,
    area: workspace.Area,
    env: dict[str, str],
    held: runner.Held,
) -> Signals:
    """Each seed that flaked without a freeze, run again on the base (same repeats, same
    sandbox): a flake the base shows too is one CI may freeze; one the base does not
    show, the candidate brought."""
    on_base: dict[tuple[str, int], bool] = {}
    for flake in signals.flakes:
        key = (flake.property, flake.seed)
        prop = props.get(flake.property)
        if flake.freeze is not None or key in on_base or prop is None:
            continue
        chain = runner.Chain(prop.command, flake.seed, prop.repeat, prop.timeout_s, prop.junit)
        runs = runner.run_chain(chain, cwd=base_space, env=env, scratch=area.scratch, held=held)
        on_base[key] = bool(seed_flakes(prop.id, prop.junit, runs))
    flakes = tuple(
        replace(f, on_base=on_base.get((f.property, f.seed))) if f.freeze is None else f
        for f in signals.flakes
    )
    return replace(signals, flakes=flakes)


def lock_ref(pin: Pin) -> LockRef | None:
    if pin.commit is None or pin.note is None:
        return None
    return LockRef(pin.commit, pin.note)


def base_freezes(git: Git, policy: Policy, base: str) -> list[entries.Freeze]:
    """The freeze ledger as the base has it (never the candidate's)."""
    data = git.blob_at(base, policy.ledger_path) or b""
    freezes, _ = entries.parse_ledger(data, policy.max_window_hours)
    return freezes


def drift(space: str, pin: Pin, policy: Policy) -> list[Drift]:
    actual = worktree_manifest(space, pin.roots, policy.lock_exclude, pin.files, submodules=False)
    return manifest.compare(pin.files, actual)


def drift_json(item: Drift) -> dict[str, Any]:
    def side(entry: Entry | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        return {"mode": entry.mode, "digest": entry.digest, "size": entry.size}

    return {"path": item.path, "kind": item.kind, "old": side(item.old), "new": side(item.new)}


# What every run sees of the judge's environment, besides what ``[judge].env`` names:
# the program search path, the locale and the time zone. Nothing else — no token, no
# cloud credential, no CI variable — reaches the candidate.
RUN_ENV = ("PATH", "LANG", "LANGUAGE", "TZ")


def run_env(area: workspace.Area, names: Sequence[str] = ()) -> dict[str, str]:
    """The environment of every run: an allow-list of this one (``RUN_ENV``, the
    ``LC_*`` variables and ``names``, from ``[judge].env``), never what points at the
    repository nor an ``EVIDENCE_*`` left over (the judge sets its own); git discovery
    stops above the workspaces."""
    wanted = {*RUN_ENV, *names}
    env = {
        k: v
        for k, v in os.environ.items()
        if (k in wanted or k.startswith("LC_"))
        and k not in REPOSITORY_ENV
        and not k.startswith("EVIDENCE_")
    }
    env["GIT_CEILING_DIRECTORIES"] = area.root
    return env


# -- labels, quota and the scorecard -----------------------------------------


def read_sealed(git: Git, policy: Policy, base: str) -> Sealed | None:
    """The labels in force (sealed, else the base's) and the base's retry quota; None
    when there are no labels, and then no scorecard either."""
    data, source = labels_bytes(git, policy, base)
    if data is None:
        return None
    return scorecard.read_sealed(
        data,
        source,
        git.blob_at(base, policy.quota_path),
        f"base:{policy.quota_path}",
        policy.retries,
    )


def sealed_env(sealed: Sealed, area: workspace.Area, env: dict[str, str]) -> dict[str, str]:
    """The variables that hold every run to the base's labels and quota: the files are
    written outside the workspaces (the runs have no repository to read them from),
    and the plugin is switched on for every pytest run (``PYTEST_PLUGINS``)."""
    folder = os.path.join(area.root, "sealed")
    os.mkdir(folder)
    out = {"EVIDENCE_RETRIES": str(sealed.retries)}
    files = [("EVIDENCE_LABELS_FILE", "labels.tsv", sealed.labels_data)]
    if sealed.quota_data is not None:
        files.append(("EVIDENCE_QUOTA_FILE", "retry-quota.jsonl", sealed.quota_data))
    for variable, name, data in files:
        path = os.path.join(folder, name)
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, 0o444)
        out[variable] = path
    plugins = [p for p in env.get("PYTEST_PLUGINS", "").split(",") if p.strip()]
    if "git_evidence" not in (p.strip() for p in plugins):
        plugins.append("git_evidence")
    out["PYTEST_PLUGINS"] = ",".join(plugins)
    return out
